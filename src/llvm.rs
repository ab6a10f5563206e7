//! LLVM's new pass manager, driven through the shim: pipeline parsing and
//! running with hooks that see every pass LLVM runs, and the pipeline
//! tuning options.
//!
//! A shim `Runner` keeps a PassBuilder and its four analysis managers alive
//! across runs (the analyses cleared after each); runners are cached per
//! thread by target triple, tuning options and target, so a cheap pass on
//! a small module pays for LLVM's set-up once, not on every run. The
//! pipeline itself is parsed anew on every run: some LLVM passes are
//! single-use (`ModuleInlinerWrapperPass` moves its inner pass manager away
//! when it runs).
//!
//! `Hooks` is what the shim's instrumentation callbacks reach, through
//! trampolines that catch panics. An LLVM fatal error during a run is
//! caught by the shim's guard (`shim/guard.h`); the runner is then poisoned
//! (dropped from the cache, never used or freed again) and so is the module
//! it ran on, which the failing pass replaces with its snapshot.

use crate::ffi;
use crate::{Error, Result};
use llvm_sys::prelude::LLVMModuleRef;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::os::raw::c_char;
use std::rc::Rc;

pub use crate::ffi::Tuning;

/// The IR unit a pass works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IrUnit {
    Module,
    Cgscc,
    Function,
    Loop,
    /// LLVM's loop-nest passes, and anything else.
    Other,
}

impl IrUnit {
    pub(crate) fn from_code(code: i32) -> IrUnit {
        match code {
            0 => IrUnit::Module,
            1 => IrUnit::Cgscc,
            2 => IrUnit::Function,
            3 => IrUnit::Loop,
            _ => IrUnit::Other,
        }
    }

    pub(crate) fn code(self) -> i32 {
        match self {
            IrUnit::Module => 0,
            IrUnit::Cgscc => 1,
            IrUnit::Function => 2,
            IrUnit::Loop => 3,
            IrUnit::Other => 4,
        }
    }

    /// The word LLVM uses (`module`, `cgscc`, `function`, `loop`).
    pub fn as_str(self) -> &'static str {
        match self {
            IrUnit::Module => "module",
            IrUnit::Cgscc => "cgscc",
            IrUnit::Function => "function",
            IrUnit::Loop => "loop",
            IrUnit::Other => "other",
        }
    }
}

impl std::fmt::Display for IrUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// clang-19's tuning options at the one -O level `pipeline` names (none
/// when it names no level or several). As clang's BackendUtil sets them:
/// unrolling and interleaving from `-funroll-loops` (on above -O1, and for
/// -Os and -Oz, whose optimization level is 2); the loop vectorizer at
/// -O2, -O3 and -Os; the SLP vectorizer at those and -Oz; the call-graph
/// profile with the integrated assembler (always, here); no mergefunc.
pub(crate) fn clang_tuning(pipeline: &str) -> Option<Tuning> {
    let mut level: Option<&str> = None;
    for (at, _) in pipeline.match_indices("<O") {
        let name = pipeline.get(at + 1..at + 3)?;
        if pipeline.get(at + 3..at + 4) != Some(">") {
            continue;
        }
        match level {
            Some(l) if l != name => return None,
            _ => level = Some(name),
        }
    }
    let (unroll, loops, slp) = match level? {
        "O0" => return None,
        "O1" => (false, false, false),
        "O2" | "O3" | "Os" => (true, true, true),
        "Oz" => (true, false, true),
        _ => return None,
    };
    Some(Tuning {
        loop_vectorization: loops,
        slp_vectorization: slp,
        loop_interleaving: unroll,
        loop_unrolling: unroll,
        merge_functions: false,
        call_graph_profile: true,
        inliner_threshold: -1,
    })
}

impl Default for Tuning {
    /// LLVM's own defaults (`PipelineTuningOptions()`), as `opt-19` uses them.
    fn default() -> Tuning {
        let mut t = Tuning {
            loop_interleaving: false,
            loop_vectorization: false,
            slp_vectorization: false,
            loop_unrolling: false,
            merge_functions: false,
            call_graph_profile: false,
            inliner_threshold: 0,
        };
        // SAFETY: `t` is a live, fully initialised `#[repr(C)]` `Tuning`
        // (the shim's `plab_tuning`), which the shim only writes.
        unsafe { ffi::plab_tuning_defaults(&mut t) };
        t
    }
}

/// An IR unit during a hook: its kind and LLVM's object (Module*,
/// LazyCallGraph::SCC*, Function* or Loop*), valid during the hook only.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UnitRef {
    pub kind: IrUnit,
    pub handle: *const c_void,
}

/// Callbacks for the passes LLVM runs inside one pipeline. Pass managers and
/// adaptors are filtered out; `should_run` is asked only for optional passes.
/// `after` gets no unit (`handle` null) when the pass deleted it, and
/// `preserved_all` when the pass reported that it changed nothing.
pub(crate) trait Hooks {
    fn should_run(&mut self, _pass: &str, _unit: UnitRef, _name: &str) -> bool {
        true
    }
    fn before(&mut self, _pass: &str, _unit: UnitRef, _name: &str) {}
    fn after(&mut self, _pass: &str, _unit: UnitRef, _invalidated: bool, _preserved_all: bool) {}
}

struct RunnerHandle {
    raw: *mut ffi::Runner,
    busy: Cell<bool>,
    /// A fatal error abandoned a run: its state is unknown, so it is
    /// never used or freed again.
    poisoned: Cell<bool>,
}

impl Drop for RunnerHandle {
    fn drop(&mut self) {
        if !self.poisoned.get() {
            // SAFETY: `self.raw` came from `plab_runner_new` (checked
            // non-null), is owned by this handle alone and freed once, here;
            // a runner a fatal error abandoned is poisoned and never freed.
            unsafe { ffi::plab_runner_free(self.raw) }
        }
    }
}

thread_local! {
    /// Modules a fatal error left in an unknown state: never disposed.
    static POISONED: RefCell<std::collections::HashSet<usize>> = RefCell::default();
}

/// Whether a fatal error during a run left `module` in an unknown state
/// (its owner must not dispose it; the pass that failed restores a
/// snapshot in its place).
pub(crate) fn is_poisoned(module: llvm_sys::prelude::LLVMModuleRef) -> bool {
    POISONED.with(|p| p.borrow().contains(&(module as usize)))
}

/// Forgets a poisoned module's address once its owner has let it go (the
/// address may be reused by a new module).
pub(crate) fn forget_poisoned(module: llvm_sys::prelude::LLVMModuleRef) {
    POISONED.with(|p| p.borrow_mut().remove(&(module as usize)));
}

/// The processor code is optimized and generated for. Empty strings mean
/// the module's own (what clang wrote into each function: its default,
/// `x86-64`), as `opt` does.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Target {
    pub cpu: String,
    pub features: String,
}

impl Target {
    /// `cpu` and `features` as the config takes them; `host` is this
    /// machine's processor (clang's `-march=native`).
    pub fn new(cpu: &str, features: &str) -> Result<Target> {
        check_cpu(cpu)
            .map_err(|why| Error::setting("target.cpu", format!("expects {why}, got '{cpu}'")))?;
        check_features(features).map_err(|why| {
            Error::setting(
                "target.features",
                format!("expects {why}, got '{features}'"),
            )
        })?;
        // With a host processor and no features given, its features too.
        let features = if features.is_empty() && cpu == "host" {
            "host"
        } else {
            features
        };
        Ok(Target {
            cpu: if cpu == "host" {
                host_cpu()
            } else {
                cpu.to_string()
            },
            features: if features == "host" {
                host_features()
            } else {
                features.to_string()
            },
        })
    }

    /// Whether it leaves the module's own processor as it is.
    pub fn is_default(&self) -> bool {
        self.cpu.is_empty() && self.features.is_empty()
    }
}

/// This machine's processor, as LLVM names it (`znver3`, `skylake`…).
pub fn host_cpu() -> String {
    // SAFETY: LLVM returns a new NUL-terminated string, which is copied and
    // then freed once with LLVMDisposeMessage.
    unsafe {
        let p = llvm_sys::target_machine::LLVMGetHostCPUName();
        let s = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        llvm_sys::core::LLVMDisposeMessage(p);
        s
    }
}

/// This machine's processor features (`+sse4.2,+avx2,…`).
pub fn host_features() -> String {
    // SAFETY: LLVM returns a new NUL-terminated string, which is copied and
    // then freed once with LLVMDisposeMessage.
    unsafe {
        let p = llvm_sys::target_machine::LLVMGetHostCPUFeatures();
        let s = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        llvm_sys::core::LLVMDisposeMessage(p);
        s
    }
}

/// Ok for a value `target.cpu` takes: empty, `host`, or a processor LLVM
/// knows for this machine's target; else what it takes.
pub(crate) fn check_cpu(cpu: &str) -> std::result::Result<(), String> {
    let known = || {
        CString::new(cpu)
            // SAFETY: a null triple means the host's; `c` is a NUL-terminated
            // string alive for the call, which the shim only reads.
            .is_ok_and(|c| unsafe { ffi::plab_cpu_known(std::ptr::null(), c.as_ptr()) })
    };
    if cpu.is_empty() || cpu == "host" || known() {
        return Ok(());
    }
    let names = cpu_names();
    let nearest = crate::nearest_names(cpu, names.iter().map(String::as_str));
    let nearest = if nearest.is_empty() {
        "x86-64, x86-64-v2, x86-64-v3, x86-64-v4, skylake, znver3, …".to_string()
    } else {
        format!("nearest: {}", nearest.join(", "))
    };
    Err(format!("host, or one of the {} processor names LLVM knows for this target ({nearest}; `llc-19 -mcpu=help` lists them)", names.len()))
}

/// The processor names LLVM knows for this machine's target.
pub fn cpu_names() -> Vec<String> {
    let mut sinks = ffi::Sinks::default();
    // SAFETY: a null triple means the host's; `sinks` is the `Sinks` that
    // `SINK_FIRST` expects, alive for the call.
    unsafe { ffi::plab_cpu_names(std::ptr::null(), ffi::SINK_FIRST, sinks.user()) };
    sinks.first_text().lines().map(str::to_string).collect()
}

/// The names of the passes LLVM's back end runs for this machine's target
/// at any code generation level (`register-coalescer`, `prologepilog`…),
/// as the instruments' pass lists name them: built once.
pub fn backend_pass_names() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut sinks = ffi::Sinks::default();
        // SAFETY: a null triple means the host's; `sinks` is the `Sinks`
        // that `SINK_FIRST` expects, alive for the call.
        unsafe { ffi::plab_backend_pass_names(std::ptr::null(), ffi::SINK_FIRST, sinks.user()) };
        sinks.first_text().lines().map(str::to_string).collect()
    })
}

/// The processor features LLVM knows for this machine's target (`avx2`,
/// `fma`…), without their sign.
pub fn feature_names() -> Vec<String> {
    let mut sinks = ffi::Sinks::default();
    // SAFETY: a null triple means the host's; `sinks` is the `Sinks` that
    // `SINK_FIRST` expects, alive for the call.
    unsafe { ffi::plab_feature_names(std::ptr::null(), ffi::SINK_FIRST, sinks.user()) };
    sinks.first_text().lines().map(str::to_string).collect()
}

/// Ok for a value `target.features` takes: empty, `host`, or `+f,-g,…`
/// with features LLVM knows for this target; else what it takes.
pub(crate) fn check_features(features: &str) -> std::result::Result<(), String> {
    if features.is_empty() || features == "host" {
        return Ok(());
    }
    let known = feature_names();
    for f in features.split(',') {
        let Some(name) = f.strip_prefix(['+', '-']) else {
            return Err(format!(
                "host, or features such as +avx2,-fma, each with its sign ('{f}' has none)"
            ));
        };
        if !known.is_empty() && !known.iter().any(|k| k == name) {
            let nearest = crate::nearest_names(name, known.iter().map(String::as_str));
            let nearest = if nearest.is_empty() {
                String::new()
            } else {
                format!("; nearest: {}", nearest.join(", "))
            };
            return Err(format!(
                "host, or features LLVM knows for this target with their sign, such as +avx2,-fma ('{name}' is not one of its {}{nearest}; `llc-19 -mattr=help` lists them)",
                known.len()
            ));
        }
    }
    Ok(())
}

/// Writes `target` into every defined function of `module` (where it is
/// not the default), as clang's `-march` would have.
pub(crate) fn set_target(module: LLVMModuleRef, target: &Target) {
    if target.is_default() {
        return;
    }
    let cpu = CString::new(target.cpu.as_str()).unwrap_or_default();
    let features = CString::new(target.features.as_str()).unwrap_or_default();
    // SAFETY: `module` is the caller's live module, not being run on;
    // `cpu` and `features` are NUL-terminated strings alive for the call
    // (LLVM copies the attribute values).
    unsafe { ffi::plab_set_target(module, cpu.as_ptr(), features.as_ptr()) }
}

/// A runner is made for a triple, tuning, target and whether the modules
/// it runs on are position-independent code (its target machine's
/// relocation model, as clang makes it for the module).
type RunnerKey = (String, Tuning, Target, bool);

thread_local! {
    static RUNNERS: RefCell<HashMap<RunnerKey, Rc<RunnerHandle>>> = RefCell::new(HashMap::new());
    /// The plugin generation the cached runners were made at.
    static RUNNERS_AT: Cell<u64> = const { Cell::new(0) };
}

/// Bumped when a plugin is loaded: runners made before do not know its
/// passes, so the caches drop them.
static PLUGIN_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn new_runner(triple: &str, tuning: &Tuning, target: &Target, pic: bool) -> Result<RunnerHandle> {
    let c_triple = CString::new(triple).map_err(|_| Error::Nul {
        what: "target triple",
    })?;
    let cpu = CString::new(target.cpu.as_str()).unwrap_or_default();
    let features = CString::new(target.features.as_str()).unwrap_or_default();
    let mut sinks = ffi::Sinks::default();
    // SAFETY: the three strings are NUL-terminated and alive for the call,
    // `tuning` is a live `#[repr(C)]` `plab_tuning`, and `sinks` outlives the
    // call and is what `SINK_FIRST` expects behind `sinks.user()`.
    let raw = unsafe {
        ffi::plab_runner_new(
            c_triple.as_ptr(),
            cpu.as_ptr(),
            features.as_ptr(),
            pic,
            tuning,
            ffi::SINK_FIRST,
            sinks.user(),
        )
    };
    if raw.is_null() {
        return Err(Error::Invalid(sinks.first_text()));
    }
    Ok(RunnerHandle {
        raw,
        busy: Cell::new(false),
        poisoned: Cell::new(false),
    })
}

/// The cached runner for `triple` and `tuning`, or a fresh one when the
/// cached one is in use further up the stack (a hook that runs a pipeline).
fn runner(triple: &str, tuning: &Tuning, target: &Target, pic: bool) -> Result<Rc<RunnerHandle>> {
    let generation = PLUGIN_GENERATION.load(std::sync::atomic::Ordering::SeqCst);
    if RUNNERS_AT.with(|g| g.replace(generation)) != generation {
        RUNNERS.with(|m| m.borrow_mut().retain(|_, r| r.busy.get()));
    }
    let key = (triple.to_string(), *tuning, target.clone(), pic);
    if let Some(r) = RUNNERS.with(|m| m.borrow().get(&key).cloned()) {
        if !r.busy.get() {
            return Ok(r);
        }
        return Ok(Rc::new(new_runner(triple, tuning, target, pic)?));
    }
    let r = Rc::new(new_runner(triple, tuning, target, pic)?);
    RUNNERS.with(|m| m.borrow_mut().insert(key, r.clone()));
    Ok(r)
}

fn c_pipeline(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::Pipeline {
        text: text.escape_debug().to_string(),
        message: "pipeline text contains a NUL byte".into(),
        suggestions: vec![],
    })
}

/// Checks that LLVM's parser accepts `text`. The error is LLVM's message,
/// without suggestions (the registry adds those).
pub(crate) fn check_pipeline(text: &str) -> Result<(), String> {
    let r = runner("", &Tuning::default(), &Target::default(), false).map_err(|e| e.to_string())?;
    let c = c_pipeline(text).map_err(|e| e.to_string())?;
    let mut sinks = ffi::Sinks::default();
    // SAFETY: `r` (held here) keeps its live, unpoisoned runner; `c` is a
    // NUL-terminated string and `sinks` the `Sinks` that `SINK_FIRST`
    // expects, both alive for the call.
    if unsafe { ffi::plab_runner_check(r.raw, c.as_ptr(), ffi::SINK_FIRST, sinks.user()) } {
        Ok(())
    } else {
        Err(sinks.first_text())
    }
}

/// The linked LLVM's version: `19.1.7`.
pub fn version() -> String {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: the three pointers are to live local `c_uint`s that
    // `LLVMGetVersion` only writes.
    unsafe { llvm_sys::core::LLVMGetVersion(&mut a, &mut b, &mut c) };
    format!("{a}.{b}.{c}")
}

/// `text` as LLVM spells it once parsed (`opt -print-pipeline-passes`)
/// with `tuning`: a pipeline `opt-19 -passes=` runs as passlab does (a
/// `default<O2>` spelled out pass by pass, with the vectorizers and
/// unrolling the tuning gives it, which opt's own parsing of
/// `default<…>` would not).
pub(crate) fn spell_pipeline(text: &str, tuning: &Tuning) -> Result<String, String> {
    let r = runner("", tuning, &Target::default(), false).map_err(|e| e.to_string())?;
    let c = c_pipeline(text).map_err(|e| e.to_string())?;
    let mut sinks = ffi::Sinks::default();
    // SAFETY: as in `check_pipeline`.
    if unsafe { ffi::plab_runner_spell(r.raw, c.as_ptr(), ffi::SINK_FIRST, sinks.user()) } {
        Ok(sinks.first_text())
    } else {
        Err(sinks.first_text())
    }
}

/// Loads an LLVM pass plugin into the process (`opt -load-pass-plugin`);
/// pipelines parsed afterwards know its passes.
pub(crate) fn load_plugin(path: &std::path::Path) -> Result<()> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| Error::Nul {
        what: "plugin path",
    })?;
    let mut sinks = ffi::Sinks::default();
    // SAFETY: `c` is a NUL-terminated path and `sinks` the `Sinks` that
    // `SINK_FIRST` expects, both alive for the call. Loading runs the
    // plugin's own initialisers: the caller must trust the plugin (as with
    // `opt -load-pass-plugin`); Rust cannot check foreign code.
    if !unsafe { ffi::plab_load_plugin(c.as_ptr(), ffi::SINK_FIRST, sinks.user()) } {
        return Err(Error::Invalid(format!(
            "cannot load LLVM pass plugin {}: {}",
            path.display(),
            sinks.first_text().to_lowercase()
        )));
    }
    PLUGIN_GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// The IR unit of the pass `name` if LLVM's parser (with the loaded
/// plugins) accepts it, and the C++ classes it builds that LLVM cannot
/// name; with `remember`, instruments will report those classes as `name`.
pub(crate) fn pass_unit(name: &str, remember: bool) -> Result<Option<(IrUnit, Vec<String>)>> {
    let r = runner("", &Tuning::default(), &Target::default(), false)?;
    let c = CString::new(name).map_err(|_| Error::Nul { what: "pass name" })?;
    let mut sinks = ffi::Sinks::default();
    // SAFETY: `r` (held here) keeps its live, unpoisoned runner; `c` is a
    // NUL-terminated name and `sinks` the `Sinks` that `SINK_FIRST` expects,
    // both alive for the call.
    let unit = unsafe {
        ffi::plab_runner_pass_unit(r.raw, c.as_ptr(), remember, ffi::SINK_FIRST, sinks.user())
    };
    let unit = match unit {
        0 => IrUnit::Module,
        1 => IrUnit::Cgscc,
        2 => IrUnit::Function,
        3 => IrUnit::Loop,
        _ => return Ok(None),
    };
    let classes = sinks.first_text().lines().map(str::to_string).collect();
    Ok(Some((unit, classes)))
}

/// `opt --print-passes` of the linked LLVM.
pub(crate) fn print_passes() -> Result<String> {
    let r = runner("", &Tuning::default(), &Target::default(), false)?;
    let mut sinks = ffi::Sinks::default();
    // SAFETY: `r` (held here) keeps its live, unpoisoned runner; `sinks` is
    // the `Sinks` that `SINK_FIRST` expects, alive for the call.
    unsafe { ffi::plab_runner_print_passes(r.raw, ffi::SINK_FIRST, sinks.user()) };
    Ok(String::from_utf8_lossy(&sinks.first).into_owned())
}

struct HookState<'h> {
    hooks: &'h mut dyn Hooks,
    panic: Option<String>,
}

fn guarded<R>(state: &mut HookState<'_>, default: R, f: impl FnOnce(&mut dyn Hooks) -> R) -> R {
    if state.panic.is_some() {
        return default;
    }
    let hooks = &mut *state.hooks;
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(hooks))) {
        Ok(r) => r,
        Err(p) => {
            state.panic = Some(crate::error::panic_message(&p));
            default
        }
    }
}

fn unit_ref(unit: i32, handle: *const c_void) -> UnitRef {
    UnitRef {
        kind: IrUnit::from_code(unit),
        handle,
    }
}

unsafe extern "C" fn tramp_should_run(
    user: *mut c_void,
    pass: *const c_char,
    pass_len: usize,
    unit: i32,
    ir: *const c_char,
    ir_len: usize,
    handle: *const c_void,
) -> bool {
    // SAFETY: called by the shim (or LLVM) as its declaration in
    // ffi.rs says, with the pointers it describes alive for the call.
    unsafe {
        let state = &mut *(user as *mut HookState<'_>);
        let (pass, ir) = (ffi::str_from(pass, pass_len), ffi::str_from(ir, ir_len));
        guarded(state, true, |h| {
            h.should_run(&pass, unit_ref(unit, handle), &ir)
        })
    }
}

unsafe extern "C" fn tramp_before(
    user: *mut c_void,
    pass: *const c_char,
    pass_len: usize,
    unit: i32,
    ir: *const c_char,
    ir_len: usize,
    handle: *const c_void,
) {
    // SAFETY: called by the shim (or LLVM) as its declaration in
    // ffi.rs says, with the pointers it describes alive for the call.
    unsafe {
        let state = &mut *(user as *mut HookState<'_>);
        let (pass, ir) = (ffi::str_from(pass, pass_len), ffi::str_from(ir, ir_len));
        guarded(state, (), |h| h.before(&pass, unit_ref(unit, handle), &ir))
    }
}

unsafe extern "C" fn tramp_after(
    user: *mut c_void,
    pass: *const c_char,
    pass_len: usize,
    unit: i32,
    handle: *const c_void,
    invalidated: bool,
    preserved_all: bool,
) {
    // SAFETY: called by the shim (or LLVM) as its declaration in
    // ffi.rs says, with the pointers it describes alive for the call.
    unsafe {
        let state = &mut *(user as *mut HookState<'_>);
        let pass = ffi::str_from(pass, pass_len);
        guarded(state, (), |h| {
            h.after(&pass, unit_ref(unit, handle), invalidated, preserved_all)
        })
    }
}

/// How many crashes the shim's guards caught in this process (a pass's
/// crash, caught where it ran: the process may hold what it left behind).
pub(crate) fn crashes_caught() -> u64 {
    // SAFETY: reads an atomic counter; no arguments.
    unsafe { ffi::plab_crashes_caught() as u64 }
}

/// In a forked child (whose crash signals `child::default_signals` reset):
/// a pass that crashes inside a guard is caught again, as in the session,
/// so that the error names it; a crash anywhere else still ends the child.
pub(crate) fn catch_crashes_again() {
    // SAFETY: installs signal handlers in this process; no arguments.
    unsafe { ffi::plab_catch_crashes_again() }
}

/// Why [`run_pipeline`] failed: what LLVM said and, when a crash signal
/// abandoned the run, which pass crashed and how.
#[derive(Debug)]
pub(crate) struct RunError {
    /// LLVM's pipeline message, the errors passes reported, a fatal error,
    /// the crash report ("the pass 'licm' crashed on function 'f': …") or
    /// a hook's panic.
    pub message: String,
    pub crash: Option<Crash>,
}

/// A crash that abandoned a run.
#[derive(Clone, Debug)]
pub(crate) struct Crash {
    /// The pass that was running (none when none had started).
    pub pass: Option<String>,
    /// The signal in words ("segmentation fault (SIGSEGV: …)").
    pub how: String,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for RunError {
    fn from(message: String) -> RunError {
        RunError {
            message,
            crash: None,
        }
    }
}

/// Runs `text` over the raw module. Errors are LLVM's pipeline messages,
/// the errors passes reported through the module's context (which LLVM's
/// default handler would print before ending the process; the caller puts
/// the module back), a fatal error or a crash that abandoned the run, or a
/// hook's panic.
pub(crate) fn run_pipeline(
    module: llvm_sys::prelude::LLVMModuleRef,
    triple: &str,
    tuning: &Tuning,
    target: &Target,
    text: &str,
    hooks: Option<&mut dyn Hooks>,
) -> Result<(), RunError> {
    // SAFETY: `module` is the caller's live module, only read.
    let pic = unsafe { ffi::plab_module_pic(module) };
    let r = runner(triple, tuning, target, pic).map_err(|e| e.to_string())?;
    let c = c_pipeline(text).map_err(|e| e.to_string())?;
    let mut sinks = ffi::Sinks::default();
    r.busy.set(true);
    let ok = match hooks {
        // SAFETY: `r` keeps its live, unpoisoned runner, marked busy so no
        // nested run shares it; `module` is the caller's live module, which
        // only this run touches; `c` is NUL-terminated; null hooks mean none;
        // `sinks` is the `Sinks` that `SINK_FIRST` expects. All outlive the
        // call.
        None => unsafe {
            ffi::plab_runner_run(
                r.raw,
                module,
                c.as_ptr(),
                std::ptr::null(),
                ffi::SINK_FIRST,
                sinks.user(),
            )
        },
        Some(hooks) => {
            let mut state = HookState { hooks, panic: None };
            let raw_hooks = ffi::Hooks {
                user: &mut state as *mut HookState<'_> as *mut c_void,
                should_run: Some(tramp_should_run),
                before: Some(tramp_before),
                after: Some(tramp_after),
            };
            // SAFETY: as above; in addition `raw_hooks` and `state` (which
            // its `user` points to, and which the trampolines cast back to
            // `HookState`) outlive the call, the shim drops its pointer to the
            // hooks when the run ends, and the trampolines catch panics so
            // none unwinds into C++.
            let ok = unsafe {
                ffi::plab_runner_run(
                    r.raw,
                    module,
                    c.as_ptr(),
                    &raw_hooks,
                    ffi::SINK_FIRST,
                    sinks.user(),
                )
            };
            if let Some(p) = state.panic {
                r.busy.set(false);
                return Err(format!("an instrument panicked: {p}").into());
            }
            ok
        }
    };
    r.busy.set(false);
    let crash = (ok == 4).then(last_crash);
    match ok {
        1 => Ok(()),
        2 | 4 => Err(gave_up(&r, module, &sinks.first_text(), crash)),
        // 0: the parser's message; 3: the errors passes reported.
        _ => Err(sinks.first_text().into()),
    }
}

/// The crash that abandoned the run just made on this thread: the pass
/// that was running and how it crashed.
fn last_crash() -> Crash {
    let mut said = ffi::Sinks::default();
    // SAFETY: right after the run on this thread, as the shim asks; `said`
    // is the `Sinks` both sinks expect, alive for the call.
    unsafe { ffi::plab_last_crash(ffi::SINK_FIRST, ffi::SINK_SECOND, said.user()) };
    let pass = said.first_text();
    Crash {
        pass: (!pass.is_empty()).then_some(pass),
        how: said.second_text(),
    }
}

/// LLVM gave up on a run of runner `r` over `module` (a fatal error,
/// saying `message`, or a `crash`): neither is touched again, and the
/// error says the module is put back.
fn gave_up(
    r: &Rc<RunnerHandle>,
    module: LLVMModuleRef,
    message: &str,
    crash: Option<Crash>,
) -> RunError {
    r.poisoned.set(true);
    RUNNERS.with(|m| m.borrow_mut().retain(|_, x| !Rc::ptr_eq(x, r)));
    POISONED.with(|p| p.borrow_mut().insert(module as usize));
    let hint = if message.contains("did not reach a fixpoint") {
        "; instcombine<no-verify-fixpoint>, as LLVM's own pipelines run it, does not check this"
    } else {
        ""
    };
    RunError {
        message: format!(
            "{} (LLVM gave up on the run; the module is put back as it was before the pass{hint})",
            message.trim()
        ),
        crash,
    }
}
