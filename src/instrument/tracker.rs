//! Per-function work for instruments that look at each pass: the functions
//! of an IR unit, their sizes, and a [`ChangeTracker`] that tells which
//! functions a pass changed without printing or copying the module.
//!
//! Functions are keyed by their LLVM handle. A handle is only dereferenced
//! when it comes from the live IR (the unit of the current hook or the
//! module's function list); stored entries of deleted functions are only
//! read for their saved name and text.
//!
//! The `FunctionPrinter` keeps one module-wide slot tracker, so printing a
//! function costs the function, not the module; metadata is numbered as
//! functions are printed, each node keeping its number. A changed
//! function's text is assembled from its cached blocks, printing again only
//! the blocks whose hash changed (or the whole function when that is
//! cheaper); `tests/printer.rs` checks every assembled text against a whole
//! print.

use super::PassRun;
use crate::ffi;
use crate::llvm::UnitRef;
use crate::module::Module;
use llvm_sys::core::{
    LLVMGetFirstFunction, LLVMGetNextFunction, LLVMGetValueName2, LLVMIsDeclaration,
};
use llvm_sys::prelude::{LLVMModuleRef, LLVMValueRef};
use rustc_hash::FxHashMap as HashMap;

/// CGSCC passes that rewrite functions outside the SCC they run on (the
/// callers' call sites, or new functions). After the others, looking at the
/// SCC's own functions is enough: the inliner, for one, only changes the
/// SCC's functions (the callers it inlines into), and looking at every
/// caller of a function called from thousands of places, after each of the
/// ~25 CGSCC passes, would cost more than the passes.
const CGSCC_PASSES_EDITING_CALLERS: &[&str] = &[
    "argpromotion",
    "attributor-cgscc",
    "attributor-light-cgscc",
    "openmp-opt-cgscc",
    "coro-split",
];

/// Whether a pass of this name may change functions outside its SCC.
pub(crate) fn edits_callers(pass: &str) -> bool {
    CGSCC_PASSES_EDITING_CALLERS.contains(&crate::info::base_name(pass))
}

/// The defined functions of an IR unit (see `plab_unit_functions`).
pub(crate) fn unit_functions(unit: UnitRef, callers: bool) -> Vec<LLVMValueRef> {
    if unit.handle.is_null() {
        return vec![];
    }
    let code = unit.kind.code();
    let mut out = vec![std::ptr::null_mut(); 8];
    // SAFETY: `unit.handle` is non-null and, as a `UnitRef`, is LLVM's live
    // object of kind `code` for the duration of the current hook; `out` is
    // writable for `out.len()` handles and the shim writes at most that many.
    let n = unsafe {
        ffi::plab_unit_functions(code, unit.handle, callers, out.as_mut_ptr(), out.len())
    };
    if n > out.len() {
        out = vec![std::ptr::null_mut(); n];
        // SAFETY: as above: the same live unit, and `out` now has room for
        // all `n` handles (the shim never writes more than `out.len()`).
        unsafe {
            ffi::plab_unit_functions(code, unit.handle, callers, out.as_mut_ptr(), out.len())
        };
    }
    out.truncate(n);
    out
}

/// The defined functions of a module, in order.
pub(crate) fn module_functions(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: callers pass a live module (owned by a `Module` or the unit of
    // the current hook); nothing edits it during this walk.
    let mut f = unsafe { LLVMGetFirstFunction(module) };
    while !f.is_null() {
        // SAFETY: `f` is a non-null function of the live `module`, from the
        // function list walked here.
        if unsafe { LLVMIsDeclaration(f) } == 0 {
            out.push(f);
        }
        // SAFETY: as above, `f` is a live function of `module`.
        f = unsafe { LLVMGetNextFunction(f) };
    }
    out
}

pub(crate) fn function_name(f: LLVMValueRef) -> String {
    let mut len = 0;
    // SAFETY: callers pass a function of the live IR (see the module docs);
    // LLVM returns its name valid for `len` bytes, copied here at once.
    unsafe { ffi::str_from(LLVMGetValueName2(f, &mut len), len).into_owned() }
}

/// (basic blocks, instructions) of one function.
pub(crate) fn function_size(f: LLVMValueRef) -> (u64, u64) {
    let (mut blocks, mut instructions) = (0, 0);
    // SAFETY: callers pass a function of the live IR (see the module docs);
    // the two out-pointers are to live locals.
    unsafe { ffi::plab_function_size(f, &mut blocks, &mut instructions) };
    (blocks, instructions)
}

pub(crate) fn fingerprint(f: LLVMValueRef) -> u64 {
    // SAFETY: callers pass a function of the live IR (see the module docs),
    // which the shim only reads.
    unsafe { ffi::plab_fingerprint_function(f) }
}

/// Prints functions one at a time with one module-wide slot tracker
/// (printing each function with LLVM's `Function::print` numbers the whole
/// module every time: quadratic on a module of sqlite3's size).
pub(crate) struct FunctionPrinter {
    raw: *mut ffi::Printer,
    module: LLVMModuleRef,
    /// Whether each instruction line ends in its source line (`; line
    /// 12`, [`crate::module::lines`]) when the function has debug info.
    source_lines: bool,
}

impl FunctionPrinter {
    pub(crate) fn new(module: LLVMModuleRef) -> FunctionPrinter {
        FunctionPrinter {
            // SAFETY: `module` is live; the printer keeps it, so callers
            // drop (or `refresh`) the printer before the module goes away.
            raw: unsafe { ffi::plab_printer_new(module) },
            module,
            source_lines: false,
        }
    }

    /// The same printer, its texts with their source lines (for the
    /// explorer's diffs).
    pub(crate) fn with_source_lines(mut self, on: bool) -> FunctionPrinter {
        self.source_lines = on;
        self
    }

    pub(crate) fn print(&mut self, f: LLVMValueRef) -> String {
        let text = self.print_plain(f);
        if !self.source_lines {
            return text;
        }
        // SAFETY: `f` is a function of the printer's live module.
        let lines = unsafe { crate::module::lines::instruction_lines(f) };
        if lines.is_empty() {
            return text;
        }
        crate::module::lines::annotate(&text, &[lines]).0
    }

    /// Forgets the numbering (after the module's globals or metadata
    /// changed); the next print numbers the module again.
    pub(crate) fn refresh(&mut self) {
        // SAFETY: `self.raw` came from `plab_printer_new` and is freed once,
        // then replaced at once by a new printer for the same live module.
        unsafe {
            ffi::plab_printer_free(self.raw);
            self.raw = ffi::plab_printer_new(self.module);
        }
    }

    fn print_plain(&mut self, f: LLVMValueRef) -> String {
        for attempt in 0..2 {
            let mut sinks = ffi::Sinks::default();
            // SAFETY: `self.raw` is this printer's live shim object, `f` a
            // function of its live module, and `sinks` outlives the call and
            // is what `SINK_FIRST` expects behind `sinks.user()`.
            if unsafe { ffi::plab_printer_function(self.raw, f, ffi::SINK_FIRST, sinks.user()) } {
                // LLVM prints UTF-8 (names are escaped otherwise): no copy.
                return String::from_utf8(std::mem::take(&mut sinks.first))
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            }
            if attempt == 0 {
                self.refresh();
            }
        }
        // Still unnumbered metadata after a refresh: LLVM's own printer.
        // SAFETY: `f` is a live function; LLVM returns a NUL-terminated
        // string that is copied and then freed once with LLVMDisposeMessage.
        unsafe {
            let p = llvm_sys::core::LLVMPrintValueToString(f);
            let s = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
            llvm_sys::core::LLVMDisposeMessage(p);
            s
        }
    }
}

/// How the function printer has worked in this process: functions printed
/// whole, texts assembled from blocks, blocks printed, and assembled texts
/// that differed from a whole print (counted only when the environment
/// variable `PASSLAB_PRINTER_CHECK` is set, which compares every one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrinterStats {
    pub whole: u64,
    pub assembled: u64,
    pub blocks: u64,
    pub mismatches: u64,
}

/// See [`PrinterStats`].
pub fn printer_stats() -> PrinterStats {
    let mut s = PrinterStats::default();
    // SAFETY: the four out-pointers are to fields of the live local `s`,
    // which the shim only writes.
    unsafe {
        ffi::plab_printer_stats(
            &mut s.whole,
            &mut s.assembled,
            &mut s.blocks,
            &mut s.mismatches,
        )
    };
    s
}

impl Drop for FunctionPrinter {
    fn drop(&mut self) {
        // SAFETY: `self.raw` came from `plab_printer_new` (replaced only by
        // `refresh`) and is freed exactly once, here.
        unsafe { ffi::plab_printer_free(self.raw) }
    }
}

struct Entry {
    name: String,
    fingerprint: u64,
    text: Option<String>,
    /// The last scan that saw the function (module scans only).
    seen: u64,
}

/// One function a pass changed: its text before and after (`None`: it did
/// not exist) when the tracker keeps texts.
pub(crate) struct FunctionChange {
    pub name: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Its instruction count after the pass (0: it is gone).
    pub instructions: u64,
}

/// What a pass did, as far as the tracker can tell.
pub(crate) struct PassChange {
    /// The functions that differ from the last time the tracker looked.
    pub functions: Vec<FunctionChange>,
    /// The pass changed the IR: functions above, or passes nested in it.
    pub changed: bool,
}

/// Fingerprints (and, for diffs, texts) of every defined function, brought
/// up to date after each pass for the functions in the pass's scope.
pub(crate) struct ChangeTracker {
    keep_text: bool,
    /// Texts with their source lines ([`FunctionPrinter::with_source_lines`]).
    source_lines: bool,
    module: LLVMModuleRef,
    functions: HashMap<LLVMValueRef, Entry>,
    printer: Option<FunctionPrinter>,
    /// Counts detected changes; `open` holds its value when each open pass began.
    changes: u64,
    open: Vec<u64>,
    scans: u64,
}

impl ChangeTracker {
    /// The same tracker, its texts with their source lines.
    pub(crate) fn with_source_lines(mut self) -> ChangeTracker {
        self.source_lines = true;
        self
    }

    pub(crate) fn new(keep_text: bool) -> ChangeTracker {
        ChangeTracker {
            keep_text,
            source_lines: false,
            module: std::ptr::null_mut(),
            functions: HashMap::default(),
            printer: None,
            changes: 0,
            open: Vec::new(),
            scans: 0,
        }
    }

    /// Call from `run_before_pass`. An outermost pass (or another module)
    /// starts over from the module as it is.
    pub(crate) fn before(&mut self, module: &Module, run: &PassRun) {
        if run.depth == 0 || self.module != module.raw() {
            self.reset(module.raw());
        }
        self.open.push(self.changes);
    }

    fn reset(&mut self, module: LLVMModuleRef) {
        self.module = module;
        self.functions.clear();
        self.open.clear();
        self.printer = self
            .keep_text
            .then(|| FunctionPrinter::new(module).with_source_lines(self.source_lines));
        for f in module_functions(module) {
            let text = self.printer.as_mut().map(|p| p.print(f));
            self.functions.insert(
                f,
                Entry {
                    name: function_name(f),
                    fingerprint: fingerprint(f),
                    text,
                    seen: 0,
                },
            );
        }
    }

    /// Call from `run_after_pass`: the functions in the pass's scope that
    /// changed since they were last seen. A module pass is checked against
    /// every function, so functions it added or removed are found too.
    pub(crate) fn after(&mut self, module: &Module, run: &PassRun) -> PassChange {
        let start = self.open.pop().unwrap_or(self.changes);
        let mut functions = Vec::new();
        if module.raw() != self.module && !self.module.is_null() {
            self.adopt(module.raw(), &mut functions);
        }
        if run.may_have_changed {
            let module_scope = run.scope.is_module();
            if module_scope {
                if let Some(p) = &mut self.printer {
                    p.refresh();
                }
                self.scans += 1;
            }
            let live = if module_scope {
                module_functions(self.module)
            } else {
                run.scope.functions(edits_callers(run.name()))
            };
            for f in live {
                self.check(f, module_scope, &mut functions);
            }
            if module_scope {
                let scan = self.scans;
                let gone: Vec<LLVMValueRef> = self
                    .functions
                    .iter()
                    .filter(|(_, e)| e.seen != scan)
                    .map(|(f, _)| *f)
                    .collect();
                for f in gone {
                    if let Some(e) = self.functions.remove(&f) {
                        functions.push(FunctionChange {
                            name: e.name,
                            before: e.text,
                            after: None,
                            instructions: 0,
                        });
                    }
                }
            }
            self.changes += functions.len() as u64;
        }
        let changed = !functions.is_empty() || self.changes > start;
        PassChange { functions, changed }
    }

    /// The pass replaced the module with another (a user pass, which ran
    /// in another process and sent the module back): the same functions are
    /// found by name in the new one; those it lacks were removed. The old
    /// handles are never touched (the old module is gone).
    fn adopt(&mut self, module: LLVMModuleRef, out: &mut Vec<FunctionChange>) {
        let mut by_name: HashMap<String, Entry> = self
            .functions
            .drain()
            .map(|(_, e)| (e.name.clone(), e))
            .collect();
        self.module = module;
        self.printer = self
            .keep_text
            .then(|| FunctionPrinter::new(module).with_source_lines(self.source_lines));
        for f in module_functions(module) {
            if let Some(e) = by_name.remove(&function_name(f)) {
                self.functions.insert(f, e);
            }
        }
        let mut gone: Vec<Entry> = by_name.into_values().collect();
        gone.sort_by(|a, b| a.name.cmp(&b.name));
        self.changes += gone.len() as u64;
        out.extend(gone.into_iter().map(|e| FunctionChange {
            name: e.name,
            before: e.text,
            after: None,
            instructions: 0,
        }));
    }

    fn check(&mut self, f: LLVMValueRef, module_scope: bool, out: &mut Vec<FunctionChange>) {
        let fp = fingerprint(f);
        let scan = self.scans;
        match self.functions.get_mut(&f) {
            Some(e) if e.fingerprint == fp => {
                if module_scope {
                    e.seen = scan;
                }
            }
            Some(e) => {
                let name = function_name(f);
                if e.name != name {
                    // The handle was reused by a new function.
                    let old = self.functions.remove(&f);
                    if let Some(old) = old {
                        out.push(FunctionChange {
                            name: old.name,
                            before: old.text,
                            after: None,
                            instructions: 0,
                        });
                    }
                    self.add(f, name, fp, out);
                    return;
                }
                e.fingerprint = fp;
                if module_scope {
                    e.seen = scan;
                }
                if let Some(p) = &mut self.printer {
                    let text = p.print(f);
                    if e.text.as_deref() == Some(text.as_str()) {
                        // Rebuilt but printed the same: not a change.
                        return;
                    }
                    let before = e.text.replace(text.clone());
                    out.push(FunctionChange {
                        name,
                        before,
                        after: Some(text),
                        instructions: function_size(f).1,
                    });
                } else {
                    out.push(FunctionChange {
                        name,
                        before: None,
                        after: None,
                        instructions: function_size(f).1,
                    });
                }
            }
            None => {
                let name = function_name(f);
                self.add(f, name, fp, out);
            }
        }
    }

    fn add(&mut self, f: LLVMValueRef, name: String, fp: u64, out: &mut Vec<FunctionChange>) {
        let text = self.printer.as_mut().map(|p| p.print(f));
        out.push(FunctionChange {
            name: name.clone(),
            before: None,
            after: text.clone(),
            instructions: function_size(f).1,
        });
        self.functions.insert(
            f,
            Entry {
                name,
                fingerprint: fp,
                text,
                seen: self.scans,
            },
        );
    }

    /// Drops the printer and handles (call when the outermost pass ends).
    pub(crate) fn finish(&mut self) {
        self.printer = None;
        self.functions.clear();
        self.module = std::ptr::null_mut();
    }
}
