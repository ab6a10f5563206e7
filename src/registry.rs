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
use crate::user::UserKind;
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

/// Where a pass comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Ships with passlab, or is one of LLVM's own.
    BuiltIn,
    /// A named sequential defined at run time (`:pass NAME = PIPELINE`).
    Defined,
    /// Written by the user in Rust (`:rust`, then `:register`).
    UserRust(UserKind),
    /// Registered by an LLVM pass plugin (`:plugin PATH`), the path given.
    Plugin(String),
}

impl Origin {
    /// Whether a user made it (a new definition may replace it).
    pub fn is_user(&self) -> bool {
        matches!(self, Origin::Defined | Origin::UserRust(_))
    }
}

/// One row of the registry, as `:passes` lists it.
#[derive(Clone, Debug)]
pub struct PassEntry {
    pub name: String,
    pub kind: PassKind,
    pub opt_level: u32,
    pub description: String,
    pub origin: Origin,
}

type Constructor = Arc<dyn Fn() -> PassRef + Send + Sync>;

struct Registry {
    /// Rust passes: constructor, info, and where each comes from.
    rust: BTreeMap<String, (Constructor, PassInfo, Origin)>,
    llvm: BTreeMap<String, PassEntry>,
    config: BTreeMap<String, ConfigOption>,
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry {
            rust: BTreeMap::new(),
            llvm: llvm_passes(),
            config: BTreeMap::new(),
        };
        for option in crate::pass::config_options() {
            r.config.insert(option.key.clone(), option);
        }
        for option in crate::passes::config_options() {
            r.config.insert(option.key.clone(), option);
        }
        for option in crate::user::config_options() {
            r.config.insert(option.key.clone(), option);
        }
        for ctor in crate::passes::builtin() {
            let info = ctor().info().clone();
            r.rust
                .insert(info.name.clone(), (ctor, info, Origin::BuiltIn));
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
            r.rust
                .insert(info.name.clone(), (ctor, info, Origin::BuiltIn));
        }
        let print_ir: Constructor = Arc::new(|| Arc::new(PrintIr::new("")) as PassRef);
        let info = print_ir().info().clone();
        r.rust
            .insert(info.name.clone(), (print_ir, info, Origin::BuiltIn));
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
    r.rust.insert(
        info.name.clone(),
        (Arc::new(constructor), info, Origin::BuiltIn),
    );
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
    check_definable(&info.name)?;
    write().rust.insert(
        info.name.clone(),
        (Arc::new(constructor), info, Origin::Defined),
    );
    Ok(())
}

/// Registers (or replaces) a pass the user wrote in Rust, with its info;
/// the same names are allowed as for [`define_pass`].
pub(crate) fn define_user_pass<F>(info: PassInfo, kind: UserKind, constructor: F) -> Result<()>
where
    F: Fn() -> PassRef + Send + Sync + 'static,
{
    check_definable(&info.name)?;
    write().rust.insert(
        info.name.clone(),
        (Arc::new(constructor), info, Origin::UserRust(kind)),
    );
    Ok(())
}

/// Ok when a user may (re)define a pass called `name`: a plain name, not
/// one of LLVM's passes, a plugin's or a built-in Rust pass.
pub fn check_definable(name: &str) -> Result<()> {
    let base = base_name(name);
    if name != base || name.contains(',') || name.is_empty() {
        return Err(Error::Invalid(format!(
            "'{name}' cannot name a pass: use letters, digits, '-' and '_'"
        )));
    }
    let r = read();
    let taken = r.llvm.contains_key(name)
        || SPECIAL_PIPELINES.contains(&name)
        || r.rust
            .get(name)
            .is_some_and(|(_, _, origin)| !origin.is_user());
    if taken {
        return Err(Error::Invalid(format!(
            "'{name}' is a built-in pass; choose another name"
        )));
    }
    Ok(())
}

/// Forgets a pass a user defined (`:reset`).
pub(crate) fn remove_defined(name: &str) {
    let mut r = write();
    if r.rust.get(name).is_some_and(|(_, _, o)| o.is_user()) {
        r.rust.remove(name);
    }
}

/// Loads an LLVM pass plugin (a new-pass-manager plugin, as `opt
/// -load-pass-plugin` takes) and adds the passes it registers to the
/// registry, by the names it registers them under, with their IR unit. LLVM
/// has no list of a plugin's names, so passlab finds them: every string in
/// the plugin that looks like a pass name is offered to LLVM's parser, and
/// those it now accepts (and did not before) are the plugin's. Passes the
/// plugin adds at extension points run inside LLVM's default pipelines.
pub fn load_plugin(path: &std::path::Path) -> Result<Vec<PassEntry>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path.display(), e))?;
    let canonical = path
        .canonicalize()
        .map_err(|e| Error::io(path.display(), e))?
        .display()
        .to_string();
    if read()
        .llvm
        .values()
        .any(|e| e.origin == Origin::Plugin(canonical.clone()))
    {
        return Err(Error::Invalid(format!(
            "plugin {canonical} is loaded already"
        )));
    }
    llvm::load_plugin(path)?;
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| canonical.clone());
    let mut found = Vec::new();
    for name in name_like_strings(&bytes) {
        let known = {
            let r = read();
            r.llvm.contains_key(&name) || r.rust.contains_key(&name)
        } || SPECIAL_PIPELINES.contains(&name.as_str());
        if known {
            continue;
        }
        if let Some((unit, _classes)) = llvm::pass_unit(&name, true)? {
            found.push(PassEntry {
                name: name.clone(),
                kind: PassKind::Llvm { unit, params: None },
                opt_level: 0,
                description: format!("a pass of the plugin {file}"),
                origin: Origin::Plugin(canonical.clone()),
            });
        }
    }
    let mut r = write();
    for e in &found {
        r.llvm.insert(e.name.clone(), e.clone());
    }
    Ok(found)
}

/// The NUL-terminated strings in `bytes` that could be pass names: a
/// lowercase letter, then lowercase letters, digits, `-`, `_` or `.`.
fn name_like_strings(bytes: &[u8]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for chunk in bytes.split(|&b| b == 0) {
        let ok = chunk.len() >= 2
            && chunk.len() <= 64
            && chunk[0].is_ascii_lowercase()
            && chunk.iter().all(|&b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
            });
        if ok {
            out.insert(String::from_utf8_lossy(chunk).into_owned());
        }
    }
    out.into_iter().collect()
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
    let ctor = read().rust.get(name).map(|(c, _, _)| c.clone());
    if let Some(ctor) = ctor {
        return Ok(ctor());
    }
    let base = base_name(name);
    // Anywhere in the text: `function(trigger-crash-function)` too.
    let words = name.split(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)));
    if let Some(refused) = words.into_iter().find(|w| REFUSED.contains(w)) {
        return Err(Error::Invalid(format!(
            "LLVM pass '{refused}' aborts the process on purpose; passlab does not run it"
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
    let rust = r.rust.values().map(|(_, info, origin)| PassEntry {
        name: info.name.clone(),
        kind: PassKind::Rust,
        opt_level: info.opt_level,
        description: info.description.clone(),
        origin: origin.clone(),
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

pub use crate::info::base_name;

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
            origin: Origin::BuiltIn,
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

    /// A refused pass nested in an adaptor ran (the check read only the
    /// text's outer name): found while fixing the fuzzer's first crash.
    #[test]
    fn passes_that_abort_are_refused_anywhere_in_a_pipeline() {
        for text in [
            "trigger-crash-module",
            "function(trigger-crash-function)",
            "module(function(trigger-crash-function))",
        ] {
            let e = get_pass(text).map(|_| ()).unwrap_err().to_string();
            assert!(e.contains("aborts the process on purpose"), "{text}: {e}");
        }
        assert!(get_pass("function(instcombine)").is_ok());
    }

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
    fn name_like_strings_are_c_strings_of_pass_name_characters() {
        let bytes = b"\0hello-pass\0_ZN4llvm3FooE\0Mixed\0x\0two.words\0a b\0";
        assert_eq!(name_like_strings(bytes), ["hello-pass", "two.words"]);
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
