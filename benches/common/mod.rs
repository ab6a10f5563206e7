//! What the benchmarks share: rounds, medians, and opt-19.
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

/// `PASSLAB_BENCH_ROUNDS`, default 5.
pub fn rounds() -> usize {
    std::env::var("PASSLAB_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
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
