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
