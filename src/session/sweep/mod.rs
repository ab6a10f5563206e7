//! Sweeps: the search of `:tune` (or a fixed list of orderings) over a
//! corpus of programs, as a headless job split into shards that a cluster's
//! engine runs (Slurm job arrays, Kubernetes Indexed Jobs), and the merge
//! of the shards into one report.
//!
//! A sweep is described by a TOML file ([`SweepSpec::load`]); every shard
//! resolves it the same way (the corpus sorted, each program weighed by
//! its size) and takes the programs [`SweepSpec::assign`] gives it. Each
//! program is built in a fresh [`Session`] (`:load`, or the `.plab` script
//! that makes it, then its `:buffer`s), and searched with
//! [`crate::tune::tune`]. Every trial becomes one JSON line in
//! `OUT/shard-I-of-N.jsonl`, written with a single `write` on a file opened
//! for appending, and a program ends with a `done` line. A shard run again
//! drops a torn last line, replays the trials it finds into the search
//! (which is deterministic given the seed) and finishes the rest.
//!
//! [`merge`] reads the shards of one or more folders, checks that every
//! program is done, that no trial is missing or duplicated and that all
//! shards ran the same spec, and writes the records in order and the report
//! (text, HTML, SVG and PNG charts).
//!
//! Because programs are built in sessions, sweeps live in the session
//! layer. `spec.rs` is the spec and the units, `merge.rs` the merge, this
//! file one shard; `passlab sweep` (repl/src/sweep.rs) is the command line,
//! and `deploy/` holds what a cluster runs.

mod merge;
mod spec;

pub use merge::{merge, Merged};
pub use spec::{Origin, Program, SweepSpec, Unit};

use super::Session;
use crate::folder::{Access, OwnedDir, Owner};
use crate::tune::Trial;
use crate::{Error, Result};
use serde_json::{json, Value as Json};
use spec::script_session;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The shard from the environment: Slurm's array task, or a Kubernetes
/// Indexed Job's completion index; the count from `count`, else Slurm's
/// task count, else `PASSLAB_SHARDS`.
pub fn shard_from_env(count: Option<usize>) -> Result<Option<(usize, usize)>> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let index = var("SLURM_ARRAY_TASK_ID").or_else(|| var("JOB_COMPLETION_INDEX"));
    let Some(index) = index else {
        return Ok(None);
    };
    let index: usize = index.parse().map_err(|_| {
        Error::Invalid(format!(
            "the shard index '{index}' from the environment is not a number"
        ))
    })?;
    let count = match count {
        Some(c) => c,
        None => var("SLURM_ARRAY_TASK_COUNT")
            .or_else(|| var("PASSLAB_SHARDS"))
            .ok_or_else(|| {
                Error::Invalid(
                    "a shard index is set but no count: pass --shards N, or set PASSLAB_SHARDS (Kubernetes: the Job's completions)".into(),
                )
            })?
            .parse()
            .map_err(|_| Error::Invalid("the shard count from the environment is not a number".into()))?,
    };
    if count == 0 || index >= count {
        return Err(Error::Invalid(format!(
            "shard {index} of {count} does not exist"
        )));
    }
    Ok(Some((index, count)))
}

/// What a shard tells as it goes: a line about a unit, or a trial made
/// and how far its unit's budget is used.
pub type ShardProgress<'p> = dyn FnMut(&str, Option<(&Trial, f64)>) + 'p;

/// What a shard did.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardSummary {
    pub file: PathBuf,
    /// Units of work (a program's baselines, or one search of it).
    pub units: usize,
    /// Units already done when it started.
    pub skipped: usize,
    /// Trials found in the file and replayed, and trials made now.
    pub replayed: usize,
    pub made: usize,
}

fn host() -> String {
    crate::child::hostname()
}

/// Reads a shard file's records, dropping a torn last line (a killed
/// shard's) from the file.
fn read_records(file: &Path) -> Result<Vec<Json>> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(file.display(), e)),
    };
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .map_err(|e| Error::io(file.display(), e))?;
        f.set_len(whole as u64)
            .map_err(|e| Error::io(file.display(), e))?;
    }
    bytes[..whole]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_slice(l).map_err(|e| {
                Error::Invalid(format!("{}:{}: not a record: {e}", file.display(), i + 1))
            })
        })
        .collect()
}

/// Who writes a sweep's folder: `passlab sweep`, every shard of one spec.
pub fn sweep_owner(spec: &SweepSpec) -> Owner {
    Owner::new(
        "passlab sweep",
        format!(
            "the sweep {} (its spec in {})",
            spec.name,
            spec.dir.display()
        ),
        spec.fingerprint(),
    )
}

/// The folder `out` for shards of `spec` (shared with its other shards);
/// `replace` as [`OwnedDir::claim`] takes it.
pub fn claim_folder(spec: &SweepSpec, out: &Path, replace: bool) -> Result<OwnedDir> {
    OwnedDir::claim(
        out,
        &sweep_owner(spec),
        Access::Shared,
        replace,
        "--replace",
    )
}

/// Runs shard `index` of `count` of `spec`, writing into `out` (a folder
/// the sweep's job holds: [`claim_folder`]; see the module
/// documentation); `progress` hears a line per program and trial.
pub fn run_shard(
    spec: &SweepSpec,
    out: &OwnedDir,
    (index, count): (usize, usize),
    progress: &mut ShardProgress,
) -> Result<ShardSummary> {
    // The manifest: the same from every shard, written whole or not at all.
    let manifest = out.join("sweep.json");
    let text = serde_json::to_string_pretty(&spec.manifest()).unwrap_or_default();
    match std::fs::read_to_string(&manifest) {
        Ok(old) if old == text => {}
        Ok(old) if !old.is_empty() && out.owns("sweep.json") => {
            let other: Json = serde_json::from_str(&old).unwrap_or(Json::Null);
            if other.get("spec") != spec.manifest().get("spec") {
                return Err(Error::Invalid(format!(
                    "{} belongs to another sweep (spec {}); this one is {}: use another --out folder",
                    manifest.display(),
                    other.get("spec").and_then(Json::as_str).unwrap_or("?"),
                    spec.fingerprint()
                )));
            }
        }
        _ => {
            out.write_whole("sweep.json", &text)?;
        }
    }
    let name = format!("shard-{index}-of-{count}.jsonl");
    // Opened first: a file of that name the sweep did not write is refused
    // before it is read (or its torn last line cut).
    let mut sink = out.append(&name)?;
    let file = out.join(&name);
    let records = read_records(&file)?;
    let mine = spec.assign(index, count);
    let (host, llvm) = (host(), crate::llvm::version());
    let mut summary = ShardSummary {
        file: file.clone(),
        units: mine.len(),
        skipped: 0,
        replayed: 0,
        made: 0,
    };
    let mut built: Option<(String, Session)> = None;
    for u in mine {
        let (p, phase) = (u.program, spec.phase_name(u.phase));
        let label = format!("{} {phase}", p.name);
        let mine = |r: &&Json| {
            r.get("program").and_then(Json::as_str) == Some(&p.name)
                && r.get("phase").and_then(Json::as_str) == Some(&phase)
        };
        if records.iter().filter(mine).any(|r| r.get("done").is_some()) {
            summary.skipped += 1;
            progress(&format!("{label}: done already"), None);
            continue;
        }
        let known: Vec<Trial> = records
            .iter()
            .filter(mine)
            .filter_map(Trial::from_json)
            .collect();
        summary.replayed += known.len();
        if !known.is_empty() {
            progress(
                &format!("{label}: {} trials already made", known.len()),
                None,
            );
        }
        // One session per program, kept for its next unit.
        if built.as_ref().is_none_or(|(n, _)| *n != p.name) {
            built = Some((p.name.clone(), program_session(spec, p)?));
        }
        let Some((_, session)) = built.as_ref() else {
            continue;
        };
        let mut tune = spec.tune.clone();
        tune.strategies = match u.phase {
            0 => Vec::new(),
            i => vec![spec.tune.strategies[i - 1].clone()],
        };
        // A search's unit needs only O0 of the baselines (a mixed goal is
        // relative to it); the baselines' unit records them all.
        tune.levels = u.phase == 0;
        let mut write_error = None;
        let mut made = 0;
        let tuning = {
            let (module, args) = session.program_parts(p)?;
            let check = match (&p.function, &p.exec) {
                (Some(f), _) => Some(crate::jit::Subject::Call {
                    function: f.to_string(),
                    args: args.clone(),
                }),
                (None, Some(program)) => Some(crate::jit::Subject::Exec(program.clone())),
                (None, None) => None,
            };
            let mut on_trial = |t: &Trial, st: &crate::tune::Status| {
                if t.phase != phase {
                    return;
                }
                let score = st.tuning.score(t);
                let mut r = t.to_json();
                if let Json::Object(o) = &mut r {
                    o.insert("program".into(), json!(p.name));
                    o.insert("goal".into(), json!(st.tuning.goal.describe()));
                    o.insert("score".into(), json!(score));
                    o.insert("passlab".into(), json!(env!("CARGO_PKG_VERSION")));
                    o.insert("llvm".into(), json!(llvm));
                    o.insert("host".into(), json!(host));
                }
                let mut line = r.to_string();
                line.push('\n');
                if let Err(e) = sink.write_all(line.as_bytes()) {
                    write_error.get_or_insert(e);
                }
                made += 1;
                progress(&label, Some((t, st.fraction)));
            };
            // A panic is a bug in passlab: it stops the shard with an error
            // naming the unit; the records written so far stay, and a run
            // again resumes from them.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crate::error::panic_point("sweep::unit");
                crate::tune::tune(module, check.as_ref(), &tune, &known, &mut on_trial)
            }))
            .unwrap_or_else(|panic| {
                Err(Error::Internal {
                    command: format!("the sweep's unit {label}"),
                    message: crate::error::panic_message(&panic),
                })
            })
        };
        if let Some(e) = write_error {
            return Err(Error::io(file.display(), e));
        }
        let tuning = tuning?;
        if tuning.interrupted {
            return Err(Error::Interrupted {
                pass: format!("the sweep, in {label}"),
            });
        }
        summary.made += made;
        let trials = tuning.trials.iter().filter(|t| t.phase == phase).count();
        let done = json!({"program": p.name, "phase": phase, "done": true, "trials": trials});
        sink.write_all(format!("{done}\n").as_bytes())
            .map_err(|e| Error::io(file.display(), e))?;
    }
    Ok(summary)
}

/// A session holding program `p` as its current module, with its buffers.
fn program_session(spec: &SweepSpec, p: &Program) -> Result<Session> {
    let mut s = match &p.origin {
        Origin::File(file) => {
            let mut s = Session::new();
            let flags = if spec.cflags.is_empty() {
                String::new()
            } else {
                format!(" cflags={}", spec.cflags.join(","))
            };
            s.execute(&format!(":load {}{flags}", file.display()))
                .map_err(|e| Error::Invalid(format!("{}: {e}", p.name)))?;
            s
        }
        Origin::Script { script, module } => {
            let mut s = script_session(script)?;
            s.execute(&format!(":use {module}"))?;
            s
        }
    };
    for b in &p.buffers {
        s.execute(&format!(":buffer {b}"))
            .map_err(|e| Error::Invalid(format!("{}: {e}", p.name)))?;
    }
    Ok(s)
}

impl Session {
    /// The current module and `p`'s arguments.
    fn program_parts(&self, p: &Program) -> Result<(&crate::Module, Vec<crate::jit::Arg<'_>>)> {
        let module = self.module()?;
        let args = super::commands::call_args_for(self, "sweep", &p.args)?;
        Ok((module, args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_dropped_from_the_file() {
        let dir = std::env::temp_dir().join(format!("passlab-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("shard-0-of-1.jsonl");
        std::fs::write(&f, "{\"a\":1}\n{\"b\":2}\n{\"c\":").unwrap();
        let r = read_records(&f).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
