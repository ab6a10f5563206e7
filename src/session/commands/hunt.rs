//! :hunt — a bug hunt over the current session (see
//! `crate::batch::hunt`): Csmith's programs or C files through
//! pipelines, with the session's passes (LLVM's, plugins', Rust ones) and
//! context, checked, bisected, reduced; a table of what happened per
//! pipeline, the findings per pass, and their reproducers.

use super::*;
use crate::batch::hunt::{self, HuntSpec, Oracle, Source};

/// What `:help hunt` adds.
pub(super) fn details() -> String {
    "  csmith=A..B   Csmith's programs of seeds A to B (default 1..20)   csmith_args=A,B,...   csmith's arguments (default --max-funcs,4,--max-block-depth,3)\n  \
     corpus=PATTERN   C files instead (src/*.c)\n  \
     | PIPELINE | ...   the pipelines every program goes through (default O2); orderings=N adds N random orderings of :tune's pool per program (seed=, length=MIN..MAX, pool=P,...)\n  \
     oracle=native (clang-19 -O0, run) | jit-o0 (the unoptimized module through the JIT)   timeout=S per run (default 5)\n  \
     reduce=yes|no (default yes: the first program of each finding, budget=S seconds each, default 60)   jobs=N programs at once (default 2)\n  \
     --out DIR   where the records and the reproducers go (default passlab-hunt/ and a folder per hunt); the same hunt again starts afresh there, removing only what it wrote; resume=yes goes on where its records end; one hunt at a time in a folder\n  \
     a folder passlab did not make, or another job's, is refused: replace=yes writes beside the files there (a folder of yours) or removes that job's files (only those it wrote)\n  \
     each reduced finding becomes a module of the session: found-1, found-2, ..."
        .to_string()
}

fn bad_setting(k: &str) -> Error {
    Error::Command {
        command: "hunt".into(),
        message: format!("unknown setting '{k}'"),
        suggestions: crate::nearest_names(k, setting_keys("hunt")),
    }
}

/// A yes-or-no setting (checked as one of `YES_NO`).
fn yes(v: &str) -> bool {
    matches!(v, "yes" | "true")
}

/// The C files `corpus=` matches, sorted; none is an error.
fn corpus(pattern: &str) -> Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<std::path::PathBuf> = glob::glob(pattern)
        .map_err(|e| err("hunt", format!("corpus '{pattern}': {e}")))?
        .filter_map(|r| r.ok())
        .filter(|f| f.is_file())
        .collect();
    if files.is_empty() {
        return Err(err("hunt", format!("corpus '{pattern}' matches no file")));
    }
    files.sort();
    Ok(files)
}

pub(super) fn hunt(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let Settings {
        spec,
        out,
        resume,
        replace,
    } = settings(&a.rest)?;
    // By default a folder per hunt (named by its spec's fingerprint); the
    // folder is the hunt's alone (a second session, another notebook
    // running the same cell, is refused rather than starting afresh under
    // the first).
    let dir = std::path::PathBuf::from(
        out.unwrap_or_else(|| format!("passlab-hunt/{}", &spec.fingerprint()[..8])),
    );
    let owner = crate::folder::Owner::new(
        ":hunt",
        format!(":hunt {}", a.rest.trim()),
        spec.fingerprint(),
    );
    let result = s.with_progress(|_, progress| {
        hunt::run_here(&spec, &dir, &owner, resume, replace, progress)
    });
    let (dir, summary, report) = result?;
    let mut o = Output::default();
    o.push_table(&report.by_pipeline(&format!(
        "hunt: {} programs, oracle {} ({} skipped), {:.1} s",
        report.programs,
        spec.oracle.name(),
        report.skipped,
        summary.elapsed.as_secs_f64()
    )));
    if report.findings.is_empty() {
        o.push_text(
            "no findings: every program printed what its oracle printed, after every pipeline",
        );
    } else {
        o.push_table(&report.table("findings, by the pass they are in"));
        let chart = report.chart();
        o.items
            .push(Item::Display(super::super::Bundle::chart(&chart)?));
    }
    if let Some(found) = keep_findings(s, &report, &dir) {
        o.push_text(found);
    }
    o.push_text(format!(
        "records in {} (passlab hunt merge reads them too)",
        summary.file.display()
    ));
    Ok(o)
}

/// What `:hunt`'s settings and pipelines make: the hunt, and whether it
/// resumes and may replace files in its folder.
struct Settings {
    spec: HuntSpec,
    out: Option<String>,
    resume: bool,
    replace: bool,
}

/// `:hunt`'s line split: `--out DIR`, the settings before the first `|`,
/// and the pipelines after each (checked).
fn split_line(rest: &str) -> Result<(Option<String>, Args, Vec<String>)> {
    let mut words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    let out = take_out(
        &mut words,
        "hunt",
        ", e.g. :hunt csmith=1..40 --out my-hunt",
    )?;
    let rest = words.join(" ");
    let mut parts = rest.split('|').map(str::trim);
    let head = Args::parse(&format!(":hunt {}", parts.next().unwrap_or("")))?;
    let pipelines: Vec<String> = parts.map(str::to_string).collect();
    if let Some(w) = head.words.first() {
        return Err(err(
            "hunt",
            format!("'{w}' is not a setting: settings are KEY=VALUE, pipelines come after '|' (:help hunt)"),
        ));
    }
    if pipelines.iter().any(|p| p.is_empty()) {
        return Err(err("hunt", "a pipeline after '|' is empty"));
    }
    for p in &pipelines {
        pipeline::parse(p)?;
    }
    Ok((out, head, pipelines))
}

fn settings(rest: &str) -> Result<Settings> {
    let (out, head, pipelines) = split_line(rest)?;
    let mut spec = HuntSpec {
        name: "hunt".into(),
        ..HuntSpec::default()
    };
    // csmith= may come after csmith_args=.
    let mut csmith_args: Option<Vec<String>> = None;
    let mut resume = false;
    let mut replace = false;
    if !pipelines.is_empty() {
        spec.pipelines = pipelines;
    }
    for (k, v) in &head.settings {
        match k.as_str() {
            // Numbers and words: checked against their kinds (the
            // command table) before the handler ran.
            "csmith" => {
                let (lo, hi) = range("hunt", k, v)?;
                if hi - lo >= 1_000_000 {
                    return Err(err(
                        "hunt",
                        format!("csmith=: expects at most a million seeds (A..B with B - A < 1000000), got '{v}'"),
                    ));
                }
                spec.source = Source::Csmith {
                    seeds: (lo, hi),
                    args: hunt::CSMITH_ARGS.iter().map(|a| a.to_string()).collect(),
                };
            }
            "csmith_args" => csmith_args = Some(comma_list(v)),
            "corpus" => spec.source = Source::Corpus(corpus(v)?),
            "orderings" => spec.orderings = whole("hunt", k, v)?,
            "seed" => spec.seed = whole("hunt", k, v)?,
            "length" => {
                let (lo, hi) = range("hunt", k, v)?;
                // At most 1000 (the kind's bound).
                spec.lengths = (lo as usize, hi as usize);
            }
            "pool" => spec.pool = super::tune::pool("hunt", v)?,
            "oracle" if v == "jit-o0" => spec.oracle = Oracle::JitO0,
            "oracle" => spec.oracle = Oracle::Native,
            "timeout" => spec.timeout = seconds("hunt", k, v)?,
            "resume" => resume = yes(v),
            "replace" => replace = yes(v),
            "reduce" => spec.reduce = yes(v),
            "budget" => spec.reduce_budget = seconds("hunt", k, v)?,
            "jobs" => spec.jobs = whole("hunt", k, v)?,
            other => return Err(bad_setting(other)),
        }
    }
    if let (Some(args), Source::Csmith { args: a, .. }) = (csmith_args, &mut spec.source) {
        *a = args;
    }
    spec.check()?;
    if spec.orderings > 0 {
        for p in &spec.pool {
            registry::get_pass(p)?;
        }
    }
    Ok(Settings {
        spec,
        out,
        resume,
        replace,
    })
}

/// Each reduced finding becomes a module of the session, numbered on from
/// the session's last found-N (a second hunt keeps the first one's
/// findings); what to say of them.
fn keep_findings(
    s: &mut Session,
    report: &hunt::HuntReport,
    dir: &crate::folder::OwnedDir,
) -> Option<String> {
    let mut found = Vec::new();
    let mut next = s
        .modules
        .keys()
        .filter_map(|k| k.strip_prefix("found-")?.parse::<u64>().ok())
        .max()
        .map_or(1, |n| n.saturating_add(1));
    for (f, m, folder) in report.reduced_modules(dir) {
        let name = format!("found-{next}");
        next = next.saturating_add(1);
        let tools = f
            .reduced
            .as_ref()
            .and_then(|r| r["shows_bug_without_passlab"].as_bool());
        found.push(format!(
            "{name}: {} ({} instructions; {}{})",
            f.signature,
            m.instruction_count(),
            folder.display(),
            if tools == Some(true) {
                ": its repro.sh shows the bug with LLVM's tools alone"
            } else {
                ": repro.plab shows it with passlab"
            }
        ));
        s.put_module(name, m);
    }
    (!found.is_empty()).then(|| {
        format!(
            "the reduced findings, now modules of the session (:use found-N):\n{}",
            found.join("\n")
        )
    })
}
