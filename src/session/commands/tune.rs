//! :tune — searching pass orderings for the current module (see
//! `crate::tune`), applying the best and saving it as a pass.

use super::jit::{subject_spec, time_spec, SubjectSpec};
use super::passes::{define_pass, run_recording};
use super::*;
use crate::tune::{Budget, Goal, Strategy, TuneSpec};

/// The line `:export` writes for a search `t` that was interrupted, typed
/// as `line`: what ran, not the whole search again. With one strategy,
/// its budget becomes the trials done (`trials=37`, `seconds=` dropped);
/// either way a comment says it was interrupted and how it was typed.
pub(in crate::session) fn interrupted_line(line: &str, t: &crate::tune::Tuning) -> String {
    let done = |phase: &str| t.trials.iter().filter(|x| x.phase == phase).count();
    let strategies: Vec<&String> = t
        .phases
        .iter()
        .filter(|p| *p != crate::tune::BASELINE)
        .collect();
    let searched: usize = strategies.iter().map(|p| done(p)).sum();
    let (head, tail) = match line.find(" -- ") {
        Some(i) => (&line[..i], &line[i..]),
        None => (line, ""),
    };
    let note = format!(
        "# interrupted after {searched} trials; typed: {}",
        line.trim()
    );
    match strategies.as_slice() {
        [only] if done(only) > 0 => {
            let mut words: Vec<&str> = head
                .split_whitespace()
                .filter(|w| !w.starts_with("trials=") && !w.starts_with("seconds="))
                .collect();
            let trials = format!("trials={}", done(only));
            words.push(&trials);
            format!("{}{tail}   {note}", words.join(" "))
        }
        _ => format!("{}   {note} (replaying runs the whole search)", line.trim()),
    }
}

/// What `:help tune` adds: the settings and the default pool.
pub(super) fn details() -> String {
    format!(
        "  FN ARGS: the function checked against the input module (and timed for a runtime goal); \
         exec ARG... [stdin=…]: the module's main run as a program, its exit status and output checked; \
         without them, nothing is checked\n  \
         goal=instructions|size|runtime|W*METRIC+...   (default instructions; size: object code bytes; runtime: median time per call)\n  \
         strategy=random,greedy,hill,local   (several run one after another, each with the whole budget; local: from -Oz's own pipeline as 43 actions, then 6 openings (-Oz with the IR outliner run before its inliner, at -Oz's thresholds, at lower ones, or without that inliner), then one or two moves around the best, kept when better, or as good with no more passes and no more inliner units or outliners; with neither strategy= nor pool=, goal=instructions searches locally over pool=size, the search for IR size; otherwise the default is random over the default pool)\n  \
         strategy=coreset   (the orderings learned once over a training corpus, tried in turn, the best kept; default seconds=1; coreset=FILE: a coreset made with `passlab coreset`, default the one passlab ships)   warm=coreset|FILE   (local search opens with a coreset's orderings in place of -Oz's openings)\n  \
         trials=N | seconds=S   (per strategy; default trials=100; when the seconds are up, a trial still running is stopped and not counted)   seed=N (default 0)   length=MIN..MAX (default 10..40)\n  \
         pool=P,...   (size: the pool for code size, -Oz's 43 actions, the IR outliner, -Oz's simplification without inlining, its inliner at lower thresholds, the SLP and load-store vectorizers and more; named among passes or alone)   top=N rows (default 5)   number= repeat= min_repeat_ms= (runtime goal)   timeout=S per trial\n  \
         :tune apply [N]: run the Nth best ordering on the current module (:undo puts it back)\n  \
         :tune save NAME [N]: define it as a pass (as :pass NAME = ORDERING)\n  \
         the default pool ({} passes): {}",
        crate::tune::DEFAULT_POOL.len(),
        crate::tune::DEFAULT_POOL.join(" ")
    )
}

/// A `pool=` setting: passes and named pools (`size`), the pools replaced
/// by their passes; a name that is neither is refused with the nearest
/// passes or pools.
pub(super) fn pool(command: &str, v: &str) -> Result<Vec<String>> {
    let names = comma_list(v);
    for n in &names {
        if crate::tune::POOLS.iter().any(|(p, _)| p == n) {
            continue;
        }
        if let Err(e) = crate::pipeline::parse(n) {
            let pools = crate::nearest_names(n, crate::tune::POOLS.iter().map(|(p, _)| *p));
            if pools.is_empty() {
                return Err(e);
            }
            return Err(Error::Command {
                command: command.into(),
                message: format!("'{n}' is neither a pass nor a pool of passes"),
                suggestions: pools,
            });
        }
    }
    Ok(crate::tune::expand_pool(&names))
}

fn bad_setting(k: &str) -> Error {
    Error::Command {
        command: "tune".into(),
        message: format!("unknown setting '{k}'"),
        suggestions: crate::nearest_names(k, setting_keys("tune")),
    }
}

/// The most rows the table of the best orderings shows.
pub(super) const MAX_TOP: usize = 1000;

/// The search a `:tune` line asks for.
fn spec_from(a: &Args) -> Result<(TuneSpec, usize)> {
    let mut spec = TuneSpec::default();
    let mut top = 5;
    let mut time = Vec::new();
    for (k, v) in &a.settings {
        match k.as_str() {
            "goal" => spec.goal = Goal::parse(v)?,
            // Checked against their kinds (the command table) before.
            "strategy" => {
                spec.strategies = comma_list(v)
                    .iter()
                    .map(|name| {
                        Strategy::parse(name)
                            .or_else(|| crate::tune::coreset::placeholder(name))
                            .ok_or_else(|| Error::Command {
                                command: "tune".into(),
                                message: format!(
                                "unknown strategy '{name}' (random, greedy, hill, local, coreset)"
                            ),
                                suggestions: crate::nearest_names(
                                    name,
                                    Strategy::NAMES.iter().copied(),
                                ),
                            })
                    })
                    .collect::<Result<_>>()?;
                if spec.strategies.is_empty() {
                    return Err(err(
                        "tune",
                        "strategy= names none (random, greedy, hill, local)",
                    ));
                }
            }
            "trials" => spec.budget = Budget::Trials(whole("tune", k, v)?),
            "seconds" => spec.budget = Budget::Seconds(seconds("tune", k, v)?.as_secs_f64()),
            "seed" => spec.seed = whole("tune", k, v)?,
            "pool" => spec.pool = pool("tune", v)?,
            "length" => {
                let (lo, hi) = range("tune", k, v)?;
                // At most 1000 (the kind's bound).
                spec.lengths = (lo as usize, hi as usize);
            }
            "top" => top = whole("tune", k, v)?,
            "timeout" => spec.trial_timeout = seconds("tune", k, v)?,
            "number" | "repeat" | "min_repeat_ms" => time.push((k.clone(), v.clone())),
            "coreset" | "warm" => {}
            other => return Err(bad_setting(other)),
        }
    }
    let given = |name: &str| a.settings.iter().any(|(k, _)| k == name);
    spec.goal_defaults(given("strategy"), given("pool"));
    let setting = |name: &str| {
        a.settings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    crate::tune::coreset::settle(
        &mut spec,
        setting("coreset"),
        setting("warm"),
        given("trials") || given("seconds"),
    )?;
    if !time.is_empty() {
        let t = Args {
            command: "tune".into(),
            words: vec![],
            settings: time,
            rest: String::new(),
        };
        spec.time = time_spec("tune", &t)?;
    }
    spec.validate().map_err(|e| match e {
        Error::Setting { scope, message } if scope == "tune" => err("tune", message),
        other => other,
    })?;
    Ok((spec, top))
}

pub(super) fn tune(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    match a.words.first().map(String::as_str) {
        Some("apply") => return apply(s, a),
        Some("save") => return save(s, a),
        _ => {}
    }
    let (what, settings) = subject_spec("tune", &a.rest)?;
    let (spec, top) = spec_from(&Args {
        settings,
        ..a.clone()
    })?;
    let name = current(s, "tune")?;
    let result = s.with_progress(|s, progress| {
        let subject = what.resolve(s, "tune")?;
        let m = s.module_named("tune", &name)?;
        if let SubjectSpec::Call(f, _) = &what {
            if !m.defined_functions().contains(f) {
                return Err(Error::Command {
                    command: "tune".into(),
                    message: format!("no function '{f}' in module '{name}'"),
                    suggestions: crate::nearest_names(
                        f,
                        m.defined_functions().iter().map(String::as_str),
                    ),
                });
            }
        }
        crate::tune::tune_showing(m, subject.as_ref(), &spec, progress)
    });
    let tuning = result?;
    let t = tuning.table(top);
    s.last_tune = Some(Rc::new(tuning));
    table(&t)
}

/// The ordering `:tune apply|save … [N]` means: the Nth best (from 1).
fn nth_best(s: &Session, n: Option<&String>) -> Result<String> {
    let tuning = s
        .last_tune
        .as_ref()
        .ok_or_else(|| err("tune", "no :tune has run yet"))?;
    let n: usize = match n {
        Some(n) => n
            .parse()
            .map_err(|_| err("tune", format!("N expects a rank from 1, got '{n}'")))?,
        None => 1,
    };
    let best = tuning.best(n.max(1));
    match best.get(n.max(1) - 1) {
        Some(t) => Ok(t.pipeline()),
        None => Err(err(
            "tune",
            format!(
                "the last search found {} valid ordering{}, not {n}",
                best.len(),
                if best.len() == 1 { "" } else { "s" }
            ),
        )),
    }
}

fn apply(s: &mut Session, a: &Args) -> Result<Output> {
    if a.words.len() > 2 || !a.settings.is_empty() {
        return Err(err(
            "tune",
            "apply expects [N], the rank of the ordering (1: the best)",
        ));
    }
    let pipeline = nth_best(s, a.words.get(1))?;
    // The search ran each ordering on a copy of the module (a copy's use
    // lists are in another order, which some passes notice): so does this.
    let name = current(s, "tune")?;
    let copy = s.module_named("tune", &name)?.copy();
    s.put_module(name, copy);
    run_recording(s, &pipeline, "tune", None)
}

fn save(s: &mut Session, a: &Args) -> Result<Output> {
    let (Some(name), true) = (a.words.get(1), a.words.len() <= 3 && a.settings.is_empty()) else {
        return Err(err("tune", "save expects NAME [N]: the name of the new pass, and the rank of the ordering (1: the best)"));
    };
    let pipeline = nth_best(s, a.words.get(2))?;
    define_pass(
        s,
        &Args::parse(&format!(":pass {name} = {pipeline}"))?,
        None,
    )
}
