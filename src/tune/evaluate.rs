//! Evaluating one ordering: run its passes one after the other on a copy
//! of the input module, measure what the goal needs, and check the
//! function's result against the input module's.
//!
//! For an instruction-count goal an ordering resumes from the module a
//! kept prefix of it made ([`Prefixes`]); a resumed trial that would be the
//! best so far is run again from a fresh copy of the input, so the best
//! orderings are measured as `:tune apply` runs them. Instructions are
//! counted, object code bytes come from the JIT's code generation, runtime
//! from the time evaluator, and the result is checked through the JIT;
//! what was measured is kept per module fingerprint.

use crate::jit::{text_size, Codegen, Jit, SavedBuffers, Subject, TimeSpec};
use crate::module::Module;
use crate::pass::PassRef;
use crate::{registry, Error, PassContext, Result};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::time::Instant;

/// What a goal can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// LLVM IR instructions in the module (CompilerGym's `IrInstructionCount`).
    Instructions,
    /// Bytes of the executable sections of the object file
    /// (CompilerGym's `ObjectTextSizeBytes`).
    Size,
    /// The function's time per call: the median of the time evaluator.
    Runtime,
}

impl Metric {
    pub const NAMES: &'static [&'static str] = &["instructions", "size", "runtime"];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Instructions => "instructions",
            Metric::Size => "size",
            Metric::Runtime => "runtime",
        }
    }

    fn parse(text: &str) -> Option<Metric> {
        match text {
            "instructions" | "instcount" => Some(Metric::Instructions),
            "size" | "codesize" => Some(Metric::Size),
            "runtime" => Some(Metric::Runtime),
            _ => None,
        }
    }

    /// The trial's value of this metric, if it was measured.
    pub fn of(self, t: &Trial) -> Option<f64> {
        match self {
            Metric::Instructions => t.instructions.map(|v| v as f64),
            Metric::Size => t.size.map(|v| v as f64),
            Metric::Runtime => t.runtime_ns.map(|v| v as f64),
        }
    }

    /// A value as tables show it (runtimes in microseconds).
    pub fn show(self, v: f64) -> String {
        match self {
            Metric::Runtime => format!("{:.3}", v / 1e3),
            _ => format!("{v:.0}"),
        }
    }

    /// The column heading for its values.
    pub fn heading(self) -> &'static str {
        match self {
            Metric::Instructions => "instructions",
            Metric::Size => "object bytes",
            Metric::Runtime => "runtime us",
        }
    }
}

/// What a search minimizes: one metric, or a weighted sum of metrics each
/// relative to the unoptimized (O0) module's.
#[derive(Clone, Debug, PartialEq)]
pub struct Goal {
    /// (weight, metric); weights sum to 1.
    pub terms: Vec<(f64, Metric)>,
}

impl Goal {
    /// `instructions`, `size`, `runtime`, or a mix such as
    /// `0.7*size+0.3*runtime` (weights are normalized to sum to 1).
    ///
    /// ```
    /// use passlab::tune::{Goal, Metric};
    /// let g = Goal::parse("3*size+runtime").unwrap();
    /// assert_eq!(g.terms, vec![(0.75, Metric::Size), (0.25, Metric::Runtime)]);
    /// assert!(Goal::parse("speed").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Goal> {
        let mut terms = Vec::new();
        for term in text.split('+').map(str::trim) {
            let (w, name) = match term.split_once('*') {
                Some((w, n)) => (
                    w.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|w| *w > 0.0 && w.is_finite())
                        .ok_or_else(|| {
                            Error::setting(
                                "goal",
                                format!("weight '{w}' in '{term}' is not a positive number"),
                            )
                        })?,
                    n.trim(),
                ),
                None => (1.0, term),
            };
            let metric = Metric::parse(name).ok_or_else(|| Error::Command {
                command: "tune".into(),
                message: format!(
                    "unknown goal '{name}': a goal is instructions, size or runtime, or a weighted sum such as 0.5*size+0.5*runtime"
                ),
                suggestions: crate::nearest_names(name, Metric::NAMES.iter().copied()),
            })?;
            if terms.iter().any(|(_, m)| *m == metric) {
                return Err(Error::setting(
                    "goal",
                    format!("'{name}' appears twice in '{text}'"),
                ));
            }
            terms.push((w, metric));
        }
        let sum: f64 = terms.iter().map(|(w, _)| w).sum();
        for t in &mut terms {
            t.0 /= sum;
        }
        Ok(Goal { terms })
    }

    pub fn single(metric: Metric) -> Goal {
        Goal {
            terms: vec![(1.0, metric)],
        }
    }

    /// The one metric of a single-metric goal.
    pub fn metric(&self) -> Option<Metric> {
        match self.terms.as_slice() {
            [(_, m)] => Some(*m),
            _ => None,
        }
    }

    pub fn needs(&self, metric: Metric) -> bool {
        self.terms.iter().any(|(_, m)| *m == metric)
    }

    /// As typed: `instructions`, `0.70*size+0.30*runtime`.
    pub fn describe(&self) -> String {
        match self.metric() {
            Some(m) => m.name().to_string(),
            None => self
                .terms
                .iter()
                .map(|(w, m)| format!("{w:.2}*{}", m.name()))
                .collect::<Vec<_>>()
                .join("+"),
        }
    }

    /// The score of `t` (lower is better): a single metric's value, or the
    /// weighted sum of each metric relative to `o0`'s. `None` when the trial
    /// failed, changed the result, or lacks a metric.
    pub fn score(&self, t: &Trial, o0: Option<&Trial>) -> Option<f64> {
        if !t.verdict.is_valid() {
            return None;
        }
        if let Some(m) = self.metric() {
            return m.of(t);
        }
        let o0 = o0?;
        let mut s = 0.0;
        for (w, m) in &self.terms {
            s += w * m.of(t)? / m.of(o0)?.max(1.0);
        }
        Some(s)
    }
}

/// How a trial's function result compares with the input module's.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The same value and buffers.
    Same,
    /// No function to check.
    Unchecked,
    /// A different result: a possible miscompile (or undefined behaviour
    /// the optimizer used).
    Different(String),
    /// A pass failed, the IR did not verify, code generation or the call
    /// failed, or the process evaluating it died.
    Failed(String),
}

impl Verdict {
    pub fn is_valid(&self) -> bool {
        matches!(self, Verdict::Same | Verdict::Unchecked)
    }

    /// As tables show it.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Same => "same".into(),
            Verdict::Unchecked => "not checked".into(),
            Verdict::Different(r) => format!("DIFFERENT ({r}): possible miscompile"),
            Verdict::Failed(m) => format!("failed: {m}"),
        }
    }

    fn tag(&self) -> (&'static str, Option<&str>) {
        match self {
            Verdict::Same => ("same", None),
            Verdict::Unchecked => ("unchecked", None),
            Verdict::Different(r) => ("different", Some(r)),
            Verdict::Failed(m) => ("failed", Some(m)),
        }
    }
}

/// One ordering tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The strategy that proposed it (`baseline` for O0, O2, O3, Oz).
    pub phase: String,
    /// Its number within the phase, from 0.
    pub index: usize,
    pub ordering: Vec<String>,
    pub instructions: Option<u64>,
    /// Object code bytes, when the goal needs them.
    pub size: Option<u64>,
    /// Median time per call in nanoseconds, when the goal needs it.
    pub runtime_ns: Option<u64>,
    /// The checked function's machine code in bytes (the object the JIT
    /// ran), when a function is checked.
    pub code_bytes: Option<u64>,
    /// Seconds to run the ordering's passes.
    pub compile_s: f64,
    /// The function's result (value and buffer checksums), when checked.
    pub result: Option<String>,
    /// A hash of the IR text of the module the ordering made: orderings
    /// that make the same module have the same one, in every process.
    pub module: Option<String>,
    pub verdict: Verdict,
    /// CompilerGym's observations of the module the ordering made
    /// (InstCount and Autophase), when the search records them.
    pub features: Option<crate::module::Features>,
}

impl Trial {
    pub(crate) fn failed(phase: &str, index: usize, ordering: Vec<String>, why: String) -> Trial {
        Trial {
            phase: phase.to_string(),
            index,
            ordering,
            instructions: None,
            size: None,
            runtime_ns: None,
            code_bytes: None,
            compile_s: 0.0,
            result: None,
            module: None,
            verdict: Verdict::Failed(why),
            features: None,
        }
    }

    /// The ordering as pipeline text (`:run` runs it pass by pass, as the
    /// search did).
    pub fn pipeline(&self) -> String {
        if self.ordering.is_empty() {
            "O0".into()
        } else {
            self.ordering.join(",")
        }
    }

    pub fn to_json(&self) -> Json {
        let (verdict, why) = self.verdict.tag();
        json!({
            "phase": self.phase,
            "trial": self.index,
            "ordering": self.ordering,
            "instructions": self.instructions,
            "size": self.size,
            "runtime_ns": self.runtime_ns,
            "code_bytes": self.code_bytes,
            "compile_s": self.compile_s,
            "result": self.result,
            "module": self.module,
            "verdict": verdict,
            "why": why,
            "instcount": self.features.as_ref().map(|f| &f.instcount),
            "autophase": self.features.as_ref().map(|f| &f.autophase),
        })
    }

    pub fn from_json(v: &Json) -> Option<Trial> {
        let u = |k: &str| v.get(k).and_then(Json::as_u64);
        let s = |k: &str| v.get(k).and_then(Json::as_str).map(str::to_string);
        let why = s("why").unwrap_or_default();
        Some(Trial {
            phase: s("phase")?,
            index: u("trial")? as usize,
            ordering: v
                .get("ordering")?
                .as_array()?
                .iter()
                .map(|p| p.as_str().map(str::to_string))
                .collect::<Option<_>>()?,
            instructions: u("instructions"),
            size: u("size"),
            runtime_ns: u("runtime_ns"),
            code_bytes: u("code_bytes"),
            compile_s: v.get("compile_s").and_then(Json::as_f64).unwrap_or(0.0),
            result: s("result"),
            module: s("module"),
            verdict: match v.get("verdict")?.as_str()? {
                "same" => Verdict::Same,
                "unchecked" => Verdict::Unchecked,
                "different" => Verdict::Different(why),
                "failed" => Verdict::Failed(why),
                _ => return None,
            },
            features: {
                let ints = |k: &str| -> Option<Vec<i64>> {
                    v.get(k)?.as_array()?.iter().map(Json::as_i64).collect()
                };
                match (ints("instcount"), ints("autophase")) {
                    (Some(instcount), Some(autophase)) => Some(crate::module::Features {
                        instcount,
                        autophase,
                    }),
                    _ => None,
                }
            },
        })
    }
}

/// A hash of `text`, as 16 hex digits.
fn text_hash(text: &str) -> String {
    format!("{:016x}", crate::jit::fnv1a(text.bytes()))
}

/// What checking a function gives: its result, median time, code bytes.
type Checked = (Option<String>, Option<u64>, Option<u64>);

/// The function or program a search checks (and times, for a runtime
/// goal).
pub(crate) struct Check<'a, 'b> {
    pub subject: &'b Subject<'a>,
}

/// What an evaluated module measured, kept by fingerprint: orderings that
/// end in the same module are not compiled again.
#[derive(Clone)]
struct Measured {
    size: Option<u64>,
    runtime_ns: Option<u64>,
    code_bytes: Option<u64>,
    result: Option<String>,
    verdict: Verdict,
}

/// Evaluates orderings on one input module (see the module documentation).
pub(crate) struct Evaluator<'a, 'b> {
    input: &'a Module,
    check: Option<Check<'a, 'b>>,
    saved: Option<SavedBuffers<'a, 'b>>,
    /// The input module's result.
    pub reference: Option<String>,
    goal: Goal,
    codegen: Codegen,
    time: TimeSpec,
    context: PassContext,
    passes: HashMap<String, PassRef>,
    measured: HashMap<u64, Measured>,
    /// Whether code generation may run in this process (the evaluator runs
    /// in a child of the session).
    here: bool,
    /// Modules after prefixes of the orderings evaluated lately (see
    /// [`Prefixes`]); only for an instruction-count goal.
    prefixes: Option<Prefixes>,
    /// The best valid trial so far as `best` ranks it: the fewest
    /// instructions, then the shortest ordering.
    leader: Option<(u64, usize)>,
    /// Whether each trial records CompilerGym's features of its module.
    pub features: bool,
    /// Whether orderings share prefixes (those of local search, hill
    /// climbing and greedy search do, random ones do not): only then are
    /// modules kept after prefixes, and trials resumed from them.
    pub share_prefixes: bool,
}

/// How often (in passes) an ordering's module is kept for orderings that
/// start the same way.
const CHECKPOINT: usize = 6;
/// How many such modules are kept at most.
const KEPT_PREFIXES: usize = 40;

/// Modules after prefixes of orderings, every [`CHECKPOINT`] passes, the
/// most recently used first: an ordering that starts as one of them did
/// resumes from the longest such prefix instead of the input. Local search
/// and hill climbing change an ordering in one place, so most of it is run
/// once. A copied module has its use lists in another order, which some
/// passes notice, so a resumed trial that would be the best so far is run
/// again from the input, and that run is the one reported: the best
/// orderings always make what `:tune apply` and `opt-19` make.
struct Prefixes {
    kept: Vec<(Vec<String>, Module)>,
}

impl Prefixes {
    /// The longest kept prefix of `ordering`: its length and a copy of its
    /// module.
    fn resume(&mut self, ordering: &[String]) -> Option<(usize, Module)> {
        let (at, _) = self
            .kept
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| ordering.starts_with(p))
            .max_by_key(|(_, (p, _))| p.len())?;
        let entry = self.kept.remove(at);
        let found = (entry.0.len(), entry.1.copy());
        self.kept.insert(0, entry);
        Some(found)
    }

    fn keep(&mut self, prefix: &[String], m: &Module) {
        if self.kept.iter().any(|(p, _)| p == prefix) {
            return;
        }
        self.kept.truncate(KEPT_PREFIXES - 1);
        self.kept.insert(0, (prefix.to_vec(), m.copy()));
    }
}

impl<'a, 'b> Evaluator<'a, 'b> {
    pub fn new(
        input: &'a Module,
        check: Option<Check<'a, 'b>>,
        goal: Goal,
        time: TimeSpec,
        context: PassContext,
        here: bool,
    ) -> Result<Evaluator<'a, 'b>> {
        let codegen = Codegen::from_context(&context)?;
        let mut e = Evaluator {
            input,
            saved: check.as_ref().map(|c| c.subject.save()),
            check,
            reference: None,
            goal,
            codegen,
            time,
            context,
            passes: HashMap::new(),
            prefixes: None,
            leader: None,
            features: false,
            share_prefixes: false,
            measured: HashMap::new(),
            here,
        };
        if e.goal.metric() == Some(Metric::Instructions) {
            e.prefixes = Some(Prefixes { kept: Vec::new() });
        }
        if e.check.is_some() {
            let (result, _, _) = e.result_of(input, false)?;
            e.reference = result;
        }
        Ok(e)
    }

    /// The function's result in `m` (value and buffer checksums), and its
    /// time per call in ns if `timed`.
    /// The checked function's result, its median time (when `timed`) and
    /// its code bytes.
    fn result_of(&self, m: &Module, timed: bool) -> Result<Checked> {
        let (Some(c), Some(saved)) = (&self.check, &self.saved) else {
            return Ok((None, None, None));
        };
        let jit = Jit::compile(m, &self.codegen, self.here)?;
        let bytes = c.subject.code_bytes(&jit);
        saved.restore()?;
        let text = match c.subject.outcome(&jit) {
            Ok(text) => text,
            Err(e) => {
                saved.restore()?;
                return Err(e);
            }
        };
        let runtime = if timed {
            saved.restore()?;
            let t = c.subject.time(&jit, self.time)?;
            Some(t.median().as_nanos() as u64)
        } else {
            None
        };
        saved.restore()?;
        Ok((Some(text), runtime, bytes))
    }

    fn pass(&mut self, name: &str) -> Result<PassRef> {
        if let Some(p) = self.passes.get(name) {
            return Ok(p.clone());
        }
        let p = if name.is_empty() {
            return Err(Error::Invalid("an empty pass name".into()));
        } else {
            registry::get_pass(name).or_else(|_| crate::pipeline::parse(name))?
        };
        self.passes.insert(name.to_string(), p.clone());
        Ok(p)
    }

    /// Runs `ordering` pass by pass on a copy of the input module, or, when
    /// `resume`, on a copy of the module a kept prefix of it made, keeping
    /// its own prefixes when `keep` (see [`Prefixes`]); whether it resumed.
    fn run(&mut self, ordering: &[String], resume: bool, keep: bool) -> Result<(Module, bool)> {
        let found = match (&mut self.prefixes, resume) {
            (Some(p), true) => p.resume(ordering),
            _ => None,
        };
        let resumed = found.is_some();
        let (from, mut m) = found.unwrap_or_else(|| (0, self.input.copy()));
        let _scope = self.context.clone().enter()?;
        for (i, name) in ordering.iter().enumerate().skip(from) {
            if crate::interrupt::requested() {
                return Err(Error::Interrupted { pass: name.clone() });
            }
            let pass = self.pass(name)?;
            crate::pass::call(pass.as_ref(), &mut m, &self.context)?;
            let done = i + 1;
            if keep && done % CHECKPOINT == 0 && done < ordering.len() {
                if let Some(p) = &mut self.prefixes {
                    p.keep(&ordering[..done], &m);
                }
            }
        }
        Ok((m, resumed))
    }

    /// Evaluates one ordering; every failure becomes the trial's verdict.
    pub fn evaluate(&mut self, phase: &str, index: usize, ordering: &[String]) -> Trial {
        let start = Instant::now();
        let share = self.share_prefixes;
        let mut run = self.run(ordering, share, share);
        // A resumed run that would be the best so far is run again from
        // the input (see `Prefixes`).
        if let Ok((m, true)) = &run {
            if self
                .leader
                .is_none_or(|f| (m.instruction_count(), ordering.len()) < f)
            {
                run = self.run(ordering, false, true);
            }
        }
        let compile_s = start.elapsed().as_secs_f64();
        let fail = |why: String| Trial::failed(phase, index, ordering.to_vec(), why);
        let m = match run {
            Ok((m, _)) => m,
            Err(e) => return fail(e.to_string()),
        };
        if let Err(e) = m.verify() {
            return fail(format!("the IR does not verify: {e}"));
        }
        let fp = m.fingerprint();
        let measured = match self.measured.get(&fp) {
            Some(known) => known.clone(),
            None => {
                let size = if self.goal.needs(Metric::Size) {
                    match text_size(&m, &self.codegen, self.here) {
                        Ok(s) => Some(s),
                        Err(e) => return fail(e.to_string()),
                    }
                } else {
                    None
                };
                let (result, runtime_ns, code_bytes) =
                    match self.result_of(&m, self.goal.needs(Metric::Runtime)) {
                        Ok(r) => r,
                        Err(e) => return fail(e.to_string()),
                    };
                let verdict = match (&result, &self.reference) {
                    (Some(r), Some(reference)) if r != reference => {
                        Verdict::Different(format!("{r}, input module {reference}"))
                    }
                    (Some(_), _) => Verdict::Same,
                    _ => Verdict::Unchecked,
                };
                let measured = Measured {
                    size,
                    runtime_ns,
                    code_bytes,
                    result,
                    verdict,
                };
                self.measured.insert(fp, measured.clone());
                measured
            }
        };
        let instructions = m.instruction_count();
        if measured.verdict.is_valid() {
            let this = (instructions, ordering.len());
            self.leader = Some(self.leader.map_or(this, |f| f.min(this)));
        }
        Trial {
            phase: phase.to_string(),
            index,
            ordering: ordering.to_vec(),
            instructions: Some(instructions),
            size: measured.size,
            runtime_ns: measured.runtime_ns,
            code_bytes: measured.code_bytes,
            compile_s,
            result: measured.result,
            module: Some(text_hash(&m.print())),
            verdict: measured.verdict,
            features: self.features.then(|| m.features()),
        }
    }
}
