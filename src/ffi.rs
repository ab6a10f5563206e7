//! Declarations of the C++ shim (`shim/shim.cpp`) and the glue that turns
//! its byte sinks into Rust strings. Nothing outside the crate sees these.
//!
//! Every entry point user input reaches runs its work under the shim's
//! fatal-error guard (`shim/guard.h`); the `guard_tests` here check each
//! claim that file makes about what a caught fatal error may skip.

use llvm_sys::prelude::{LLVMContextRef, LLVMModuleRef, LLVMValueRef};
use std::ffi::c_void;
use std::os::raw::c_char;

pub type Sink = unsafe extern "C" fn(user: *mut c_void, data: *const c_char, len: usize);

#[repr(C)]
pub struct Runner {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuning {
    pub loop_interleaving: bool,
    pub loop_vectorization: bool,
    pub slp_vectorization: bool,
    pub loop_unrolling: bool,
    pub merge_functions: bool,
    pub call_graph_profile: bool,
    pub inliner_threshold: i32,
}

#[repr(C)]
pub struct Printer {
    _private: [u8; 0],
}

/// (user, pass, pass_len, unit, ir name, ir name len, unit handle)
pub type BeforeHook = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    usize,
    i32,
    *const c_char,
    usize,
    *const c_void,
);
/// The same, answering whether the pass should run.
pub type ShouldRunHook = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    usize,
    i32,
    *const c_char,
    usize,
    *const c_void,
) -> bool;
/// (user, pass, pass_len, unit, unit handle, invalidated, preserved_all)
pub type AfterHook =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, i32, *const c_void, bool, bool);

#[repr(C)]
pub struct Hooks {
    pub user: *mut c_void,
    pub should_run: Option<ShouldRunHook>,
    pub before: Option<BeforeHook>,
    pub after: Option<AfterHook>,
}

#[repr(C)]
#[derive(Default)]
pub struct Diag {
    pub line: i32,
    pub column: i32,
}

pub type FunctionStats = unsafe extern "C" fn(*mut c_void, *const c_char, usize, bool, u64, u64);

extern "C" {
    pub fn plab_tuning_defaults(out: *mut Tuning);
    pub fn plab_runner_new(
        triple: *const c_char,
        cpu: *const c_char,
        features: *const c_char,
        pic: bool,
        tuning: *const Tuning,
        sink: Sink,
        user: *mut c_void,
    ) -> *mut Runner;
    pub fn plab_runner_free(r: *mut Runner);
    pub fn plab_runner_check(
        r: *mut Runner,
        pipeline: *const c_char,
        sink: Sink,
        user: *mut c_void,
    ) -> bool;
    pub fn plab_runner_spell(
        r: *mut Runner,
        pipeline: *const c_char,
        sink: Sink,
        user: *mut c_void,
    ) -> bool;
    /// 1: ran; 0: the pipeline does not parse; 3: it ran, but a pass
    /// reported an error (the module must be put back); 2: a fatal error
    /// abandoned the run (the runner and the module must not be used or
    /// freed); 4: as 2, a crash signal (see `plab_last_crash`).
    pub fn plab_runner_run(
        r: *mut Runner,
        m: LLVMModuleRef,
        pipeline: *const c_char,
        hooks: *const Hooks,
        sink: Sink,
        user: *mut c_void,
    ) -> i32;
    /// After `plab_runner_run` returned 4 on this thread: the pass that was
    /// running (nothing if none had started) to `pass`, the crash in words
    /// to `how`.
    pub fn plab_last_crash(pass: Sink, how: Sink, user: *mut c_void);
    /// How many crashes the shim's guards caught in this process.
    pub fn plab_crashes_caught() -> std::os::raw::c_ulong;
    /// In a forked child whose crash signals are at their defaults: the
    /// shim's guards catch crashes again.
    pub fn plab_catch_crashes_again();
    pub fn plab_runner_print_passes(r: *mut Runner, sink: Sink, user: *mut c_void);
    pub fn plab_load_plugin(path: *const c_char, sink: Sink, user: *mut c_void) -> bool;
    pub fn plab_module_takes_block_addresses(m: LLVMModuleRef) -> bool;
    pub fn plab_unresolved(m: LLVMModuleRef, sink: Sink, user: *mut c_void);
    pub fn plab_host_bound(m: LLVMModuleRef, sink: Sink, user: *mut c_void);
    pub fn plab_stub_unresolved(m: LLVMModuleRef);
    pub fn plab_add_static_init(m: LLVMModuleRef, name: *const c_char) -> bool;
    pub fn plab_create_lljit(sink: Sink, user: *mut c_void) -> *mut c_void;
    pub fn plab_set_target(m: LLVMModuleRef, cpu: *const c_char, features: *const c_char);
    pub fn plab_cpu_known(triple: *const c_char, cpu: *const c_char) -> bool;
    /// The processor features LLVM knows for `triple` (null: the host's),
    /// one per line, to `sink`.
    pub fn plab_feature_names(triple: *const c_char, sink: Sink, user: *mut c_void);
    /// The pass arguments of the back end's passes for `triple` (null:
    /// the host's) at every code generation level, one per line.
    pub fn plab_backend_pass_names(triple: *const c_char, sink: Sink, user: *mut c_void);
    pub fn plab_cpu_names(triple: *const c_char, sink: Sink, user: *mut c_void);
    pub fn plab_set_asm_syntax(syntax: *const c_char) -> bool;
    pub fn plab_assemble(
        triple: *const c_char,
        cpu: *const c_char,
        features: *const c_char,
        text: *const c_char,
        len: usize,
        sink: Sink,
        user: *mut c_void,
        err_sink: Sink,
        err_user: *mut c_void,
    ) -> bool;
    /// Puts the remark handler (shim/remarks.cpp) on `ctx`, each remark
    /// to `sink` (`size-info` ones only with `options` bit 1); nothing if
    /// it is there already.
    pub fn plab_remarks_install(ctx: LLVMContextRef, sink: Sink, user: *mut c_void, options: u32);
    /// Takes it off again, putting back the handler it replaced.
    pub fn plab_remarks_remove(ctx: LLVMContextRef);
    pub fn plab_emulate_tls(m: LLVMModuleRef, tm: llvm_sys::target_machine::LLVMTargetMachineRef);
    pub fn plab_emit(
        m: LLVMModuleRef,
        tm: llvm_sys::target_machine::LLVMTargetMachineRef,
        assembly: bool,
        sink: Sink,
        user: *mut c_void,
        err_sink: Sink,
        err_user: *mut c_void,
    ) -> bool;
    pub fn plab_emit_probed(
        m: LLVMModuleRef,
        tm: llvm_sys::target_machine::LLVMTargetMachineRef,
        assembly: bool,
        flags: u32,
        sink: Sink,
        user: *mut c_void,
        events: Sink,
        events_user: *mut c_void,
        err_sink: Sink,
        err_user: *mut c_void,
    ) -> bool;
    pub fn plab_set_pass_gate(m: LLVMModuleRef, limit: i64);
    pub fn plab_pass_gate_record(sink: Sink, user: *mut c_void);
    pub fn plab_runner_pass_unit(
        r: *mut Runner,
        name: *const c_char,
        remember: bool,
        sink: Sink,
        user: *mut c_void,
    ) -> i32;
    pub fn plab_parse_ir(
        ctx: LLVMContextRef,
        data: *const c_char,
        len: usize,
        name: *const c_char,
        diag: *mut Diag,
        sink: Sink,
        user: *mut c_void,
        line_sink: Sink,
    ) -> LLVMModuleRef;
    pub fn plab_write_bitcode(m: LLVMModuleRef, uselist: bool, sink: Sink, user: *mut c_void);
    pub fn plab_write_lto_bitcode(
        m: LLVMModuleRef,
        out: Sink,
        err: Sink,
        user: *mut c_void,
    ) -> bool;
    pub fn plab_lto_link(
        data: *const *const c_char,
        lens: *const usize,
        names: *const *const c_char,
        n: usize,
        out: Sink,
        err: Sink,
        user: *mut c_void,
    ) -> bool;
    pub fn plab_module_pic(m: LLVMModuleRef) -> bool;
    pub fn plab_name_counters(m: LLVMModuleRef, sink: Sink, user: *mut c_void);
    pub fn plab_set_name_counters(m: LLVMModuleRef, data: *const u8, len: usize);
    pub fn plab_compile(
        ctx: LLVMContextRef,
        clang_path: *const c_char,
        args: *const *const c_char,
        nargs: usize,
        data: *const c_char,
        len: usize,
        sink: Sink,
        user: *mut c_void,
    ) -> LLVMModuleRef;
    pub fn plab_verify(m: LLVMModuleRef, sink: Sink, user: *mut c_void) -> bool;
    /// Whether the last shim call on this thread was abandoned by an LLVM
    /// fatal error (see shim/guard.h); clears the mark.
    pub fn plab_take_fatal() -> bool;
    /// Registers the native target, once per process (thread-safe).
    pub fn plab_init_targets();
    /// Probes of shim/guard.h for its tests (see shim/shim.cpp).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn plab_probe_guarded_fatal(message: *const c_char) -> bool;
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn plab_probe_hook(callback: unsafe extern "C" fn(*mut c_void), user: *mut c_void) -> bool;
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn plab_probe_unguarded_fatal(message: *const c_char);
    /// Whether `plab_init_targets`' warm bitcode has a symbol table.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn plab_probe_warm_bitcode_has_symtab() -> bool;
    pub fn plab_fingerprint_module(m: LLVMModuleRef) -> u64;
    pub fn plab_fingerprint_function(f: LLVMValueRef) -> u64;
    pub fn plab_stats(
        m: LLVMModuleRef,
        each: Option<FunctionStats>,
        user: *mut c_void,
        opcodes: *mut u64,
        n_opcodes: usize,
        totals: *mut u64,
    );
    pub fn plab_opcode_limit() -> usize;
    pub fn plab_delete_body(f: LLVMValueRef);
    pub fn plab_opcode_name(op: u32) -> *const c_char;
    pub fn plab_instruction_opcode_name(i: LLVMValueRef) -> *const c_char;
    pub fn plab_unit_functions(
        unit: i32,
        handle: *const c_void,
        callers: bool,
        out: *mut LLVMValueRef,
        cap: usize,
    ) -> usize;
    pub fn plab_function_size(f: LLVMValueRef, blocks: *mut u64, instructions: *mut u64);
    pub fn plab_verify_function(f: LLVMValueRef, sink: Sink, user: *mut c_void) -> bool;
    pub fn plab_printer_new(m: LLVMModuleRef) -> *mut Printer;
    pub fn plab_printer_free(p: *mut Printer);
    pub fn plab_printer_function(
        p: *mut Printer,
        f: LLVMValueRef,
        sink: Sink,
        user: *mut c_void,
    ) -> bool;
    pub fn plab_printer_stats(
        whole: *mut u64,
        assembled: *mut u64,
        blocks: *mut u64,
        mismatches: *mut u64,
    );
}

/// Two byte buffers a shim call can fill: `first` through [`SINK_FIRST`],
/// `second` through [`SINK_SECOND`], with `&mut Sinks` as the user pointer.
#[derive(Default)]
pub struct Sinks {
    pub first: Vec<u8>,
    pub second: Vec<u8>,
}

impl Sinks {
    pub fn user(&mut self) -> *mut c_void {
        self as *mut Sinks as *mut c_void
    }
    pub fn first_text(&self) -> String {
        String::from_utf8_lossy(&self.first).trim_end().to_string()
    }
    pub fn second_text(&self) -> String {
        String::from_utf8_lossy(&self.second).trim_end().to_string()
    }
}

/// Appends the bytes to `first` (`SECOND = false`) or `second`.
unsafe extern "C" fn sink<const SECOND: bool>(user: *mut c_void, data: *const c_char, len: usize) {
    // SAFETY: called by the shim (or LLVM) as its declaration in
    // ffi.rs says, with the pointers it describes alive for the call.
    unsafe {
        let sinks = &mut *(user as *mut Sinks);
        let buf = if SECOND {
            &mut sinks.second
        } else {
            &mut sinks.first
        };
        if len > 0 {
            buf.extend_from_slice(std::slice::from_raw_parts(data as *const u8, len));
        }
    }
}

pub const SINK_FIRST: Sink = sink::<false>;
pub const SINK_SECOND: Sink = sink::<true>;

/// A sink that hands each piece to a closure, with a
/// `&mut &mut dyn FnMut(&[u8])` as the user pointer (see [`fn_user`]).
pub const SINK_FN: Sink = sink_fn;

/// The user pointer [`SINK_FN`] takes for `f`.
pub fn fn_user(f: &mut &mut dyn FnMut(&[u8])) -> *mut c_void {
    f as *mut &mut dyn FnMut(&[u8]) as *mut c_void
}

/// Calls the closure `user` points to (see [`SINK_FN`]) with the bytes.
unsafe extern "C" fn sink_fn(user: *mut c_void, data: *const c_char, len: usize) {
    // SAFETY: called by the shim (or LLVM) as its declaration in
    // ffi.rs says, with the pointers it describes alive for the call.
    unsafe {
        let f = &mut *(user as *mut &mut dyn FnMut(&[u8]));
        if len > 0 {
            f(std::slice::from_raw_parts(data as *const u8, len));
        }
    }
}

/// A (pointer, length) pair from the shim as `&str` (lossy on bad UTF-8).
///
/// # Safety
/// `data` points to `len` readable bytes (or `len` is 0) that stay alive
/// and unchanged for `'a`.
pub unsafe fn str_from<'a>(data: *const c_char, len: usize) -> std::borrow::Cow<'a, str> {
    // SAFETY: what this function's callers guarantee (its `# Safety`).
    unsafe {
        if len == 0 {
            return "".into();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(data as *const u8, len))
    }
}

/// `plab_init_targets` writes bitcode before any fork so that the writer's
/// function-local statics are made in the parent, where no fork can catch
/// them half made: its module must reach the symbol table's builder, which
/// makes nothing (and leaves its statics alone) for a module without a
/// data layout, as the first warm module was.
#[test]
fn the_warm_bitcode_reaches_the_symbol_table_builder() {
    // SAFETY: no arguments; registers the native target once, then writes
    // and reads back a module of its own.
    assert!(unsafe { plab_probe_warm_bitcode_has_symtab() });
}

/// Each claim of shim/guard.h (how an LLVM fatal error is caught), checked.
#[cfg(test)]
mod guard_tests {
    use super::*;
    use std::ffi::CString;
    use std::sync::mpsc;
    use std::time::Duration;

    fn guarded_fatal(message: &str) -> bool {
        let m = CString::new(message).unwrap();
        // SAFETY: the probe raises a fatal error inside its own guard and
        // returns; `m` outlives the call.
        unsafe { plab_probe_guarded_fatal(m.as_ptr()) }
    }

    /// A guard catches a fatal error, and the next ones: no lock of LLVM's
    /// is left held (a second fatal error would wait on it forever), on
    /// this thread or another.
    #[test]
    fn fatal_errors_are_caught_again_and_again_on_any_thread() {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut caught = 0;
            for i in 0..3 {
                if !guarded_fatal(&format!("probe {i}")) {
                    caught += 1;
                }
                // SAFETY: reads and clears a thread-local flag.
                assert!(unsafe { plab_take_fatal() });
            }
            let _ = tx.send(caught);
        });
        let caught = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a fatal error after another one hangs: a lock is held");
        assert_eq!(caught, 3);
        for _ in 0..3 {
            assert!(!guarded_fatal("probe on the test's thread"));
        }
    }

    unsafe extern "C" fn hook_raising_guarded(user: *mut c_void) {
        // SAFETY: `user` is the `Vec<&str>` plab_probe_hook was given.
        let seen = unsafe { &mut *(user as *mut Vec<&str>) };
        seen.push("hook started");
        if !guarded_fatal("inside a hook") {
            seen.push("caught in the hook");
        }
        seen.push("hook ended");
    }

    /// A fatal error raised while a Rust hook is on the stack, through a
    /// guarded call, is caught by that call's guard: the jump stays inside
    /// C++, the Rust frame runs to its end, and the outer work goes on.
    #[test]
    fn a_fatal_error_inside_a_hook_is_caught_below_the_hook() {
        let mut seen: Vec<&str> = Vec::new();
        // SAFETY: the callback receives `seen`, alive for the call.
        let ran =
            unsafe { plab_probe_hook(hook_raising_guarded, &mut seen as *mut _ as *mut c_void) };
        assert!(ran, "the outer guarded work was abandoned");
        assert_eq!(seen, ["hook started", "caught in the hook", "hook ended"]);
    }

    unsafe extern "C" fn hook_raising_unguarded(_: *mut c_void) {
        let m = CString::new("unguarded probe").unwrap();
        // SAFETY: ends the process (the point of the test), or returns.
        unsafe { plab_probe_unguarded_fatal(m.as_ptr()) };
        eprintln!("the hook went on after a fatal error");
    }

    /// A fatal error with a Rust frame between it and the innermost guard
    /// is not jumped over: LLVM ends the process as it always did (here a
    /// child: this test runs itself again), never unwinding Rust frames.
    #[test]
    fn a_fatal_error_is_never_jumped_across_a_rust_frame() {
        if std::env::var_os("PASSLAB_GUARD_PROBE_CHILD").is_some() {
            // SAFETY: see hook_raising_unguarded.
            let ran = unsafe { plab_probe_hook(hook_raising_unguarded, std::ptr::null_mut()) };
            eprintln!("the guarded work returned {ran}");
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "ffi::guard_tests::a_fatal_error_is_never_jumped_across_a_rust_frame",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("PASSLAB_GUARD_PROBE_CHILD", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // LLVM ends the process: abort() (a fatal error that asks for a
        // crash report, as this one does) or exit(1).
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.signal() == Some(libc::SIGABRT) || out.status.code() == Some(1),
            "{:?}: {stderr}",
            out.status
        );
        assert!(stderr.contains("LLVM ERROR: unguarded probe"), "{stderr}");
        assert!(
            !stderr.contains("went on") && !stderr.contains("returned"),
            "{stderr}"
        );
    }
}
