//! [`Module`]: the LLVM IR module every pass works on.
//!
//! A `Module` owns its LLVM module and shares its LLVM context with its
//! copies; the inkwell `'ctx` lifetime never leaves this type (passes see
//! the IR through [`Module::with_ir`]). Modules come from IR text, bitcode,
//! C or C++ (through clang-19) or several of these linked together.
//!
//! IR is verified where it enters (text, bitcode, a module back from a Rust
//! pass) and refused at the line:column the verifier names. A [`Snapshot`]
//! is bitcode; [`Module::restore`] parses it into a fresh LLVM context, so
//! that type names come back unchanged. A module a fatal error left in an
//! unknown state is never disposed (see `crate::llvm`). This layer runs no
//! pass: `Module::extract`, which runs `strip-dead-internals`, is defined
//! beside that pass in `crate::passes`.

pub mod cfg;
mod clang;
mod edit;
pub mod features;
pub mod ir;
mod lang;
pub mod lines;
mod lto;
pub mod project;
mod source;
pub mod spaces;
mod stats;

pub use cfg::Cfg;
pub use clang::{clang_path, command_line, Level};
pub use features::Features;
pub use lang::Lang;
pub use source::Source;
pub use stats::{FunctionStats, Stats};

use crate::error::nearest_names;
use crate::ffi;
use crate::{Error, Result};
use inkwell::values::FunctionValue;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use std::cell::RefCell;
use std::ffi::{c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::path::Path;
use std::rc::Rc;

/// An LLVM context, shared by a module and its copies.
pub(crate) struct LlvmContext(inkwell::context::Context);

impl LlvmContext {
    fn new() -> Rc<LlvmContext> {
        Rc::new(LlvmContext(inkwell::context::Context::create()))
    }
    fn raw(&self) -> LLVMContextRef {
        self.0.raw()
    }
}

/// An LLVM IR module.
pub struct Module {
    raw: LLVMModuleRef,
    // Dropped after `raw` is disposed (see `Drop`).
    ctx: Rc<LlvmContext>,
    /// The last snapshot taken and the fingerprint the module had then: a
    /// module that has not changed since is not written out again.
    last_snapshot: RefCell<Option<(u64, Snapshot)>>,
    /// The handles the IR API gave out (see [`ir`]).
    ir: ir::TrackerCell,
}

impl Drop for Module {
    fn drop(&mut self) {
        if crate::llvm::is_poisoned(self.raw) {
            // A fatal error left it in an unknown state: it and its
            // context are left alone (disposing the context would dispose
            // it too).
            crate::llvm::forget_poisoned(self.raw);
            std::mem::forget(self.ctx.clone());
            return;
        }
        // SAFETY: `self.raw` is owned by this `Module` alone (copies are
        // clones, inkwell views are never dropped) and disposed once, here;
        // its context, held by `self.ctx`, is dropped only afterwards.
        unsafe { LLVMDisposeModule(self.raw) }
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name())
            .finish()
    }
}

/// An exact copy of a module's state, taken before a pipeline runs so that a
/// failure can put the module back as it was: its bitcode, or the IR text
/// or bitcode it was parsed from while it is unchanged.
#[derive(Clone)]
pub struct Snapshot {
    bitcode: Rc<[u8]>,
    /// The symbol tables' name counters (see [`Module::name_counters`]).
    counters: Rc<[u8]>,
}

impl Snapshot {
    /// Size of the snapshot in bytes.
    pub fn len(&self) -> usize {
        self.bitcode.len()
    }

    /// Whether the snapshot is empty (it never is for a real module).
    pub fn is_empty(&self) -> bool {
        self.bitcode.is_empty()
    }

    /// A snapshot of a module written as bitcode elsewhere (by a pass that
    /// ran in another process).
    pub(crate) fn from_bitcode(bitcode: Vec<u8>) -> Snapshot {
        Snapshot {
            bitcode: bitcode.into(),
            counters: Rc::from([]),
        }
    }

    /// The bitcode.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bitcode
    }
}

impl Module {
    /// Parses LLVM IR text. A syntax error carries line:column and the line.
    ///
    /// ```
    /// let m = passlab::Module::from_ir("define i32 @one() {\n  ret i32 1\n}\n", "one.ll").unwrap();
    /// assert_eq!(m.stats().instructions, 1);
    /// let err = passlab::Module::from_ir("define i32 @f() {\n  ret i32 %z\n}\n", "bad.ll").unwrap_err();
    /// assert!(err.to_string().starts_with("bad.ll:2:11: use of undefined value '%z'"));
    /// // IR that parses but does not verify is refused, as opt-19 refuses it.
    /// let text = "define i32 @f(i32 %x) {\n  %y = add i32 %z, 1\n  %z = add i32 %x, 1\n  ret i32 %y\n}\n";
    /// let err = passlab::Module::from_ir(text, "bad.ll").unwrap_err();
    /// assert!(err.to_string().starts_with("bad.ll:2:3: invalid IR: Instruction does not dominate all uses"));
    /// ```
    pub fn from_ir(text: &str, name: &str) -> Result<Module> {
        Self::parse_verified(LlvmContext::new(), text.as_bytes(), name)
    }

    /// Reads LLVM bitcode (verified, as [`from_ir`](Module::from_ir)).
    /// Bytes that are not bitcode (empty ones among them) are an error.
    pub fn from_bitcode(bytes: &[u8], name: &str) -> Result<Module> {
        if !is_bitcode(bytes) {
            return Err(Error::spec(
                name,
                format!(
                    "not LLVM bitcode ({} bytes, without bitcode's magic number 'BC' 0xC0DE)",
                    bytes.len()
                ),
            ));
        }
        Self::parse_verified(LlvmContext::new(), bytes, name)
    }

    /// Reads what a [`Snapshot`] of passlab's holds — the IR text a module
    /// was parsed from while it is unchanged, bitcode passlab wrote after —
    /// told apart by content as LLVM's `parseIR` tells them, and verified.
    /// passlab wrote it: it is not read in a child first, as bitcode from
    /// outside is (a Rust pass's worker reads every module it is sent so).
    pub fn from_snapshot_bytes(bytes: &[u8], name: &str) -> Result<Module> {
        let module = Self::parse_in(LlvmContext::new(), bytes, name, &[])?;
        module
            .verify()
            .map_err(|report| invalid_ir(name, bytes, &report))?;
        Ok(module)
    }

    /// Parses IR text or bitcode from outside passlab and, as opt-19
    /// does, refuses IR that parses but does not verify, before any pass
    /// sees it. Bitcode is read first in a forked child: LLVM's bitcode
    /// reader trusts what it reads, and corrupt bitcode made it crash
    /// (SIGSEGV) or abort ("Allocation failed") the whole session; a
    /// child's crash is an error, and what the child read without harm
    /// the session reads the same way.
    fn parse_verified(ctx: Rc<LlvmContext>, bytes: &[u8], name: &str) -> Result<Module> {
        if is_bitcode(bytes) {
            // Valid bitcode reads and verifies at about 10 MB a second;
            // some corrupt bitcode sends the reader into an endless loop.
            let limit = 30 + 10 * (bytes.len() as u64 >> 20);
            // (an error the reader reports is the parent's to report again,
            // with its kind: the child only finds out whether reading and
            // verifying end the process)
            crate::child::in_child(|| {
                crate::child::limit_processor_time(limit);
                if let Ok(m) = Self::parse_in(LlvmContext::new(), bytes, name, &[]) {
                    let _ = m.verify();
                }
                Ok(Vec::new())
            })
            .map_err(|e| match e {
                crate::child::ChildError::Interrupted => Error::Interrupted {
                    pass: format!("the reading of {name}"),
                },
                crate::child::ChildError::Failed { said, how } => {
                    let said = said.trim();
                    let said = if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {said}")
                    };
                    let over = if how.contains("SIGXCPU") {
                        format!(" ({limit} s for {} bytes)", bytes.len())
                    } else {
                        String::new()
                    };
                    Error::spec(
                        name,
                        format!(
                            "corrupt bitcode: LLVM's bitcode reader {how}{over} reading it{said}"
                        ),
                    )
                }
            })?;
        }
        let module = Self::parse_in(ctx, bytes, name, &[])?;
        module
            .verify()
            .map_err(|report| invalid_ir(name, bytes, &report))?;
        Ok(module)
    }

    /// Compiles C source as clang-19 hands it to its own `-O2` pipeline
    /// (`-O2 -Xclang -disable-llvm-passes`; [`Source::level`] picks
    /// another level).
    pub fn from_c(source: &str, name: &str) -> Result<Module> {
        Self::load(&[Source::text(Lang::C, source, name)])
    }

    /// Loads one file: `.ll`, `.bc`, `.c`, or C++ (`.cpp`, `.cc`, `.cxx`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Module> {
        Self::load(&[Source::file(path.as_ref())?])
    }

    /// Loads several sources and links them into one module (named after the
    /// first).
    pub fn load(sources: &[Source]) -> Result<Module> {
        let (first, rest) = sources
            .split_first()
            .ok_or_else(|| Error::Invalid("no source to load".into()))?;
        let ctx = LlvmContext::new();
        let mut module = Self::from_source_in(ctx.clone(), first)?;
        for src in rest {
            let other = Self::from_source_in(ctx.clone(), src)?;
            module.link(other, src.name())?;
        }
        Ok(module)
    }

    /// Modules from compiled units ([`project::compile`]'s bitcode and
    /// name counters, with each unit's name): each in a context of its own,
    /// or all in one when they are to be linked ([`Module::link_all`]).
    pub fn from_compiled(
        units: Vec<(String, Vec<u8>, Vec<u8>)>,
        linkable: bool,
    ) -> Result<Vec<Module>> {
        let shared = LlvmContext::new();
        units
            .into_iter()
            .map(|(name, bitcode, counters)| {
                let ctx = if linkable {
                    shared.clone()
                } else {
                    LlvmContext::new()
                };
                Self::parse_in(ctx, &bitcode, &name, &counters)
            })
            .collect()
    }

    /// Links `modules`, made in one context by
    /// [`from_compiled`](Module::from_compiled), into the first, in their
    /// order (a linker's order: the first definition of a symbol wins).
    pub fn link_all(modules: Vec<Module>) -> Result<Module> {
        let mut rest = modules.into_iter();
        let mut first = rest
            .next()
            .ok_or_else(|| Error::Invalid("no module to link".into()))?;
        for m in rest {
            if !Rc::ptr_eq(&m.ctx, &first.ctx) {
                return Err(Error::Invalid(
                    "modules to link must be made in one context".into(),
                ));
            }
            let name = m.name();
            first.link(m, &name)?;
        }
        Ok(first)
    }

    fn from_source_in(ctx: Rc<LlvmContext>, src: &Source) -> Result<Module> {
        if let Some(ir) = src.ir()? {
            return Self::parse_verified(ctx, &ir, src.name());
        }
        // Bitcode from clang's child, named already; parsed, not verified
        // again (clang's output is valid IR).
        let (bitcode, counters) = src.compile()?;
        Self::parse_in(ctx, &bitcode, src.name(), &counters)
    }

    /// Parses IR text or bitcode into `ctx`, its symbol tables' name
    /// counters set from `counters` (empty: as parsed).
    fn parse_in(ctx: Rc<LlvmContext>, bytes: &[u8], name: &str, counters: &[u8]) -> Result<Module> {
        let c_name = CString::new(name).map_err(|_| Error::Nul {
            what: "module name",
        })?;
        let mut diag = ffi::Diag::default();
        let mut sinks = ffi::Sinks::default();
        // SAFETY: `ctx` (held here) is a live context; `bytes` is valid for
        // `bytes.len()` bytes and the shim copies it; `c_name` is
        // NUL-terminated; `diag` is a live `#[repr(C)]` `plab_diag`; `sinks`
        // is the `Sinks` both `SINK_FIRST` and `SINK_SECOND` expect. All
        // outlive the call.
        let raw = unsafe {
            ffi::plab_parse_ir(
                ctx.raw(),
                bytes.as_ptr() as *const _,
                bytes.len(),
                c_name.as_ptr(),
                &mut diag,
                ffi::SINK_FIRST,
                sinks.user(),
                ffi::SINK_SECOND,
            )
        };
        if raw.is_null() {
            leak_if_fatal(&ctx);
            return Err(Error::Parse {
                source_name: name.to_string(),
                line: diag.line.max(0) as u32,
                column: diag.column.max(0) as u32,
                message: sinks.first_text(),
                line_text: sinks.second_text(),
            });
        }
        // The text or bitcode it was parsed from is a snapshot of it as it
        // is now: the first `:run` on a loaded (or restored) module does not
        // write it out again.
        let module = Module {
            raw,
            ctx,
            last_snapshot: RefCell::new(None),
            ir: Default::default(),
        };
        module.set_name_counters(counters);
        let snapshot = Snapshot {
            bitcode: Rc::from(bytes),
            counters: Rc::from(counters),
        };
        *module.last_snapshot.borrow_mut() = Some((module.fingerprint(), snapshot));
        Ok(module)
    }

    /// Links `other` (same context) into `self`; `other` is consumed.
    fn link(&mut self, other: Module, other_name: &str) -> Result<()> {
        let messages = DiagnosticCapture::install(self.ctx.raw());
        let src = ManuallyDrop::new(other);
        // LLVMLinkModules2 destroys the source module whatever the outcome.
        // SAFETY: both modules are live and in the same context (`load`
        // makes `other` in `self`'s); `src` is `ManuallyDrop`, so the module
        // LLVM destroys here is never disposed again.
        let failed = unsafe { llvm_sys::linker::LLVMLinkModules2(self.raw, src.raw) } != 0;
        // SAFETY: `src` is never dropped, so this moves its `ctx` out
        // exactly once, to release that reference to the context. (Its
        // `last_snapshot` is leaked: memory, not soundness.)
        let _ctx = unsafe { std::ptr::read(&src.ctx) };
        let message = messages.finish();
        if failed {
            return Err(Error::Link {
                source_name: other_name.to_string(),
                into: self.name(),
                message: if message.is_empty() {
                    "the linker gave no reason".into()
                } else {
                    message
                },
            });
        }
        Ok(())
    }

    /// The module's identifier (the name of its first source).
    pub fn name(&self) -> String {
        let mut len = 0;
        // SAFETY: `self.raw` is the live module `self` owns.
        let p = unsafe { LLVMGetModuleIdentifier(self.raw, &mut len) };
        // SAFETY: `p` points to the module's identifier, valid for `len`
        // bytes while the module is unchanged; it is copied at once.
        unsafe { ffi::str_from(p, len).into_owned() }
    }

    /// The module's target triple (empty when it has none).
    pub fn triple(&self) -> String {
        // SAFETY: `self.raw` is the live module `self` owns; LLVM returns its
        // NUL-terminated triple (owned by the module), copied at once.
        unsafe {
            CStr::from_ptr(LLVMGetTarget(self.raw))
                .to_string_lossy()
                .into_owned()
        }
    }

    /// The module's data layout string (empty when it has none).
    pub fn data_layout(&self) -> String {
        // SAFETY: `self.raw` is the live module `self` owns; LLVM returns its
        // NUL-terminated data layout string (owned by the module), copied
        // at once.
        unsafe {
            CStr::from_ptr(LLVMGetDataLayoutStr(self.raw))
                .to_string_lossy()
                .into_owned()
        }
    }

    /// The whole module as LLVM IR text.
    pub fn print(&self) -> String {
        // SAFETY: `self.raw` is the live module `self` owns; LLVM returns a
        // new NUL-terminated string, copied and then freed once with
        // LLVMDisposeMessage.
        unsafe {
            let p = LLVMPrintModuleToString(self.raw);
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            LLVMDisposeMessage(p);
            s
        }
    }

    /// One function as LLVM IR text; an unknown name suggests the nearest.
    pub fn print_function(&self, name: &str) -> Result<String> {
        let f = self.function_ref(name)?;
        // SAFETY: `f` is a function of the live module `self` owns; LLVM
        // returns a new NUL-terminated string, copied and then freed once
        // with LLVMDisposeMessage.
        unsafe {
            let p = LLVMPrintValueToString(f);
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            LLVMDisposeMessage(p);
            Ok(s)
        }
    }

    /// The whole module as [`print`](Self::print) gives it, each
    /// instruction line ending in a comment naming its source line (`;
    /// line 12`) when the module has debug info (`cflags=-g`), with the
    /// source line of each line of the text ([`lines::annotate`]). Without
    /// debug info the text is `print`'s.
    pub fn print_with_lines(&self) -> (String, Vec<Option<lines::SourceLine>>) {
        // SAFETY: `self.raw` is the live module `self` owns.
        let locs = unsafe { lines::module_lines(self.raw) };
        lines::annotate(&self.print(), &locs)
    }

    /// One function as [`print_function`](Self::print_function) gives it,
    /// with its source lines as [`print_with_lines`](Self::print_with_lines) adds them.
    pub fn print_function_with_lines(
        &self,
        name: &str,
    ) -> Result<(String, Vec<Option<lines::SourceLine>>)> {
        let text = self.print_function(name)?;
        // SAFETY: `function_ref` gives a function of the live module `self` owns.
        let locs = unsafe { lines::instruction_lines(self.function_ref(name)?) };
        Ok(lines::annotate(&text, &[locs]))
    }

    pub(crate) fn function_ref(&self, name: &str) -> Result<LLVMValueRef> {
        let c = CString::new(name).map_err(|_| Error::Nul {
            what: "function name",
        })?;
        // SAFETY: `self.raw` is the live module `self` owns; `c` is a
        // NUL-terminated name alive for the call.
        let f = unsafe { LLVMGetNamedFunction(self.raw, c.as_ptr()) };
        if f.is_null() {
            let names = self.function_names();
            return Err(Error::NotFound {
                what: "function",
                name: name.to_string(),
                suggestions: nearest_names(name, names.iter().map(String::as_str)),
            });
        }
        Ok(f)
    }

    /// Names of all functions, declarations included, in module order.
    pub fn function_names(&self) -> Vec<String> {
        self.functions().map(|(name, _)| name).collect()
    }

    /// The symbols this module defines for other modules to see: functions
    /// with a body and variables with an initializer, of external linkage
    /// (not weak, common or internal ones). Two modules that both define
    /// one cannot be linked.
    pub fn strong_definitions(&self) -> Vec<String> {
        use inkwell::module::Linkage;
        self.with_ir(|m| {
            let functions = m
                .get_functions()
                .filter(|f| f.count_basic_blocks() > 0 && f.get_linkage() == Linkage::External)
                .map(|f| f.get_name().to_string_lossy().into_owned());
            let globals = m
                .get_globals()
                .filter(|g| g.get_initializer().is_some() && g.get_linkage() == Linkage::External)
                .map(|g| g.get_name().to_string_lossy().into_owned());
            functions.chain(globals).collect()
        })
    }

    /// Names of the functions that have a body, in module order.
    pub fn defined_functions(&self) -> Vec<String> {
        self.functions()
            .filter(|(_, decl)| !decl)
            .map(|(name, _)| name)
            .collect()
    }

    fn functions(&self) -> impl Iterator<Item = (String, bool)> + '_ {
        // SAFETY: `self.raw` is the live module `self` owns; the iterator
        // borrows `self`, so the module outlives it (both callers collect it
        // at once, with no change to the module in between).
        let mut f = unsafe { LLVMGetFirstFunction(self.raw) };
        std::iter::from_fn(move || {
            if f.is_null() {
                return None;
            }
            let mut len = 0;
            // SAFETY: `f` is a non-null function of the live module; LLVM
            // returns its name valid for `len` bytes, copied at once.
            let name = unsafe { ffi::str_from(LLVMGetValueName2(f, &mut len), len).into_owned() };
            // SAFETY: `f` is a non-null function of the live module.
            let decl = unsafe { LLVMIsDeclaration(f) } != 0;
            // SAFETY: `f` is a non-null function of the live module.
            f = unsafe { LLVMGetNextFunction(f) };
            Some((name, decl))
        })
    }

    /// Runs LLVM's verifier; the error is its message.
    pub fn verify(&self) -> Result<(), String> {
        let mut sinks = ffi::Sinks::default();
        // SAFETY: `self.raw` is the live module `self` owns; `sinks` is the
        // `Sinks` that `SINK_FIRST` expects, alive for the call.
        if unsafe { ffi::plab_verify(self.raw, ffi::SINK_FIRST, sinks.user()) } {
            Ok(())
        } else {
            Err(sinks.first_text())
        }
    }

    /// A deep copy (no verification on the way): in the same LLVM context,
    /// or, for a module with computed-goto tables (a `blockaddress` in a
    /// global), through bitcode into a fresh one, since LLVM's module cloning
    /// breaks those (the copy would not compile).
    pub fn copy(&self) -> Module {
        // SAFETY: `self.raw` is the live module `self` owns, only read.
        if unsafe { ffi::plab_module_takes_block_addresses(self.raw) } {
            let mut sinks = ffi::Sinks::default();
            // SAFETY: `self.raw` is the live module `self` owns, only read;
            // `sinks` is the `Sinks` that `SINK_FIRST` expects, alive for
            // the call.
            unsafe { ffi::plab_write_bitcode(self.raw, true, ffi::SINK_FIRST, sinks.user()) };
            let counters = self.name_counters();
            if let Ok(copy) =
                Self::parse_in(LlvmContext::new(), &sinks.first, &self.name(), &counters)
            {
                return copy;
            }
        }
        // SAFETY: `self.raw` is the live module `self` owns; the clone is a
        // new module in the same context, which the copy keeps alive by
        // holding `self.ctx`, and which the copy alone owns.
        let raw = unsafe { LLVMCloneModule(self.raw) };
        let copy = Module {
            raw,
            ctx: self.ctx.clone(),
            last_snapshot: RefCell::new(None),
            ir: Default::default(),
        };
        copy.set_name_counters(&self.name_counters());
        copy
    }

    /// The counters that pick the suffix of the next colliding name in
    /// each symbol table (the module's, then each function's), which
    /// neither bitcode nor cloning keeps: a module read back or copied
    /// names new values as the original would (`%cmp9`, not `%cmp6`).
    pub(crate) fn name_counters(&self) -> Vec<u8> {
        let mut sinks = ffi::Sinks::default();
        // SAFETY: `self.raw` is the live module `self` owns, only read;
        // `sinks` is the `Sinks` that `SINK_FIRST` expects, alive for the
        // call.
        unsafe { ffi::plab_name_counters(self.raw, ffi::SINK_FIRST, sinks.user()) };
        sinks.first
    }

    /// Sets the counters [`name_counters`](Module::name_counters) gave for
    /// a module with the same functions in the same order.
    pub(crate) fn set_name_counters(&self, counters: &[u8]) {
        // SAFETY: `self.raw` is the live module `self` owns; `counters` is
        // valid for `counters.len()` bytes, which the shim only reads.
        unsafe { ffi::plab_set_name_counters(self.raw, counters.as_ptr(), counters.len()) };
    }

    /// A cheap content hash: equal before and after a pass exactly when the
    /// pass changed nothing (up to hash collisions). Covers instructions,
    /// their operands, flags and metadata attachments, function attributes,
    /// globals and named metadata; not debug records.
    pub fn fingerprint(&self) -> u64 {
        // SAFETY: `self.raw` is the live module `self` owns, only read.
        unsafe { ffi::plab_fingerprint_module(self.raw) }
    }

    /// The fingerprint of one function.
    pub fn function_fingerprint(&self, name: &str) -> Result<u64> {
        // SAFETY: `function_ref` gives a function of the live module `self`
        // owns (or returns early); the shim only reads it.
        Ok(unsafe { ffi::plab_fingerprint_function(self.function_ref(name)?) })
    }

    /// Size statistics: totals, per function and per opcode.
    pub fn stats(&self) -> Stats {
        stats::collect(self.raw)
    }

    /// The number of instructions in function bodies (cheaper than `stats`).
    pub fn instruction_count(&self) -> u64 {
        stats::instruction_count(self.raw)
    }

    /// The module as bitcode (with use-list order, so it reads back the same).
    pub fn bitcode(&self) -> Vec<u8> {
        let mut sinks = ffi::Sinks::default();
        // SAFETY: `self.raw` is the live module `self` owns, only read;
        // `sinks` is the `Sinks` that `SINK_FIRST` expects, alive for the
        // call.
        unsafe { ffi::plab_write_bitcode(self.raw, true, ffi::SINK_FIRST, sinks.user()) };
        sinks.first
    }

    /// Writes the module to `path`: bitcode for `.bc`, IR text otherwise.
    /// A file that is there already is replaced only if passlab wrote it
    /// and it has not changed since ([`crate::folder::write_file`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let bytes = if path.extension().is_some_and(|e| e == "bc") {
            self.bitcode()
        } else {
            self.print().into_bytes()
        };
        crate::folder::write_file(path, bytes, "saving a module")
    }

    /// Takes a snapshot that [`Module::restore`] can put back: the restored
    /// module prints exactly as this one does. (Use-list order, which the
    /// printed IR does not show, is not kept: keeping it makes snapshots
    /// about five times slower.)
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_at(self.fingerprint())
    }

    /// [`snapshot`](Module::snapshot) for a module whose fingerprint is
    /// `fingerprint`: when it is the fingerprint of the last snapshot, the
    /// module has not changed since and that snapshot is reused (a search
    /// that applies pass after pass to one module writes it out only when a
    /// pass changed it).
    pub(crate) fn snapshot_at(&self, fingerprint: u64) -> Snapshot {
        if let Some((fp, s)) = &*self.last_snapshot.borrow() {
            if *fp == fingerprint {
                return s.clone();
            }
        }
        let mut sinks = ffi::Sinks::default();
        // SAFETY: `self.raw` is the live module `self` owns, only read;
        // `sinks` is the `Sinks` that `SINK_FIRST` expects, alive for the
        // call.
        unsafe { ffi::plab_write_bitcode(self.raw, false, ffi::SINK_FIRST, sinks.user()) };
        let snapshot = Snapshot {
            bitcode: sinks.first.into(),
            counters: self.name_counters().into(),
        };
        *self.last_snapshot.borrow_mut() = Some((fingerprint, snapshot.clone()));
        snapshot
    }

    /// Puts the module back to `snapshot`. The restored module lives in a
    /// fresh LLVM context, so its types keep their names.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<()> {
        let name = self.name();
        let restored = Self::parse_in(
            LlvmContext::new(),
            &snapshot.bitcode,
            &name,
            &snapshot.counters,
        )?;
        *self = restored;
        Ok(())
    }

    /// Says that the module may have changed by means other than the IR
    /// API (a pass ran): the IR handles given out so far are refused from
    /// now on.
    pub(crate) fn ir_changed(&self) {
        self.ir.borrow_mut().changed();
    }

    /// Gives `f` the module as inkwell sees it; this is how Rust passes read
    /// and change the IR.
    pub fn with_ir<R>(&self, f: impl for<'ctx> FnOnce(&inkwell::module::Module<'ctx>) -> R) -> R {
        // The inkwell handle must not dispose the module: this `Module` owns it.
        // SAFETY: `self.raw` is a live module whose context `self.ctx` keeps
        // alive for the whole call; the handle is `ManuallyDrop`, so it never
        // disposes the module, and `f` is generic over `'ctx`, so no IR
        // handle it gets can outlive the call. `f` must not dispose the
        // module or give it away (say, to an execution engine): inkwell
        // leaves that to the caller, and Rust passes do not.
        let m = ManuallyDrop::new(unsafe { inkwell::module::Module::new(self.raw) });
        f(&m)
    }

    /// Marks a function so that function passes skip it (as LLVM's `optnone`
    /// makes LLVM's optional passes skip it).
    pub fn mark_skip(&mut self, function: &str) -> Result<()> {
        let f = self.function_ref(function)?;
        let (k, v) = (SKIP_ATTRIBUTE, "");
        // SAFETY: `self.ctx` is the live context of `self.raw`, and `f` a
        // function of that module; `k` and `v` are valid for the lengths
        // given (LLVM copies them); the attribute lives in the context.
        unsafe {
            let attr = LLVMCreateStringAttribute(
                self.ctx.raw(),
                k.as_ptr() as *const _,
                k.len() as u32,
                v.as_ptr() as *const _,
                0,
            );
            LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, attr);
        }
        Ok(())
    }

    /// The source file name recorded in the module (`source_filename`).
    pub fn source_file_name(&self) -> String {
        let mut len = 0;
        // SAFETY: the module is alive; LLVM returns a pointer to its own
        // copy of the name and its length, copied here at once.
        unsafe {
            let p = llvm_sys::core::LLVMGetSourceFileName(self.raw, &mut len);
            ffi::str_from(p, len).into_owned()
        }
    }

    /// Sets the source file name recorded in the module (`source_filename`).
    pub fn set_source_file_name(&mut self, name: &str) {
        // SAFETY: the module is alive; `name` is valid for `name.len()`
        // bytes, which LLVM copies.
        unsafe {
            llvm_sys::core::LLVMSetSourceFileName(self.raw, name.as_ptr().cast(), name.len())
        };
    }

    pub(crate) fn raw(&self) -> LLVMModuleRef {
        self.raw
    }
}

/// The string attribute that [`Module::mark_skip`] sets.
pub const SKIP_ATTRIBUTE: &str = "passlab-skip";

/// Whether function passes skip `f`: it has `optnone` or `passlab-skip`.
pub fn is_skipped(f: FunctionValue<'_>) -> bool {
    use inkwell::attributes::AttributeLoc;
    let optnone = inkwell::attributes::Attribute::get_named_enum_kind_id("optnone");
    f.get_enum_attribute(AttributeLoc::Function, optnone)
        .is_some()
        || f.get_string_attribute(AttributeLoc::Function, SKIP_ATTRIBUTE)
            .is_some()
}

/// Collects the messages LLVM sends to a context's diagnostic handler while
/// it is installed; puts the previous handler back when finished.
struct DiagnosticCapture {
    ctx: LLVMContextRef,
    prev: llvm_sys::LLVMDiagnosticHandler,
    prev_user: *mut c_void,
    // Boxed: LLVM holds its address as the handler's user pointer.
    #[expect(clippy::box_collection, reason = "LLVM holds the Vec's address")]
    messages: Box<Vec<String>>,
}

extern "C" fn collect_diagnostic(info: LLVMDiagnosticInfoRef, user: *mut c_void) {
    // SAFETY: LLVM calls this only as the handler `DiagnosticCapture`
    // installed, with `user` the address of its boxed `Vec<String>`, alive
    // until `finish` removes the handler, and a live `info`; the
    // description is a new NUL-terminated string, copied and then freed
    // once with LLVMDisposeMessage.
    unsafe {
        let messages = &mut *(user as *mut Vec<String>);
        let p = LLVMGetDiagInfoDescription(info);
        messages.push(CStr::from_ptr(p).to_string_lossy().into_owned());
        LLVMDisposeMessage(p);
    }
}

impl DiagnosticCapture {
    fn install(ctx: LLVMContextRef) -> DiagnosticCapture {
        let mut messages = Box::new(Vec::new());
        // SAFETY: `ctx` is the caller's live context; these only read its
        // current handler and user pointer.
        let (prev, prev_user) = unsafe {
            (
                LLVMContextGetDiagnosticHandler(ctx),
                LLVMContextGetDiagnosticContext(ctx),
            )
        };
        // SAFETY: `ctx` is live; the user pointer is the boxed `Vec`, whose
        // address stays put when the box moves into the `DiagnosticCapture`.
        // The box must outlive the handler: `finish` must run before the
        // capture is dropped (there is no `Drop` doing it), as `link` does
        // on every path.
        unsafe {
            LLVMContextSetDiagnosticHandler(
                ctx,
                Some(collect_diagnostic),
                &mut *messages as *mut Vec<String> as *mut c_void,
            )
        };
        DiagnosticCapture {
            ctx,
            prev,
            prev_user,
            messages,
        }
    }

    fn finish(self) -> String {
        // SAFETY: `self.ctx` is still live (its module is being linked), and
        // this puts back exactly the handler and user pointer it had before
        // `install`, before `self.messages` is freed.
        unsafe { LLVMContextSetDiagnosticHandler(self.ctx, self.prev, self.prev_user) };
        self.messages.join("; ")
    }
}

/// After a failed parse or compile: when an LLVM fatal error abandoned it,
/// what it built is still in `ctx` in an unknown state, so the context is
/// never disposed (shim/guard.h).
fn leak_if_fatal(ctx: &Rc<LlvmContext>) {
    // SAFETY: plab_take_fatal reads and clears a thread-local flag.
    if unsafe { ffi::plab_take_fatal() } {
        std::mem::forget(ctx.clone());
    }
}

/// The error for IR that parses but does not verify: the verifier's first
/// message, located in `source` (IR text) at the instruction it names where
/// that instruction can be found there.
/// Whether `bytes` start as LLVM bitcode does: raw ('BC' 0xC0DE) or in
/// its wrapper (0x0B17C0DE, little-endian).
pub(crate) fn is_bitcode(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BC\xC0\xDE") || bytes.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

fn invalid_ir(source_name: &str, source: &[u8], report: &str) -> Error {
    let first = report.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let text = std::str::from_utf8(source)
        .ok()
        .filter(|_| !source.starts_with(b"BC"));
    let (line, column, line_text) =
        text.and_then(|t| locate(t, report))
            .unwrap_or((0, 0, String::new()));
    Error::InvalidIr {
        source_name: source_name.to_string(),
        line,
        column,
        message: first.trim().trim_end_matches('!').to_string(),
        line_text,
        rest: report.to_string(),
    }
}

/// Where in `text` the instruction a verifier report names is: the
/// report's indented lines are the values it prints (the offending one
/// last); the first of them, from the last, that matches one line of the
/// text, by its whole text or by the value it defines (`%y = …`).
fn locate(text: &str, report: &str) -> Option<(u32, u32, String)> {
    let squash = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<(usize, &str, String)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i, l, squash(l.split(';').next().unwrap_or(""))))
        .collect();
    let found = |i: usize, l: &str| {
        let column = l.len() - l.trim_start().len() + 1;
        Some((
            u32::try_from(i + 1).ok()?,
            u32::try_from(column).ok()?,
            l.to_string(),
        ))
    };
    for printed in report.lines().rev().filter(|l| l.starts_with(' ')) {
        let printed = squash(printed);
        if printed.is_empty() {
            continue;
        }
        let same: Vec<_> = lines.iter().filter(|(_, _, s)| *s == printed).collect();
        if let [(i, l, _)] = same.as_slice() {
            return found(*i, l);
        }
        // The printer adds what the text may leave out (`align 4`,
        // metadata): match the value the instruction defines.
        if let Some((def, _)) = printed.split_once(" = ") {
            if def.starts_with('%') {
                let prefix = format!("{def} = ");
                let same: Vec<_> = lines
                    .iter()
                    .filter(|(_, _, s)| s.starts_with(&prefix))
                    .collect();
                if let [(i, l, _)] = same.as_slice() {
                    return found(*i, l);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
