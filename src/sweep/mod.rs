//! Sweeps: the search of `:tune` (or a fixed list of orderings) over a
//! corpus of programs, as a headless job split into shards that a cluster's
//! engine runs (Slurm job arrays, Kubernetes Indexed Jobs), and the merge
//! of the shards into one report.
//!
//! A sweep is a batch job ([`crate::batch`]: the spec file, the shards,
//! their records and their reading are that layer's). Every shard resolves
//! the spec ([`SweepSpec::load`]) the same way (the corpus sorted, each
//! program weighed by its size) and takes the units [`SweepSpec::assign`]
//! gives it. Each program is built in a fresh [`Session`] (`:load`, or the
//! `.plab` script that makes it, then its `:buffer`s), and searched with
//! [`crate::tune::tune`]. Every trial becomes one record of
//! `OUT/sweep-I-of-N.jsonl`, and a unit ends with a `done` record. A shard
//! run again replays the trials it finds into the search (which is
//! deterministic given the seed) and finishes the rest.
//!
//! [`merge`] reads the shards of one or more folders, checks that every
//! program is done and that no trial is missing or duplicated, and writes
//! the records in order and the report (text, HTML, SVG and PNG charts).
//!
//! Because programs are built in sessions, sweeps live in the layer above
//! the session's. `spec.rs` is the spec and the units, `merge.rs` the merge, this
//! file one shard; `passlab sweep` (repl/src/sweep.rs) is the command line,
//! and `deploy/` holds what a cluster runs.
#![forbid(unsafe_code)]

mod merge;
mod spec;

pub use merge::{merge, Merged};
pub use spec::{Origin, Program, SweepSpec, Unit};

use crate::folder::OwnedDir;
use crate::session::Session;
use crate::tune::Trial;
use crate::{Error, Result};
use serde_json::{json, Value as Json};
use spec::script_session;
use std::path::PathBuf;

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

/// Runs shard `index` of `count` of `spec`, writing into `out` (a folder
/// the sweep's job holds: [`SweepSpec::job`]'s `claim`; see the module
/// documentation); `progress` hears a line per program and trial.
pub fn run_shard(
    spec: &SweepSpec,
    out: &OwnedDir,
    (index, count): (usize, usize),
    progress: &mut ShardProgress,
) -> Result<ShardSummary> {
    let (mut sink, records) = spec.job().open_shard(out, (index, count))?;
    let file = sink.path().to_path_buf();
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
        let Some(known) = unit_records(&records, &p.name, &phase) else {
            summary.skipped += 1;
            progress(&format!("{label}: done already"), None);
            continue;
        };
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
        let tune = unit_search(spec, u.phase);
        let mut write_error = None;
        let mut made = 0;
        let tuning = {
            let (module, args) = session.program_parts(p)?;
            let check = subject_of(p, &args);
            let mut on_trial = |t: &Trial, st: &crate::tune::Status| {
                if t.phase != phase {
                    return;
                }
                let r = trial_record(t, st, &p.name, (&host, &llvm));
                if let Err(e) = sink.append(&r) {
                    write_error.get_or_insert(e);
                }
                made += 1;
                progress(&label, Some((t, st.fraction)));
            };
            tune_unit(&label, module, check.as_ref(), &tune, &known, &mut on_trial)
        };
        if let Some(e) = write_error {
            return Err(e);
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
        sink.append(&done)?;
    }
    Ok(summary)
}

/// What a unit of program `p` checks its trials by: its function called
/// with `args`, or it run as a program (`None`: nothing).
fn subject_of<'a>(p: &Program, args: &[crate::jit::Arg<'a>]) -> Option<crate::jit::Subject<'a>> {
    match (&p.function, &p.exec) {
        (Some(f), _) => Some(crate::jit::Subject::Call {
            function: f.to_string(),
            args: args.to_vec(),
        }),
        (None, Some(program)) => Some(crate::jit::Subject::Exec(program.clone())),
        (None, None) => None,
    }
}

/// Runs the search `tune` of the unit `label` on `module`. A panic is a
/// bug in passlab: it stops the shard with an error naming the unit; the
/// records written so far stay, and a run again resumes from them.
fn tune_unit(
    label: &str,
    module: &crate::Module,
    check: Option<&crate::jit::Subject>,
    tune: &crate::tune::TuneSpec,
    known: &[Trial],
    on_trial: &mut dyn FnMut(&Trial, &crate::tune::Status),
) -> Result<crate::tune::Tuning> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::error::panic_point("sweep::unit");
        crate::tune::tune(module, check, tune, known, on_trial)
    }))
    .unwrap_or_else(|panic| {
        Err(Error::Internal {
            command: format!("the sweep's unit {label}"),
            message: crate::error::panic_message(&panic),
        })
    })
}

/// The trials shard records hold of `program`'s `phase` already; `None`
/// when that unit is done.
fn unit_records(records: &[Json], program: &str, phase: &str) -> Option<Vec<Trial>> {
    let mine = |r: &&Json| {
        r.get("program").and_then(Json::as_str) == Some(program)
            && r.get("phase").and_then(Json::as_str) == Some(phase)
    };
    if records.iter().filter(mine).any(|r| r.get("done").is_some()) {
        return None;
    }
    Some(
        records
            .iter()
            .filter(mine)
            .filter_map(Trial::from_json)
            .collect(),
    )
}

/// The search of unit `phase`: the baselines (0), or one strategy.
fn unit_search(spec: &SweepSpec, phase: usize) -> crate::tune::TuneSpec {
    let mut tune = spec.tune.clone();
    tune.strategies = match phase {
        0 => Vec::new(),
        i => vec![spec.tune.strategies[i - 1].clone()],
    };
    // A search's unit needs only O0 of the baselines (a mixed goal is
    // relative to it); the baselines' unit records them all.
    tune.levels = phase == 0;
    tune
}

/// A trial's record: the trial, its program, goal and score, and what
/// made it (passlab's version, LLVM's, the host).
fn trial_record(
    t: &Trial,
    st: &crate::tune::Status,
    program: &str,
    (host, llvm): (&str, &str),
) -> Json {
    let score = st.tuning.score(t);
    let mut r = t.to_json();
    if let Json::Object(o) = &mut r {
        o.insert("program".into(), json!(program));
        o.insert("goal".into(), json!(st.tuning.goal.describe()));
        o.insert("score".into(), json!(score));
        o.insert("passlab".into(), json!(env!("CARGO_PKG_VERSION")));
        o.insert("llvm".into(), json!(llvm));
        o.insert("host".into(), json!(host));
    }
    r
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
        let args = crate::session::call_args_for(self, "sweep", &p.args)?;
        Ok((module, args))
    }
}
