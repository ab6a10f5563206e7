//! The child that evaluates orderings, and the session's side of it (see
//! the module documentation of `tune`).
//!
//! The child is forked from the session's state and writes each trial as
//! one JSON line. The session steps its own copy of the searches with the
//! same scores. If the child dies (a crashing pass), only its trial is
//! lost: the trial is recorded as failed, and a new child, forked from the
//! session's state, goes on. Trials already made (a resuming sweep) are
//! replayed into the searches at the same points in both processes. Fork
//! and pipes come from `crate::child`.

use super::*;
use crate::child;

pub(super) enum Ended {
    Finished,
    Interrupted,
    /// The phase's budget in seconds ended with a trial still running: the
    /// child was stopped and that trial is not counted.
    Spent,
    /// The child died in a trial: how, and what it printed last.
    Died(String),
    /// The child caught a crash in its last trial (reported as failed) and
    /// ended: a new one goes on.
    Restart,
}

/// Writes to the session, or ends the child if the session is gone.
fn write_all(fd: i32, bytes: &[u8]) {
    if !child::write_all(fd, bytes) {
        // The child has nothing to clean up.
        child::exit_now(74);
    }
}

fn line(fd: i32, v: &Json) {
    let mut text = v.to_string();
    text.push('\n');
    write_all(fd, text.as_bytes());
}

/// In the child: evaluate what the driver proposes, one line each.
fn serve(
    d: &mut Driver,
    module: &Module,
    check: Option<&Subject>,
    spec: &TuneSpec,
    context: &PassContext,
    out: i32,
) -> ! {
    d.follow(false);
    // A pass that crashes is caught where it ran, so that its trial names
    // it and the function; the child then ends (what the crash left behind
    // is not trusted with another trial) and a new one goes on.
    crate::llvm::catch_crashes_again();
    let crashes = crate::llvm::crashes_caught();
    let check = check.map(|subject| Check { subject });
    let mut ev = match Evaluator::new(
        module,
        check,
        spec.goal.clone(),
        spec.time,
        context.clone(),
        true,
    ) {
        Ok(mut ev) => {
            ev.features = spec.features;
            ev
        }
        Err(e) => {
            line(out, &json!({ "error": e.to_string() }));
            // The child has nothing to clean up.
            child::exit_now(0)
        }
    };
    line(out, &json!({ "reference": ev.reference }));
    loop {
        if let Err(e) = d.replay() {
            line(out, &json!({ "error": e.to_string() }));
            child::exit_now(0)
        }
        let Some((name, ordering)) = d.next() else {
            break;
        };
        let search = &d.searches[d.phase].1;
        let index = search.trials();
        ev.share_prefixes = spec.reuse_prefixes
            && matches!(
                search.strategy(),
                Strategy::Local | Strategy::Hill | Strategy::Greedy
            );
        let t = ev.evaluate(&name, index, &ordering);
        line(out, &t.to_json());
        if crate::llvm::crashes_caught() != crashes {
            line(out, &json!({ "restart": true }));
            child::exit_now(0)
        }
        d.tell(t);
    }
    line(out, &json!({ "end": true }));
    child::exit_now(0)
}

/// Forks a child that continues the search from `d`'s state, and
/// follows it until it ends, dies, times out or is interrupted.
pub(super) fn run(
    d: &mut Driver,
    module: &Module,
    check: Option<&Subject>,
    spec: &TuneSpec,
    context: &PassContext,
    on_trial: &mut dyn FnMut(&Trial, &Status),
) -> Result<Ended> {
    let ended = follow_child(d, module, check, spec, context, on_trial);
    d.follow(false);
    ended
}

fn follow_child(
    d: &mut Driver,
    module: &Module,
    check: Option<&Subject>,
    spec: &TuneSpec,
    context: &PassContext,
    on_trial: &mut dyn FnMut(&Trial, &Status),
) -> Result<Ended> {
    let c = child::spawn(|out| serve(d, module, check, spec, context, out))
        .map_err(|e| Error::Invalid(format!("tune: {e}")))?;
    // The child decides when time is up; this side follows its trials.
    d.follow(true);
    let (said_fd, res_fd) = (c.said, c.result);
    let mut said: Vec<u8> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut last_line = Instant::now();
    let mut status = 0;
    let drain = child::drain;
    let kill = |status: &mut i32| *status = c.kill();
    let mut heard = Heard::default();
    let mut exited = false;
    loop {
        c.poll(20);
        drain(said_fd, &mut said, &mut buf);
        if said.len() > 8192 {
            said.drain(..said.len() - 4096);
        }
        let eof = drain(res_fd, &mut pending, &mut buf);
        while let Some(nl) = pending.iter().position(|&b| b == b'\n') {
            let text: Vec<u8> = pending.drain(..=nl).collect();
            last_line = Instant::now();
            let Ok(v) = serde_json::from_slice::<Json>(&text) else {
                continue;
            };
            if heard.line(d, &v, on_trial) {
                said.clear();
            }
        }
        if heard.failure.is_some() || heard.outcome.is_some() {
            break;
        }
        let ended = if eof { None } else { c.try_wait() };
        if let Some(s) = ended {
            status = s;
            exited = true;
            continue;
        }
        if eof {
            if !exited {
                status = c.wait();
                exited = true;
            }
            break;
        }
        if let Some(why) = cut_short(d, spec, last_line) {
            kill(&mut status);
            exited = true;
            heard.outcome = Some(why);
            break;
        }
    }
    if !exited {
        status = c.wait();
    }
    c.close();
    if let Some(e) = heard.failure {
        return Err(e);
    }
    if let Some(o) = heard.outcome {
        return Ok(o);
    }
    died(status, &said, heard.started)
}

/// Why the child, still running, is to be killed, if it is: an
/// interruption, the phase's time spent, a trial over its time limit (its
/// last line heard at `last_line`).
fn cut_short(d: &Driver, spec: &TuneSpec, last_line: Instant) -> Option<Ended> {
    if crate::interrupt::requested() {
        return Some(Ended::Interrupted);
    }
    if d.deadline().is_some_and(|t| Instant::now() >= t) {
        return Some(Ended::Spent);
    }
    if last_line.elapsed() > spec.trial_timeout {
        return Some(Ended::Died(format!(
            "took longer than {} s (the trial time limit)",
            spec.trial_timeout.as_secs_f64()
        )));
    }
    None
}

/// What the child said so far: whether it started (checked the input
/// module's result), how it ended, what failed.
#[derive(Default)]
struct Heard {
    started: bool,
    outcome: Option<Ended>,
    failure: Option<Error>,
}

impl Heard {
    /// One line from the child: an error, the input module's result, the
    /// end, a restart, or a trial (told to the driver, replayed there,
    /// `on_trial` hearing of it; true for a trial).
    fn line(
        &mut self,
        d: &mut Driver,
        v: &Json,
        on_trial: &mut dyn FnMut(&Trial, &Status),
    ) -> bool {
        if let Some(e) = v.get("error").and_then(Json::as_str) {
            self.failure = Some(Error::Invalid(format!("tune: {e}")));
        } else if let Some(r) = v.get("reference") {
            self.started = true;
            d.tuning.reference = r.as_str().map(str::to_string);
        } else if v.get("end").is_some() {
            self.outcome = Some(Ended::Finished);
        } else if v.get("restart").is_some() {
            self.outcome = Some(Ended::Restart);
        } else if let Some(t) = Trial::from_json(v) {
            match d.next() {
                Some((phase, o)) if phase == t.phase && o == t.ordering => {
                    d.tell(t.clone());
                    let status = d.status();
                    on_trial(&t, &status);
                    if let Err(e) = d.replay() {
                        self.failure = Some(e);
                    }
                }
                _ => {
                    self.failure = Some(Error::Invalid(format!(
                        "tune: the evaluating process proposed {} #{} ({}), which this search does not",
                        t.phase,
                        t.index,
                        t.pipeline()
                    )));
                }
            }
            return true;
        }
        false
    }
}

/// The child ended (`status`) without saying how: interrupted, or died
/// (an error if it had not started), with the end of what it printed.
fn died(status: i32, said: &[u8], started: bool) -> Result<Ended> {
    if crate::interrupt::requested()
        || (libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGINT)
    {
        return Ok(Ended::Interrupted);
    }
    let how = child::how_it_ended(status);
    let said = String::from_utf8_lossy(said);
    let tail: Vec<&str> = said.trim().lines().rev().take(3).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    let why = if tail.is_empty() {
        format!("the process evaluating it {how}")
    } else {
        format!("the process evaluating it {how}: {}", tail.join(" / "))
    };
    if !started {
        return Err(Error::Invalid(format!(
            "tune: checking the input module's result failed: {why}"
        )));
    }
    Ok(Ended::Died(why))
}
