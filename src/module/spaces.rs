//! Observation spaces: [`SPACES`], one row per space, by CompilerGym's
//! name — the one name `:features`, `passlab.Module.observation`,
//! `passlab.gym` and the reference use. Each row says what a value is
//! (its type, shape and bounds, as CompilerGym declares the space), the
//! names of a vector's entries, and how a module is observed. A new space
//! is a row here (see ARCHITECTURE.md's recipes).

use super::features::{instcount_names, AUTOPHASE};
use super::Module;
use crate::{Error, Result};

/// The type of a space's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Int64,
    /// CompilerGym's `InstCountNorm` is `float32`.
    Float32,
    /// A string (the IR, a digest).
    Text,
}

impl Dtype {
    /// NumPy's name for it (`"str"` for text).
    pub fn numpy(self) -> &'static str {
        match self {
            Dtype::Int64 => "int64",
            Dtype::Float32 => "float32",
            Dtype::Text => "str",
        }
    }
}

/// One observation of a module.
#[derive(Clone, Debug, PartialEq)]
pub enum Observation {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Text(String),
}

/// An observation space: one row of [`SPACES`].
pub struct ObservationSpace {
    /// CompilerGym's name.
    pub name: &'static str,
    /// One line for `:help features` and the reference.
    pub summary: &'static str,
    pub dtype: Dtype,
    /// The vector's length; `None` for text.
    pub len: Option<usize>,
    /// The bounds of every value (`high`: `None` for none).
    pub low: f64,
    pub high: Option<f64>,
    /// The names of a vector's entries, in order.
    pub names: fn() -> Vec<String>,
    pub observe: fn(&Module) -> Observation,
    /// Shown by `:features` when no space is named.
    pub shown_by_default: bool,
}

fn no_names() -> Vec<String> {
    Vec::new()
}

/// The observation spaces. A new one: a row here.
pub const SPACES: &[ObservationSpace] = &[
    ObservationSpace {
        name: "InstCount",
        summary: "instructions, blocks and functions, and each opcode's count (70 values)",
        dtype: Dtype::Int64,
        len: Some(70),
        low: 0.0,
        high: None,
        names: || instcount_names().iter().map(|s| s.to_string()).collect(),
        observe: |m| Observation::Ints(m.features().instcount),
        shown_by_default: true,
    },
    ObservationSpace {
        name: "Autophase",
        summary: "Autophase's 56 counts of the IR (Haj-Ali et al.)",
        dtype: Dtype::Int64,
        len: Some(56),
        low: 0.0,
        high: None,
        names: || AUTOPHASE.iter().map(|s| s.to_string()).collect(),
        observe: |m| Observation::Ints(m.features().autophase),
        shown_by_default: true,
    },
    ObservationSpace {
        name: "InstCountNorm",
        summary: "InstCount's values after the first, each over TotalInsts (69 densities)",
        dtype: Dtype::Float32,
        len: Some(69),
        low: 0.0,
        high: Some(1.0),
        names: || {
            instcount_names()[1..]
                .iter()
                .map(|s| format!("{s}Density"))
                .collect()
        },
        observe: |m| Observation::Floats(m.features().instcount_norm()),
        shown_by_default: false,
    },
    ObservationSpace {
        name: "IrInstructionCount",
        summary: "the instructions in function bodies (1 value)",
        dtype: Dtype::Int64,
        len: Some(1),
        low: 0.0,
        high: None,
        names: || vec!["IrInstructionCount".to_string()],
        observe: |m| Observation::Ints(vec![m.instruction_count() as i64]),
        shown_by_default: false,
    },
    ObservationSpace {
        name: "Ir",
        summary: "the module's IR as text",
        dtype: Dtype::Text,
        len: None,
        low: 0.0,
        high: None,
        names: no_names,
        observe: |m| Observation::Text(m.print()),
        shown_by_default: false,
    },
    ObservationSpace {
        name: "IrSha1",
        summary: "the SHA-1 of the IR text, 40 hex digits (which states are the same)",
        dtype: Dtype::Text,
        len: None,
        low: 0.0,
        high: None,
        names: no_names,
        observe: |m| Observation::Text(sha1_smol::Sha1::from(m.print()).digest().to_string()),
        shown_by_default: false,
    },
];

/// The space called `name` (any case), or what would be valid.
pub fn space(name: &str) -> Result<&'static ObservationSpace> {
    SPACES
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| Error::Command {
            command: "features".into(),
            message: format!(
                "unknown observation space '{name}'; valid are: {}",
                names().join(", ")
            ),
            // Compared in lower case, as names are matched; shown as named.
            suggestions: {
                let lower: Vec<String> =
                    SPACES.iter().map(|s| s.name.to_ascii_lowercase()).collect();
                crate::nearest_names(&name.to_ascii_lowercase(), lower.iter().map(String::as_str))
                    .iter()
                    .filter_map(|n| SPACES.iter().find(|s| s.name.eq_ignore_ascii_case(n)))
                    .map(|s| s.name.to_string())
                    .collect()
            },
        })
}

/// Every space's name, in the table's order.
pub fn names() -> Vec<&'static str> {
    SPACES.iter().map(|s| s.name).collect()
}

impl Module {
    /// The module as `space` observes it.
    pub fn observe(&self, space: &ObservationSpace) -> Observation {
        (space.observe)(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_space_gives_what_its_row_declares() {
        let m = Module::from_ir(
            "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n",
            "t.ll",
        )
        .unwrap();
        for s in SPACES {
            let names = (s.names)();
            match (m.observe(s), s.dtype) {
                (Observation::Ints(v), Dtype::Int64) => {
                    assert_eq!(Some(v.len()), s.len, "{}", s.name);
                    assert_eq!(names.len(), v.len(), "{}", s.name);
                    assert!(v.iter().all(|&x| x as f64 >= s.low), "{}", s.name);
                }
                (Observation::Floats(v), Dtype::Float32) => {
                    assert_eq!(Some(v.len()), s.len, "{}", s.name);
                    assert_eq!(names.len(), v.len(), "{}", s.name);
                    let high = s.high.unwrap_or(f64::MAX);
                    assert!(v.iter().all(|&x| x >= s.low && x <= high), "{}", s.name);
                }
                (Observation::Text(t), Dtype::Text) => {
                    assert!(s.len.is_none() && !t.is_empty(), "{}", s.name)
                }
                (o, d) => panic!("{}: {o:?} is not {d:?}", s.name),
            }
        }
        assert_eq!(
            m.observe(space("irinstructioncount").unwrap()),
            Observation::Ints(vec![2])
        );
        // The digest of the text, as coreutils' `sha1sum` gives it.
        let Observation::Text(d) = m.observe(space("IrSha1").unwrap()) else {
            unreachable!()
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.ll"), m.print()).unwrap();
        let out = std::process::Command::new("sha1sum")
            .arg(dir.path().join("t.ll"))
            .output()
            .unwrap();
        let sum = String::from_utf8(out.stdout).unwrap();
        assert_eq!(d, sum.split_whitespace().next().unwrap());
        let Err(e) = space("instcnt") else {
            panic!("instcnt is no space")
        };
        let e = e.to_string();
        assert!(e.contains("InstCount, Autophase"), "{e}");
        assert!(e.contains("did you mean 'InstCount'"), "{e}");
    }
}
