//! `passlab sweep SPEC` and `passlab sweep merge DIR...`: the headless side
//! of `passlab::sweep`, with a progress bar when standard error
//! is a terminal.

use crate::Batch;
use passlab::sweep::{self, SweepSpec};
use std::path::PathBuf;

/// Runs one shard of the sweep `spec` into `out` (default: `NAME.sweep`
/// beside the spec).
pub fn run(spec: &std::path::Path, b: Batch) -> anyhow::Result<()> {
    let spec = SweepSpec::load(spec)?;
    let job = spec.job();
    let (shard, out) = b.place(&job)?;
    let mine = spec.assign(shard.0, shard.1);
    eprintln!(
        "sweep {}: shard {}/{} — {} of {} units ({}), goal {}, into {}",
        spec.name,
        shard.0,
        shard.1,
        mine.len(),
        spec.units().len(),
        mine.iter()
            .map(|u| format!("{} {}", u.program.name, spec.phase_name(u.phase)))
            .collect::<Vec<_>>()
            .join(", "),
        spec.tune.goal.describe(),
        out.display()
    );
    let dir = job.claim(&out, b.replace)?;
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let start = std::time::Instant::now();
    let _interrupt = crate::InterruptCommand::new();
    let summary = sweep::run_shard(&spec, &dir, shard, &mut |program, trial| match trial {
        None => bar.println(program),
        Some((t, fraction)) => {
            bar.set_position((fraction * 1000.0) as u64);
            bar.set_message(format!("{program}: {} #{}", t.phase, t.index));
        }
    });
    bar.finish_and_clear();
    let summary = summary?;
    eprintln!(
        "shard {}/{}: {} units ({} done before), {} trials made, {} replayed, in {:.1} s: {}",
        shard.0,
        shard.1,
        summary.units,
        summary.skipped,
        summary.made,
        summary.replayed,
        start.elapsed().as_secs_f64(),
        summary.file.display()
    );
    Ok(())
}

/// Merges the shards in `dirs` and writes the report into `out` (default:
/// `report` in the first folder).
pub fn merge(dirs: &[PathBuf], out: Option<PathBuf>, replace: bool) -> anyhow::Result<()> {
    let out = crate::report_folder(dirs, out)?;
    let m = sweep::merge(dirs, &out, replace)?;
    print!("{}", m.text);
    eprintln!(
        "merged {} records of {} programs from {} shard files; wrote {}",
        m.records,
        m.programs,
        m.shards,
        m.written
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
