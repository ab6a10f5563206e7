//! The one registry of passes and config options.
//!
//! It holds every Rust pass (by name → constructor), every pass LLVM 19's
//! pipeline parser knows (read at start-up from the linked LLVM, the list
//! `opt-19 --print-passes` prints, with its IR unit), and every declared
//! config option. Unknown names are errors that suggest the nearest names.

use crate::config::ConfigOption;
use crate::error::nearest_names;
use crate::llvm::{self, IrUnit};
use crate::pass::{LlvmPass, PassInfo, PassRef, PrintIr};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

/// What kind of pass a registry entry is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PassKind {
    /// A pass written in Rust (module, function or sequential).
    Rust,
    /// An LLVM pass working on the given IR unit. `params` is the parameter
    /// syntax LLVM documents (`loop-unroll<O0;O1;…>`), if it takes any.
    Llvm {
        unit: IrUnit,
        params: Option<String>,
    },
}

/// One row of the registry, as `:passes` lists it.
#[derive(Clone, Debug)]
pub struct PassEntry {
    pub name: String,
    pub kind: PassKind,
    pub opt_level: u32,
    pub description: String,
}

type Constructor = Arc<dyn Fn() -> PassRef + Send + Sync>;

struct Registry {
    rust: BTreeMap<String, (Constructor, PassInfo)>,
    llvm: BTreeMap<String, PassEntry>,
    config: BTreeMap<String, ConfigOption>,
    /// Rust passes defined at run time (`:pass NAME = …`), which a new
    /// definition may replace.
    defined: std::collections::BTreeSet<String>,
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry {
            rust: BTreeMap::new(),
            llvm: llvm_passes(),
            config: BTreeMap::new(),
            defined: Default::default(),
        };
        for option in crate::pass::config_options() {
            r.config.insert(option.key.clone(), option);
        }
        for option in crate::jit::config_options() {
            r.config.insert(option.key.clone(), option);
        }
        for option in crate::passes::config_options() {
            r.config.insert(option.key.clone(), option);
        }
        for ctor in crate::passes::builtin() {
            let info = ctor().info().clone();
            r.rust.insert(info.name.clone(), (ctor, info));
        }
        for level in 0..=3u32 {
            // The default pipelines by name, so that `O2` works wherever a
            // pass name does. Their info is written out here: constructing
            // one needs this registry, which is not built yet.
            let ctor: Constructor = Arc::new(move || {
                crate::pipeline::default_pipeline(level)
                    .expect("the default pipelines consist of registered passes")
            });
            let info = crate::pipeline::default_pipeline_info(level);
            r.rust.insert(info.name.clone(), (ctor, info));
        }
        let print_ir: Constructor = Arc::new(|| Arc::new(PrintIr::new("")) as PassRef);
        let info = print_ir().info().clone();
        r.rust.insert(info.name.clone(), (print_ir, info));
        RwLock::new(r)
    })
}

fn read() -> std::sync::RwLockReadGuard<'static, Registry> {
    registry()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write() -> std::sync::RwLockWriteGuard<'static, Registry> {
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers a Rust pass under the name its info gives. A name already taken
/// (by a Rust or LLVM pass) is an error.
///
/// ```
/// use passlab::{registry, FunctionPass, PassInfo, PassRef};
/// use std::sync::Arc;
/// registry::register_pass(|| -> PassRef {
///     Arc::new(FunctionPass::new(PassInfo::new("noop-doc", 1), |_f, _ctx| Ok(())))
/// })
/// .unwrap();
/// assert_eq!(registry::get_pass("noop-doc").unwrap().info().opt_level, 1);
/// ```
pub fn register_pass<F>(constructor: F) -> Result<()>
where
    F: Fn() -> PassRef + Send + Sync + 'static,
{
    let info = constructor().info().clone();
    let mut r = write();
    if r.rust.contains_key(&info.name) || r.llvm.contains_key(&info.name) {
        return Err(Error::Invalid(format!(
            "a pass named '{}' is already registered",
            info.name
        )));
    }
    r.rust
        .insert(info.name.clone(), (Arc::new(constructor), info));
    Ok(())
}

/// Registers (or replaces) a pass defined at run time, such as a named
/// sequential from `:pass NAME = PIPELINE`. Only passes defined this way can
/// be replaced; the name of a built-in Rust pass or an LLVM pass is an error.
pub fn define_pass<F>(constructor: F) -> Result<()>
where
    F: Fn() -> PassRef + Send + Sync + 'static,
{
    let info = constructor().info().clone();
    let base = base_name(&info.name);
    if info.name != base || info.name.contains(',') || info.name.is_empty() {
        return Err(Error::Invalid(format!(
            "'{}' cannot name a pass: use letters, digits, '-' and '_'",
            info.name
        )));
    }
    let mut r = write();
    let taken = r.llvm.contains_key(&info.name)
        || SPECIAL_PIPELINES.contains(&info.name.as_str())
        || (r.rust.contains_key(&info.name) && !r.defined.contains(&info.name));
    if taken {
        return Err(Error::Invalid(format!(
            "'{}' is a built-in pass; choose another name",
            info.name
        )));
    }
    r.defined.insert(info.name.clone());
    r.rust
        .insert(info.name.clone(), (Arc::new(constructor), info));
    Ok(())
}

/// Declares a config option; re-declaring a key is an error.
pub fn register_config(option: ConfigOption) -> Result<()> {
    let mut r = write();
    if r.config.contains_key(&option.key) {
        return Err(Error::Invalid(format!(
            "config option '{}' is already declared",
            option.key
        )));
    }
    r.config.insert(option.key.clone(), option);
    Ok(())
}

/// The declared option `key`; an unknown key lists the valid ones.
pub fn config_option(key: &str) -> Result<ConfigOption> {
    let r = read();
    r.config
        .get(key)
        .cloned()
        .ok_or_else(|| Error::UnknownConfig {
            key: key.to_string(),
            valid: r.config.keys().cloned().collect(),
            suggestions: nearest_names(key, r.config.keys().map(String::as_str)),
        })
}

/// All declared options, by key.
pub fn config_options() -> Vec<ConfigOption> {
    read().config.values().cloned().collect()
}

/// A pass by name: a Rust pass, or LLVM pipeline text (`instcombine`,
/// `loop-unroll<O3>`, `function(loop-mssa(licm))`, `default<O2>`).
pub fn get_pass(name: &str) -> Result<PassRef> {
    let name = name.trim();
    let ctor = read().rust.get(name).map(|(c, _)| c.clone());
    if let Some(ctor) = ctor {
        return Ok(ctor());
    }
    let base = base_name(name);
    if REFUSED.contains(&base) {
        return Err(Error::Invalid(format!(
            "LLVM pass '{base}' aborts the process on purpose; passlab does not run it"
        )));
    }
    let known = name.contains('(') || SPECIAL_PIPELINES.contains(&base) || {
        let r = read();
        r.llvm.contains_key(name) || r.llvm.contains_key(base)
    };
    if !known {
        return Err(Error::UnknownPass {
            name: name.to_string(),
            suggestions: suggest(name),
        });
    }
    Ok(Arc::new(LlvmPass::new(name)?))
}

/// Every registered pass, Rust passes first, each group by name.
pub fn passes() -> Vec<PassEntry> {
    let r = read();
    let rust = r.rust.values().map(|(_, info)| PassEntry {
        name: info.name.clone(),
        kind: PassKind::Rust,
        opt_level: info.opt_level,
        description: info.description.clone(),
    });
    rust.chain(r.llvm.values().cloned()).collect()
}

/// The registered names nearest to `name`.
pub fn suggest(name: &str) -> Vec<String> {
    let r = read();
    let names = r
        .rust
        .keys()
        .chain(r.llvm.keys())
        .map(String::as_str)
        .chain(SPECIAL_PIPELINES.iter().copied());
    nearest_names(base_name(name), names)
}

/// The pass name in pipeline text: `loop-unroll` in `loop-unroll<O3>`.
pub fn base_name(text: &str) -> &str {
    let end = text.find(['<', '(']).unwrap_or(text.len());
    text[..end].trim()
}

/// LLVM passes that crash the process on purpose.
const REFUSED: &[&str] = &["trigger-crash-module", "trigger-crash-function"];

/// Pipelines LLVM's parser builds itself (not listed by `--print-passes`).
const SPECIAL_PIPELINES: &[&str] = &[
    "default",
    "thinlto-pre-link",
    "thinlto",
    "lto-pre-link",
    "lto",
    "function",
    "cgscc",
    "loop",
    "loop-mssa",
];

/// Opt levels and descriptions for the LLVM passes people use most; every
/// other LLVM pass has opt level 0 (it runs whenever it is listed).
const LLVM_DEFAULTS: &[(&str, u32, &str)] = &[
    ("mem2reg", 1, "promote allocas to SSA registers"),
    ("sroa", 1, "scalar replacement of aggregates"),
    ("early-cse", 1, "early common subexpression elimination"),
    ("simplifycfg", 1, "simplify the control-flow graph"),
    ("instcombine", 1, "combine redundant instructions"),
    ("instsimplify", 1, "remove redundant instructions"),
    ("dce", 1, "dead code elimination"),
    ("adce", 1, "aggressive dead code elimination"),
    ("sccp", 1, "sparse conditional constant propagation"),
    (
        "ipsccp",
        1,
        "interprocedural sparse conditional constant propagation",
    ),
    ("reassociate", 1, "reassociate expressions"),
    ("globalopt", 1, "optimize global variables"),
    ("globaldce", 1, "remove unreachable globals"),
    ("deadargelim", 1, "remove dead arguments"),
    ("function-attrs", 1, "infer function attributes"),
    (
        "correlated-propagation",
        1,
        "value propagation from conditions",
    ),
    ("jump-threading", 1, "thread jumps through conditions"),
    ("tailcallelim", 1, "tail call elimination"),
    ("loop-rotate", 1, "rotate loops"),
    ("loop-simplify", 1, "canonicalize natural loops"),
    ("lcssa", 1, "loop-closed SSA form"),
    ("indvars", 1, "canonicalize induction variables"),
    ("loop-deletion", 1, "delete dead loops"),
    ("loop-idiom", 1, "recognize loop idioms (memset, memcpy)"),
    ("memcpyopt", 1, "optimize memcpy and memset"),
    ("always-inline", 0, "inline always_inline functions"),
    ("inline", 2, "the function inliner"),
    ("gvn", 2, "global value numbering"),
    ("newgvn", 2, "global value numbering (NewGVN)"),
    ("licm", 2, "loop-invariant code motion"),
    ("dse", 2, "dead store elimination"),
    ("mldst-motion", 2, "merged load/store motion"),
    ("bdce", 2, "bit-tracking dead code elimination"),
    (
        "argpromotion",
        2,
        "promote by-reference arguments to scalars",
    ),
    ("simple-loop-unswitch", 2, "unswitch loops"),
    ("loop-unroll", 2, "unroll loops"),
    ("loop-vectorize", 2, "vectorize loops"),
    (
        "slp-vectorizer",
        2,
        "superword-level parallelism vectorizer",
    ),
    (
        "aggressive-instcombine",
        3,
        "expensive instruction combining",
    ),
    ("loop-unroll-and-jam", 3, "unroll and jam loop nests"),
    ("loop-interchange", 3, "interchange loops in a nest"),
    ("loop-fusion", 3, "fuse adjacent loops"),
    ("callsite-splitting", 3, "split call sites on conditions"),
];

/// Opt level and description of an LLVM pipeline text with base name `base`.
pub(crate) fn llvm_pass_defaults(text: &str, base: &str) -> (u32, String) {
    if matches!(
        base,
        "default" | "thinlto-pre-link" | "thinlto" | "lto-pre-link" | "lto"
    ) {
        let level = text
            .find("<O")
            .and_then(|i| text[i + 2..].chars().next())
            .and_then(|c| c.to_digit(10));
        let level = level.unwrap_or(2);
        return (level, format!("LLVM's standard {base} pipeline"));
    }
    if text != base {
        return (0, "an LLVM pipeline".into());
    }
    LLVM_DEFAULTS
        .iter()
        .find(|(n, _, _)| *n == base)
        .map(|(_, level, d)| (*level, d.to_string()))
        .unwrap_or((0, String::new()))
}

/// Reads the passes the linked LLVM's parser knows from its
/// `--print-passes` listing. Analyses and machine passes are left out (they
/// are not passes one can list in an IR pipeline).
fn llvm_passes() -> BTreeMap<String, PassEntry> {
    let listing = llvm::print_passes().unwrap_or_default();
    parse_pass_listing(&listing)
}

fn parse_pass_listing(listing: &str) -> BTreeMap<String, PassEntry> {
    let mut out: BTreeMap<String, PassEntry> = BTreeMap::new();
    let mut section: Option<(IrUnit, bool)> = None;
    for line in listing.lines() {
        if !line.starts_with(' ') {
            let header = line.trim_end_matches(':');
            section = if header.contains("analyses") || header.starts_with("Machine") {
                None
            } else {
                let unit = match header.split_whitespace().next() {
                    Some("Module") => IrUnit::Module,
                    Some("CGSCC") => IrUnit::Cgscc,
                    Some("Function") => IrUnit::Function,
                    Some("Loop") => IrUnit::Loop,
                    _ => IrUnit::Other,
                };
                Some((unit, header.ends_with("with params")))
            };
            continue;
        }
        let Some((unit, with_params)) = section else {
            continue;
        };
        let entry = line.trim();
        if entry.is_empty() {
            continue;
        }
        let name = if with_params { base_name(entry) } else { entry };
        let (opt_level, description) = llvm_pass_defaults(name, base_name(name));
        let e = out.entry(name.to_string()).or_insert_with(|| PassEntry {
            name: name.to_string(),
            kind: PassKind::Llvm { unit, params: None },
            opt_level,
            description,
        });
        if with_params {
            e.kind = PassKind::Llvm {
                unit,
                params: Some(entry.to_string()),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_gives_units_and_params() {
        let listing = "Module passes:\n  globaldce\nModule passes with params:\n  globaldce<in-lto-post-link>\nModule analyses:\n  callgraph\nLoop passes:\n  licm\nMachine function passes (WIP):\n  foo\n";
        let passes = parse_pass_listing(listing);
        assert_eq!(passes.len(), 2);
        assert_eq!(
            passes["globaldce"].kind,
            PassKind::Llvm {
                unit: IrUnit::Module,
                params: Some("globaldce<in-lto-post-link>".into())
            }
        );
        assert_eq!(
            passes["licm"].kind,
            PassKind::Llvm {
                unit: IrUnit::Loop,
                params: None
            }
        );
        assert_eq!(passes["licm"].opt_level, 2);
    }

    #[test]
    fn base_names() {
        assert_eq!(base_name("loop-unroll<O3>"), "loop-unroll");
        assert_eq!(base_name("function(licm)"), "function");
        assert_eq!(base_name("gvn"), "gvn");
    }

    #[test]
    fn registry_knows_llvm_passes_with_units() {
        let all = passes();
        let unit = |n: &str| {
            all.iter().find(|e| e.name == n).and_then(|e| match e.kind {
                PassKind::Llvm { unit, .. } => Some(unit),
                PassKind::Rust => None,
            })
        };
        assert_eq!(unit("instcombine"), Some(IrUnit::Function));
        assert_eq!(unit("inline"), Some(IrUnit::Cgscc));
        assert_eq!(unit("licm"), Some(IrUnit::Loop));
        assert_eq!(unit("globaldce"), Some(IrUnit::Module));
        assert!(
            all.iter()
                .filter(|e| matches!(e.kind, PassKind::Llvm { .. }))
                .count()
                > 300
        );
    }
}
