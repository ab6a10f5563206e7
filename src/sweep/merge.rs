//! Merging a sweep's shards: the checks (every unit done, no trial missing
//! or twice, one spec) and the report (records in order, text, HTML, SVG
//! and PNG charts).

use crate::chart::Chart;
use crate::table::Table;
use crate::tune::{Goal, Trial, Tuning, BASELINES};
use crate::{Error, Result};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What [`merge`] found and wrote.
#[derive(Clone, Debug)]
pub struct Merged {
    pub records: usize,
    pub programs: usize,
    pub shards: usize,
    /// The files written: records, text, HTML, charts.
    pub written: Vec<PathBuf>,
    /// The report as text.
    pub text: String,
}

/// Merges the shards found in `dirs` into `out` (see the module
/// documentation): a folder of its own, made with its marker, or the same
/// sweep's report written again; anything else is refused unless
/// `replace` (as [`crate::folder::OwnedDir::claim`] says).
pub fn merge(dirs: &[PathBuf], out: &Path, replace: bool) -> Result<Merged> {
    let read = crate::batch::read_shards("sweep", dirs, true)?;
    let job = read.job("sweep");
    let crate::batch::Shards {
        manifest,
        records,
        files: shards,
    } = read;
    let (phases, programs) = sweep_of(&manifest);
    let (trials, problems) = check_records(records, &programs, &phases);
    if !problems.is_empty() {
        let n = problems.len();
        let shown = &problems[..n.min(20)];
        return Err(Error::Invalid(format!(
            "merge: {n} problem{}:\n  {}",
            if n == 1 { "" } else { "s" },
            shown.join("\n  ")
        )));
    }
    // The records in order, then the report.
    let out = job.report_folder(out, replace)?;
    let mut written = Vec::new();
    let mut text = String::new();
    for r in trials.values() {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    written.push(out.write("records.jsonl", &text)?);
    written.push(out.write("dataset.csv", dataset(&trials)?)?);
    let tunings = tunings_of(&manifest, &programs, &phases, &trials)?;
    let report = write_report(&out, &manifest, &tunings, &mut written)?;
    Ok(Merged {
        records: trials.len(),
        programs: programs.len(),
        shards,
        written,
        text: report,
    })
}

/// The trials by program, phase and index.
type Trials = BTreeMap<(String, usize, usize), Json>;

/// The sweep's phases, and its programs with their functions, as its
/// manifest lists them.
fn sweep_of(manifest: &Json) -> (Vec<String>, Vec<(String, Option<String>)>) {
    let phases: Vec<String> = manifest["phases"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let programs: Vec<(String, Option<String>)> = manifest["programs"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some((
                        p.get("name")?.as_str()?.to_string(),
                        p.get("function").and_then(Json::as_str).map(str::to_string),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    (phases, programs)
}

/// The shards' trials, and the problems with them: every record's
/// program is in the sweep, no trial twice, every program done with all
/// its trials.
fn check_records(
    records: Vec<Json>,
    programs: &[(String, Option<String>)],
    phases: &[String],
) -> (Trials, Vec<String>) {
    let known: BTreeSet<&str> = programs.iter().map(|(n, _)| n.as_str()).collect();
    let mut trials: Trials = BTreeMap::new();
    let mut done: BTreeMap<(String, String), Json> = BTreeMap::new();
    let mut problems = Vec::new();
    for r in records {
        let program = r
            .get("program")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        if !known.contains(program.as_str()) {
            problems.push(format!(
                "a record of '{program}', which is not in the sweep"
            ));
            continue;
        }
        let phase = r
            .get("phase")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let Some(p) = phases.iter().position(|x| *x == phase) else {
            problems.push(format!("{program}: a record of unknown phase '{phase}'"));
            continue;
        };
        if r.get("done").is_some() {
            if done.insert((program.clone(), phase.clone()), r).is_some() {
                problems.push(format!("{program} {phase} is done twice"));
            }
            continue;
        }
        let index = r.get("trial").and_then(Json::as_u64).unwrap_or(0) as usize;
        if trials.insert((program.clone(), p, index), r).is_some() {
            problems.push(format!("{program}: {phase} #{index} is there twice"));
        }
    }
    for (name, _) in programs {
        for (p, phase) in phases.iter().enumerate() {
            let Some(d) = done.get(&(name.clone(), phase.clone())) else {
                problems.push(format!(
                    "{name} {phase} is not finished (no shard wrote its done record)"
                ));
                continue;
            };
            let n = d["trials"].as_u64().unwrap_or(0) as usize;
            let have = trials
                .range((name.clone(), p, 0)..(name.clone(), p, usize::MAX))
                .count();
            let contiguous = trials
                .range((name.clone(), p, 0)..(name.clone(), p, usize::MAX))
                .enumerate()
                .all(|(i, ((_, _, index), _))| i == *index);
            if have != n || !contiguous {
                problems.push(format!(
                    "{name}: {phase} has {have} trials, its done record says {n}"
                ));
            }
        }
    }
    (trials, problems)
}

/// Each program's search, as `:tune` would have reported it.
fn tunings_of(
    manifest: &Json,
    programs: &[(String, Option<String>)],
    phases: &[String],
    trials: &Trials,
) -> Result<Vec<(String, Tuning)>> {
    let goal = Goal::parse(manifest["goal"].as_str().unwrap_or("instructions"))?;
    let seed = manifest["seed"].as_u64().unwrap_or(0);
    Ok(programs
        .iter()
        .map(|(name, function)| {
            let trials = trials
                .range((name.clone(), 0, 0)..(name.clone(), usize::MAX, 0))
                .filter_map(|(_, r)| Trial::from_json(r))
                .collect();
            (
                name.clone(),
                Tuning {
                    function: function.clone(),
                    program: Some(name.clone()),
                    goal: goal.clone(),
                    seed,
                    reference: None,
                    trials,
                    phases: phases.to_vec(),
                    interrupted: false,
                    elapsed: std::time::Duration::ZERO,
                },
            )
        })
        .collect())
}

/// Writes the charts (the gains, each program's convergence) and the
/// report as text and as a page; the text.
fn write_report(
    out: &crate::folder::OwnedDir,
    manifest: &Json,
    tunings: &[(String, Tuning)],
    written: &mut Vec<PathBuf>,
) -> Result<String> {
    let summary = summary_table(manifest, tunings);
    let mut report = format!("{}\n", summary.to_text());
    let mut html = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sweep {0}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}</style></head><body>\n\
         <h1>sweep {0}</h1>\n{1}\n",
        crate::table::escape(manifest["sweep"].as_str().unwrap_or("")),
        summary.to_html()
    );
    let gains = gain_chart(manifest, tunings);
    for (stem, chart) in std::iter::once(("gain".to_string(), gains)).chain(
        tunings
            .iter()
            .map(|(name, t)| (format!("convergence-{}", slug(name)), t.chart())),
    ) {
        written.push(out.write(&format!("{stem}.svg"), chart.svg()?)?);
        written.push(out.write(&format!("{stem}.png"), chart.png()?)?);
        html.push_str(&format!("<div>{}</div>\n", chart.svg()?));
    }
    for (name, t) in tunings {
        let table = t.table(3);
        report.push_str(&format!("\n{name}\n{}\n", table.to_text()));
        html.push_str(&format!(
            "<h2>{}</h2>\n{}\n",
            crate::table::escape(name),
            table.to_html()
        ));
    }
    html.push_str("</body></html>\n");
    for (file, body) in [("report.txt", &report), ("report.html", &html)] {
        written.push(out.write(file, body)?);
    }
    Ok(report)
}

/// The sweep as a dataset, one row per trial: `dataset.csv`, which
/// `pandas.read_csv` reads. Columns: `program`, `phase`, `trial`,
/// `ordering` (the passes, comma-separated), `verdict`, `instructions`,
/// `size`, `runtime_ns`, the program's `instructions_o0` and
/// `instructions_oz`, `reward` (CompilerGym's `IrInstructionCountOz`
/// episode reward: `(O0 - instructions) / max(O0 - Oz, 1)`; 1 is as good
/// as -Oz) and `vs_oz` (`Oz / instructions`); then, when the sweep
/// recorded features (`features = true`), the program's InstCount and
/// Autophase before any pass (`before_instcount_TotalInsts`, …,
/// `before_autophase_BBNumArgsHi`, …) and the trial's after its ordering
/// (`after_…`). A value not measured is empty.
fn dataset(trials: &BTreeMap<(String, usize, usize), Json>) -> Result<Vec<u8>> {
    use crate::module::features::{instcount_names, AUTOPHASE};
    let io = |e: csv::Error| Error::spec("dataset.csv", e.to_string());
    let names: Vec<String> = instcount_names()
        .iter()
        .map(|n| format!("instcount_{n}"))
        .chain(AUTOPHASE.iter().map(|n| format!("autophase_{n}")))
        .collect();
    let with_features = trials
        .values()
        .any(|r| r.get("autophase").is_some_and(|a| a.is_array()));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(dataset_header(&names, with_features))
        .map_err(io)?;
    let text = |v: Option<&Json>| match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let baseline = |program: &str, ordering: &[&str]| {
        trials
            .range((program.to_string(), 0, 0)..(program.to_string(), 1, 0))
            .map(|(_, r)| r)
            .find(|r| {
                r.get("ordering").and_then(Json::as_array).is_some_and(|o| {
                    o.iter()
                        .map(|p| p.as_str().unwrap_or(""))
                        .eq(ordering.iter().copied())
                })
            })
    };
    for ((program, _, _), r) in trials {
        let level = |l: &str| BASELINES.iter().find(|(n, _)| *n == l).map(|(_, p)| *p);
        let o0 = level("O0").and_then(|p| baseline(program, &[p]));
        let oz = level("Oz").and_then(|p| baseline(program, &[p]));
        let count = |r: Option<&Json>| r.and_then(|r| r.get("instructions")).and_then(Json::as_u64);
        let (c, c0, cz) = (count(Some(r)), count(o0), count(oz));
        let (reward, vs_oz) = rewards(c, c0, cz);
        let ordering: Vec<&str> = r
            .get("ordering")
            .and_then(Json::as_array)
            .map(|o| o.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let mut row = vec![
            program.clone(),
            text(r.get("phase")),
            text(r.get("trial")),
            ordering.join(","),
            text(r.get("verdict")),
            text(r.get("instructions")),
            text(r.get("size")),
            text(r.get("runtime_ns")),
            c0.map_or(String::new(), |v| v.to_string()),
            cz.map_or(String::new(), |v| v.to_string()),
            reward,
            vs_oz,
        ];
        if with_features {
            for f in [o0.and_then(features_of), features_of(r)] {
                match f {
                    Some(v) => row.extend(v.iter().map(|x| x.to_string())),
                    None => row.extend(std::iter::repeat_n(String::new(), names.len())),
                }
            }
        }
        w.write_record(&row).map_err(io)?;
    }
    w.into_inner()
        .map_err(|e| Error::spec("dataset.csv", e.to_string()))
}

/// The dataset's columns (the features' before and after, when recorded).
fn dataset_header(names: &[String], with_features: bool) -> Vec<String> {
    let mut header: Vec<String> = [
        "program",
        "phase",
        "trial",
        "ordering",
        "verdict",
        "instructions",
        "size",
        "runtime_ns",
        "instructions_o0",
        "instructions_oz",
        "reward",
        "vs_oz",
    ]
    .map(String::from)
    .to_vec();
    if with_features {
        for when in ["before", "after"] {
            header.extend(names.iter().map(|n| format!("{when}_{n}")));
        }
    }
    header
}

/// A record's InstCount and Autophase, when it has them.
fn features_of(r: &Json) -> Option<Vec<i64>> {
    let ints =
        |k: &str| -> Option<Vec<i64>> { r.get(k)?.as_array()?.iter().map(Json::as_i64).collect() };
    let mut v = ints("instcount")?;
    v.extend(ints("autophase")?);
    Some(v)
}

/// CompilerGym's reward, `(O0 - c) / max(O0 - Oz, 1)`, and `Oz / c`, from
/// instruction counts `c`, `c0` (O0's) and `cz` (Oz's); empty when one is
/// not measured.
fn rewards(c: Option<u64>, c0: Option<u64>, cz: Option<u64>) -> (String, String) {
    let reward = match (c, c0, cz) {
        (Some(c), Some(c0), Some(cz)) => {
            format!(
                "{}",
                (c0 as f64 - c as f64) / (c0 as f64 - cz as f64).max(1.0)
            )
        }
        _ => String::new(),
    };
    let vs_oz = match (c, cz) {
        (Some(c), Some(cz)) if c > 0 => format!("{}", cz as f64 / c as f64),
        _ => String::new(),
    };
    (reward, vs_oz)
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Per program: the best ordering, its value, the levels' values and the
/// gains over them.
fn summary_table(manifest: &Json, tunings: &[(String, Tuning)]) -> Table {
    let goal = manifest["goal"].as_str().unwrap_or("");
    let mut t = Table::new(
        &format!(
            "sweep {}: the best ordering per program for {goal} (seed {})",
            manifest["sweep"].as_str().unwrap_or(""),
            manifest["seed"]
        ),
        &[
            "program",
            "trials>",
            "best",
            "best value>",
            "O0>",
            "O2>",
            "O3>",
            "Oz>",
            "gain vs O2>",
            "gain vs O3>",
            "gain vs Oz>",
            "miscompiles>",
            "failed>",
        ],
    );
    for (name, tu) in tunings {
        let value = |tr: Option<&Trial>| -> String {
            match tr {
                None => "-".into(),
                Some(tr) => match (tu.goal.metric(), tu.score(tr)) {
                    (Some(m), _) => m.of(tr).map_or("-".into(), |v| m.show(v)),
                    (None, Some(s)) => format!("{s:.4}"),
                    _ => "-".into(),
                },
            }
        };
        let best = tu.best(1).first().copied();
        let gain = |l: &str| match (
            tu.baseline(l).and_then(|b| tu.score(b)),
            best.and_then(|b| tu.score(b)),
        ) {
            (Some(b), Some(s)) if s > 0.0 => format!("{:.3}x", b / s),
            _ => "-".into(),
        };
        t.push([
            name.clone(),
            tu.searched().count().to_string(),
            best.map_or("none valid".into(), |b| {
                crate::tune::abbreviate(&b.pipeline(), 44)
            }),
            value(best),
            value(tu.baseline("O0")),
            value(tu.baseline("O2")),
            value(tu.baseline("O3")),
            value(tu.baseline("Oz")),
            gain("O2"),
            gain("O3"),
            gain("Oz"),
            tu.miscompiles().count().to_string(),
            tu.failures().count().to_string(),
        ]);
    }
    t.notes.push(
        "gain vs X: X's value divided by the best ordering's (above 1: the search beat X)".into(),
    );
    t
}

/// The best ordering's gain over O2, O3 and Oz per program, as bars.
fn gain_chart(manifest: &Json, tunings: &[(String, Tuning)]) -> Chart {
    let mut bars = Vec::new();
    for (name, tu) in tunings {
        let Some(best) = tu.best(1).first().and_then(|b| tu.score(b)) else {
            continue;
        };
        for (l, _) in BASELINES.iter().skip(1) {
            if let Some(b) = tu.baseline(l).and_then(|b| tu.score(b)) {
                if best > 0.0 {
                    bars.push((format!("{name} vs {l}"), b / best));
                }
            }
        }
    }
    Chart::bars(
        &format!(
            "sweep {}: gain of the best ordering found over O2, O3 and Oz ({})",
            manifest["sweep"].as_str().unwrap_or(""),
            manifest["goal"].as_str().unwrap_or("")
        ),
        "level's value / best ordering's value (above 1: the search beat the level)",
        bars,
    )
}
