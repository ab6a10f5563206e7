//! Pass-infrastructure benchmarks, measured side by side in one run.
//!
//! `cargo bench --bench pipeline` prints:
//! 1. default<O2> over sqlite3 (bitcode in, bitcode out): passlab (with its
//!    rollback snapshot and final verification) vs `opt-19`, alternating,
//!    median of several rounds, and the ratio (target ≤ 1.03);
//! 2. one cheap pass (instcombine) plus the IR-size count on small real C
//!    files from zlib, runs per second (target ≥ 5,000; CompilerGym publishes
//!    ≈ 1,760 steps/s on a program of crc32's size).
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5). Smoke mode
//! (`PASSLAB_BENCH_SMOKE=1`, benches/common): one round, 20 runs per
//! small module, zlib's adler32.c in sqlite3's place.

mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;

use common::{large_input, median, median_f, rounds, run_opt, scaled, wanted};
use passlab::{registry, Module};
use std::path::Path;
use std::time::{Duration, Instant};

fn sqlite_o2() {
    let dir = std::env::temp_dir().join(format!("passlab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (name, source) = large_input();
    let input = dir.join("input.bc");
    let m = Module::from_file(&source).unwrap_or_else(|e| panic!("{name} compiles: {e}"));
    let instructions = m.instruction_count();
    m.save(&input).unwrap();
    drop(m);
    let o2 = registry::get_pass("default<O2>").unwrap();

    let mut ratios = Vec::new();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut result = (0, 0);
    for round in 0..rounds() {
        let run_opt = |out: &Path| run_opt(&input, out);
        let run_ours = |out: &Path| {
            let t = Instant::now();
            let mut m = Module::from_file(&input).unwrap();
            o2.apply(&mut m).unwrap();
            m.save(out).unwrap();
            (t.elapsed(), m.instruction_count())
        };
        // Alternate who goes first, so drift hits both alike.
        let (a, b) = if round % 2 == 0 {
            let b = run_opt(&dir.join("opt.bc"));
            (run_ours(&dir.join("ours.bc")), b)
        } else {
            let a = run_ours(&dir.join("ours.bc"));
            (a, run_opt(&dir.join("opt.bc")))
        };
        ours.push(a.0);
        theirs.push(b);
        ratios.push(a.0.as_secs_f64() / b.as_secs_f64());
        let by_opt = Module::from_file(dir.join("opt.bc"))
            .unwrap()
            .instruction_count();
        result = (a.1, by_opt);
        eprintln!(
            "  round {}: passlab {:.2} s, opt-19 {:.2} s",
            round + 1,
            a.0.as_secs_f64(),
            b.as_secs_f64()
        );
    }
    let (o, t) = (median(ours), median(theirs));
    println!(
        "{name} default<O2> ({instructions} instructions -> passlab {}, opt-19 {}):",
        result.0, result.1
    );
    println!(
        "  passlab {:.3} s, opt-19 {:.3} s: ratio of medians {:.3}, median of per-round ratios {:.3} (target <= 1.03); {} rounds",
        o.as_secs_f64(),
        t.as_secs_f64(),
        o.as_secs_f64() / t.as_secs_f64(),
        median_f(ratios),
        rounds()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// LLVM's own C API entry point (`LLVMRunPasses`, what inkwell's
/// `run_passes` calls), the reference for infrastructure overhead: it
/// builds a PassBuilder and analysis managers on every call.
fn llvm_run_passes_per_s(m: &Module, pipeline: &str, runs: usize) -> f64 {
    use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
    Target::initialize_native(&InitializationConfig::default()).unwrap();
    let triple = TargetMachine::get_default_triple();
    let tm = Target::from_triple(&triple)
        .unwrap()
        .create_target_machine(
            &triple,
            "",
            "",
            inkwell::OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::Default,
        )
        .unwrap();
    let copy = m.copy();
    copy.with_ir(|ir| {
        let t = Instant::now();
        for _ in 0..runs {
            ir.run_passes(pipeline, &tm, inkwell::passes::PassBuilderOptions::create())
                .unwrap();
            std::hint::black_box(ir.get_first_function());
        }
        runs as f64 / t.elapsed().as_secs_f64()
    })
}

fn small_module(file: &str, function: Option<&str>) {
    let mut original = Module::load(&[inputs::zlib_source(file)]).unwrap();
    if let Some(f) = function {
        original = original.extract(&[f]).unwrap();
    }
    let label = match function {
        Some(f) => format!("{f} (zlib {file})"),
        None => format!("zlib {file}"),
    };
    let instcombine = registry::get_pass("instcombine").unwrap();
    let runs = scaled(2000, 20);
    // Steady state: the same module, step after step.
    let mut steady = Vec::new();
    // Fresh: every step starts again from the -O0 module (restoring it is
    // part of the measured time), so instcombine always has work to do.
    let mut fresh = Vec::new();
    let mut reference = Vec::new();
    let snapshot = original.snapshot();
    let mut total = 0u64;
    for _ in 0..rounds() {
        let mut m = original.copy();
        let t = Instant::now();
        for _ in 0..runs {
            instcombine.apply(&mut m).unwrap();
            total += m.instruction_count();
        }
        steady.push(t.elapsed());
        let mut m = original.copy();
        let t = Instant::now();
        for _ in 0..runs {
            m.restore(&snapshot).unwrap();
            instcombine.apply(&mut m).unwrap();
            total += m.instruction_count();
        }
        fresh.push(t.elapsed());
        let mut m = original.copy();
        instcombine.apply(&mut m).unwrap();
        reference.push(Duration::from_secs_f64(
            runs as f64 / llvm_run_passes_per_s(&m, "instcombine", runs),
        ));
    }
    let per_s = |d: Duration| runs as f64 / d.as_secs_f64();
    let (steady, fresh, reference) = (
        per_s(median(steady)),
        per_s(median(fresh)),
        per_s(median(reference)),
    );
    println!(
        "instcombine + IR-size count on {label}, {} instructions:",
        original.instruction_count()
    );
    println!(
        "  passlab {steady:.0} runs/s steady ({:.2}x LLVMRunPasses alone, {reference:.0} runs/s), {fresh:.0} runs/s from a fresh -O0 module each run",
        steady / reference
    );
    println!("  target >= 5,000 runs/s; CompilerGym publishes ~1,760 steps/s on a crc32-size program [checksum {total}]");
}

fn main() {
    if wanted("small") {
        small_module("adler32.c", Some("adler32_combine_"));
        small_module("adler32.c", None);
        small_module("crc32.c", None);
    }
    if wanted("sqlite") {
        sqlite_o2();
    }
}
