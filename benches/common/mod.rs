//! What the benchmarks share: rounds, medians, opt-19, and smoke mode.
//!
//! Smoke mode (`PASSLAB_BENCH_SMOKE=1`, which `bash scripts/passlab.sh
//! bench smoke` sets, running the benches with `cargo test` on the test
//! profile's build): every measurement and its reference runs once, on
//! small inputs, so that a bench that no longer runs fails; the figures it
//! prints mean nothing.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The opt of the LLVM passlab is linked against.
pub fn opt() -> PathBuf {
    Path::new(env!("PASSLAB_LLVM_BINDIR")).join("opt")
}

/// `opt-19 -passes='default<O2>' input -o out`, timed.
pub fn run_opt(input: &Path, out: &Path) -> Duration {
    let t = Instant::now();
    let s = Command::new(opt())
        .arg("-passes=default<O2>")
        // As clang's target machine for a module clang made position
        // independent (Debian's default PIE), which passlab's pipelines use.
        .arg("--relocation-model=pic")
        .arg(input)
        .arg("-o")
        .arg(out)
        .status()
        .expect("run opt-19");
    assert!(s.success(), "opt-19 failed");
    t.elapsed()
}

/// Whether this is a smoke run (`PASSLAB_BENCH_SMOKE=1`).
pub fn smoke() -> bool {
    std::env::var_os("PASSLAB_BENCH_SMOKE").is_some_and(|v| v == "1")
}

/// `full` outside smoke mode, `small` in it: how many runs, calls or
/// trials a measurement makes.
pub fn scaled(full: usize, small: usize) -> usize {
    if smoke() {
        small
    } else {
        full
    }
}

/// `PASSLAB_BENCH_ROUNDS`, default 5; one in smoke mode.
pub fn rounds() -> usize {
    rounds_or(5)
}

/// `PASSLAB_BENCH_ROUNDS`, default `default`; one in smoke mode.
pub fn rounds_or(default: usize) -> usize {
    if smoke() {
        return 1;
    }
    std::env::var("PASSLAB_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}

/// The large input, sqlite3's amalgamation (name, path); in smoke mode
/// zlib's adler32.c in its place, which takes a moment where sqlite3 takes
/// minutes in the test profile's build.
pub fn large_input() -> (&'static str, PathBuf) {
    if smoke() {
        (
            "zlib's adler32.c",
            crate::inputs::zlib_dir().join("adler32.c"),
        )
    } else {
        ("sqlite3", crate::inputs::sqlite3_c())
    }
}

/// The passlab binary the benches run as a process: `PASSLAB_BIN`, or the
/// release build (target/release/passlab; the smoke run names the test
/// profile's).
pub fn passlab_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("PASSLAB_BIN") {
        return PathBuf::from(bin);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("release").join("passlab")
}

/// Where a bench writes what it leaves for people to read (charts,
/// orderings): target/bench, or target/bench/smoke in smoke mode, so that
/// a smoke run does not overwrite a real run's results.
pub fn results_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    if smoke() {
        dir.join("smoke")
    } else {
        dir
    }
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Whether the benchmark `name` was asked for: `cargo bench` passes
/// `--bench`; other arguments select benchmarks whose names contain them.
pub fn wanted(name: &str) -> bool {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()))
}

/// `clang-19 -O2 src -o exe`.
pub fn clang_o2(src: &Path, exe: &Path) {
    let s = Command::new(Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang"))
        .arg("-O2")
        .arg(src)
        .arg("-o")
        .arg(exe)
        .status()
        .expect("run clang-19");
    assert!(s.success(), "clang-19 failed on {}", src.display());
}
