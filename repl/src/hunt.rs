//! `passlab hunt SPEC` and `passlab hunt merge DIR...`: the headless
//! side of `passlab::batch::hunt`.

use crate::Batch;
use passlab::batch::hunt::{self, HuntSpec};
use std::path::PathBuf;

/// Runs one shard of the hunt `spec` into `out` (default: `NAME.hunt`
/// beside the spec).
pub fn run(spec: &std::path::Path, b: Batch) -> anyhow::Result<()> {
    let spec = HuntSpec::load(spec)?;
    let job = spec.job();
    let (shard, out) = b.place(&job)?;
    let mine = spec.assign(shard.0, shard.1);
    eprintln!(
        "hunt {}: shard {}/{} — {} of {} programs, {} pipelines each ({} named, {} random orderings), oracle {}, {}, into {}",
        spec.name,
        shard.0,
        shard.1,
        mine.len(),
        spec.programs().len(),
        spec.pipelines.len() + spec.orderings,
        spec.pipelines.len(),
        spec.orderings,
        spec.oracle.name(),
        passlab::table::count(spec.jobs, "job"),
        out.display()
    );
    let dir = job.claim(&out, b.replace)?;
    let _interrupt = crate::InterruptCommand::new();
    let summary = hunt::run_shard(&spec, &dir, shard, &mut |line| eprintln!("{line}"))?;
    let verdicts: Vec<String> = summary
        .verdicts
        .iter()
        .map(|(v, n)| format!("{n} {v}"))
        .collect();
    eprintln!(
        "shard {}/{}: {} programs ({} done before), {} checks in {:.1} s ({:.1} checks/s): {}; {} findings reduced; {}",
        shard.0,
        shard.1,
        summary.programs,
        summary.skipped,
        summary.checks,
        summary.elapsed.as_secs_f64(),
        summary.checks as f64 / summary.elapsed.as_secs_f64().max(1e-9),
        if verdicts.is_empty() { "none".to_string() } else { verdicts.join(", ") },
        summary.reduced,
        summary.file.display()
    );
    Ok(())
}

/// Merges the hunt's shards in `dirs` and writes the report into `out`
/// (default: `report` in the first folder).
pub fn merge(dirs: &[PathBuf], out: Option<PathBuf>, replace: bool) -> anyhow::Result<()> {
    let out = crate::report_folder(dirs, out)?;
    let report = hunt::merge(dirs)?;
    let title = format!("hunt {}: findings per pass", report.hunt.name);
    hunt::write_report(&report, &title, &out, replace)?;
    print!("{}", report.table(&title));
    eprintln!("wrote {}", out.display());
    Ok(())
}
