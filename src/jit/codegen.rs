//! Code generation: the settings (part of the pass context) and compiling a
//! module to an object file in a forked child.
//!
//! LLVM reports some code generation and MC-layer errors as fatal: it
//! prints them and ends the process (`report_fatal_error`, or an MCContext
//! error with no handler, as for inline assembly that does not assemble).
//! So the session never generates code itself: a child does, on its copy of
//! the session's memory, and sends back an object file; the session then
//! only links it ([`super::Jit`], ORC's LLJIT: errors as values). A fatal
//! error ends the child and becomes an error naming the module and quoting
//! LLVM's message.
//!
//! In the child, `compile_object` adds the packed entry point, stubs the
//! symbols defined nowhere, writes the target (`target.cpu`,
//! `target.features`) into the functions, runs `always-inline` and emits
//! the object; `Codegen` carries `codegen.opt_level` and the target. It
//! also lists, per function, the symbols it reaches that neither the module
//! nor the process defines (the shim walks calls, references and
//! variables' initializers; `dlsym` decides).

use super::{add_packed_entry, Signature};
use crate::context::PassContext;
use crate::llvm::{self, Target, Tuning};
use crate::module::Module;
use crate::{Error, Result};
use llvm_sys::core::*;
use llvm_sys::target_machine::*;
use std::ffi::{CStr, CString};

/// Config key: the code generator's optimization level (LLVM's `-O0`…`-O3`
/// for instruction selection, register allocation and scheduling).
pub const OPT_LEVEL_KEY: &str = "codegen.opt_level";

/// How code is generated: the code generator's level and the processor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Codegen {
    pub opt_level: u32,
    pub target: Target,
    /// `target.cpu` as given (`host`, a name, or empty), for labels.
    pub cpu_setting: String,
    /// LLVM's opt-bisect over the back end: only the first N of its
    /// optional passes that ask run (the passes that call skipFunction:
    /// machine CSE, machine LICM, the scheduler …), and each decision is
    /// noted. `None`: no gate, every pass runs (`:bisect` sets it).
    pub bisect_limit: Option<u64>,
}

impl Default for Codegen {
    /// Level 2 (as clang -O2 and llc), the module's own processor.
    fn default() -> Codegen {
        Codegen {
            opt_level: 2,
            target: Target::default(),
            cpu_setting: String::new(),
            bisect_limit: None,
        }
    }
}

impl Codegen {
    /// Level `opt_level` (0-3) for the module's own processor.
    pub fn level(opt_level: u32) -> Codegen {
        Codegen {
            opt_level: opt_level.min(3),
            ..Codegen::default()
        }
    }

    /// The settings of `ctx`: `codegen.opt_level`, `target.cpu`,
    /// `target.features`.
    pub fn from_context(ctx: &PassContext) -> Result<Codegen> {
        let level = ctx.config_int(OPT_LEVEL_KEY)?;
        let cpu = match ctx.config(crate::pass::llvm_keys::TARGET_CPU)? {
            crate::ConfigValue::Str(s) => s,
            v => v.to_string(),
        };
        Ok(Codegen {
            opt_level: level.clamp(0, 3) as u32,
            target: crate::pass::target(ctx)?,
            cpu_setting: cpu,
            bisect_limit: None,
        })
    }

    /// As tables show it: `codegen O2`, `codegen O3, cpu host (znver3)`.
    pub fn label(&self) -> String {
        let mut s = format!("codegen O{}", self.opt_level);
        match (self.cpu_setting.as_str(), self.target.cpu.as_str()) {
            ("", "") => {}
            ("host", cpu) => s.push_str(&format!(", cpu host ({cpu})")),
            (_, cpu) => s.push_str(&format!(", cpu {cpu}")),
        }
        if !self.target.features.is_empty() && self.cpu_setting != "host" {
            s.push_str(&format!(", features {}", self.target.features));
        }
        s
    }
}

pub(super) fn config_options() -> Vec<crate::ConfigOption> {
    vec![crate::ConfigOption::new(
        OPT_LEVEL_KEY,
        2i64,
        "the code generator's optimization level for JIT compilation (0-3; LLVM's default, 2, as clang -O2)",
    )
    .with_range(0.0, 3.0)]
}

/// The symbols each function reaches that neither the module nor this
/// process defines: function name → symbols.
pub(crate) fn unresolved(module: &Module) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut sinks = crate::ffi::Sinks::default();
    // SAFETY: the module is alive for the call; `sinks` is the `Sinks` that
    // `SINK_FIRST` expects, alive for the call.
    unsafe { crate::ffi::plab_unresolved(module.raw(), crate::ffi::SINK_FIRST, sinks.user()) };
    sinks
        .first_text()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(f, syms)| (f.to_string(), syms.split(',').map(str::to_string).collect()))
        .collect()
}

/// The symbols each function reaches that the module does not define but
/// this process does, outside the C/C++ runtime: function name → (symbol,
/// the file that defines it in this process).
pub(crate) fn host_bound(
    module: &Module,
) -> std::collections::BTreeMap<String, Vec<(String, String)>> {
    let mut sinks = crate::ffi::Sinks::default();
    // SAFETY: the module is alive for the call; `sinks` is the `Sinks` that
    // `SINK_FIRST` expects, alive for the call.
    unsafe { crate::ffi::plab_host_bound(module.raw(), crate::ffi::SINK_FIRST, sinks.user()) };
    sinks
        .first_text()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(f, syms)| {
            let bound = syms
                .split(',')
                .map(|s| {
                    let (sym, file) = s.split_once('=').unwrap_or((s, ""));
                    (sym.to_string(), file.to_string())
                })
                .collect();
            (f.to_string(), bound)
        })
        .collect()
}

/// Compiles `module` with a packed entry point for `wrappers` (in that
/// order) into an object file, in a forked child (see the module
/// documentation); with `cg.bisect_limit`, also the back end's opt-bisect
/// decisions (see [`GateDecision`]).
pub(crate) fn compile_object(
    module: &Module,
    wrappers: &[(String, Signature)],
    cg: &Codegen,
    here: bool,
) -> Result<(Vec<u8>, Vec<GateDecision>)> {
    let name = module.name();
    // In this process (the caller is an isolated child already), on a copy.
    let copy = here.then(|| module.copy());
    let raw = copy.as_ref().unwrap_or(module).raw();
    let triple = module.triple();
    let work = move || -> std::result::Result<Vec<u8>, String> {
        // In the child: the module is this process's copy of the session's,
        // changed here only.
        // SAFETY: in the child, on this process's own copy of the module (`raw`
        // is valid: the module or its copy outlives `work`); the handler only
        // writes and `_exit`s.
        unsafe {
            llvm_sys::error_handling::LLVMInstallFatalErrorHandler(Some(on_fatal_error));
            add_packed_entry(raw, wrappers);
            crate::ffi::plab_stub_unresolved(raw);
            crate::ffi::plab_add_static_init(raw, super::STATIC_INIT.as_ptr());
        }
        // The entry point's calls of small functions are always-inline.
        prepare(raw, &triple, cg)?;
        // ELF TLS needs a platform the JIT does not have: its objects
        // lower thread-local variables to libgcc's emulated TLS.
        let mut object = emit_with(raw, &triple, cg, LLVMCodeGenFileType::LLVMObjectFile, true)?;
        // The decisions follow the object, their length last.
        let record = if cg.bisect_limit.is_some() {
            gate_record()
        } else {
            String::new()
        };
        object.extend_from_slice(record.as_bytes());
        object.extend_from_slice(&(record.len() as u64).to_le_bytes());
        Ok(object)
    };
    let mut bytes = if here {
        work().map_err(|message| Error::Codegen {
            module: name.clone(),
            message,
        })?
    } else {
        crate::child::in_child(work).map_err(|e| child_error(&name, e))?
    };
    let broken = || Error::Codegen {
        module: name.clone(),
        message: "the compiling child sent a malformed answer".into(),
    };
    let tail = bytes.len().checked_sub(8).ok_or_else(broken)?;
    let len = u64::from_le_bytes(bytes[tail..].try_into().map_err(|_| broken())?);
    let start = usize::try_from(len)
        .ok()
        .and_then(|l| tail.checked_sub(l))
        .ok_or_else(broken)?;
    let decisions = GateDecision::parse(&String::from_utf8_lossy(&bytes[start..tail]));
    bytes.truncate(start);
    Ok((bytes, decisions))
}

/// One decision of the back end's opt-bisect gate ([`Codegen::bisect_limit`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateDecision {
    /// 1-based, in the order passes asked.
    pub index: usize,
    /// The pass's name as LLVM prints it (`Machine Common Subexpression Elimination`).
    pub pass: String,
    /// The function it was asked about (empty for a module or an SCC).
    pub function: String,
    pub ran: bool,
}

impl GateDecision {
    /// Reads `B\tindex\tpass\tunit\tran` lines (`plab_set_pass_gate`);
    /// other lines are skipped.
    pub(super) fn parse(text: &str) -> Vec<GateDecision> {
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let ["B", index, pass, unit, ran] = f.as_slice() else {
                    return None;
                };
                // LLVM describes a function as `function (name)`.
                let function = unit
                    .strip_prefix("function (")
                    .and_then(|u| u.strip_suffix(')'))
                    .unwrap_or("");
                Some(GateDecision {
                    index: index.parse().ok()?,
                    pass: pass.to_string(),
                    function: function.to_string(),
                    ran: *ran == "1",
                })
            })
            .collect()
    }
}

/// In the child: the gate's decisions so far.
fn gate_record() -> String {
    let mut sinks = crate::ffi::Sinks::default();
    // SAFETY: the sink writes into `sinks`, alive for the call.
    unsafe { crate::ffi::plab_pass_gate_record(crate::ffi::SINK_FIRST, sinks.user()) };
    sinks.first_text()
}

/// In the child: installs the back end's opt-bisect gate when `cg` asks
/// for one.
fn install_gate(m: llvm_sys::prelude::LLVMModuleRef, cg: &Codegen) {
    if let Some(limit) = cg.bisect_limit {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // SAFETY: `m` is this child's live module; the gate lives as long
        // as the child.
        unsafe { crate::ffi::plab_set_pass_gate(m, limit) };
    }
}

/// A compiling child's failure as the session reports it.
pub(super) fn child_error(module: &str, e: crate::child::ChildError) -> Error {
    match e {
        crate::child::ChildError::Interrupted => Error::Interrupted {
            pass: format!("code generation for {module}"),
        },
        e @ crate::child::ChildError::Failed { .. } => Error::Codegen {
            module: module.to_string(),
            message: e.message("the compiler"),
        },
    }
}

/// In the compiling child: the target's processor and features written
/// into the functions, and the module's `alwaysinline` functions inlined
/// (nothing else changes), as code is generated for the JIT.
pub(super) fn prepare(
    raw: llvm_sys::prelude::LLVMModuleRef,
    triple: &str,
    cg: &Codegen,
) -> std::result::Result<(), String> {
    llvm::set_target(raw, &cg.target);
    llvm::run_pipeline(
        raw,
        triple,
        &Tuning::default(),
        &cg.target,
        "always-inline",
        None,
    )
    .map_err(|e| e.message)
}

/// LLVM's fatal errors in the compiling child: say what, and end it now
/// (not through `exit`, which would run the session's exit handlers).
pub(super) extern "C" fn on_fatal_error(reason: *const std::os::raw::c_char) {
    // SAFETY: LLVM passes a NUL-terminated message; write(2) and _exit(2) are
    // async-signal-safe.
    unsafe {
        let text = CStr::from_ptr(reason).to_bytes();
        libc::write(2, text.as_ptr().cast(), text.len());
        libc::write(2, b"\n".as_ptr().cast(), 1);
        libc::_exit(70);
    }
}

/// The object file of `m` for `cg` (position independent, small code
/// model, as ORC's linker expects).
fn emit(
    m: llvm_sys::prelude::LLVMModuleRef,
    triple: &str,
    cg: &Codegen,
) -> std::result::Result<Vec<u8>, String> {
    emit_file(m, triple, cg, LLVMCodeGenFileType::LLVMObjectFile)
}

/// A target machine for `triple` (empty: the host's) under `cg`:
/// position independent, small code model. The caller disposes of it.
///
/// # Safety
/// LLVM's native target is initialized; the caller disposes of the
/// result exactly once.
unsafe fn target_machine(
    triple: &str,
    cg: &Codegen,
) -> std::result::Result<LLVMTargetMachineRef, String> {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        crate::ffi::plab_init_targets();
        let triple = if triple.is_empty() {
            let t = LLVMGetDefaultTargetTriple();
            let s = CStr::from_ptr(t).to_string_lossy().into_owned();
            LLVMDisposeMessage(t);
            s
        } else {
            triple.to_string()
        };
        let c_triple = CString::new(triple.as_str()).map_err(|e| e.to_string())?;
        let mut target = std::ptr::null_mut();
        let mut err = std::ptr::null_mut();
        if LLVMGetTargetFromTriple(c_triple.as_ptr(), &mut target, &mut err) != 0 {
            let m = CStr::from_ptr(err).to_string_lossy().into_owned();
            LLVMDisposeMessage(err);
            return Err(format!("no target for {triple}: {m}"));
        }
        let cpu = CString::new(cg.target.cpu.as_str()).map_err(|e| e.to_string())?;
        let features = CString::new(cg.target.features.as_str()).map_err(|e| e.to_string())?;
        let level = match cg.opt_level {
            0 => LLVMCodeGenOptLevel::LLVMCodeGenLevelNone,
            1 => LLVMCodeGenOptLevel::LLVMCodeGenLevelLess,
            2 => LLVMCodeGenOptLevel::LLVMCodeGenLevelDefault,
            _ => LLVMCodeGenOptLevel::LLVMCodeGenLevelAggressive,
        };
        Ok(LLVMCreateTargetMachine(
            target,
            c_triple.as_ptr(),
            cpu.as_ptr(),
            features.as_ptr(),
            level,
            LLVMRelocMode::LLVMRelocPIC,
            LLVMCodeModel::LLVMCodeModelSmall,
        ))
    }
}

/// Emits `m` as an object file or assembly text for `cg` (in the child).
pub(super) fn emit_file(
    m: llvm_sys::prelude::LLVMModuleRef,
    triple: &str,
    cg: &Codegen,
    kind: LLVMCodeGenFileType,
) -> std::result::Result<Vec<u8>, String> {
    emit_with(m, triple, cg, kind, false)
}

/// [`emit_file`], with thread-local variables (if any) lowered to emulated
/// TLS when `emulated_tls` (objects for the JIT).
fn emit_with(
    m: llvm_sys::prelude::LLVMModuleRef,
    triple: &str,
    cg: &Codegen,
    kind: LLVMCodeGenFileType,
    emulated_tls: bool,
) -> std::result::Result<Vec<u8>, String> {
    install_gate(m, cg);
    let assembly = match kind {
        LLVMCodeGenFileType::LLVMAssemblyFile => true,
        LLVMCodeGenFileType::LLVMObjectFile => false,
    };
    let mut out = crate::ffi::Sinks::default();
    // SAFETY: the module is alive and this child's own; the target machine
    // is created here and disposed of once; the sinks write into `out`,
    // alive for the call.
    unsafe {
        let tm = target_machine(triple, cg)?;
        if emulated_tls {
            crate::ffi::plab_emulate_tls(m, tm);
        }
        let ok = crate::ffi::plab_emit(
            m,
            tm,
            assembly,
            crate::ffi::SINK_FIRST,
            out.user(),
            crate::ffi::SINK_SECOND,
            out.user(),
        );
        LLVMDisposeTargetMachine(tm);
        if !ok {
            return Err(out.second_text());
        }
    }
    Ok(out.first)
}

/// What the probes keep besides time and change: each changed unit's text
/// (for print-changed and the explorer), the verifier after each change,
/// and the optimization remarks the back end's passes make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Probe {
    pub texts: bool,
    pub verify: bool,
    pub remarks: bool,
    /// With `remarks`, LLVM's `size-info` remarks too: the whole module's
    /// instructions counted after every machine pass, which costs :asm of
    /// sqlite3 20 times its time; only when a filter names them.
    pub size_info: bool,
    /// Whether to find which runs changed the code (a hash of the function
    /// after every pass): not needed when the remarks alone are recorded.
    pub changes: bool,
}

impl Default for Probe {
    /// Times and changes only.
    fn default() -> Probe {
        Probe {
            texts: false,
            verify: false,
            remarks: false,
            size_info: false,
            changes: true,
        }
    }
}

/// As [`emit_file`], every pass of the back end observed (the shim's
/// probes): the file; the probes' record (see `plab_emit_probed` in
/// shim/mc.cpp) followed by the opt-bisect gate's decisions goes to
/// `record` in pieces, as code generation goes.
pub(super) fn emit_probed(
    m: llvm_sys::prelude::LLVMModuleRef,
    triple: &str,
    cg: &Codegen,
    assembly: bool,
    probe: Probe,
    mut record: &mut dyn FnMut(&[u8]),
) -> std::result::Result<Vec<u8>, String> {
    install_gate(m, cg);
    let flags = probe.texts as u32
        | (probe.verify as u32) << 1
        | (probe.remarks as u32) << 2
        | (probe.size_info as u32) << 3
        | (!probe.changes as u32) << 4;
    let mut out = crate::ffi::Sinks::default();
    // SAFETY: the module is alive and this child's own; the target machine
    // is created here and disposed of once; the sinks write into `out`, or
    // call `record`, both alive for the call.
    unsafe {
        let tm = target_machine(triple, cg)?;
        let ok = crate::ffi::plab_emit_probed(
            m,
            tm,
            assembly,
            flags,
            crate::ffi::SINK_FIRST,
            out.user(),
            crate::ffi::SINK_FN,
            crate::ffi::fn_user(&mut record),
            crate::ffi::SINK_SECOND,
            out.user(),
        );
        LLVMDisposeTargetMachine(tm);
        if !ok {
            return Err(out.second_text());
        }
    }
    if cg.bisect_limit.is_some() {
        record(gate_record().as_bytes());
    }
    Ok(out.first)
}

/// The code size of `module` for `cg`: the bytes of the executable
/// sections (`.text` and its kin) of the object file the code generator
/// makes of it (CompilerGym's `ObjectTextSizeBytes`). The module is copied
/// and compiled in a forked child, unless `here` (the caller is such a
/// child already).
pub fn text_size(module: &Module, cg: &Codegen, here: bool) -> Result<u64> {
    let name = module.name();
    let work = || -> std::result::Result<Vec<u8>, String> {
        let copy = module.copy();
        llvm::set_target(copy.raw(), &cg.target);
        let object = emit(copy.raw(), &module.triple(), cg)?;
        Ok(executable_bytes(&object)?.to_le_bytes().to_vec())
    };
    let bytes = if here {
        work().map_err(|message| Error::Codegen {
            module: name.clone(),
            message,
        })?
    } else {
        crate::child::in_child(|| {
            // SAFETY: installing a handler (a plain function) is always sound;
            // this runs in the child.
            unsafe {
                llvm_sys::error_handling::LLVMInstallFatalErrorHandler(Some(on_fatal_error));
            }
            work()
        })
        .map_err(|e| child_error(&name, e))?
    };
    let bytes: [u8; 8] = bytes.try_into().map_err(|_| Error::Codegen {
        module: name,
        message: "the compiling child sent no size".into(),
    })?;
    Ok(u64::from_le_bytes(bytes))
}

/// The summed size of an object file's sections named `.text` or
/// `.text.*` (LLVM's object reader).
fn executable_bytes(object: &[u8]) -> std::result::Result<u64, String> {
    use llvm_sys::object::*;
    // SAFETY: the memory buffer is a copy of `object` owned here; the binary,
    // section iterator and buffer are disposed once, in reverse order of
    // creation, and section names are read while the binary lives.
    unsafe {
        let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
            object.as_ptr().cast(),
            object.len(),
            c"object".as_ptr(),
        );
        let mut err = std::ptr::null_mut();
        let bin = LLVMCreateBinary(buf, LLVMGetGlobalContext(), &mut err);
        if bin.is_null() {
            let m = if err.is_null() {
                "not an object file".to_string()
            } else {
                let m = CStr::from_ptr(err).to_string_lossy().into_owned();
                LLVMDisposeMessage(err);
                m
            };
            LLVMDisposeMemoryBuffer(buf);
            return Err(m);
        }
        let it = LLVMObjectFileCopySectionIterator(bin);
        let mut total = 0;
        while LLVMObjectFileIsSectionIteratorAtEnd(bin, it) == 0 {
            let name = LLVMGetSectionName(it);
            if !name.is_null() {
                let name = CStr::from_ptr(name).to_bytes();
                if name == b".text" || name.starts_with(b".text.") {
                    total += LLVMGetSectionSize(it);
                }
            }
            LLVMMoveToNextSection(it);
        }
        LLVMDisposeSectionIterator(it);
        LLVMDisposeBinary(bin);
        LLVMDisposeMemoryBuffer(buf);
        Ok(total)
    }
}
