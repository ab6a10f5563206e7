//! JIT benchmarks, measured side by side in one run.
//!
//! `bash scripts/passlab.sh bench jit` prints:
//! 1. the packed calling convention's overhead: calling `add(int, int)`
//!    through its packed wrapper vs calling the compiled function directly,
//!    both in this process (target: ≤ 5 ns more per call);
//! 2. end to end on two real C files (zlib's adler32.c and crc32.c), C
//!    source → default<O2> → JIT → one call on 64 KiB (passlab) vs
//!    `clang-19 -O2` compiling and linking the same file with a one-line
//!    `main`, and running it (target ratio ≤ 0.25), with where passlab's
//!    time goes and the floor under any isolation: the same front end,
//!    default<O2> and code generation all in this process;
//! 3. the time evaluator's median vs a C harness timing the same function
//!    with clock_gettime, compiled by clang-19 -O2 (target: within 3%);
//! 4. the JIT engines, on zlib and on Lua: MCJIT and ORC's LLJIT in this
//!    process against passlab's (code generation in a child, LLJIT links).
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5); medians. Smoke mode
//! (`PASSLAB_BENCH_SMOKE=1`, benches/common): one round of each, a
//! thousand packed calls, the engines on zlib only, the evaluator and its
//! harness timing 3 repeats of 10 calls.

mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;

use common::{clang_o2, median, median_f, rounds, scaled, smoke, wanted};
use passlab::jit::{text_size, Arg, Buffer, Codegen, ElemType, Fill, Jit, TimeSpec};
use passlab::{pipeline, Module};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const KERNEL: &str = r#"
int add(int a, int b) { return a + b; }
double dot(const double *x, const double *y, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}
"#;

/// The kernel through default<O2>, JIT-compiled.
fn kernel_o2() -> Jit {
    let mut m = Module::from_c(KERNEL, "kernel.c").unwrap();
    pipeline::parse("default<O2>")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    Jit::new(&m, 2).unwrap()
}

fn packed_overhead() {
    let jit = kernel_o2();
    let (native, packed, index) = jit.addresses("add").unwrap();
    // SAFETY: `native` is the address the JIT linked in this process for
    // `add`, compiled from `int add(int, int)` (C `int` is `i32`), and `jit`
    // stays alive (keeping the code mapped) for every call below.
    let native: extern "C" fn(i32, i32) -> i32 = unsafe { std::mem::transmute(native) };
    // SAFETY: `packed` is the linked address of the JIT's packed entry point,
    // which has exactly this signature (see `Jit::addresses`); `jit` outlives
    // the calls below.
    let packed: unsafe extern "C" fn(u32, *const u64) -> u64 =
        unsafe { std::mem::transmute(packed) };
    let n = scaled(50_000_000, 1_000) as u64;
    let (mut direct, mut wrapped) = (Vec::new(), Vec::new());
    for _ in 0..rounds() {
        let t = Instant::now();
        let mut acc = 0i32;
        for i in 0..n {
            acc = acc.wrapping_add(native(std::hint::black_box(i as i32), 1));
        }
        std::hint::black_box(acc);
        direct.push(t.elapsed());
        let t = Instant::now();
        let mut acc = 0u64;
        let mut slots = [0u64; 2];
        for i in 0..n {
            slots[0] = std::hint::black_box(i);
            slots[1] = 1;
            // SAFETY: `index` is `add`'s index in the packed entry point and
            // `slots` holds its two argument slots, alive for the call; `add`
            // only adds integers, so it cannot fault.
            acc = acc.wrapping_add(unsafe { packed(std::hint::black_box(index), slots.as_ptr()) });
        }
        std::hint::black_box(acc);
        wrapped.push(t.elapsed());
    }
    let per = |d: Duration| d.as_secs_f64() * 1e9 / n as f64;
    let (d, w) = (per(median(direct)), per(median(wrapped)));
    println!("packed calling convention, add(int, int), {n} calls in process:");
    println!(
        "  direct {d:.2} ns/call, packed {w:.2} ns/call: overhead {:.2} ns/call (target <= 5)",
        w - d
    );
}

/// End to end on real C files (zlib's): the file through in-process clang,
/// default<O2>, the JIT and one call on 64 KiB of bytes, against `clang-19
/// -O2` compiling and linking the same file with a one-line `main`, and
/// running it.
fn end_to_end(dir: &Path) {
    const N: usize = 1 << 16;
    let zlib = inputs::zlib_dir();
    let cases = [
        (
            "adler32.c",
            "adler32_z",
            "unsigned long adler32_z(unsigned long, const unsigned char *, unsigned long);",
            "adler32_z(1, buf, N)",
        ),
        (
            "crc32.c",
            "crc32_z",
            "unsigned long crc32_z(unsigned long, const unsigned char *, unsigned long);",
            "crc32_z(0, buf, N)",
        ),
    ];
    println!("end to end: C source -> default<O2> -> JIT -> call, vs clang-19 -O2 compile + link + run of the same file:");
    let mut all = Vec::new();
    for (file, function, decl, call) in cases {
        let main = dir.join(format!("main-{function}.c"));
        std::fs::write(
            &main,
            format!(
                "#include <stdio.h>\n#define N {N}\n{decl}\nint main(void) {{ static unsigned char buf[N]; for (int i = 0; i < N; i++) buf[i] = (unsigned char)(i * 7); printf(\"%lu\\n\", {call}); return 0; }}\n"
            ),
        )
        .unwrap();
        let exe = dir.join(format!("e2e-{function}"));
        let buf = Buffer::new(ElemType::I8, N, Fill::Zeros).unwrap();
        let bytes: Vec<u8> = (0..N).map(|i| (i * 7) as u8).collect();
        buf.load(&bytes).unwrap();
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut floors = Vec::new();
        // Where passlab's time goes: [front end, default<O2>, check,
        // code generation's child, link, call's child], per round.
        let mut phases: Vec<[Duration; 6]> = Vec::new();
        for _ in 0..rounds() {
            let t = Instant::now();
            let mut m = Module::load(&[inputs::zlib_source(file)]).unwrap();
            let loaded = t.elapsed();
            pipeline::parse("default<O2>")
                .unwrap()
                .apply(&mut m)
                .unwrap();
            let optimized = t.elapsed();
            let jit = Jit::new(&m, 2).unwrap();
            let compiled = t.elapsed();
            let r = jit
                .call(
                    function,
                    &[
                        Arg::Int(if function == "adler32_z" { 1 } else { 0 }),
                        Arg::Buffer(&buf),
                        Arg::Int(N as i64),
                    ],
                )
                .unwrap();
            let o = t.elapsed();
            let ct = jit.compile_times();
            // The floor under any isolation: the same module's code
            // generation in this process (no fork, no packed entry point,
            // no link, no call), after the same front end and default<O2>.
            let here = Instant::now();
            text_size(&m, &Codegen::level(2), true).unwrap();
            floors.push(optimized + here.elapsed());
            phases.push([
                loaded,
                optimized - loaded,
                ct.check,
                ct.codegen,
                ct.link,
                o - compiled,
            ]);
            let t = Instant::now();
            let s = Command::new(Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang"))
                .arg("-O2")
                .arg(format!("-I{}", zlib.display()))
                .arg(zlib.join(file))
                .arg(&main)
                .arg("-o")
                .arg(&exe)
                .status()
                .unwrap();
            assert!(s.success());
            let out = Command::new(&exe).output().unwrap();
            let c = t.elapsed();
            let native = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert_eq!(
                r.value.unwrap().to_string(),
                native,
                "{function}: JIT vs native"
            );
            ours.push(o);
            theirs.push(c);
            ratios.push(o.as_secs_f64() / c.as_secs_f64());
        }
        let (o, t) = (median(ours), median(theirs));
        let per_round = median_f(ratios.clone());
        all.extend(ratios);
        println!(
            "  zlib {file}: passlab {:.1} ms, clang-19 {:.1} ms (medians of {}): ratio {:.2}, median of per-round ratios {per_round:.2}   (target <= 0.25)",
            o.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e3,
            rounds(),
            o.as_secs_f64() / t.as_secs_f64(),
        );
        let names = [
            "clang front end",
            "default<O2>",
            "check",
            "codegen child",
            "link",
            "call child",
        ];
        let parts: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let d = median(phases.iter().map(|p| p[i]).collect());
                format!("{n} {:.1}", d.as_secs_f64() * 1e3)
            })
            .collect();
        println!(
            "    where passlab's time goes (ms, medians): {}",
            parts.join(", ")
        );
        let floor = median(floors);
        println!(
            "    the work alone, nothing isolated (front end + default<O2> + code generation in this process, no link, no call): {:.1} ms, ratio {:.2}",
            floor.as_secs_f64() * 1e3,
            floor.as_secs_f64() / t.as_secs_f64(),
        );
    }
    println!(
        "  both files: median of per-round ratios {:.2}",
        median_f(all)
    );
}

/// The JIT engine, measured: compiling and linking a whole module and
/// looking up a function, with LLVM's MCJIT in this process, ORC's LLJIT in
/// this process, and passlab's way (code generation in a forked child, the
/// object linked with LLJIT here).
fn engines() {
    use llvm_sys::core::*;
    use llvm_sys::orc2::lljit::*;
    use llvm_sys::orc2::*;
    // SAFETY: these LLVM initialisers take no arguments and only register
    // the native target and MCJIT; they may be called more than once.
    unsafe {
        llvm_sys::execution_engine::LLVMLinkInMCJIT();
        llvm_sys::target::LLVM_InitializeNativeTarget();
        llvm_sys::target::LLVM_InitializeNativeAsmPrinter();
        llvm_sys::target::LLVM_InitializeNativeAsmParser();
    }
    let zlib: Vec<_> = ["adler32.c", "crc32.c", "deflate.c", "trees.c", "zutil.c"]
        .iter()
        .map(|f| inputs::zlib_source(f))
        .collect();
    let lua_dir = inputs::lua_dir();
    let lua: Vec<_> = inputs::lua_files()
        .iter()
        .map(|p| {
            passlab::Source::file(p)
                .unwrap()
                .clang_args([format!("-I{}", lua_dir.display())])
        })
        .collect();
    println!(
        "JIT engines: compile + link a whole module and look up a function (medians of {}):",
        rounds()
    );
    let mut engines = vec![
        ("zlib (5 files)", zlib, "adler32"),
        ("Lua 5.4 (33 files)", lua, "lua_run"),
    ];
    if smoke() {
        // Lua takes the same path as zlib, ten times as long.
        engines.truncate(1);
    }
    for (what, sources, symbol) in engines {
        let m = Module::load(&sources).unwrap();
        let bitcode = m.bitcode();
        let c_symbol = std::ffi::CString::new(symbol).unwrap();
        // SAFETY: `bitcode` outlives the closure and is valid for
        // `bitcode.len()` bytes (the buffer copies it); `ctx` is a live
        // context from the caller; the buffer is disposed once, after
        // parsing, which does not take ownership of it.
        let parse = |ctx| unsafe {
            let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                bitcode.as_ptr().cast(),
                bitcode.len(),
                c"m".as_ptr(),
            );
            let mut module = std::ptr::null_mut();
            assert_eq!(
                llvm_sys::bit_reader::LLVMParseBitcodeInContext2(ctx, buf, &mut module),
                0
            );
            LLVMDisposeMemoryBuffer(buf);
            module
        };
        let (mut mcjit, mut orc, mut ours) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds() {
            // SAFETY: every LLVM object here is created in this block and used
            // only while alive: the MCJIT engine takes ownership of `module`
            // and is disposed before its context; the thread-safe module takes
            // ownership of the second `module`, `LLJIT` takes the module and
            // generator, and is disposed before `tsctx`. Each error result is
            // checked (asserted null/0) before the object is used. `c_symbol`
            // is a NUL-terminated string alive for the lookups.
            unsafe {
                let ctx = LLVMContextCreate();
                let module = parse(ctx);
                let t = Instant::now();
                let mut ee = std::ptr::null_mut();
                let mut err = std::ptr::null_mut();
                let mut opts: llvm_sys::execution_engine::LLVMMCJITCompilerOptions =
                    std::mem::zeroed();
                let size =
                    std::mem::size_of::<llvm_sys::execution_engine::LLVMMCJITCompilerOptions>();
                llvm_sys::execution_engine::LLVMInitializeMCJITCompilerOptions(&mut opts, size);
                opts.OptLevel = 2;
                assert_eq!(
                    llvm_sys::execution_engine::LLVMCreateMCJITCompilerForModule(
                        &mut ee, module, &mut opts, size, &mut err
                    ),
                    0
                );
                assert_ne!(
                    llvm_sys::execution_engine::LLVMGetFunctionAddress(ee, c_symbol.as_ptr()),
                    0
                );
                mcjit.push(t.elapsed());
                llvm_sys::execution_engine::LLVMDisposeExecutionEngine(ee);
                LLVMContextDispose(ctx);

                let tsctx = LLVMOrcCreateNewThreadSafeContext();
                let module = parse(LLVMOrcThreadSafeContextGetContext(tsctx));
                let t = Instant::now();
                let mut jit = std::ptr::null_mut();
                assert!(LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()).is_null());
                let jd = LLVMOrcLLJITGetMainJITDylib(jit);
                let mut generator = std::ptr::null_mut();
                assert!(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                    &mut generator,
                    LLVMOrcLLJITGetGlobalPrefix(jit),
                    None,
                    std::ptr::null_mut()
                )
                .is_null());
                LLVMOrcJITDylibAddGenerator(jd, generator);
                let tsm = LLVMOrcCreateNewThreadSafeModule(module, tsctx);
                assert!(LLVMOrcLLJITAddLLVMIRModule(jit, jd, tsm).is_null());
                let mut addr = 0;
                assert!(LLVMOrcLLJITLookup(jit, &mut addr, c_symbol.as_ptr()).is_null());
                orc.push(t.elapsed());
                LLVMOrcDisposeLLJIT(jit);
                LLVMOrcDisposeThreadSafeContext(tsctx);
            }
            let t = Instant::now();
            let jit = Jit::new(&m, 2).unwrap();
            jit.addresses(symbol).unwrap();
            ours.push(t.elapsed());
        }
        let ms = |v: Vec<Duration>| median(v).as_secs_f64() * 1e3;
        let (a, b, c) = (ms(mcjit), ms(orc), ms(ours));
        println!(
            "  {what}: MCJIT in process {a:.1} ms, ORC LLJIT in process {b:.1} ms, passlab (child + LLJIT) {c:.1} ms: {:.2}x MCJIT, {:.2}x LLJIT",
            c / a,
            c / b
        );
    }
}

fn evaluator_vs_harness(dir: &Path) {
    const N: usize = 1 << 16;
    let (number, repeat) = (scaled(200, 10) as u64, scaled(9, 3));
    let src = dir.join("harness.c");
    std::fs::write(
        &src,
        format!(
            r#"{KERNEL}
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }}
static int cmp(const void *a, const void *b) {{ double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }}
int main(void) {{
    int n = {N};
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++) {{ x[i] = i; y[i] = 1; }}
    volatile double sink = dot(x, y, n);
    double samples[{repeat}];
    for (int r = 0; r < {repeat}; r++) {{
        double t0 = now();
        for (int k = 0; k < {number}; k++) sink = dot(x, y, n);
        samples[r] = (now() - t0) / {number};
    }}
    qsort(samples, {repeat}, sizeof samples[0], cmp);
    printf("%f\n", samples[{repeat} / 2]);
    return 0;
}}
"#
        ),
    )
    .unwrap();
    let exe = dir.join("harness");
    clang_o2(&src, &exe);
    let jit = kernel_o2();
    let x = Buffer::new(ElemType::F64, N, Fill::Range).unwrap();
    let y = Buffer::new(ElemType::F64, N, Fill::Ones).unwrap();
    let spec = TimeSpec {
        number,
        repeat,
        min_repeat_ms: 0,
    };
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds() {
        let r = jit
            .time(
                "dot",
                &[Arg::Buffer(&x), Arg::Buffer(&y), Arg::Int(N as i64)],
                spec,
            )
            .unwrap();
        let o = r.median().as_secs_f64() * 1e9;
        let out = Command::new(&exe).output().unwrap();
        let t: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        ours.push(o);
        theirs.push(t);
        ratios.push(o / t);
    }
    let (o, t) = (median_f(ours), median_f(theirs));
    println!("time evaluator vs a C harness (dot product of {N} doubles, {repeat} repeats of {number} calls):");
    println!(
        "  passlab median {:.1} us/call, C harness (clang-19 -O2) {:.1} us/call: ratio {:.3}, median of per-round ratios {:.3} (target within 3%)",
        o / 1e3,
        t / 1e3,
        o / t,
        median_f(ratios)
    );
}

fn main() {
    let dir = std::env::temp_dir().join(format!("passlab-bench-jit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if wanted("packed") {
        packed_overhead();
    }
    if wanted("end-to-end") {
        end_to_end(&dir);
    }
    if wanted("engines") {
        engines();
    }
    if wanted("evaluator") {
        evaluator_vs_harness(&dir);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
