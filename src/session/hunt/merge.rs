//! Merging a hunt's shards: every program checked once (the last records
//! of a program checked again count), the verdicts counted, and the
//! findings — by signature, with the programs that show them and the
//! reduced reproducer — reported per pass.

use super::{read_records, HuntSpec};
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
#[derive(Clone, Debug, PartialEq)]
pub struct HuntReport {
    pub programs: usize,
    pub skipped: usize,
    /// Checks by verdict.
    pub verdicts: BTreeMap<String, usize>,
    pub findings: Vec<Finding>,
    /// Every check record, in program and pipeline order.
    pub checks: Vec<Json>,
}

impl HuntReport {
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

/// Reads the shards in `dirs` (one hunt) and checks them against `spec`:
/// every program has a `program` record, no shard ran another spec.
pub fn merge(spec: &HuntSpec, dirs: &[PathBuf]) -> Result<HuntReport> {
    let mut records = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                // A shard's records: hunt-I-of-N.jsonl (nothing else the
                // folder may hold).
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.strip_prefix("hunt-")
                        .and_then(|n| n.strip_suffix(".jsonl"))
                        .and_then(|n| n.split_once("-of-"))
                        .is_some_and(|(i, c)| {
                            i.parse::<usize>().is_ok() && c.parse::<usize>().is_ok()
                        })
                })
            })
            .collect();
        files.sort();
        for f in files {
            records.extend(read_records(&f, false)?);
        }
    }
    let fingerprint = spec.fingerprint();
    for m in records.iter().filter(|r| r["kind"] == "manifest") {
        if m["spec"].as_str() != Some(fingerprint.as_str()) {
            return Err(Error::Invalid(format!(
                "a shard ran another hunt (spec {}, this one {fingerprint})",
                m["spec"]
            )));
        }
    }
    let order: BTreeMap<String, usize> = spec
        .programs()
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.clone(), i))
        .collect();
    let mut done: BTreeMap<String, &Json> = BTreeMap::new();
    // The last check of each program and pipeline (a program checked again
    // after a killed shard counts once).
    let mut checks: BTreeMap<(usize, String), Json> = BTreeMap::new();
    for r in &records {
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
    Ok(HuntReport {
        programs: order.len(),
        skipped,
        verdicts,
        findings,
        checks: checks.into_values().collect(),
    })
}

/// Writes the report (`report.txt`, `records.jsonl`) into `out`, a folder
/// of its own (made with its marker; the same hunt's report is written
/// again there; anything else is refused unless `replace`, as
/// [`crate::folder::OwnedDir::claim`] says).
pub fn write_report(
    spec: &HuntSpec,
    report: &HuntReport,
    title: &str,
    out: &Path,
    replace: bool,
) -> Result<()> {
    let owner = crate::folder::Owner::new(
        "passlab hunt merge",
        format!("the report of the hunt {}", spec.name),
        spec.fingerprint(),
    );
    let dir = crate::folder::OwnedDir::claim_report(out, &owner, replace)?;
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
