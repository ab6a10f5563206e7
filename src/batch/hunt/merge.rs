//! Merging a hunt's shards: every program checked once (the last records
//! of a program checked again count), the verdicts counted, and the
//! findings — by signature, with the programs that show them and the
//! reduced reproducer — reported per pass.

use crate::table::Table;
use crate::{Error, Result};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One finding across the shards.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub signature: String,
    pub verdict: String,
    pub pass: String,
    /// The programs (and pipelines) that show it.
    pub programs: Vec<(String, String)>,
    /// The reduction's record, if it was reduced.
    pub reduced: Option<Json>,
}

/// What the shards hold together.
#[derive(Clone, Debug)]
pub struct HuntReport {
    /// The hunt (its records' manifest): its name, the fingerprint of its
    /// spec and its named pipelines.
    pub hunt: crate::batch::Job,
    pub pipelines: Vec<String>,
    pub programs: usize,
    pub skipped: usize,
    /// Checks by verdict.
    pub verdicts: BTreeMap<String, usize>,
    pub findings: Vec<Finding>,
    /// Every check record, in program and pipeline order.
    pub checks: Vec<Json>,
}

impl HuntReport {
    /// How each check ended, per pipeline (the named ones, then the random
    /// orderings together).
    pub fn by_pipeline(&self, title: &str) -> Table {
        let verdicts = [
            "same",
            "miscompile",
            "crash",
            "fatal error",
            "verifier failure",
            "timeout",
            "failed",
        ];
        let mut t = Table::new(
            title,
            &[
                "pipeline",
                "same>",
                "miscompile>",
                "crash>",
                "fatal error>",
                "verifier failure>",
                "timeout>",
                "failed>",
            ],
        );
        let mut rows: Vec<(String, [usize; 7])> = Vec::new();
        for c in &self.checks {
            let p = c["pipeline"].as_str().unwrap_or("");
            let label = if self.pipelines.iter().any(|n| n == p) {
                p.to_string()
            } else {
                "random orderings".to_string()
            };
            let i = match rows.iter().position(|(l, _)| *l == label) {
                Some(i) => i,
                None => {
                    rows.push((label, [0; 7]));
                    rows.len() - 1
                }
            };
            if let Some(k) = verdicts.iter().position(|v| c["verdict"] == *v) {
                rows[i].1[k] += 1;
            }
        }
        for (label, counts) in rows {
            let mut row = vec![label];
            row.extend(counts.iter().map(|n| n.to_string()));
            t.push(row);
        }
        t
    }

    /// The reduced findings whose `reduced.ll` (in their reproducer folder
    /// inside `dir`) reads back: each with its module and folder.
    pub fn reduced_modules(
        &self,
        dir: &crate::folder::OwnedDir,
    ) -> Vec<(&Finding, crate::Module, PathBuf)> {
        self.findings
            .iter()
            .filter_map(|f| {
                let folder = dir.join(f.reduced.as_ref()?["reproducer"].as_str()?);
                let m = crate::Module::from_file(folder.join("reduced.ll")).ok()?;
                Some((f, m, folder))
            })
            .collect()
    }

    /// Findings per pass as a bar chart: how many programs show each.
    pub fn chart(&self) -> crate::chart::Chart {
        let bars: Vec<(String, f64)> = self
            .findings
            .iter()
            .map(|f| {
                (
                    format!("{} ({})", f.pass, f.verdict),
                    f.programs.len() as f64,
                )
            })
            .collect();
        crate::chart::Chart::bars("programs that show each finding", "programs", bars)
    }

    /// Findings per pass: the pass, the kind, the signature, how many
    /// programs show it, the first, and the reduction.
    pub fn table(&self, title: &str) -> Table {
        let mut t = Table::new(
            title,
            &["pass", "kind", "programs>", "first", "reduced", "signature"],
        );
        for f in &self.findings {
            let first = f
                .programs
                .first()
                .map_or(String::new(), |(p, pl)| format!("{p} ({pl})"));
            let reduced = match &f.reduced {
                Some(r) if r.get("error").is_some() => {
                    format!("not reduced: {}", r["error"].as_str().unwrap_or(""))
                }
                Some(r) => format!(
                    "{} → {} instructions, {}",
                    r["instructions_before"],
                    r["instructions_after"],
                    r["reproducer"].as_str().unwrap_or("")
                ),
                None => "-".into(),
            };
            t.push([
                f.pass.clone(),
                f.verdict.clone(),
                f.programs.len().to_string(),
                first,
                reduced,
                f.signature.clone(),
            ]);
        }
        let verdicts: Vec<String> = self
            .verdicts
            .iter()
            .map(|(v, n)| format!("{n} {v}"))
            .collect();
        t.notes.push(format!(
            "{} programs ({} skipped: their oracle failed or took too long), {} checks: {}",
            self.programs,
            self.skipped,
            self.checks.len(),
            verdicts.join(", ")
        ));
        t
    }
}

/// Reads the shards in `dirs` (one hunt) and checks them: every program
/// of the hunt (its manifest says which) has a `program` record.
pub fn merge(dirs: &[PathBuf]) -> Result<HuntReport> {
    let shards = crate::batch::read_shards("hunt", dirs, true)?;
    let (m, records) = (&shards.manifest, &shards.records);
    let order = program_order(m);
    let mut done: BTreeMap<String, &Json> = BTreeMap::new();
    // The last check of each program and pipeline (a program checked again
    // after a killed shard counts once).
    let mut checks: BTreeMap<(usize, String), Json> = BTreeMap::new();
    for r in records {
        let name = r["program"].as_str().unwrap_or("").to_string();
        match r["kind"].as_str() {
            Some("program") => {
                if !order.contains_key(&name) {
                    return Err(Error::Invalid(format!(
                        "a record of a program the hunt does not have: {name}"
                    )));
                }
                done.insert(name, r);
            }
            Some("check") => {
                let rank = order.get(&name).copied().unwrap_or(usize::MAX);
                checks.insert(
                    (rank, r["pipeline"].as_str().unwrap_or("").to_string()),
                    r.clone(),
                );
            }
            _ => {}
        }
    }
    let missing: Vec<&String> = order.keys().filter(|n| !done.contains_key(*n)).collect();
    if !missing.is_empty() {
        return Err(Error::Invalid(format!(
            "{} of {} programs are not done (first: {}): run their shards again",
            missing.len(),
            order.len(),
            missing[0]
        )));
    }
    let skipped = done.values().filter(|r| r.get("skipped").is_some()).count();
    let (verdicts, findings) = findings(&checks, records);
    Ok(HuntReport {
        hunt: shards.job("hunt"),
        pipelines: strings(&m["pipelines"]),
        programs: order.len(),
        skipped,
        verdicts,
        findings,
        checks: checks.into_values().collect(),
    })
}

/// Each program of the hunt the manifest `m` describes, by its place in
/// the hunt.
fn program_order(m: &Json) -> BTreeMap<String, usize> {
    let names: Vec<String> = match m["seeds"].as_array().map(Vec::as_slice) {
        Some([a, b]) => (a.as_u64().unwrap_or(1)..=b.as_u64().unwrap_or(0))
            .map(|s| format!("csmith-{s}"))
            .collect(),
        _ => strings(&m["programs"]),
    };
    names.into_iter().enumerate().map(|(i, p)| (p, i)).collect()
}

/// How many `checks` had each verdict, and the findings (checks that did
/// not pass, by signature, with their reduction among `records`), by pass
/// and signature.
fn findings(
    checks: &BTreeMap<(usize, String), Json>,
    records: &[Json],
) -> (BTreeMap<String, usize>, Vec<Finding>) {
    let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
    let mut findings: BTreeMap<String, Finding> = BTreeMap::new();
    for c in checks.values() {
        let verdict = c["verdict"].as_str().unwrap_or("").to_string();
        *verdicts.entry(verdict.clone()).or_default() += 1;
        if verdict == "same" {
            continue;
        }
        let sig = c["signature"].as_str().unwrap_or("").to_string();
        let f = findings.entry(sig.clone()).or_insert_with(|| Finding {
            signature: sig,
            verdict,
            pass: c["pass"].as_str().unwrap_or("-").to_string(),
            programs: Vec::new(),
            reduced: None,
        });
        f.programs.push((
            c["program"].as_str().unwrap_or("").to_string(),
            c["pipeline"].as_str().unwrap_or("").to_string(),
        ));
    }
    for r in records.iter().filter(|r| r["kind"] == "finding") {
        if let Some(f) = r["signature"].as_str().and_then(|s| findings.get_mut(s)) {
            f.reduced = Some(r.clone());
        }
    }
    let mut findings: Vec<Finding> = findings.into_values().collect();
    findings.sort_by(|a, b| a.pass.cmp(&b.pass).then(a.signature.cmp(&b.signature)));
    (verdicts, findings)
}

/// A manifest's list of strings.
fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the report (`report.txt`, `records.jsonl`) into `out`, a folder
/// of its own (made with its marker; the same hunt's report is written
/// again there; anything else is refused unless `replace`, as
/// [`crate::folder::OwnedDir::claim`] says).
pub fn write_report(report: &HuntReport, title: &str, out: &Path, replace: bool) -> Result<()> {
    let dir = report.hunt.report_folder(out, replace)?;
    let text = report.table(title).to_string();
    dir.write("report.txt", &text)?;
    let mut lines = String::new();
    for c in &report.checks {
        lines.push_str(&c.to_string());
        lines.push('\n');
    }
    dir.write("records.jsonl", lines)?;
    Ok(())
}
