//! What each argument of a command is — a pass, a module, a processor, one
//! of some words — so that one check and one completion serve every
//! command. The command table (`commands::COMMANDS`) declares each
//! command's settings (`key=` values) and positional words by [`Kind`];
//! `Session::execute` checks the settings' values against their kinds
//! before the handler runs, and `language.rs` completes from the same
//! kinds.

use super::Session;
use crate::{registry, Error, Result};

/// The kind of a value a command takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A registered pass, by name (`licm`), or pipeline text a sequential
    /// holds as one element (`loop-mssa(licm)`).
    Pass,
    /// Passes as [`Kind::Pass`], comma-separated.
    Passes,
    /// Passes the printing instruments watch: as [`Kind::Passes`], or the
    /// back end's (`register-coalescer`, `prologepilog`: `:asm` shows
    /// them), comma-separated.
    WatchedPasses,
    /// Passes by the names their remarks carry: registered passes, or the
    /// back end's remark names ([`REMARK_PASSES`]), comma-separated.
    RemarkPasses,
    /// A pipeline as `:run` takes it (its words complete as pass names).
    Pipeline,
    /// A module of the session.
    Module,
    /// Modules of the session, comma-separated.
    Modules,
    /// A function of the current module.
    Function,
    /// Functions of the current module, comma-separated.
    Functions,
    /// An argument of a call: a number, or a buffer of the session.
    CallArg,
    /// A processor LLVM knows for this target (or `host`).
    Cpu,
    /// Processors, comma-separated.
    Cpus,
    /// Processor features with their signs (`+avx2,-fma`, or `host`).
    Features,
    /// A file or folder.
    Path,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// These words, comma-separated.
    ListOf(&'static [&'static str]),
    /// Completes from these words; the handler checks the value (a goal
    /// may also be a mix such as `0.5*size+0.5*runtime`).
    Words(&'static [&'static str]),
    /// A pool of passes: passes or pool names (`size`), comma-separated;
    /// the handler checks it.
    Pool,
    /// A number, a name the command makes, text: the handler checks it.
    Free,
}

/// A `key=` setting a command takes, with the kind of its value; a key
/// ending in `.` (`config.`) is a prefix.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub key: &'static str,
    pub kind: Kind,
}

/// Shorthand for the command table.
pub(crate) const fn set(key: &'static str, kind: Kind) -> Setting {
    Setting { key, kind }
}

/// The names LLVM's back end gives its remarks where they are not a
/// pipeline's pass names (as `:report remarks` shows them), and the few
/// optimization passes whose remarks carry another name than the pass
/// (`loop-deletion` writes `loop-delete`).
pub const REMARK_PASSES: &[&str] = &[
    crate::instrument::SIZE_INFO,
    "asm-printer",
    "loop-delete",
    "machine-outliner",
    "prologepilog",
    "regalloc",
    "sdagisel",
    "shrink-wrap",
    "stack-frame-layout",
    "stack-protector",
];

/// `a,b,,c` as its non-empty items.
fn items(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').filter(|v| !v.is_empty())
}

fn unknown(command: &str, key: &str, message: String, suggestions: Vec<String>) -> Error {
    Error::Command {
        command: command.into(),
        message: if key.is_empty() {
            message
        } else {
            format!("{key}=: {message}")
        },
        suggestions,
    }
}

/// Checks `value`, given to `command` (as `key=` when `key` is not
/// empty), against its kind: a name the session, the registry or LLVM
/// does not know is an error naming the nearest ones or the valid
/// choices.
pub(crate) fn check(s: &Session, command: &str, key: &str, kind: Kind, value: &str) -> Result<()> {
    // `what` says what is missing, `{}` standing for the name.
    let names_in = |what: &str, known: Vec<String>, value: &str| -> Result<()> {
        for v in items(value) {
            if !known.iter().any(|k| k == v) {
                let near = crate::nearest_names(v, known.iter().map(String::as_str));
                let quoted = format!("'{v}'");
                return Err(unknown(command, key, what.replace("{}", &quoted), near));
            }
        }
        Ok(())
    };
    match kind {
        Kind::Pass | Kind::Passes | Kind::WatchedPasses => {
            for v in items(value) {
                // The back end's passes, which :asm's instruments see.
                if kind == Kind::WatchedPasses
                    && crate::llvm::backend_pass_names().iter().any(|b| b == v)
                {
                    continue;
                }
                match registry::check_pass_name(v) {
                    Ok(()) => {}
                    Err(Error::UnknownPass { name, suggestions }) => {
                        return Err(unknown(
                            command,
                            key,
                            format!("unknown pass '{name}' (:passes lists them)"),
                            suggestions,
                        ))
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }
        Kind::RemarkPasses => {
            for v in items(value) {
                if REMARK_PASSES.contains(&v) || registry::check_pass_name(v).is_ok() {
                    continue;
                }
                let names: Vec<String> = registry::passes()
                    .into_iter()
                    .map(|p| p.name)
                    .chain(REMARK_PASSES.iter().map(|p| p.to_string()))
                    .collect();
                let near = crate::nearest_names(v, names.iter().map(String::as_str));
                return Err(unknown(
                    command,
                    key,
                    format!(
                        "'{v}' is neither a pass nor a name the back end's remarks carry ({})",
                        REMARK_PASSES.join(", ")
                    ),
                    near,
                ));
            }
            Ok(())
        }
        Kind::Module | Kind::Modules => names_in(
            "no module {} (:modules lists them)",
            s.modules.keys().cloned().collect(),
            value,
        ),
        // Against the current module, when there is one (an instrument
        // may be set up before any module is loaded).
        Kind::Function | Kind::Functions => match s.module() {
            Ok(m) => names_in(
                &format!(
                    "no function {{}} in module '{}' (:stats lists them)",
                    s.current.as_deref().unwrap_or("")
                ),
                m.function_names(),
                value,
            ),
            Err(_) => Ok(()),
        },
        Kind::Cpu | Kind::Cpus => {
            for v in items(value) {
                crate::llvm::check_cpu(v).map_err(|why| {
                    unknown(
                        command,
                        key,
                        format!("unknown processor '{v}': expects {why}"),
                        vec![],
                    )
                })?;
            }
            Ok(())
        }
        Kind::Features => crate::llvm::check_features(value)
            .map_err(|why| unknown(command, key, format!("expects {why}"), vec![])),
        Kind::OneOf(words) | Kind::ListOf(words) => {
            let list: Vec<&str> = match kind {
                Kind::OneOf(_) => vec![value],
                _ => items(value).collect(),
            };
            for v in list {
                if !words.contains(&v) {
                    // Nearest names only when they narrow the choice.
                    let mut near = crate::nearest_names(v, words.iter().copied());
                    if near.len() >= words.len().min(4) {
                        near.clear();
                    }
                    return Err(unknown(
                        command,
                        key,
                        format!("expects {}, got '{v}'", words.join(", ")),
                        near,
                    ));
                }
            }
            Ok(())
        }
        Kind::Pipeline | Kind::CallArg | Kind::Path | Kind::Words(_) | Kind::Pool | Kind::Free => {
            Ok(())
        }
    }
}

/// The candidates for a word of `kind` (the part after the last comma in
/// a list), before filtering by what is typed, for the kinds whose names
/// are not the session's (modules, functions and buffers are: see
/// `language::Names`); paths are completed separately ([`paths`]).
pub(crate) fn candidates(kind: Kind) -> Vec<String> {
    let passes = || registry::passes().into_iter().map(|p| p.name);
    match kind {
        Kind::Pass | Kind::Passes | Kind::Pipeline => passes().collect(),
        Kind::WatchedPasses => passes()
            .chain(crate::llvm::backend_pass_names().iter().cloned())
            .collect(),
        Kind::Pool => crate::tune::POOLS
            .iter()
            .map(|(p, _)| p.to_string())
            .chain(passes())
            .collect(),
        Kind::RemarkPasses => passes()
            .chain(REMARK_PASSES.iter().map(|p| p.to_string()))
            .collect(),
        Kind::Cpu | Kind::Cpus => std::iter::once("host".to_string())
            .chain(crate::llvm::cpu_names())
            .collect(),
        Kind::Features => std::iter::once("host".to_string())
            .chain(
                crate::llvm::feature_names()
                    .into_iter()
                    .flat_map(|f| [format!("+{f}"), format!("-{f}")]),
            )
            .collect(),
        Kind::OneOf(words) | Kind::ListOf(words) | Kind::Words(words) => {
            words.iter().map(|w| w.to_string()).collect()
        }
        Kind::Module
        | Kind::Modules
        | Kind::Function
        | Kind::Functions
        | Kind::CallArg
        | Kind::Path
        | Kind::Free => Vec::new(),
    }
}

/// The candidates for a pass inside LLVM's adaptor `adaptor` of pipeline
/// text, as LLVM's pipeline grammar nests them: module passes (and the
/// `cgscc`, `function` adaptors) in `module(`, CGSCC passes (and
/// `function`) in `cgscc(` or `devirt<N>(`, function passes (and the loop
/// adaptors) in `function(`, loop and loop-nest passes in `loop(` and
/// `loop-mssa(`; `repeat<N>(` takes what the adaptor around it takes.
/// At the top (no adaptor) every pass; Rust passes only there, since inside an
/// adaptor LLVM parses the text.
pub(crate) fn pipeline_candidates(adaptors: &[&str]) -> Vec<String> {
    use crate::llvm::IrUnit;
    let Some(adaptor) = adaptors.iter().rev().find(|a| **a != "repeat") else {
        return candidates(Kind::Pipeline);
    };
    let (units, nested): (&[IrUnit], &[&str]) = match *adaptor {
        "module" => (&[IrUnit::Module], &["module", "cgscc", "function"]),
        "cgscc" | "devirt" => (&[IrUnit::Cgscc], &["cgscc", "function"]),
        "function" => (&[IrUnit::Function], &["function", "loop", "loop-mssa"]),
        "loop" | "loop-mssa" => (&[IrUnit::Loop, IrUnit::Other], &["loop"]),
        // An adaptor LLVM does not have: nothing fits inside it.
        _ => return Vec::new(),
    };
    registry::passes()
        .into_iter()
        .filter(
            |p| matches!(&p.kind, registry::PassKind::Llvm { unit, .. } if units.contains(unit)),
        )
        .map(|p| p.name)
        .chain(nested.iter().map(|n| n.to_string()))
        .collect()
}

/// Whether a value of `kind` is a comma-separated list (completion starts
/// after the last comma).
pub(crate) fn is_list(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Passes
            | Kind::WatchedPasses
            | Kind::RemarkPasses
            | Kind::Modules
            | Kind::Functions
            | Kind::Cpus
            | Kind::Features
            | Kind::ListOf(_)
            | Kind::Pool
            | Kind::Pipeline
    )
}

/// Paths that complete `typed`: entries of its folder (relative ones also
/// in the folders `:load` searches, `search`), folders with a `/` after
/// them, hidden entries only when `typed`'s name starts with a dot.
pub(crate) fn paths(typed: &str, search: &[std::path::PathBuf]) -> Vec<String> {
    let (dir, stem) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let expanded = match dir.strip_prefix("~/") {
        Some(rest) => std::env::var("HOME").map_or(dir.to_string(), |h| format!("{h}/{rest}")),
        None => dir.to_string(),
    };
    let roots: Vec<std::path::PathBuf> = if expanded.starts_with('/') {
        vec![std::path::PathBuf::from(&expanded)]
    } else {
        search.iter().map(|r| r.join(&expanded)).collect()
    };
    let mut out = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(if root.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            &root
        }) else {
            continue;
        };
        for e in entries.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if !name.starts_with(stem) || (name.starts_with('.') && !stem.starts_with('.')) {
                continue;
            }
            let folder = e.path().is_dir();
            out.push(format!("{dir}{name}{}", if folder { "/" } else { "" }));
            if out.len() > 1000 {
                return out;
            }
        }
    }
    out
}
