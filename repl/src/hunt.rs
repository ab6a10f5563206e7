//! `passlab hunt SPEC` and `passlab hunt merge SPEC DIR...`: the headless
//! side of `passlab::session::hunt`.

use passlab::session::hunt::{self, HuntSpec};
use passlab::session::sweep;
use std::path::{Path, PathBuf};

/// Runs one shard of the hunt `spec` into `out` (default: `NAME.hunt`
/// beside the spec).
pub fn run(
    spec: &Path,
    out: Option<PathBuf>,
    shard: Option<String>,
    shards: Option<usize>,
    replace: bool,
) -> anyhow::Result<()> {
    let spec = HuntSpec::load(spec)?;
    let shard = match shard {
        Some(s) => crate::sweep::parse_shard(&s)?,
        None => sweep::shard_from_env(shards)?.unwrap_or((0, 1)),
    };
    let out = out.unwrap_or_else(|| spec.dir.join(format!("{}.hunt", spec.name)));
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
    let dir = hunt::claim_folder(&spec, &out, replace)?;
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

/// Merges the shards in `dirs` of the hunt `spec` and writes the report
/// into `out` (default: `report` in the first folder).
pub fn merge(
    spec: &Path,
    dirs: &[PathBuf],
    out: Option<PathBuf>,
    replace: bool,
) -> anyhow::Result<()> {
    if dirs.is_empty() {
        anyhow::bail!("hunt merge expects the spec and the folders its shards wrote into");
    }
    let spec = HuntSpec::load(spec)?;
    let report = hunt::merge(&spec, dirs)?;
    let out = out.unwrap_or_else(|| dirs[0].join("report"));
    let title = format!("hunt {}: findings per pass", spec.name);
    hunt::write_report(&spec, &report, &title, &out, replace)?;
    print!("{}", report.table(&title));
    eprintln!("wrote {}", out.display());
    Ok(())
}
