//! The one registry of passes: the catalog every name resolves through.
//!
//! It holds every Rust pass (by name → constructor), every pass LLVM 19's
//! pipeline parser knows (read at start-up from the linked LLVM, the list
//! `opt-19 --print-passes` prints, with its IR unit), and the passes users
//! define at run time (`:pass`, `:register`, `:plugin`). Unknown names are
//! errors that suggest the nearest names.
//!
//! The registry sits in the pass layer and knows nothing above it: the
//! modules above register into it. Built-in Rust passes and the default
//! pipelines are submitted where they are defined, with
//! `inventory::submit!(registry::BuiltIn { … })` (TVM's
//! `TVM_REGISTER_PASS`), and the linker gathers them; passes defined at run
//! time come through [`define_pass`], [`load_plugin`] and the user layer
//! (which calls [`define_user_pass`]).
//! Config options have their own table, one layer down
//! ([`crate::config`]); the functions here that name them are that table's.
//!
//! Every entry says where it comes from ([`Origin`]); users may redefine
//! only their own passes ([`check_definable`]). [`get_pass`] resolves a
//! name or pipeline text. A plugin's callbacks are kept by the shim and
//! registered in every PassBuilder made afterwards (the cached runners are
//! dropped), and the shim remembers the C++ classes an accepted name builds,
//! so that instruments report them by that name.

use super::{LlvmPass, PassInfo, PassRef};
use crate::error::nearest_names;
use crate::llvm::{self, IrUnit};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

pub use crate::config::{
    declare as register_config, option as config_option, options as config_options,
};
pub use crate::info::base_name;

/// A Rust pass that ships with passlab, submitted by the module that
/// defines it: `inventory::submit!(registry::BuiltIn { info, make })`.
/// `info` is given on its own so that the registry can list a pass without
/// constructing it (a default pipeline's constructor looks passes up here).
pub struct BuiltIn {
    pub info: fn() -> PassInfo,
    pub make: fn() -> PassRef,
}

inventory::collect!(BuiltIn);

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
    /// Written by the user in Rust (`:rust`, then `:register`), with the
    /// word it was registered as (`function_pass`, `module_pass`).
    UserRust(&'static str),
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
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry {
            rust: BTreeMap::new(),
            llvm: llvm_passes(),
        };
        for b in inventory::iter::<BuiltIn> {
            let make = b.make;
            let info = (b.info)();
            let ctor: Constructor = Arc::new(make);
            r.rust
                .insert(info.name.clone(), (ctor, info, Origin::BuiltIn));
        }
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
pub fn define_user_pass<F>(info: PassInfo, kind: &'static str, constructor: F) -> Result<()>
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

/// A pass by name: a Rust pass, or LLVM pipeline text (`instcombine`,
/// `loop-unroll<O3>`, `function(loop-mssa(licm))`, `default<O2>`).
pub fn get_pass(name: &str) -> Result<PassRef> {
    let name = name.trim();
    let ctor = read().rust.get(name).map(|(c, _, _)| c.clone());
    if let Some(ctor) = ctor {
        return Ok(ctor());
    }
    let base = base_name(name);
    // Passes that abort, write files or start programs, anywhere in the
    // text; here as well as in `LlvmPass::new` so that the refusal, which
    // quotes the pass, gets no "did you mean" for it below.
    super::outside::check(name)?;
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
    LlvmPass::new(name)
        .map(|p| Arc::new(p) as PassRef)
        .map_err(|e| match e {
            // LLVM's parser names the word it did not know; suggest ours.
            Error::Pipeline {
                text,
                message,
                suggestions,
            } if suggestions.is_empty() => {
                let suggestions = super::llvm_pass::unknown_name(&message)
                    .map(suggest)
                    .unwrap_or_default();
                Error::Pipeline {
                    text,
                    message,
                    suggestions,
                }
            }
            e => e,
        })
}

/// Ok when `name` names a pass as the settings that name passes take them
/// (`disabled=`, `required=`, the instruments' pass lists): a registered
/// pass (Rust, defined with `:pass`, a user's, LLVM's or a plugin's), or
/// pipeline text a sequential may hold as one element (`loop-mssa(licm)`,
/// `loop-unroll<O3>`: the name its gating sees). Else the error `:run`
/// gives for it: an unknown pass with the nearest names, or LLVM's
/// parser's message.
pub fn check_pass_name(name: &str) -> Result<()> {
    get_pass(name).map(drop)
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

/// Where an LLVM pass comes from (LLVM itself, or the plugin that
/// registered it), by its pipeline name; `None` for a pass of passlab's or a
/// user's (Rust, or defined with `:pass`).
pub fn llvm_origin(name: &str) -> Option<Origin> {
    let name = name.trim();
    let r = read();
    if r.rust.contains_key(name) {
        return None;
    }
    let base = base_name(name);
    if SPECIAL_PIPELINES.contains(&base) {
        return Some(Origin::BuiltIn);
    }
    r.llvm
        .get(name)
        .or_else(|| r.llvm.get(base))
        .map(|e| e.origin.clone())
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
        let (opt_level, description) = super::llvm_pass::defaults(name, base_name(name));
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
