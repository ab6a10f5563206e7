//! The JIT: compile a module and call its functions by name, isolated in
//! child processes.
//!
//! Compiling happens in a forked child (`codegen.rs`), which sends back an
//! object file: LLVM reports some code generation errors as fatal, and
//! there they end the child, not the session. The session links the object
//! with ORC's LLJIT, whose errors are values, resolving what the module
//! does not define from this process (the C library). A function that
//! reaches a symbol defined nowhere is refused before it runs, with the
//! symbols named.
//!
//! Every call goes through one type-erased ("packed") entry point, as the
//! seed's PackedFunc, generated in IR: `i64 @__passlab_packed(i32 index,
//! ptr args)`, a switch with a case per callable function that loads the
//! arguments from 64-bit slots, calls the function (inlined into its case
//! when it has at most 16 instructions) and returns the result in 64 bits.
//! Signatures it cannot carry, and functions that reach undefined symbols,
//! are refused per function, with the reason.
//!
//! A call runs in a forked child (`isolate.rs`): a crash (SIGSEGV, SIGFPE,
//! SIGILL, abort, stack overflow) or a hang past the timeout becomes an
//! error naming the function and the signal, and the session survives.
//! What the function prints to stdout and stderr is captured, in order, even
//! when it then crashes. Buffers are shared memory, so writes made in the
//! child are seen by the caller.
//!
//! *The engine.* Code generation cannot happen in the session's process,
//! so the only question is which engine links an object file here. MCJIT
//! has no C API to add an object and reports link errors as fatal; ORC's
//! LLJIT adds objects and returns errors as values. Measured with `bash
//! scripts/passlab.sh bench jit engines` (compile and link a whole module,
//! look up a function; medians of 5): zlib's five files, MCJIT in process
//! 149 ms, LLJIT in process 151 ms, passlab (child + LLJIT) 181 ms (1.2×);
//! Lua 5.4's 33 files, 1,064 / 1,069 / 1,432 ms (1.35×). The extra cost is
//! the fork, the entry point and the symbol analysis. A first version had a
//! wrapper per function with the function inlined into it: every body was
//! compiled twice, 2.4× on Lua. One entry point with a switch pays LLVM's
//! per-function overhead once.
//!
//! ```
//! use passlab::jit::{Arg, Jit};
//! use passlab::Module;
//! let m = Module::from_c("int add(int a, int b) { return a + b; }", "add.c").unwrap();
//! let jit = Jit::new(&m, 2).unwrap();
//! let r = jit.call("add", &[Arg::Int(2), Arg::Int(40)]).unwrap();
//! assert_eq!(r.value.unwrap().to_string(), "42");
//! ```

pub mod asm;
pub mod backend;
mod buffer;
mod codegen;
mod compare;
pub(crate) mod isolate;
pub mod mca;
pub mod probes;
mod subject;

pub use codegen::{
    text_size, Codegen, GateDecision, Probe, OPT_LEVEL_KEY as CODEGEN_OPT_LEVEL_KEY,
};

pub use crate::interrupt::interrupt_child as interrupt;
pub use isolate::paint_fresh_memory;

pub(crate) use buffer::fnv1a;
pub use buffer::{Buffer, ElemType, Fill};
pub use compare::{
    bisect, compare, compare_subject, compare_within, Candidate, Comparison, Culprit, Entry,
    Progress,
};
pub use subject::{program_outcome, Subject};

use crate::module::Module;
use crate::{Error, Result};
use llvm_sys::core::*;
use llvm_sys::error::*;
use llvm_sys::orc2::lljit::*;
use llvm_sys::orc2::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMLinkage, LLVMTypeKind};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::time::Duration;

/// The default time limit of a call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The config key of the time limit (milliseconds), so that `:with
/// config.jit.timeout_ms=60000` gives calls in that scope a minute.
pub const TIMEOUT_KEY: &str = "jit.timeout_ms";

/// The config key of the output cap: the most bytes of each stream a call
/// keeps (the beginning and the end).
pub const MAX_OUTPUT_KEY: &str = "jit.max_output";
/// The config key of the byte limit on one buffer.
pub const MAX_BUFFER_KEY: &str = "jit.max_buffer_bytes";

/// The default output cap: 128 KiB per stream (a notebook stays usable).
pub const DEFAULT_MAX_OUTPUT: usize = 128 << 10;

// The JIT's config options (`jit.*`, `codegen.*`), in the one table.
inventory::submit!(crate::config::Declarations(config_options));

fn config_options() -> Vec<crate::ConfigOption> {
    let mut options = vec![
        crate::ConfigOption::new(
            TIMEOUT_KEY,
            DEFAULT_TIMEOUT.as_millis() as i64,
            "time limit of one JIT call, or of one :time run, in milliseconds",
        )
        .with_range(1.0, 86_400_000.0),
        crate::ConfigOption::new(
            MAX_OUTPUT_KEY,
            DEFAULT_MAX_OUTPUT as i64,
            "the most bytes of standard output (and of standard error) a JIT call keeps: its beginning and its end",
        )
        .with_range(1024.0, (1u64 << 32) as f64),
        crate::ConfigOption::new(
            MAX_BUFFER_KEY,
            buffer::default_max_bytes() as i64,
            "the most bytes one :buffer may take (default: a quarter of this machine's memory)",
        )
        .with_range(1.0, (1u64 << 48) as f64),
    ];
    options.extend(codegen::config_options());
    options.extend(asm::config_options());
    options
}

/// A scalar type the packed convention carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Int(u32),
    F32,
    F64,
    Ptr,
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(bits) => write!(f, "i{bits}"),
            Scalar::F32 => f.write_str("float"),
            Scalar::F64 => f.write_str("double"),
            Scalar::Ptr => f.write_str("ptr"),
        }
    }
}

/// A function's signature as the JIT sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<Scalar>,
    /// `None` for `void`.
    pub ret: Option<Scalar>,
}

impl std::fmt::Display for Signature {
    /// As LLVM spells it: `i32 (i32, ptr)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let params: Vec<String> = self.params.iter().map(|p| p.to_string()).collect();
        match &self.ret {
            Some(r) => write!(f, "{r} ({})", params.join(", ")),
            None => write!(f, "void ({})", params.join(", ")),
        }
    }
}

/// An argument of a call.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Int(i64),
    Float(f64),
    Buffer(&'a Buffer),
}

/// The contents of the buffers among some arguments, kept so that each of
/// several calls (one per pipeline, in `:bench` and `:bisect`) starts from
/// the same data.
pub struct SavedBuffers<'a, 'b> {
    args: &'b [Arg<'a>],
    saved: Vec<Option<Vec<u8>>>,
}

impl<'a, 'b> SavedBuffers<'a, 'b> {
    pub fn save(args: &'b [Arg<'a>]) -> SavedBuffers<'a, 'b> {
        let saved = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(b) => Some(b.bytes().to_vec()),
                _ => None,
            })
            .collect();
        SavedBuffers { args, saved }
    }

    /// Puts every buffer back as it was saved.
    pub fn restore(&self) -> Result<()> {
        for (a, bytes) in self.args.iter().zip(&self.saved) {
            if let (Arg::Buffer(b), Some(bytes)) = (a, bytes) {
                b.load(bytes)?;
            }
        }
        Ok(())
    }
}

/// A value a function returned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int { value: i64, bits: u32 },
    F32(f32),
    F64(f64),
    Ptr(u64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int { value, bits: 1 } => write!(f, "{}", *value != 0),
            Value::Int { value, .. } => write!(f, "{value}"),
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Ptr(p) => write!(f, "0x{p:x}"),
        }
    }
}

/// What a call gave back.
#[derive(Clone, Debug, PartialEq)]
pub struct CallResult {
    pub value: Option<Value>,
    /// What the function wrote to standard output (capped: see
    /// [`MAX_OUTPUT_KEY`]).
    pub stdout: String,
    /// What it wrote to standard error.
    pub stderr: String,
    /// Wall time of the call itself, in the child.
    pub elapsed: Duration,
}

/// A program's standard input (see [`Jit::exec`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Stdin {
    /// None: reading gives end of file at once.
    #[default]
    Null,
    Bytes(Vec<u8>),
    File(std::path::PathBuf),
}

/// A module's `main` run as a program, as `lli` runs it: its arguments
/// (after the program's name, which is the module's) and its input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Program {
    pub args: Vec<String>,
    pub stdin: Stdin,
}

impl Program {
    /// As a shell would run it: `prog.c 10 'a b' < input.txt`.
    pub fn shell_line(&self, argv0: &str) -> String {
        let mut words = vec![argv0.to_string()];
        words.extend(
            self.args
                .iter()
                .map(|a| shlex::try_quote(a).map_or_else(|_| format!("{a:?}"), |q| q.into_owned())),
        );
        match &self.stdin {
            Stdin::Null => {}
            Stdin::Bytes(b) => words.push(format!("< ({} bytes)", b.len())),
            Stdin::File(f) => words.push(format!("< {}", f.display())),
        }
        words.join(" ")
    }
}

/// What a program did: its exit status (0-255, as the shell sees it:
/// `main`'s value or `exit`'s argument), what it printed, and how long
/// `main` ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecResult {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl ExecResult {
    /// What the result is compared by: the exit status and both streams.
    pub fn outcome(&self) -> String {
        format!(
            "exit {}, stdout {:016x}, stderr {:016x}",
            self.status,
            fnv1a(self.stdout.bytes()),
            fnv1a(self.stderr.bytes())
        )
    }
}

/// A program's standard input as a descriptor the child reads: /dev/null's
/// place is taken by the child itself (-1); bytes go through an anonymous
/// memory file, so that no pipe can fill up while the program does not
/// read; a file is opened here. Closed when dropped.
struct StdinFd {
    fd: i32,
}

impl StdinFd {
    fn open(stdin: &Stdin) -> Result<StdinFd> {
        let fd = match stdin {
            Stdin::Null => -1,
            Stdin::File(path) => {
                let f = std::fs::File::open(path).map_err(|e| {
                    Error::Invalid(format!(
                        "cannot read {} for standard input: {e}",
                        path.display()
                    ))
                })?;
                std::os::fd::IntoRawFd::into_raw_fd(f)
            }
            Stdin::Bytes(bytes) => {
                // SAFETY: memfd_create takes a NUL-terminated name and flags.
                let fd = unsafe { libc::memfd_create(c"passlab-stdin".as_ptr(), 0) };
                if fd < 0 {
                    return Err(Error::Invalid(format!(
                        "cannot hold the standard input: {}",
                        std::io::Error::last_os_error()
                    )));
                }
                let ok = crate::child::write_all(fd, bytes)
                    // SAFETY: rewinding our own descriptor.
                    && unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } == 0;
                if !ok {
                    crate::child::close(&[fd]);
                    return Err(Error::Invalid("cannot hold the standard input".into()));
                }
                fd
            }
        };
        Ok(StdinFd { fd })
    }
}

impl Drop for StdinFd {
    fn drop(&mut self) {
        if self.fd >= 0 {
            crate::child::close(&[self.fd]);
        }
    }
}

/// Where a JIT compilation's time went (Cranelift's timing tokens, for
/// `bench jit` and anyone asking why a compile was slow).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompileTimes {
    /// Verifying the module and reading its functions' signatures and
    /// unresolved symbols, in the session.
    pub check: Duration,
    /// The code-generating child: from before the fork until its object
    /// was read whole.
    pub codegen: Duration,
    /// Reading the object's symbol sizes, linking it with ORC and finding
    /// the entry point, in the session.
    pub link: Duration,
}

/// The packed entry point: function index, argument slots → result bits.
pub(crate) type Packed = unsafe extern "C" fn(u32, *const u64) -> u64;

/// A compiled module, linked into this process (not run in it).
pub struct Jit {
    lljit: LLVMOrcLLJITRef,
    /// Callable functions: signature and index in the packed entry point.
    functions: BTreeMap<String, (Signature, u32)>,
    /// The packed entry point (null until linked).
    packed: Packed,
    /// Functions whose signature cannot be called, with the reason.
    unsupported: BTreeMap<String, String>,
    /// Functions that reach symbols defined nowhere, with those symbols.
    unresolved: BTreeMap<String, Vec<String>>,
    /// Functions that reach symbols this process would supply outside the
    /// C/C++ runtime (a host library's `adler32`), with each symbol's file.
    host: BTreeMap<String, Vec<(String, String)>>,
    /// Whether calls may bind those symbols (otherwise they are refused:
    /// the host's library is not the user's code).
    allow_host: bool,
    codegen: Codegen,
    /// The back end's opt-bisect decisions (with `codegen.bisect_limit`).
    decisions: Vec<GateDecision>,
    /// Each function's size in the object, in bytes.
    code_bytes: BTreeMap<String, u64>,
    timeout: Option<Duration>,
    /// The most processor time a call's child may use (none: no limit but
    /// the time limit).
    cpu_limit: Option<Duration>,
    output: Option<isolate::OutputSpec>,
    times: CompileTimes,
    /// The module's name (a program's `argv[0]`: see [`program_name`]).
    name: String,
}

/// A program's `argv[0]` for a module named `module`: its file name
/// without the folders (`adler32.c` for a module clang made from
/// `/…/inputs/zlib/adler32.c`), so that what a program prints of it is the
/// same on every machine.
fn program_name(module: &str) -> String {
    std::path::Path::new(module)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .unwrap_or(module)
        .to_string()
}

impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: `self.lljit` was created by `link` and is disposed only here,
        // once; its error is consumed.
        unsafe {
            let e = LLVMOrcDisposeLLJIT(self.lljit);
            if !e.is_null() {
                LLVMConsumeError(e);
            }
        }
    }
}

/// What `packed` is before linking: never called.
unsafe extern "C" fn no_entry(_: u32, _: *const u64) -> u64 {
    0
}

fn init() {
    // SAFETY: registers the native target once per process (shim.cpp).
    unsafe { crate::ffi::plab_init_targets() };
}

/// The message of an LLVM error (consumed).
///
/// # Safety
/// `e` is a live error not yet consumed; it is consumed here and must not
/// be used again.
unsafe fn error_text(e: LLVMErrorRef) -> String {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        let m = LLVMGetErrorMessage(e);
        let s = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        s
    }
}

fn scalar(ty: LLVMTypeRef) -> Option<Scalar> {
    // SAFETY: `ty` is a live type of the module's context (the caller's).
    unsafe {
        match LLVMGetTypeKind(ty) {
            LLVMTypeKind::LLVMIntegerTypeKind => match LLVMGetIntTypeWidth(ty) {
                w @ (1 | 8 | 16 | 32 | 64) => Some(Scalar::Int(w)),
                _ => None,
            },
            LLVMTypeKind::LLVMFloatTypeKind => Some(Scalar::F32),
            LLVMTypeKind::LLVMDoubleTypeKind => Some(Scalar::F64),
            LLVMTypeKind::LLVMPointerTypeKind => Some(Scalar::Ptr),
            _ => None,
        }
    }
}

fn type_text(ty: LLVMTypeRef) -> String {
    // SAFETY: `ty` is a live type; the string LLVM returns is copied, then
    // disposed once.
    unsafe {
        let p = LLVMPrintTypeToString(ty);
        let s = CStr::from_ptr(p).to_string_lossy().into_owned();
        LLVMDisposeMessage(p);
        s
    }
}

/// The signature of `module`'s function `name` as calls see it, or why it
/// cannot be called (or is not there).
pub fn signature_in(module: &Module, name: &str) -> std::result::Result<Signature, String> {
    let f = module
        .function_ref(name)
        .map_err(|_| format!("no function '{name}'"))?;
    // SAFETY: `f` is a live function of the module; only its linkage is read.
    let linkage = unsafe { LLVMGetLinkage(f) };
    if matches!(
        linkage,
        LLVMLinkage::LLVMInternalLinkage | LLVMLinkage::LLVMPrivateLinkage
    ) {
        return Err(format!(
            "'{name}' is internal to the module (static in C): nothing outside it can call it"
        ));
    }
    signature(f)
}

/// The signature of `f`, or why it cannot be called.
fn signature(f: LLVMValueRef) -> std::result::Result<Signature, String> {
    // SAFETY: `f` is a live function of the module being compiled; only its
    // types are read.
    unsafe {
        let fty = LLVMGlobalGetValueType(f);
        if LLVMIsFunctionVarArg(fty) != 0 {
            return Err("it takes variable arguments".into());
        }
        let n = LLVMCountParamTypes(fty) as usize;
        let mut tys = vec![std::ptr::null_mut(); n];
        LLVMGetParamTypes(fty, tys.as_mut_ptr());
        let mut params = Vec::new();
        for (i, t) in tys.iter().enumerate() {
            params.push(scalar(*t).ok_or_else(|| {
                format!(
                    "parameter {} has type {}, which calls cannot pass",
                    i + 1,
                    type_text(*t)
                )
            })?);
        }
        let rt = LLVMGetReturnType(fty);
        let ret = if LLVMGetTypeKind(rt) == LLVMTypeKind::LLVMVoidTypeKind {
            None
        } else {
            Some(scalar(rt).ok_or_else(|| {
                format!("it returns {}, which calls cannot return", type_text(rt))
            })?)
        };
        Ok(Signature { params, ret })
    }
}

/// The packed entry point of a compiled module.
const PACKED_ENTRY: &str = "__passlab_packed";

/// What a program runs before `main` (its static constructors), where it
/// has any (`plab_add_static_init`).
const STATIC_INIT: &std::ffi::CStr = c"__passlab_init";

/// Functions of at most this many instructions are inlined into their case
/// of the packed entry point.
const INLINE_INTO_ENTRY: usize = 16;

/// The instructions in `f`'s body.
///
/// # Safety
/// `f` is a live function of a module nothing changes during the call.
unsafe fn instruction_count(f: LLVMValueRef) -> usize {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        let mut n = 0;
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                n += 1;
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        n
    }
}

/// An LLJIT holding `object`, resolving what it does not define from this
/// process. Linking happens at the first lookup.
fn link(module: &str, object: &[u8]) -> Result<LLVMOrcLLJITRef> {
    let failed = |what: &str, e: LLVMErrorRef| Error::Codegen {
        module: module.to_string(),
        // SAFETY: `e` is an error LLVM just returned, consumed here once.
        message: format!("{what}: {}", unsafe { error_text(e) }),
    };
    // SAFETY: LLVM's ORC C API on objects created here; on every failure what
    // was created is disposed once, and the memory buffer (a copy of `object`)
    // is handed to the JIT, which owns it from then on.
    unsafe {
        let mut sinks = crate::ffi::Sinks::default();
        let jit =
            crate::ffi::plab_create_lljit(crate::ffi::SINK_FIRST, sinks.user()) as LLVMOrcLLJITRef;
        if jit.is_null() {
            return Err(Error::Codegen {
                module: module.to_string(),
                message: format!("cannot create the JIT: {}", sinks.first_text()),
            });
        }
        // Errors while linking come back from the lookup; without this,
        // ORC would also print them.
        LLVMOrcExecutionSessionSetErrorReporter(
            LLVMOrcLLJITGetExecutionSession(jit),
            quiet_errors,
            std::ptr::null_mut(),
        );
        let jd = LLVMOrcLLJITGetMainJITDylib(jit);
        let mut generator = std::ptr::null_mut();
        let e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &mut generator,
            LLVMOrcLLJITGetGlobalPrefix(jit),
            None,
            std::ptr::null_mut(),
        );
        if !e.is_null() {
            let err = failed("cannot search this process's symbols", e);
            LLVMConsumeError(LLVMOrcDisposeLLJIT(jit));
            return Err(err);
        }
        LLVMOrcJITDylibAddGenerator(jd, generator);
        let e = define_program_symbols(jit, jd);
        if !e.is_null() {
            let err = failed(
                "cannot define exit, atexit, __cxa_atexit and malloc for programs",
                e,
            );
            LLVMConsumeError(LLVMOrcDisposeLLJIT(jit));
            return Err(err);
        }
        let name = CString::new(module).unwrap_or_default();
        let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
            object.as_ptr() as *const std::os::raw::c_char,
            object.len(),
            name.as_ptr(),
        );
        let e = LLVMOrcLLJITAddObjectFile(jit, jd, buf);
        if !e.is_null() {
            let err = failed("cannot add the compiled object", e);
            LLVMConsumeError(LLVMOrcDisposeLLJIT(jit));
            return Err(err);
        }
        Ok(jit)
    }
}

/// Defines a program's `exit`, `atexit`, `__cxa_atexit` and `malloc` in
/// `jd` as passlab's (isolate.rs): libc's would run the session's own exit
/// handlers, copied into the child; its `malloc` too (libc's, painting
/// fresh blocks on request). Returns LLVM's error (null: none).
///
/// # Safety
/// `jit` is a live LLJIT and `jd` its main JITDylib.
unsafe fn define_program_symbols(jit: LLVMOrcLLJITRef, jd: LLVMOrcJITDylibRef) -> LLVMErrorRef {
    // SAFETY: what this function's callers guarantee (its `# Safety`); the
    // materialization unit is disposed here when LLVM did not take it.
    unsafe {
        let mut pairs = [
            ("exit", isolate::program_exit as *const () as usize),
            ("atexit", isolate::program_atexit as *const () as usize),
            (
                "__cxa_atexit",
                isolate::program_cxa_atexit as *const () as usize,
            ),
            ("malloc", isolate::program_malloc as *const () as usize),
        ]
        .map(|(symbol, address)| {
            let c = CString::new(symbol).unwrap_or_default();
            LLVMOrcCSymbolMapPair {
                Name: LLVMOrcLLJITMangleAndIntern(jit, c.as_ptr()),
                Sym: LLVMJITEvaluatedSymbol {
                    Address: address as u64,
                    Flags: LLVMJITSymbolFlags {
                        GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported
                            as u8
                            | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8,
                        TargetFlags: 0,
                    },
                },
            }
        });
        let mu = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
        let e = LLVMOrcJITDylibDefine(jd, mu);
        if !e.is_null() {
            LLVMOrcDisposeMaterializationUnit(mu);
        }
        e
    }
}

/// A program's `argv` as its `main` reads it: the strings and the
/// pointers to them in one block each. With fresh memory painted
/// (isolate::paint_fresh_memory), both start further in, so that a program
/// whose output depends on where its arguments are (reading a pointer as a
/// number) prints something else than unpainted, as it does for memory it
/// never wrote.
struct ProgramArgs {
    strings: Vec<CString>,
    /// The strings' bytes, which `argv` points into.
    _text: Vec<u8>,
    argv: Vec<*const std::os::raw::c_char>,
    /// Where `argv` proper starts in `argv`, past the padding.
    first: usize,
}

impl ProgramArgs {
    /// `argv` for the program `name` given `args`.
    fn new(name: &str, args: &[String]) -> Result<ProgramArgs> {
        let nul = |w: &str| {
            CString::new(w).map_err(|_| {
                Error::Invalid(format!("a program argument cannot hold a NUL byte: {w:?}"))
            })
        };
        let mut strings = vec![nul(name)?];
        for a in args {
            strings.push(nul(a)?);
        }
        let pad = isolate::painting().map_or(0, |b| 4096 + 16 * usize::from(b));
        let mut text: Vec<u8> = vec![0; pad];
        let mut starts = Vec::with_capacity(strings.len());
        for c in &strings {
            starts.push(text.len());
            text.extend_from_slice(c.as_bytes_with_nul());
        }
        let mut argv: Vec<*const std::os::raw::c_char> = vec![std::ptr::null(); pad / 8];
        let first = argv.len();
        argv.extend(
            starts
                .iter()
                .map(|&i| text[i..].as_ptr() as *const std::os::raw::c_char),
        );
        argv.push(std::ptr::null());
        Ok(ProgramArgs {
            strings,
            _text: text,
            argv,
            first,
        })
    }

    /// The pointer `main` gets as `argv`, valid while `self` lives.
    fn argv(&self) -> *const *const std::os::raw::c_char {
        self.argv[self.first..].as_ptr()
    }
}

extern "C" fn quiet_errors(_ctx: *mut std::ffi::c_void, e: LLVMErrorRef) {
    // SAFETY: ORC hands the error to this reporter to consume, once.
    unsafe { LLVMConsumeError(e) }
}

/// Adds the packed entry point to `m`: `i64 @__passlab_packed(i32 index,
/// ptr args)`, which calls function `index` of `functions` with its
/// arguments loaded from 64-bit slots and returns the result in 64 bits
/// (integers sign-extended, floats as their bits, pointers as integers, 0
/// for void). One function with a case per callable function, not a
/// wrapper each: LLVM's code generator has a cost per function (about a
/// third of a millisecond here), which a thousand wrappers multiply.
///
/// # Safety
/// `m` is a live module owned by the caller and used by no one else
/// during the call; each of `functions` has the signature given.
unsafe fn add_packed_entry(m: LLVMModuleRef, functions: &[(String, Signature)]) {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        let ctx = LLVMGetModuleContext(m);
        let ptr = LLVMPointerTypeInContext(ctx, 0);
        let i64t = LLVMInt64TypeInContext(ctx);
        let i32t = LLVMInt32TypeInContext(ctx);
        let mut params = [i32t, ptr];
        let wty = LLVMFunctionType(i64t, params.as_mut_ptr(), 2, 0);
        let name = CString::new(PACKED_ENTRY).unwrap_or_default();
        let w = LLVMAddFunction(m, name.as_ptr(), wty);
        let entry = LLVMAppendBasicBlockInContext(ctx, w, c"entry".as_ptr());
        let unknown = LLVMAppendBasicBlockInContext(ctx, w, c"unknown".as_ptr());
        let b = LLVMCreateBuilderInContext(ctx);
        LLVMPositionBuilderAtEnd(b, unknown);
        LLVMBuildRet(b, LLVMConstInt(i64t, 0, 0));
        LLVMPositionBuilderAtEnd(b, entry);
        let index = LLVMGetParam(w, 0);
        let args = LLVMGetParam(w, 1);
        let switch = LLVMBuildSwitch(b, index, unknown, functions.len() as u32);
        for (i, (fname, sig)) in functions.iter().enumerate() {
            let Ok(c) = CString::new(fname.as_str()) else {
                continue;
            };
            let f = LLVMGetNamedFunction(m, c.as_ptr());
            if f.is_null() {
                continue;
            }
            let case = LLVMAppendBasicBlockInContext(ctx, w, c"".as_ptr());
            LLVMAddCase(switch, LLVMConstInt(i32t, i as u64, 0), case);
            LLVMPositionBuilderAtEnd(b, case);
            let fty = LLVMGlobalGetValueType(f);
            let n = sig.params.len();
            let mut ptys = vec![std::ptr::null_mut(); n];
            LLVMGetParamTypes(fty, ptys.as_mut_ptr());
            let mut values = Vec::with_capacity(n);
            for (j, t) in ptys.iter().enumerate() {
                let mut idx = [LLVMConstInt(i64t, j as u64, 0)];
                let slot = LLVMBuildGEP2(b, i64t, args, idx.as_mut_ptr(), 1, c"".as_ptr());
                values.push(LLVMBuildLoad2(b, *t, slot, c"".as_ptr()));
            }
            let r = LLVMBuildCall2(b, fty, f, values.as_mut_ptr(), n as u32, c"".as_ptr());
            // A small function is inlined into its case, so that a packed call
            // costs one call, not two; a large one is called (an extra call is
            // nothing next to its work).
            if instruction_count(f) <= INLINE_INTO_ENTRY {
                let kind = LLVMGetEnumAttributeKindForName(c"alwaysinline".as_ptr(), 12);
                let attr = LLVMCreateEnumAttribute(ctx, kind, 0);
                LLVMAddCallSiteAttribute(r, llvm_sys::LLVMAttributeFunctionIndex, attr);
                let noinline = LLVMGetEnumAttributeKindForName(c"noinline".as_ptr(), 8);
                LLVMRemoveEnumAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, noinline);
            }
            let out = match sig.ret {
                None => LLVMConstInt(i64t, 0, 0),
                Some(Scalar::Int(64)) => r,
                Some(Scalar::Int(_)) => LLVMBuildSExt(b, r, i64t, c"".as_ptr()),
                Some(Scalar::F32) => {
                    let bits = LLVMBuildBitCast(b, r, i32t, c"".as_ptr());
                    LLVMBuildZExt(b, bits, i64t, c"".as_ptr())
                }
                Some(Scalar::F64) => LLVMBuildBitCast(b, r, i64t, c"".as_ptr()),
                Some(Scalar::Ptr) => LLVMBuildPtrToInt(b, r, i64t, c"".as_ptr()),
            };
            LLVMBuildRet(b, out);
        }
        LLVMDisposeBuilder(b);
    }
}

/// The signatures of `module`'s defined functions that can be called, and
/// why each other one cannot.
fn signatures(module: &Module) -> (Vec<(String, Signature)>, BTreeMap<String, String>) {
    let mut sigs = Vec::new();
    let mut unsupported = BTreeMap::new();
    // SAFETY: walks the live module's function list; names are copied out.
    unsafe {
        let mut f = LLVMGetFirstFunction(module.raw());
        while !f.is_null() {
            if LLVMIsDeclaration(f) == 0 {
                let mut len = 0;
                let name = crate::ffi::str_from(LLVMGetValueName2(f, &mut len), len).into_owned();
                match signature(f) {
                    Ok(sig) => sigs.push((name, sig)),
                    Err(why) => {
                        unsupported.insert(name, why);
                    }
                }
            }
            f = LLVMGetNextFunction(f);
        }
    }
    (sigs, unsupported)
}

/// Each function's bytes in the object the JIT runs (its symbols' sizes;
/// reading an object is not risky work).
fn function_bytes(object: &[u8]) -> BTreeMap<String, u64> {
    asm::symbol_sizes(object)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter_map(|(n, b)| Some((n.to_string(), b.parse().ok()?)))
        .collect()
}

impl Jit {
    /// Compiles `module` at code generator level `opt_level` (0-3) for the
    /// module's own processor; the module itself stays as it is.
    pub fn new(module: &Module, opt_level: u32) -> Result<Jit> {
        Jit::with_codegen(module, &Codegen::level(opt_level))
    }

    /// Compiles `module` with the code generation settings `codegen`: in a
    /// child process, to an object file, which is linked here.
    pub fn with_codegen(module: &Module, codegen: &Codegen) -> Result<Jit> {
        Jit::compile(module, codegen, false)
    }

    /// [`with_codegen`](Jit::with_codegen), generating code in this
    /// process when `here` (the caller is an isolated child already: a
    /// search's evaluating process).
    pub(crate) fn compile(module: &Module, codegen: &Codegen, here: bool) -> Result<Jit> {
        init();
        let start = std::time::Instant::now();
        module.verify().map_err(|m| {
            Error::Invalid(format!("cannot compile a module that does not verify: {m}"))
        })?;
        let (sigs, unsupported) = signatures(module);
        let unresolved = codegen::unresolved(module);
        let host = codegen::host_bound(module);
        let checked = std::time::Instant::now();
        let (object, decisions) = codegen::compile_object(module, &sigs, codegen, here)?;
        let compiled = std::time::Instant::now();
        let code_bytes = function_bytes(&object);
        let lljit = link(&module.name(), &object)?;
        let mut jit = Jit {
            lljit,
            functions: BTreeMap::new(),
            packed: no_entry,
            unsupported,
            unresolved,
            host,
            allow_host: false,
            codegen: codegen.clone(),
            decisions,
            code_bytes,
            timeout: None,
            cpu_limit: None,
            output: None,
            times: CompileTimes::default(),
            name: program_name(&module.name()),
        };
        match jit.address(PACKED_ENTRY) {
            Ok(addr) => {
                // SAFETY: the address is that of `__passlab_packed`, which
                // `add_packed_entry` defines with exactly the `Packed`
                // signature, and the JIT holding the code lives as long as
                // `jit`.
                jit.packed = unsafe { std::mem::transmute::<usize, Packed>(addr) };
                jit.functions = sigs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (name, sig))| (name, (sig, i as u32)))
                    .collect();
            }
            Err(e) => {
                return Err(Error::Codegen {
                    module: module.name(),
                    message: format!("linking the compiled module failed: {e}"),
                })
            }
        }
        jit.times = CompileTimes {
            check: checked - start,
            codegen: compiled - checked,
            link: compiled.elapsed(),
        };
        Ok(jit)
    }

    /// The bytes of every function's machine code in the object.
    pub fn total_code_bytes(&self) -> Option<u64> {
        (!self.code_bytes.is_empty()).then(|| self.code_bytes.values().sum())
    }

    /// The compiled module's name (a program's `argv[0]`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where compiling it took its time.
    pub fn compile_times(&self) -> CompileTimes {
        self.times
    }

    /// The code generation settings it was compiled with.
    pub fn codegen(&self) -> &Codegen {
        &self.codegen
    }

    /// The bytes of `function`'s machine code in the object the JIT runs.
    pub fn code_bytes(&self, function: &str) -> Option<u64> {
        self.code_bytes.get(function).copied()
    }

    /// What the back end's opt-bisect gate decided while the code was
    /// generated (empty unless `codegen.bisect_limit` is set).
    pub fn bisect_decisions(&self) -> &[GateDecision] {
        &self.decisions
    }

    /// The address of a symbol of the object (linking it on first use).
    fn address(&self, symbol: &str) -> std::result::Result<usize, String> {
        let c = CString::new(symbol).map_err(|e| e.to_string())?;
        let mut addr = 0;
        // SAFETY: `self.lljit` is alive; `c` is a NUL-terminated name and
        // `addr` a valid out-parameter.
        let e = unsafe { LLVMOrcLLJITLookup(self.lljit, &mut addr, c.as_ptr()) };
        if e.is_null() {
            Ok(addr as usize)
        } else {
            // SAFETY: `e` is the error the lookup just returned, consumed once.
            Err(unsafe { error_text(e) })
        }
    }

    /// The address of the compiled function, and of the packed entry point
    /// with the function's index there, for benchmarks that call them in
    /// this process (`unsafe extern "C" fn(u32, *const u64) -> u64`).
    /// Calling them is not isolated: a crash ends the process.
    pub fn addresses(&self, function: &str) -> Result<(usize, usize, u32)> {
        let (_, index) = self.lookup(function)?;
        let native = self
            .address(function)
            .map_err(|e| Error::Invalid(format!("'{function}': {e}")))?;
        Ok((native, self.packed as usize, *index))
    }

    /// Lets calls bind symbols the module does not define from this
    /// process's libraries beyond the C/C++ runtime (see
    /// [`host_bound`](Jit::host_bound)); refused otherwise.
    pub fn set_allow_host(&mut self, allow: bool) {
        self.allow_host = allow;
    }

    /// The symbols outside the module and the C/C++ runtime that
    /// `function` reaches, each with the file of this process that would
    /// supply it (`adler32`, `libz.so.1`).
    pub fn host_bound(&self, function: &str) -> &[(String, String)] {
        self.host.get(function).map_or(&[], Vec::as_slice)
    }

    /// Sets the time limit of calls (otherwise the context's
    /// `jit.timeout_ms`, 10 s unless set).
    pub fn with_timeout(mut self, timeout: Duration) -> Jit {
        self.timeout = Some(timeout);
        self
    }

    /// Stops a call's child once it has used `cpu` of processor time (a
    /// limit a loaded machine does not shorten, as it does wall time).
    pub fn with_cpu_limit(mut self, cpu: Duration) -> Jit {
        self.cpu_limit = Some(cpu);
        self
    }

    /// The time limit a call made now has.
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or_else(|| {
            crate::PassContext::current()
                .config_int(TIMEOUT_KEY)
                .ok()
                .filter(|ms| *ms > 0)
                .map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(ms as u64))
        })
    }

    /// The signature of a callable function.
    pub fn signature(&self, function: &str) -> Result<&Signature> {
        self.lookup(function).map(|(s, _)| s)
    }

    /// Sets where calls' output goes: the cap per stream (otherwise the
    /// context's `jit.max_output`) and a file that gets all of it.
    pub fn with_output(mut self, max: usize, file: Option<std::path::PathBuf>) -> Jit {
        self.output = Some(isolate::OutputSpec {
            max,
            file,
            cpu: None,
        });
        self
    }

    fn output_spec(&self) -> isolate::OutputSpec {
        let mut spec = self.output.clone().unwrap_or_else(|| isolate::OutputSpec {
            max: crate::PassContext::current()
                .config_int(MAX_OUTPUT_KEY)
                .ok()
                .filter(|m| *m > 0)
                .map_or(DEFAULT_MAX_OUTPUT, |m| m as usize),
            file: None,
            cpu: None,
        });
        spec.cpu = self.cpu_limit;
        spec
    }

    /// The functions that can be called, with their signatures, by name.
    pub fn callable(&self) -> impl Iterator<Item = (&str, &Signature)> {
        self.functions.iter().map(|(n, (s, _))| (n.as_str(), s))
    }

    fn lookup(&self, function: &str) -> Result<&(Signature, u32)> {
        if let Some(why) = self.unsupported.get(function) {
            return Err(Error::Invalid(format!("cannot call '{function}': {why}")));
        }
        if let Some(symbols) = self.unresolved.get(function) {
            let list = symbols.join(", ");
            return Err(Error::Invalid(format!(
                "cannot call '{function}': it uses {list}, which {} defined neither in the module nor in this process (undefined: {list}); define {} in the module, or :load the file that does",
                if symbols.len() == 1 { "is" } else { "are" },
                if symbols.len() == 1 { "it" } else { "them" },
            )));
        }
        if let Some(bound) = self.host.get(function).filter(|_| !self.allow_host) {
            let list = bound
                .iter()
                .map(|(sym, file)| format!("{sym} (from {file})"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Error::Invalid(format!(
                "{function} reaches symbols the module does not define, which this process would supply: {list}; load the files that define them, or allow=host to run with the host's"
            )));
        }
        self.functions.get(function).ok_or_else(|| Error::NotFound {
            what: "function",
            name: function.to_string(),
            suggestions: crate::nearest_names(function, self.functions.keys().map(String::as_str)),
        })
    }

    /// The argument slots for a call, or an error naming the parameter.
    fn slots(function: &str, sig: &Signature, args: &[Arg]) -> Result<Vec<u64>> {
        if args.len() != sig.params.len() {
            return Err(Error::Invalid(format!(
                "'{function}' takes {} arguments ({}), got {}",
                sig.params.len(),
                sig.params
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                args.len()
            )));
        }
        let mut slots = vec![0u64; args.len().max(1)];
        for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
            slots[i] = match (p, a) {
                (Scalar::Int(_), Arg::Int(v)) => *v as u64,
                (Scalar::F32, Arg::Float(v)) => (*v as f32).to_bits() as u64,
                (Scalar::F32, Arg::Int(v)) => (*v as f32).to_bits() as u64,
                (Scalar::F64, Arg::Float(v)) => v.to_bits(),
                (Scalar::F64, Arg::Int(v)) => (*v as f64).to_bits(),
                (Scalar::Ptr, Arg::Buffer(b)) => b.as_ptr() as u64,
                (p, a) => {
                    let given = match a {
                        Arg::Int(_) => "an integer",
                        Arg::Float(_) => "a float",
                        Arg::Buffer(_) => "a buffer",
                    };
                    return Err(Error::Invalid(format!(
                        "'{function}' parameter {} is {p}, got {given}",
                        i + 1
                    )));
                }
            };
        }
        Ok(slots)
    }

    /// Runs the module's `main` as a program (in an isolated child, as
    /// [`call`](Jit::call)): `argv` is the module's name and
    /// `program.args`, the environment is the session's, standard input is
    /// `program.stdin`. `exit(n)` ends it as returning `n` from `main` does,
    /// after its `atexit` handlers.
    pub fn exec(&self, program: &Program) -> Result<ExecResult> {
        self.exec_saving(program, None)
    }

    /// [`exec`](Jit::exec), writing all of the output to `file` (standard
    /// output) and `file.err` (standard error).
    pub fn exec_saving(
        &self,
        program: &Program,
        file: Option<&std::path::Path>,
    ) -> Result<ExecResult> {
        let (sig, index) = self.program_main()?;
        let params = sig.params.as_slice();
        let laid = ProgramArgs::new(&self.name, &program.args)?;
        let argv_ptr = laid.argv();
        extern "C" {
            static environ: *const *const std::os::raw::c_char;
        }
        // SAFETY: reading libc's `environ` pointer (not what it points to).
        let envp = unsafe { environ } as u64;
        let slots: Vec<u64> = [laid.strings.len() as u64, argv_ptr as u64, envp]
            .into_iter()
            .take(params.len())
            .collect();
        let input = StdinFd::open(&program.stdin)?;
        let mut spec = self.output_spec();
        spec.file = file.map(std::path::Path::to_path_buf);
        let run = isolate::run(
            self.packed,
            index,
            &slots,
            self.timeout(),
            isolate::Plan::Exec {
                stdin: input.fd,
                // Static constructors: C++'s global objects, C's
                // __attribute__((constructor)).
                init: self
                    .address(STATIC_INIT.to_str().unwrap_or_default())
                    .unwrap_or(0),
            },
            &spec,
        )
        .map_err(|failure| Error::Invalid(format!("the program {failure}")))?;
        // `argv` and its strings were read by the child; they live to here.
        drop((laid, input));
        Ok(ExecResult {
            status: if sig.ret.is_some() {
                (run.ret as i32) & 0xff
            } else {
                0
            },
            stdout: run.stdout,
            stderr: run.stderr,
            elapsed: run.elapsed,
        })
    }

    /// The module's `main` and its index in the packed entry point, when it
    /// has a program's shape.
    fn program_main(&self) -> Result<(&Signature, u32)> {
        let (sig, index) = self.lookup("main").map_err(|e| match e {
            Error::NotFound { .. } => Error::Invalid(
                "the module has no main function to run as a program (:call runs any function)"
                    .into(),
            ),
            other => other,
        })?;
        let int_main = matches!(sig.ret, Some(Scalar::Int(32)) | None);
        let shape_ok = matches!(
            sig.params.as_slice(),
            [] | [Scalar::Int(32), Scalar::Ptr] | [Scalar::Int(32), Scalar::Ptr, Scalar::Ptr]
        );
        if !int_main || !shape_ok {
            return Err(Error::Invalid(format!(
                "main is {sig}: a program's main is int main(void), int main(int, char **) or int main(int, char **, char **)"
            )));
        }
        Ok((sig, *index))
    }

    /// Calls `function` in an isolated child process (see the module
    /// documentation).
    pub fn call(&self, function: &str, args: &[Arg]) -> Result<CallResult> {
        self.call_saving(function, args, None)
    }

    /// [`call`](Jit::call), writing all of the output to `file` (standard
    /// output) and `file.err` (standard error), capped or not.
    pub fn call_saving(
        &self,
        function: &str,
        args: &[Arg],
        file: Option<&std::path::Path>,
    ) -> Result<CallResult> {
        let mut spec = self.output_spec();
        spec.file = file.map(std::path::Path::to_path_buf);
        let (sig, run) = self.run_with(function, args, isolate::Plan::Call, &spec)?;
        Ok(CallResult {
            value: decode(sig, run.ret),
            stdout: run.stdout,
            stderr: run.stderr,
            elapsed: run.elapsed,
        })
    }

    fn run(
        &self,
        function: &str,
        args: &[Arg],
        plan: isolate::Plan,
    ) -> Result<(&Signature, isolate::Run)> {
        self.run_with(function, args, plan, &self.output_spec())
    }

    fn run_with(
        &self,
        function: &str,
        args: &[Arg],
        plan: isolate::Plan,
        output: &isolate::OutputSpec,
    ) -> Result<(&Signature, isolate::Run)> {
        let (sig, index) = self.lookup(function)?;
        let slots = Self::slots(function, sig, args)?;
        let run = isolate::run(self.packed, *index, &slots, self.timeout(), plan, output)
            .map_err(|failure| Error::Invalid(format!("'{function}' {failure}")))?;
        Ok((sig, run))
    }

    /// Times `function` with TVM's time-evaluator semantics (in the isolated
    /// child): one warm-up call; `number` calls per repeat, grown until one
    /// repeat lasts at least `min_repeat_ms`; `repeat` repeats.
    pub fn time(&self, function: &str, args: &[Arg], spec: TimeSpec) -> Result<TimeResult> {
        if spec.repeat == 0 || spec.repeat > isolate::MAX_REPEAT {
            return Err(Error::Invalid(format!(
                "repeat must be 1-{}, got {}",
                isolate::MAX_REPEAT,
                spec.repeat
            )));
        }
        if spec.number == 0 {
            return Err(Error::Invalid("number must be at least 1".into()));
        }
        let plan = isolate::Plan::Time {
            number: spec.number,
            repeat: spec.repeat,
            min_repeat_ms: spec.min_repeat_ms,
        };
        let (sig, run) = self.run(function, args, plan)?;
        Ok(TimeResult {
            value: decode(sig, run.ret),
            number: run.number,
            per_call: run
                .repeats
                .iter()
                .map(|t| per_call(*t, run.number))
                .collect(),
            stdout: run.stdout,
            stderr: run.stderr,
        })
    }
}

/// The time of one call of a repeat of `calls` calls that took `total`.
/// (In nanoseconds: `calls` may pass u32::MAX, which `Duration / u32`
/// cannot take; `as u32` made 2^32 calls a division by zero, a panic.)
fn per_call(total: Duration, calls: u64) -> Duration {
    let ns = total.as_nanos() / u128::from(calls.max(1));
    Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

fn decode(sig: &Signature, raw: u64) -> Option<Value> {
    sig.ret.map(|r| match r {
        Scalar::Int(bits) => {
            let value = match bits {
                1 => (raw & 1) as i64,
                64 => raw as i64,
                _ => ((raw << (64 - bits)) as i64) >> (64 - bits),
            };
            Value::Int { value, bits }
        }
        Scalar::F32 => Value::F32(f32::from_bits(raw as u32)),
        Scalar::F64 => Value::F64(f64::from_bits(raw)),
        Scalar::Ptr => Value::Ptr(raw),
    })
}

/// How to time a function (TVM's `time_evaluator(number, repeat,
/// min_repeat_ms)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeSpec {
    pub number: u64,
    pub repeat: usize,
    pub min_repeat_ms: u64,
}

impl Default for TimeSpec {
    /// TVM's defaults: number 10, repeat 1… passlab repeats 5 times so that
    /// a median and a spread mean something.
    fn default() -> TimeSpec {
        TimeSpec {
            number: 10,
            repeat: 5,
            min_repeat_ms: 0,
        }
    }
}

/// What the time evaluator measured.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeResult {
    /// The value of the warm-up call.
    pub value: Option<Value>,
    /// Calls per repeat (after growing for `min_repeat_ms`).
    pub number: u64,
    /// Mean time per call in each repeat: the raw samples.
    pub per_call: Vec<Duration>,
    pub stdout: String,
    pub stderr: String,
}

impl TimeResult {
    fn secs(&self) -> Vec<f64> {
        self.per_call.iter().map(Duration::as_secs_f64).collect()
    }

    pub fn mean(&self) -> Duration {
        let v = self.secs();
        Duration::from_secs_f64(v.iter().sum::<f64>() / v.len() as f64)
    }

    pub fn median(&self) -> Duration {
        let mut v = self.per_call.clone();
        v.sort();
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2
        }
    }

    /// Population standard deviation (as TVM's `ProfileResult`).
    pub fn stdev(&self) -> Duration {
        let v = self.secs();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        Duration::from_secs_f64(var.sqrt())
    }

    pub fn min(&self) -> Duration {
        self.per_call.iter().min().copied().unwrap_or_default()
    }

    pub fn max(&self) -> Duration {
        self.per_call.iter().max().copied().unwrap_or_default()
    }

    /// One line: mean, median, stdev, min, max per call, and the spec.
    pub fn summary(&self) -> String {
        let us = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e6);
        format!(
            "mean {} us, median {} us, stdev {} us, min {} us, max {} us per call ({} repeats of {} calls)",
            us(self.mean()),
            us(self.median()),
            us(self.stdev()),
            us(self.min()),
            us(self.max()),
            self.per_call.len(),
            self.number
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_programs_argv0_is_its_file_name_on_every_machine() {
        use super::program_name;
        assert_eq!(program_name("/home/me/src/zlib/adler32.c"), "adler32.c");
        assert_eq!(program_name("tiny.c"), "tiny.c");
        assert_eq!(program_name("m"), "m");
        assert_eq!(program_name(""), "");
    }

    #[test]
    fn a_call_of_a_repeat_divides_by_any_number_of_calls() {
        use super::per_call;
        use std::time::Duration;
        let total = Duration::from_secs(8);
        assert_eq!(per_call(total, 4), Duration::from_secs(2));
        assert_eq!(per_call(total, 1 << 32), Duration::from_nanos(1));
        assert_eq!(per_call(total, u64::MAX), Duration::ZERO);
        assert_eq!(per_call(total, 0), total);
    }
}
