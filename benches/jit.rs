//! JIT benchmarks, measured side by side in one run.
//!
//! `bash scripts/passlab.sh bench jit` prints:
//! 1. the packed calling convention's overhead: calling `add(int, int)`
//!    through its packed wrapper vs calling the compiled function directly,
//!    both in this process (target: ≤ 5 ns more per call);
//! 2. end to end, C source → default<O2> → JIT → one call (passlab, in
//!    process) vs `clang-19 -O2` compile + link + run of the same file
//!    (target ratio ≤ 0.5);
//! 3. the time evaluator's median vs a C harness timing the same function
//!    with clock_gettime, compiled by clang-19 -O2 (target: within 3%).
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5); medians.

mod common;

use common::{clang_o2, median, median_f, rounds, wanted};
use passlab::jit::{Arg, Buffer, ElemType, Fill, Jit, TimeSpec};
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
    let (native, packed) = jit.addresses("add").unwrap();
    let native: extern "C" fn(i32, i32) -> i32 = unsafe { std::mem::transmute(native) };
    let packed: unsafe extern "C" fn(*const u64) -> u64 = unsafe { std::mem::transmute(packed) };
    let n: u64 = 50_000_000;
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
            acc = acc.wrapping_add(unsafe { packed(slots.as_ptr()) });
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

fn end_to_end(dir: &Path) {
    let src = dir.join("e2e.c");
    std::fs::write(
        &src,
        format!("{KERNEL}\n#include <stdio.h>\nint main(void) {{ printf(\"%d\\n\", add(40, 2)); return 0; }}\n"),
    )
    .unwrap();
    let exe = dir.join("e2e");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..rounds() {
        let t = Instant::now();
        let mut m = Module::from_file(&src).unwrap();
        pipeline::parse("default<O2>")
            .unwrap()
            .apply(&mut m)
            .unwrap();
        let jit = Jit::new(&m, 2).unwrap();
        let r = jit.call("add", &[Arg::Int(40), Arg::Int(2)]).unwrap();
        assert_eq!(r.value.unwrap().to_string(), "42");
        ours.push(t.elapsed());
        let t = Instant::now();
        clang_o2(&src, &exe);
        let out = Command::new(&exe).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
        theirs.push(t.elapsed());
    }
    let (o, t) = (median(ours), median(theirs));
    println!(
        "end to end: C source -> default<O2> -> JIT -> call, vs clang-19 -O2 compile + link + run:"
    );
    println!(
        "  passlab {:.1} ms, clang-19 {:.1} ms, ratio {:.2} (target <= 0.5)",
        o.as_secs_f64() * 1e3,
        t.as_secs_f64() * 1e3,
        o.as_secs_f64() / t.as_secs_f64()
    );
}

fn evaluator_vs_harness(dir: &Path) {
    const N: usize = 1 << 16;
    let (number, repeat) = (200u64, 9usize);
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
    if wanted("evaluator") {
        evaluator_vs_harness(&dir);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
