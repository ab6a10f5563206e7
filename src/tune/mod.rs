//! Searching pass orderings for a goal, as CompilerGym's LLVM environment
//! frames it: an ordering is a sequence of passes from a pool, each run on
//! its own after the other; a goal is the module's instruction count, the
//! object file's code size, the function's runtime, or a weighted mix; a
//! strategy proposes orderings ([`Strategy`]: random search, greedy,
//! hill climbing, or a fixed list). Every ordering's function result is
//! checked against the input module's: one that differs is a possible
//! miscompile and never the best.
//!
//! [`tune`] evaluates the orderings in a forked child process, which
//! streams each trial back as a line of JSON: an LLVM pass that crashes on
//! some ordering ends only that child; the session records the trial as
//! failed and forks a new child, which continues the search where it
//! stopped (it inherits the search's state). An interrupt or a time limit
//! kills the child; the trials so far are kept. Both the session and the
//! child step the same [`Search`] with the same scores, so the child's
//! orderings are the session's.
//!
//! The same function runs the search in a `:tune` cell and in a shard of a
//! sweep (`passlab sweep`), which passes the trials it already wrote as
//! `known`: they are replayed into the search without being evaluated.
//!
//! The baselines are O0, O2, O3 and Oz; `search.rs` holds the strategies,
//! `evaluate.rs` the goal, the trial and the evaluator, `child.rs` the
//! evaluating child and the session's side of it (fork and pipes from
//! `crate::child`). [`Tuning`] makes the report: a table (one row per goal
//! value, gains over the levels, miscompiles, failures) and the
//! convergence chart.

#![forbid(unsafe_code)]

mod child;
pub mod coreset;
mod evaluate;
mod pools;
mod search;

pub use crate::rng::Rng;
pub use evaluate::{Goal, Metric, Trial, Verdict};
pub use pools::{
    expand_pool, named_pool, openings, size_pool, DEFAULT_POOL, OZ_INLINER_LOW_THRESHOLDS,
    OZ_ORDERING, OZ_SIMPLIFY_WITHOUT_INLINER, POOLS,
};
pub use search::{Budget, Search, Strategy};

use crate::chart::Chart;
use crate::jit::{Subject, TimeSpec};
use crate::module::Module;
use crate::table::Table;
use crate::{Error, PassContext, Result};
use evaluate::{Check, Evaluator};
use serde_json::{json, Value as Json};
use std::time::{Duration, Instant};

/// The most trials one search may be given.
pub const MAX_TRIALS: usize = 10_000_000;
/// The longest search by time, in seconds (a week).
pub const MAX_SECONDS: u64 = 604_800;
/// The longest one trial may take, in seconds (a day).
pub const MAX_TIMEOUT_SECONDS: u64 = 86_400;

/// The leaderboard's corpus (the guide's "Beating -Oz", `docs/src/leaderboard.md`; `bench tune
/// leaderboard`; `passlab.gym`'s `benchmark="samples"`): real C no one here
/// wrote, as paths under passlab's sample inputs (`target/inputs/`, linked
/// by the set-up): zlib's files but the three that need a configured build
/// (gzlib.c, gzread.c, gzwrite.c), and Lua's core files that have more than
/// 100 instructions at -O1 (not lctype.c and lopcodes.c).
pub const SAMPLE_CORPUS: &[&str] = &[
    "zlib/adler32.c",
    "zlib/compress.c",
    "zlib/crc32.c",
    "zlib/deflate.c",
    "zlib/infback.c",
    "zlib/inffast.c",
    "zlib/inflate.c",
    "zlib/inftrees.c",
    "zlib/trees.c",
    "zlib/uncompr.c",
    "lua/lapi.c",
    "lua/lcode.c",
    "lua/ldebug.c",
    "lua/ldo.c",
    "lua/ldump.c",
    "lua/lfunc.c",
    "lua/lgc.c",
    "lua/llex.c",
    "lua/lmem.c",
    "lua/lobject.c",
    "lua/lparser.c",
    "lua/lstate.c",
    "lua/lstring.c",
    "lua/ltable.c",
    "lua/ltm.c",
    "lua/lundump.c",
    "lua/lvm.c",
    "lua/lzio.c",
];

/// The leaderboard's held-out corpus, as written in `src/tune/held_out.txt`
/// (which says how it was chosen): Lua's library files and cmark-gfm's
/// units, paths under passlab's sample inputs, fixed before any tuning
/// after it and never tuned on.
pub const HELD_OUT_LIST: &str = include_str!("held_out.txt");

/// The held-out corpus's programs ([`HELD_OUT_LIST`] without its comments).
pub fn held_out_corpus() -> Vec<&'static str> {
    HELD_OUT_LIST
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The orderings every search is compared with, and their labels.
pub const BASELINES: &[(&str, &str)] = &[
    ("O0", "O0"),
    ("O2", "O2"),
    ("O3", "O3"),
    ("Oz", "default<Oz>"),
];

/// The phase name of the baselines.
pub const BASELINE: &str = "baseline";

/// What to search (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSpec {
    pub pool: Vec<String>,
    pub strategies: Vec<Strategy>,
    /// Per strategy.
    pub budget: Budget,
    pub goal: Goal,
    pub seed: u64,
    /// Lengths of random orderings (and the bounds of hill climbing and
    /// greedy search).
    pub lengths: (usize, usize),
    /// How a runtime goal times the function.
    pub time: TimeSpec,
    /// A trial that takes longer is killed and counted as failed.
    pub trial_timeout: Duration,
    /// Whether O2, O3 and Oz are tried too (O0 always is: a mixed goal is
    /// relative to it).
    pub levels: bool,
    /// Whether each trial records CompilerGym's InstCount and Autophase of
    /// the module it made (the O0 baseline's are the input's).
    pub features: bool,
    /// Whether trials of strategies that change the best ordering in one
    /// place (local, hill, greedy) resume from modules kept after its
    /// prefixes, for an instruction-count goal (see `evaluate.rs`); off,
    /// every trial runs from the input.
    pub reuse_prefixes: bool,
    /// Local search's openings in place of -Oz's (a coreset's orderings,
    /// `warm=coreset`: see [`coreset`]); those with an action outside the
    /// pool, or equal to -Oz's pipeline, are left out. Empty: -Oz's.
    pub warm: Vec<Vec<String>>,
}

impl Default for TuneSpec {
    fn default() -> TuneSpec {
        TuneSpec {
            pool: DEFAULT_POOL.iter().map(|s| s.to_string()).collect(),
            strategies: vec![Strategy::Random],
            budget: Budget::Trials(100),
            goal: Goal::single(Metric::Instructions),
            seed: 0,
            lengths: (10, 40),
            time: TimeSpec {
                number: 10,
                repeat: 3,
                min_repeat_ms: 1,
            },
            trial_timeout: Duration::from_secs(60),
            levels: true,
            features: false,
            reuse_prefixes: true,
            warm: Vec::new(),
        }
    }
}

impl TuneSpec {
    /// The strategy and pool a goal gets when neither is named (`:tune`
    /// and sweep specs alike): for an instruction count, local search from
    /// -Oz's own pipeline over the `size` pool, what the guide's
    /// leaderboard runs; otherwise random orderings from the default pool.
    /// (For object bytes, `goal=size`, local search from -Oz found nothing
    /// below -Oz in lesson 8's 20 trials on adler32.c where random
    /// orderings did: it stays random.)
    pub fn goal_defaults(&mut self, strategy_given: bool, pool_given: bool) {
        if self.goal.metric() != Some(Metric::Instructions) {
            return;
        }
        if !strategy_given && !pool_given {
            self.strategies = vec![Strategy::Local];
            self.pool = size_pool().iter().map(|s| s.to_string()).collect();
        }
    }

    /// The phases a search runs: the baselines, then each strategy with a
    /// seed of its own (derived from the seed and the strategy, so a
    /// strategy tries the same orderings alone or beside others).
    pub fn phases(&self) -> Vec<(String, Search)> {
        let baselines = BASELINES
            .iter()
            .take(if self.levels { BASELINES.len() } else { 1 })
            .map(|(_, p)| vec![p.to_string()])
            .collect();
        let mut phases = vec![(
            BASELINE.to_string(),
            Search::new(
                Strategy::List(baselines),
                self.pool.clone(),
                self.lengths,
                self.budget,
                0,
            ),
        )];
        for s in &self.strategies {
            let salt = match s {
                Strategy::Random => 1,
                Strategy::Greedy => 2,
                Strategy::Hill => 3,
                Strategy::Local => 5,
                Strategy::List(_) => 4,
            };
            let seed = self.seed ^ (salt as u64).wrapping_mul(0xd1b5_4a32_d192_ed03);
            let mut search = Search::new(
                s.clone(),
                self.pool.clone(),
                self.lengths,
                self.budget,
                seed,
            );
            if *s == Strategy::Local && !self.warm.is_empty() {
                search = search.with_openings(&self.warm);
            }
            if matches!(s, Strategy::List(_)) {
                search = search.timed();
            }
            phases.push((s.name().to_string(), search));
        }
        phases
    }

    /// Checks the pool's names against the registry and the lengths.
    pub fn validate(&self) -> Result<()> {
        if self.pool.is_empty() {
            return Err(Error::setting("tune", "the pool of passes is empty"));
        }
        let rust: Vec<String> = crate::registry::passes()
            .into_iter()
            .filter(|e| matches!(e.origin, crate::registry::Origin::UserRust(_)))
            .map(|e| e.name)
            .collect();
        for p in &self.pool {
            crate::pipeline::parse(p)?;
            if rust.iter().any(|r| r == p) {
                // Its code runs in evcxr's process, over one connection the
                // evaluating child would share with the session.
                return Err(Error::setting("tune", format!(
                    "'{p}' is written in Rust (:register): such passes cannot be in a pool yet; use LLVM's passes, plugins' or :pass sequentials of them"
                )));
            }
        }
        match self.budget {
            Budget::Trials(n) if !(1..=MAX_TRIALS).contains(&n) => {
                return Err(Error::setting(
                    "tune",
                    format!("trials expects a whole number from 1 to {MAX_TRIALS}, got {n}"),
                ))
            }
            Budget::Seconds(s) if !(s > 0.0 && s <= MAX_SECONDS as f64) => {
                let s = short_number(s);
                let message = format!(
                    "seconds expects a number above 0 and at most {MAX_SECONDS} (a week), got {s}"
                );
                return Err(Error::setting("tune", message));
            }
            _ => {}
        }
        let timeout = self.trial_timeout.as_secs_f64();
        if !(timeout > 0.0 && timeout <= MAX_TIMEOUT_SECONDS as f64) {
            return Err(Error::setting("tune", format!(
                "a trial's timeout must be above 0 and at most {MAX_TIMEOUT_SECONDS} seconds (a day), got {}",
                short_number(timeout)
            )));
        }
        let (lo, hi) = self.lengths;
        if lo > hi || hi == 0 || hi > 1000 {
            return Err(Error::setting(
                "tune",
                format!("lengths {lo}..{hi} are not a range of 1 to 1000 passes"),
            ));
        }
        Ok(())
    }
}

/// A search's trials and what they are compared with.
#[derive(Clone, Debug)]
pub struct Tuning {
    /// The function checked (and timed), if any.
    pub function: Option<String>,
    /// The program searched, when there are several (a sweep's report).
    pub program: Option<String>,
    pub goal: Goal,
    pub seed: u64,
    /// The input module's result.
    pub reference: Option<String>,
    /// Every trial, baselines first, in the order they ran.
    pub trials: Vec<Trial>,
    /// The phases in order (`baseline`, then the strategies).
    pub phases: Vec<String>,
    pub interrupted: bool,
    pub elapsed: Duration,
}

impl Tuning {
    /// What was searched, for titles: the program and the function
    /// checked, either, or `module`.
    fn label(&self) -> String {
        match (&self.program, &self.function) {
            (Some(p), Some(f)) => format!("{p} ({f})"),
            (Some(p), None) => p.clone(),
            (None, Some(f)) => f.clone(),
            (None, None) => "module".into(),
        }
    }

    fn o0(&self) -> Option<&Trial> {
        self.trials
            .iter()
            .find(|t| t.phase == BASELINE && t.index == 0)
    }

    /// The score of a trial (lower is better), `None` when it is not valid.
    pub fn score(&self, t: &Trial) -> Option<f64> {
        self.goal.score(t, self.o0())
    }

    /// The baseline labelled `label` (`O0`, `O2`, `O3`, `Oz`).
    pub fn baseline(&self, label: &str) -> Option<&Trial> {
        let i = BASELINES.iter().position(|(l, _)| *l == label)?;
        self.trials
            .iter()
            .find(|t| t.phase == BASELINE && t.index == i)
    }

    /// The searched trials (not the baselines).
    pub fn searched(&self) -> impl Iterator<Item = &Trial> {
        self.trials.iter().filter(|t| t.phase != BASELINE)
    }

    /// The best valid orderings, best first, one per goal value (among
    /// orderings that score the same, the shortest, then the earliest):
    /// the table shows how the values spread, not many ties.
    pub fn best(&self, n: usize) -> Vec<&Trial> {
        let mut valid: Vec<(f64, usize, usize, &Trial)> = self
            .searched()
            .enumerate()
            .filter_map(|(i, t)| self.score(t).map(|s| (s, t.ordering.len(), i, t)))
            .collect();
        valid.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut seen = std::collections::HashSet::new();
        valid
            .into_iter()
            .map(|(s, _, i, t)| (s, i, t))
            .filter(|(s, _, _)| seen.insert(s.to_bits()))
            .take(n)
            .map(|(_, _, t)| t)
            .collect()
    }

    /// The trials that changed the function's result.
    pub fn miscompiles(&self) -> impl Iterator<Item = &Trial> {
        self.searched()
            .filter(|t| matches!(t.verdict, Verdict::Different(_)))
    }

    pub fn failures(&self) -> impl Iterator<Item = &Trial> {
        self.searched()
            .filter(|t| matches!(t.verdict, Verdict::Failed(_)))
    }

    /// The goal's value as a table cell (a metric's value, or a mix's score).
    fn value(&self, t: &Trial) -> String {
        match (self.goal.metric(), self.score(t)) {
            (Some(m), _) => m.of(t).map_or("-".into(), |v| m.show(v)),
            (None, Some(s)) => format!("{s:.4}"),
            (None, None) => "-".into(),
        }
    }

    /// The best orderings with their goal values against O0, O2, O3 and Oz
    /// (each level's value divided by the ordering's: above 1 is better),
    /// then the levels themselves.
    pub fn table(&self, top: usize) -> Table {
        let what = self.label();
        let searched = self.searched().count();
        let mut t = Table::new(
            &format!(
                "{what}: best orderings for {} ({searched} trials{}, seed {})",
                self.goal.describe(),
                if self.interrupted {
                    ", interrupted"
                } else {
                    ""
                },
                self.seed
            ),
            &["ordering", "found by", "passes>", "instructions>"],
        );
        let shown = self.shown_columns();
        self.push_columns(&mut t, &shown);
        let best = self.best(top);
        for tr in &best {
            t.push(self.table_row(
                &shown,
                tr,
                abbreviate(&tr.pipeline(), 48),
                format!("{} #{}", tr.phase, tr.index),
            ));
        }
        for (l, _) in BASELINES {
            if let Some(b) = self.baseline(l) {
                let mut r = self.table_row(&shown, b, (*l).to_string(), "baseline".into());
                r[2] = "-".into();
                t.push(r);
            }
        }
        self.push_notes(&mut t, best.first().copied());
        t
    }

    /// Which of the table's optional columns it has.
    fn shown_columns(&self) -> ShownColumns {
        ShownColumns {
            extra: [Metric::Size, Metric::Runtime]
                .into_iter()
                .filter(|m| self.goal.needs(*m))
                .collect(),
            // The checked function's machine code, measured for free when
            // the JIT ran it.
            bytes: self.trials.iter().any(|t| t.code_bytes.is_some()),
        }
    }

    /// The table's columns after the first four: the goal's metrics, code
    /// bytes, a mix's score, each baseline's ratio and the result.
    fn push_columns(&self, t: &mut Table, shown: &ShownColumns) {
        for m in &shown.extra {
            t.columns
                .push((m.heading().to_string(), crate::table::Align::Right));
        }
        if shown.bytes {
            t.columns
                .push(("code bytes".to_string(), crate::table::Align::Right));
        }
        if self.goal.metric().is_none() {
            t.columns
                .push(("score>".to_string(), crate::table::Align::Right));
        }
        for (l, _) in BASELINES {
            t.columns
                .push((format!("vs {l}"), crate::table::Align::Right));
        }
        t.columns.push(("result".into(), crate::table::Align::Left));
    }

    /// Trial `tr`'s row of the table, headed `label` and `by`.
    fn table_row(
        &self,
        shown: &ShownColumns,
        tr: &Trial,
        label: String,
        by: String,
    ) -> Vec<String> {
        let mut r = vec![
            label,
            by,
            tr.ordering.len().to_string(),
            tr.instructions.map_or("-".into(), |v| v.to_string()),
        ];
        for m in &shown.extra {
            r.push(m.of(tr).map_or("-".into(), |v| m.show(v)));
        }
        if shown.bytes {
            r.push(tr.code_bytes.map_or("-".into(), |b| b.to_string()));
        }
        if self.goal.metric().is_none() {
            r.push(self.value(tr));
        }
        for (l, _) in BASELINES {
            r.push(
                match (self.baseline(l).and_then(|b| self.score(b)), self.score(tr)) {
                    (Some(b), Some(s)) if s > 0.0 => format!("{:.3}x", b / s),
                    _ => "-".into(),
                },
            );
        }
        r.push(tr.verdict.describe());
        r
    }

    /// The table's notes: how to read it, the `best` ordering, possible
    /// miscompiles, failures, no check, an interruption.
    fn push_notes(&self, t: &mut Table, best: Option<&Trial>) {
        let what = self.label();
        t.notes
            .push("vs X: X's value divided by the ordering's (above 1: better than X)".into());
        if let Some(b) = best {
            t.notes.push(format!("best: {}", b.pipeline()));
        }
        let bad: Vec<&Trial> = self.miscompiles().collect();
        if let Some(first) = bad.first() {
            t.notes.push(format!(
                "possible miscompiles: {} trial{} changed {what}'s result and were never taken as best (first: {} #{}: {})",
                bad.len(),
                if bad.len() == 1 { "" } else { "s" },
                first.phase,
                first.index,
                first.verdict.describe()
            ));
        }
        let failed: Vec<&Trial> = self.failures().collect();
        if let Some(first) = failed.first() {
            t.notes.push(format!(
                "failed: {} trial{} (first: {} #{}: {})",
                failed.len(),
                if failed.len() == 1 { "" } else { "s" },
                first.phase,
                first.index,
                first.verdict.describe()
            ));
        }
        if self.function.is_none() {
            t.notes
                .push("no function given: results were not checked".into());
        }
        if self.interrupted {
            t.notes.push(format!(
                "interrupted after {} trials: the best found so far",
                self.searched().count()
            ));
        }
    }

    /// The best goal value so far against trials, one line per strategy,
    /// with O2, O3 and Oz as reference lines.
    pub fn chart(&self) -> Chart {
        let metric = self.goal.metric();
        let lines = self
            .phases
            .iter()
            .filter(|p| *p != BASELINE)
            .map(|p| {
                let mut best = f64::INFINITY;
                let points = self
                    .trials
                    .iter()
                    .filter(|t| t.phase == *p)
                    .filter_map(|t| {
                        if let Some(s) = self.score(t) {
                            best = best.min(s);
                        }
                        best.is_finite().then_some((t.index as f64 + 1.0, best))
                    })
                    .collect();
                (p.clone(), points)
            })
            .collect();
        let refs = BASELINES
            .iter()
            .skip(1)
            .filter_map(|(l, _)| {
                let s = self.score(self.baseline(l)?)?;
                Some((l.to_string(), s))
            })
            .collect();
        let axis = match metric {
            Some(Metric::Runtime) => "best runtime so far (ns per call)".to_string(),
            Some(m) => format!("best {} so far", m.heading()),
            None => format!("best score so far ({}; O0 = 1)", self.goal.describe()),
        };
        Chart::lines(
            &format!(
                "{}: convergence of the search for {} (lower is better)",
                self.label(),
                self.goal.describe()
            ),
            "trial",
            &axis,
            lines,
            refs,
        )
    }
}

/// An ordering's text cut to about `max` characters: its first passes and
/// its last, with the count (orderings that share a beginning stay
/// distinguishable). A first pass longer than that (a whole CGSCC
/// pipeline) is itself cut, with `…`.
pub fn abbreviate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let room = max.saturating_sub(14).max(8);
    // Split at top-level commas: `loop(a,b)` is one element.
    let passes: Vec<&str> =
        crate::pipeline::split(text).unwrap_or_else(|_| text.split(',').collect());
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    let mut used = 0;
    let (mut i, mut j) = (0, passes.len());
    // Alternately from the front and the back, while they fit.
    while i < j {
        let front = head.len() <= tail.len();
        let p = if front { passes[i] } else { passes[j - 1] };
        if used + p.len() + 1 > max.saturating_sub(14) && !(head.is_empty() && front) {
            break;
        }
        used += p.len() + 1;
        if front {
            head.push(p);
            i += 1;
        } else {
            tail.insert(0, p);
            j -= 1;
        }
    }
    if let Some(first) = head.first() {
        if first.chars().count() > room {
            let cut: String = first.chars().take(room - 1).collect();
            return if passes.len() == 1 {
                format!("{cut}…")
            } else {
                format!("{cut}…,… ({} passes)", passes.len())
            };
        }
    }
    if tail.is_empty() {
        return format!("{},… ({} passes)", head.join(","), passes.len());
    }
    format!(
        "{},…,{} ({} passes)",
        head.join(","),
        tail.join(","),
        passes.len()
    )
}

/// What [`tune`] says after each trial.
pub struct Status<'a> {
    pub tuning: &'a Tuning,
    /// The phase running and how far its budget is used (0 to 1).
    pub phase: &'a str,
    pub fraction: f64,
}

/// [`tune`] from scratch, telling `progress` how far it is — trials made
/// out of the budget's, and the best so far — at most every 50 ms (a
/// search makes hundreds of trials a second; a front end redraws, a kernel
/// sends a message, each time), and once more when it ends.
pub fn tune_showing(
    module: &Module,
    check: Option<&Subject>,
    spec: &TuneSpec,
    progress: &mut dyn FnMut(&crate::jit::Progress),
) -> Result<Tuning> {
    let strategies = spec.strategies.len();
    let (unit, total) = match spec.budget {
        Budget::Trials(n) => (n as f64, n.saturating_mul(strategies)),
        Budget::Seconds(sec) => (sec, (sec.ceil() as usize).saturating_mul(strategies)),
    };
    let mut shown: Option<std::time::Instant> = None;
    let mut on_trial = |t: &Trial, st: &Status| {
        if shown.is_some_and(|t| t.elapsed() < std::time::Duration::from_millis(50)) {
            return;
        }
        shown = Some(std::time::Instant::now());
        let position = st
            .tuning
            .phases
            .iter()
            .position(|x| x == st.phase)
            .unwrap_or(0);
        let done = if position == 0 {
            0
        } else {
            (((position - 1) as f64 + st.fraction) * unit) as usize
        };
        let best = st.tuning.best(1);
        let best = best.first().map_or("none valid yet".to_string(), |b| {
            let v = match st.tuning.goal.metric() {
                Some(m) => m
                    .of(b)
                    .map_or("-".into(), |v| format!("{} {}", m.show(v), m.heading())),
                None => format!("score {:.4}", st.tuning.score(b).unwrap_or(f64::NAN)),
            };
            format!("best {v}")
        });
        progress(&crate::jit::Progress {
            done: done.min(total),
            total,
            stage: format!("{} #{}: {best}", t.phase, t.index),
        });
    };
    let result = tune(module, check, spec, &[], &mut on_trial);
    let n = result.as_ref().map_or(0, |t| t.searched().count());
    progress(&crate::jit::Progress {
        done: n,
        total: n,
        stage: String::new(),
    });
    result
}

/// `pool` without the entries that would run a pass of `disabled` (by
/// name or inside an adaptor: `licm`, `function(loop-mssa(licm))`), or
/// `None` when none would; an error when every entry would.
pub fn without_disabled(
    pool: &[String],
    disabled: &std::collections::BTreeSet<String>,
) -> Result<Option<Vec<String>>> {
    let runs_disabled = |entry: &str| {
        entry
            .split([',', '(', ')'])
            .map(|name| crate::info::base_name(name.trim()))
            .any(|name| disabled.contains(name))
    };
    if disabled.is_empty() || !pool.iter().any(|e| runs_disabled(e)) {
        return Ok(None);
    }
    let kept: Vec<String> = pool.iter().filter(|e| !runs_disabled(e)).cloned().collect();
    if kept.is_empty() {
        return Err(Error::setting("tune", format!(
            "every entry of the pool runs a disabled pass (disabled: {}); enable some with :end, or name a pool= of other passes",
            disabled.iter().cloned().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(Some(kept))
}

/// The optional columns of [`Tuning::table`].
struct ShownColumns {
    /// Metrics the goal needs beyond instructions.
    extra: Vec<Metric>,
    /// Some trial has its code's size in bytes.
    bytes: bool,
}

/// Runs the search (see the module documentation): the baselines, then
/// each strategy of `spec`, on copies of `module`, checking (and, for a
/// runtime goal, timing) `check`'s function. `known` are trials already
/// made, in order (a sweep resuming); `on_trial` hears of each new one.
pub fn tune(
    module: &Module,
    check: Option<&Subject>,
    spec: &TuneSpec,
    known: &[Trial],
    on_trial: &mut dyn FnMut(&Trial, &Status),
) -> Result<Tuning> {
    spec.validate()?;
    // Passes the context disables never enter an ordering: pool entries
    // that would run one are left out of every strategy.
    let pruned;
    let spec = match without_disabled(&spec.pool, PassContext::current().disabled())? {
        Some(pool) => {
            pruned = TuneSpec {
                pool,
                ..spec.clone()
            };
            &pruned
        }
        None => spec,
    };
    if spec.goal.needs(Metric::Runtime) && check.is_none() {
        return Err(Error::setting(
            "tune",
            "a runtime goal needs a function and its arguments to time",
        ));
    }
    let start = Instant::now();
    let mut d = Driver::new(module, check, spec, known);
    let context = PassContext::current().without_instruments();
    loop {
        d.replay()?;
        if d.next().is_none() {
            break;
        }
        match child::run(&mut d, module, check, spec, &context, on_trial)? {
            child::Ended::Finished => break,
            // Its last trial was told; a new child goes on.
            child::Ended::Restart => {}
            // The phase is over; the next one (if any) gets a new child.
            child::Ended::Spent => d.searches[d.phase].1.finish(),
            child::Ended::Interrupted => {
                d.tuning.interrupted = true;
                break;
            }
            child::Ended::Died(why) => {
                // The trial in flight failed; a new child goes on.
                let Some((phase, ordering)) = d.next() else {
                    break;
                };
                let index = d.searches[d.phase].1.trials();
                d.tell(Trial::failed(&phase, index, ordering, why));
                let last = d.tuning.trials.last().cloned();
                if let Some(t) = last {
                    let status = d.status();
                    on_trial(&t, &status);
                }
            }
        }
    }
    d.tuning.elapsed = start.elapsed();
    Ok(d.tuning)
}

/// The search's state, the same in the session and in the child.
struct Driver {
    tuning: Tuning,
    searches: Vec<(String, Search)>,
    phase: usize,
    /// Trials made before (a sweep resuming), by phase and index: told to
    /// the search when it reaches them, not evaluated again.
    known: std::collections::HashMap<(String, usize), Trial>,
}

impl Driver {
    /// A search of `module` by `spec`'s strategies, checking `check`'s
    /// function, with the trials `known` to replay.
    fn new(module: &Module, check: Option<&Subject>, spec: &TuneSpec, known: &[Trial]) -> Driver {
        let phases = spec.phases();
        Driver {
            tuning: Tuning {
                function: check.map(|c| match c {
                    Subject::Call { function, .. } => function.clone(),
                    Subject::Exec(_) => c.label(&module.name()),
                }),
                program: None,
                goal: spec.goal.clone(),
                seed: spec.seed,
                reference: None,
                trials: Vec::new(),
                phases: phases.iter().map(|(n, _)| n.clone()).collect(),
                interrupted: false,
                elapsed: Duration::ZERO,
            },
            searches: phases,
            phase: 0,
            known: known
                .iter()
                .map(|t| ((t.phase.clone(), t.index), t.clone()))
                .collect(),
        }
    }

    /// The next ordering and its phase, or `None` when all are done.
    fn next(&mut self) -> Option<(String, Vec<String>)> {
        while self.phase < self.searches.len() {
            let (name, s) = &mut self.searches[self.phase];
            if let Some(o) = s.ask() {
                return Some((name.clone(), o));
            }
            self.phase += 1;
        }
        None
    }

    /// Tells the search the trials already made where it stands now, as
    /// long as there are (the session and the child do this at the same
    /// points, so they stay in step without sending them).
    fn replay(&mut self) -> Result<()> {
        while let Some((phase, o)) = self.next() {
            let index = self.searches[self.phase].1.trials();
            let Some(k) = self.known.get(&(phase.clone(), index)).cloned() else {
                return Ok(());
            };
            if k.ordering != o {
                return Err(Error::setting("tune", format!(
                    "the trials already made do not follow from this search: {phase} #{index} is {}, the search proposes {}",
                    k.pipeline(),
                    o.join(",")
                )));
            }
            self.tell(k);
        }
        Ok(())
    }

    /// When the running phase's budget in seconds ends (see
    /// [`Search::deadline`]).
    fn deadline(&self) -> Option<Instant> {
        self.searches.get(self.phase)?.1.deadline()
    }

    /// See [`Search::set_follow`].
    fn follow(&mut self, yes: bool) {
        for (_, s) in &mut self.searches {
            s.set_follow(yes);
        }
    }

    fn tell(&mut self, t: Trial) {
        let score = self.tuning.score(&t);
        self.tuning.trials.push(t);
        if let Some((_, s)) = self.searches.get_mut(self.phase) {
            s.tell(score);
        }
    }

    fn status(&self) -> Status<'_> {
        let (phase, fraction) = self
            .searches
            .get(self.phase)
            .map_or(("", 1.0), |(n, s)| (n.as_str(), s.fraction()));
        Status {
            tuning: &self.tuning,
            phase,
            fraction,
        }
    }
}

/// A user's number as they could have typed it: `1e300`, not 301 digits.
fn short_number(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e9 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_orderings_are_abbreviated_at_a_pass() {
        assert_eq!(abbreviate("a,b", 10), "a,b");
        let long = "instcombine,gvn,licm,sroa,early-cse,dse";
        assert_eq!(abbreviate(long, 30), "instcombine,…,dse (6 passes)");
        assert_eq!(abbreviate(long, 38), "instcombine,gvn,…,dse (6 passes)");
        assert_eq!(
            abbreviate("mem2reg,a-very-long-pass-name-here", 30),
            "mem2reg,… (2 passes)"
        );
        // An adaptor's commas are inside one element.
        assert_eq!(
            abbreviate(
                "sroa,loop(loop-rotate,loop-deletion),gvn,instcombine,dse",
                30
            ),
            "sroa,…,dse (5 passes)"
        );
        // A first pass longer than the room is cut too.
        let unit = format!("cgscc(devirt<4>({}))", ["sroa", "gvn"].repeat(30).join(","));
        let short = abbreviate(&format!("{unit},dce,iroutliner"), 48);
        assert_eq!(short, "cgscc(devirt<4>(sroa,gvn,sroa,gvn…,… (3 passes)");
        assert!(short.chars().count() <= 48, "{short}");
        assert_eq!(abbreviate(&unit, 20), "cgscc(d…");
    }

    #[test]
    fn trials_round_trip_through_json() {
        let t = Trial {
            phase: "hill".into(),
            index: 3,
            ordering: vec!["gvn".into(), "instcombine".into()],
            instructions: Some(12),
            size: None,
            runtime_ns: Some(1500),
            code_bytes: Some(96),
            compile_s: 0.25,
            result: Some("i32 1".into()),
            module: Some("00ff".into()),
            verdict: Verdict::Different("i32 1, input module i32 0".into()),
            features: None,
        };
        assert_eq!(Trial::from_json(&t.to_json()), Some(t.clone()));
        let with = Trial {
            features: Some(crate::module::Features {
                instcount: vec![7; 70],
                autophase: vec![3; 56],
            }),
            ..t
        };
        assert_eq!(Trial::from_json(&with.to_json()), Some(with));
    }

    #[test]
    fn mixes_are_relative_to_o0() {
        let g = Goal::parse("size+runtime").unwrap();
        let mut o0 = Trial::failed("baseline", 0, vec![], String::new());
        o0.verdict = Verdict::Same;
        o0.size = Some(200);
        o0.runtime_ns = Some(1000);
        let mut t = o0.clone();
        t.size = Some(100);
        t.runtime_ns = Some(500);
        assert_eq!(g.score(&t, Some(&o0)), Some(0.5));
        assert_eq!(g.score(&o0, Some(&o0)), Some(1.0));
        t.verdict = Verdict::Different("x".into());
        assert_eq!(g.score(&t, Some(&o0)), None);
    }
}
