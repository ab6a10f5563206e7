//! Comparing pipelines on one function or program ([`Subject`]): for each
//! pipeline, copy the module, run the pipeline under the current context,
//! JIT-compile, check the outcome against the first pipeline's, and time
//! it.

use super::{Arg, Codegen, Jit, Subject, TimeResult, TimeSpec, Value};
use crate::instrument::Counts;
use crate::module::Module;
use crate::table::Table;
use crate::{pipeline, PassContext, Result};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// One pipeline's row.
#[derive(Clone, Debug)]
pub struct Entry {
    pub pipeline: String,
    /// Passes that ran (LLVM's own included).
    pub passes_run: u64,
    /// Running the pipeline plus JIT compilation.
    pub compile: Duration,
    pub instructions: u64,
    /// The function's machine code in bytes (the JIT's object).
    pub code_bytes: Option<u64>,
    /// How code was generated for it (`codegen O2`, `codegen O3, cpu host (znver3)`).
    pub codegen: String,
    pub value: Option<Value>,
    /// Checksums of the buffer arguments after one call.
    pub buffers: Vec<u64>,
    /// What is compared, in words: the value and buffers, or a program's
    /// exit status and output.
    pub outcome: String,
    /// Whether value and buffers equal the first pipeline's (bit for bit,
    /// or within the comparison's relative tolerance for floats).
    pub same_result: bool,
    /// When floats differ from the first pipeline's but within the
    /// tolerance: the largest relative difference.
    pub within: Option<f64>,
    pub time: TimeResult,
}

/// The result of [`compare`].
#[derive(Clone, Debug)]
pub struct Comparison {
    /// What was compared: `f(1, data)` or `program: prog.c 10`.
    pub function: String,
    /// Whether it was a program (timed per run, not per call).
    pub program: bool,
    pub entries: Vec<Entry>,
    /// Floating-point operations per call, if known: adds a GFLOP/s column.
    pub flops: Option<f64>,
    /// The relative tolerance floats were compared with, if any.
    pub rtol: Option<f64>,
}

/// One pipeline to compare: what to run, under which context, and the
/// label it is reported under.
#[derive(Clone)]
pub struct Candidate {
    pub label: String,
    pub pipeline: String,
    /// The context to run it under; `None` inherits the current one.
    pub context: Option<PassContext>,
}

impl Candidate {
    /// A pipeline under the current context, labelled with its text.
    pub fn new(pipeline: &str) -> Candidate {
        Candidate {
            label: pipeline.trim().to_string(),
            pipeline: pipeline.trim().to_string(),
            context: None,
        }
    }
}

/// Where a comparison is, for a progress display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Steps finished, of `total` (two per pipeline: compile, then time).
    pub done: usize,
    pub total: usize,
    /// What runs now: `compiling O2` or `timing O2`; empty when finished.
    pub stage: String,
}

/// Runs each candidate on a copy of `module` and times `function` (see the
/// module documentation), telling `progress` before each step and when
/// done. Buffer arguments are put back to their contents before every
/// call, so each pipeline sees the same input; they hold their original
/// contents afterwards.
pub fn compare(
    module: &Module,
    function: &str,
    args: &[Arg],
    candidates: &[Candidate],
    spec: TimeSpec,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Comparison> {
    compare_within(module, function, args, candidates, spec, None, progress)
}

/// [`compare`], where floats (a float or double result, f32 and f64
/// buffers) count as the same when they differ by at most `rtol` relative
/// to the larger magnitude: a pipeline that contracts `a * b + c` into a
/// fused multiply-add (`cpu=host` on a machine with FMA) rounds
/// differently without being wrong.
pub fn compare_within(
    module: &Module,
    function: &str,
    args: &[Arg],
    candidates: &[Candidate],
    spec: TimeSpec,
    rtol: Option<f64>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Comparison> {
    let subject = Subject::Call {
        function: function.to_string(),
        args: args.to_vec(),
    };
    compare_subject(module, &subject, candidates, spec, rtol, progress)
}

/// [`compare_within`] for any [`Subject`]: a program is held to the first
/// pipeline's exit status and output, exactly (`rtol` is for floats a
/// function returns or writes).
pub fn compare_subject(
    module: &Module,
    subject: &Subject,
    candidates: &[Candidate],
    spec: TimeSpec,
    rtol: Option<f64>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Comparison> {
    let saved = subject.save();
    let result = compare_each(module, subject, candidates, spec, rtol, &saved, progress);
    saved.restore()?;
    let entries = result?;
    Ok(Comparison {
        function: match subject {
            Subject::Call { function, .. } => function.clone(),
            Subject::Exec(_) => subject.label(module.name().as_str()),
        },
        program: subject.is_program(),
        entries,
        flops: None,
        rtol,
    })
}

/// The rows of [`compare_subject`], one per candidate in order, the
/// subject's buffers put back from `saved` before each call (not after
/// the last).
fn compare_each(
    module: &Module,
    subject: &Subject,
    candidates: &[Candidate],
    spec: TimeSpec,
    rtol: Option<f64>,
    saved: &super::SavedBuffers,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Vec<Entry>> {
    let args = subject.args();
    let mut entries: Vec<Entry> = Vec::new();
    // The first pipeline's result, to compare the others' with when their
    // checksums differ.
    let mut reference: Option<Reference> = None;
    let total = candidates.len() * 2;
    for (i, c) in candidates.iter().enumerate() {
        progress(&Progress {
            done: 2 * i,
            total,
            stage: format!("compiling {}", c.label),
        });
        let (copy, counts, codegen, start) = optimized(module, c)?;
        let jit = Jit::with_codegen(&copy, &codegen)?;
        let compile = start.elapsed();
        saved.restore()?;
        let (value, outcome) = run_once(subject, &jit)?;
        let buffers: Vec<u64> = buffers_of(args).map(|b| b.checksum()).collect();
        let outputs: Vec<Vec<u8>> = buffers_of(args).map(|b| b.bytes().to_vec()).collect();
        let (same_result, within) = match &reference {
            Some(r) => r.holds(
                args,
                (&value, &outputs),
                &outcome,
                rtol,
                subject.is_program(),
            ),
            None => {
                reference = Some(Reference {
                    value,
                    buffers: outputs,
                    outcome: outcome.clone(),
                });
                (true, None)
            }
        };
        saved.restore()?;
        progress(&Progress {
            done: 2 * i + 1,
            total,
            stage: format!("timing {}", c.label),
        });
        let time = subject.time(&jit, spec)?;
        entries.push(Entry {
            pipeline: c.label.clone(),
            passes_run: counts.totals().ran,
            compile,
            instructions: copy.instruction_count(),
            code_bytes: subject.code_bytes(&jit),
            codegen: codegen.label(),
            value,
            buffers,
            outcome,
            same_result,
            within,
            time,
        });
    }
    progress(&Progress {
        done: total,
        total,
        stage: String::new(),
    });
    Ok(entries)
}

/// The buffer arguments among `args`, in order.
fn buffers_of<'x, 'a: 'x>(args: &'x [Arg<'a>]) -> impl Iterator<Item = &'a super::Buffer> + 'x {
    args.iter().filter_map(|a| match a {
        Arg::Buffer(b) => Some(*b),
        _ => None,
    })
}

/// The first pipeline's result in a comparison: its value, its buffers'
/// contents after its call, and its outcome in words.
struct Reference {
    value: Option<Value>,
    buffers: Vec<Vec<u8>>,
    outcome: String,
}

impl Reference {
    /// Whether a pipeline's result (`now`, told as `outcome`) counts as
    /// this one, and the largest relative difference when floats differ
    /// within `rtol` (a function's only; a program's outcome is exact).
    fn holds(
        &self,
        args: &[Arg],
        now: (&Option<Value>, &[Vec<u8>]),
        outcome: &str,
        rtol: Option<f64>,
        program: bool,
    ) -> (bool, Option<f64>) {
        if self.outcome == outcome {
            return (true, None);
        }
        match (rtol, program) {
            (Some(rtol), false) => {
                within_tolerance(args, (&self.value, self.buffers.as_slice()), now, rtol)
            }
            _ => (false, None),
        }
    }
}

/// `module` copied and run through candidate `c`'s pipeline under its
/// context (counting the passes that ran), the code generator the
/// context says, and when compiling started (after the copy).
fn optimized(module: &Module, c: &Candidate) -> Result<(Module, Rc<Counts>, Codegen, Instant)> {
    let pass = pipeline::parse(&c.pipeline)?;
    let mut copy = module.copy();
    let counts = Rc::new(Counts::new());
    let start = Instant::now();
    let context = c.context.clone().unwrap_or_else(PassContext::inherit);
    let codegen = Codegen::from_context(&context)?;
    let scope = context.with_instrument(counts.clone()).enter()?;
    let r = pass.apply(&mut copy);
    scope.exit()?;
    r?;
    Ok((copy, counts, codegen, start))
}

/// The subject run once: a call's value and, as text, the value and its
/// buffers' checksums; a program's outcome.
fn run_once(subject: &Subject, jit: &Jit) -> Result<(Option<Value>, String)> {
    Ok(match subject {
        Subject::Call { function, args } => {
            let once = jit.call(function, args)?;
            let mut text = once.value.map_or("void".into(), |v| v.to_string());
            for a in args.iter() {
                if let Arg::Buffer(b) = a {
                    text.push_str(&format!(", buffer {:016x}", b.checksum()));
                }
            }
            (once.value, text)
        }
        Subject::Exec(_) => (None, subject.outcome(jit)?),
    })
}

/// Whether a result that differs from the first (value and buffers) is
/// within `rtol` of it, and by how much.
fn within_tolerance(
    args: &[Arg],
    (first_value, first_buffers): (&Option<Value>, &[Vec<u8>]),
    (value, outputs): (&Option<Value>, &[Vec<u8>]),
    rtol: f64,
) -> (bool, Option<f64>) {
    let float_args: Vec<_> = args
        .iter()
        .filter_map(|a| match a {
            Arg::Buffer(b) => Some(b.elem_type()),
            _ => None,
        })
        .collect();
    match max_relative_difference(first_value, value, first_buffers, outputs, &float_args) {
        Some(d) if d <= rtol => (true, Some(d)),
        _ => (false, None),
    }
}

/// The largest relative difference between two results (value and
/// buffers), or `None` when they differ where only exact equality counts
/// (integers, pointers, a different kind of value).
fn max_relative_difference(
    a: &Option<Value>,
    b: &Option<Value>,
    a_bufs: &[Vec<u8>],
    b_bufs: &[Vec<u8>],
    types: &[super::ElemType],
) -> Option<f64> {
    use super::ElemType;
    let rel = |x: f64, y: f64| {
        if x == y || (x.is_nan() && y.is_nan()) {
            0.0
        } else {
            (x - y).abs() / x.abs().max(y.abs()).max(f64::MIN_POSITIVE)
        }
    };
    let mut worst: f64 = match (a, b) {
        (Some(Value::F32(x)), Some(Value::F32(y))) => rel(f64::from(*x), f64::from(*y)),
        (Some(Value::F64(x)), Some(Value::F64(y))) => rel(*x, *y),
        (x, y) if x == y => 0.0,
        _ => return None,
    };
    for ((x, y), ty) in a_bufs.iter().zip(b_bufs).zip(types) {
        if x == y {
            continue;
        }
        match ty {
            ElemType::F32 => {
                for (p, q) in x.chunks_exact(4).zip(y.chunks_exact(4)) {
                    let p = f32::from_ne_bytes(p.try_into().ok()?);
                    let q = f32::from_ne_bytes(q.try_into().ok()?);
                    worst = worst.max(rel(f64::from(p), f64::from(q)));
                }
            }
            ElemType::F64 => {
                for (p, q) in x.chunks_exact(8).zip(y.chunks_exact(8)) {
                    let p = f64::from_ne_bytes(p.try_into().ok()?);
                    let q = f64::from_ne_bytes(q.try_into().ok()?);
                    worst = worst.max(rel(p, q));
                }
            }
            _ => return None,
        }
    }
    Some(worst)
}

impl Comparison {
    /// Pipeline, passes run, compile ms, IR instructions, the function's
    /// code bytes, runtime median ±
    /// stdev, speedup vs the first, and whether the result matched.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            &format!(
                "{}: pipelines compared (runtime per {})",
                self.function,
                if self.program { "run of main" } else { "call" }
            ),
            &[
                "pipeline",
                "code generation",
                "passes run>",
                "compile ms>",
                "instructions>",
                "code bytes>",
                "runtime us>",
                "± us>",
                "speedup>",
                "result",
            ],
        );
        if self.flops.is_some() {
            t.columns
                .insert(8, ("GFLOP/s".into(), crate::table::Align::Right));
        }
        let base = self.entries.first().map(|e| e.time.median().as_secs_f64());
        for e in &self.entries {
            let median = e.time.median().as_secs_f64();
            let mut row = vec![
                e.pipeline.clone(),
                e.codegen.clone(),
                e.passes_run.to_string(),
                format!("{:.1}", e.compile.as_secs_f64() * 1e3),
                e.instructions.to_string(),
                e.code_bytes.map_or("-".into(), |b| b.to_string()),
                format!("{:.3}", median * 1e6),
                format!("{:.3}", e.time.stdev().as_secs_f64() * 1e6),
                base.map_or("-".into(), |b| format!("{:.2}x", b / median)),
                match (e.same_result, e.within) {
                    (true, Some(d)) => format!("same within rtol ({d:.1e})"),
                    (true, None) => "same".into(),
                    (false, _) if self.rtol.is_some() => {
                        "DIFFERENT beyond rtol: possible miscompile".into()
                    }
                    (false, _) => "DIFFERENT: possible miscompile".into(),
                },
            ];
            if let Some(flops) = self.flops {
                row.insert(8, format!("{:.2}", flops / median / 1e9));
            }
            t.push(row);
        }
        t
    }
}

/// What [`bisect`] found: the first optional pass, of the pipeline or of
/// its code generation, after which the subject's outcome changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Culprit {
    /// Its number among all optional passes (1-based), of `total`; the
    /// pipeline's are the first `pipeline`.
    pub index: usize,
    pub total: usize,
    pub pipeline: usize,
    /// How many times the pipeline ran during the search.
    pub runs: usize,
    pub pass: String,
    /// What it ran on: LLVM's unit (`function`, `loop` …), or `machine
    /// function` or `machine module` for the back end's.
    pub unit: String,
    /// The unit's name (empty for a machine module pass).
    pub target: String,
    /// The outcome with no optional pass run, and after the culprit.
    pub reference: String,
    pub result: String,
    /// What the culprit did, as unified diffs: each function of the
    /// pipeline's it changed (IR), or the function's assembly for a pass
    /// of the back end's.
    pub diffs: Vec<String>,
}

/// `message` as an error of `:bisect`'s.
fn bisect_error(message: impl Into<String>) -> crate::Error {
    crate::Error::Command {
        command: "bisect".into(),
        message: message.into(),
        suggestions: vec![],
    }
}

/// A copy of `module` through `pass` with only its first `limit` optional
/// passes run (LLVM's opt-bisect gate).
fn limited_copy(module: &Module, pass: &dyn crate::pass::Pass, limit: usize) -> Result<Module> {
    use crate::instrument::Bisect;
    let mut copy = module.copy();
    let scope = PassContext::inherit()
        .with_instrument(Rc::new(Bisect::new(Some(limit)).keeping(false)))
        .enter()?;
    let r = pass.apply(&mut copy);
    drop(scope);
    r.map(|()| copy)
}

/// The diffs of the functions `pass_name` changed, from `before` to
/// `after`.
fn function_diffs(before: &Module, after: &Module, pass_name: &str) -> Vec<String> {
    let mut diffs = Vec::new();
    for fname in after.defined_functions() {
        let (Ok(a_text), Ok(b_text)) =
            (before.print_function(&fname), after.print_function(&fname))
        else {
            continue;
        };
        if a_text != b_text {
            diffs.push(crate::diff::unified(
                &a_text,
                &b_text,
                &format!("{fname} before {pass_name}"),
                &format!("{fname} after {pass_name}"),
                3,
            ));
        }
    }
    diffs
}

/// Finds the first optional pass of `pass` (written `pipeline_text`), or
/// of the code generation after it, that changes `subject`'s outcome on a
/// copy of `module`: the pipeline and the back end under LLVM's
/// opt-bisect gate, numbered together as LLVM numbers opt's and llc's
/// optional passes, the reference being the outcome with none of them run
/// (`who` names the subject in errors). The subject's buffers are put back
/// before each run and at the end; the module is not touched.
pub fn bisect(
    module: &Module,
    pass: &dyn crate::pass::Pass,
    pipeline_text: &str,
    subject: &Subject,
    who: &str,
) -> Result<Culprit> {
    use crate::Error;
    let m = module;
    let codegen = Codegen::from_context(&PassContext::current())?;
    // The back end's optional passes are numbered after the pipeline's, as
    // LLVM numbers opt's and llc's together: `machine` is how many of them
    // run (None: all).
    let gated = |machine: Option<usize>| Codegen {
        bisect_limit: Some(machine.map_or(u64::MAX, |l| l as u64)),
        ..codegen.clone()
    };
    let saved = subject.save();
    let restore = || saved.restore();
    // The outcome in a module: the function's value and its buffers'
    // checksums, or the program's exit status and output.
    let result_of = |module: &crate::Module, machine: Option<usize>| -> Result<String> {
        restore()?;
        subject.outcome(&Jit::with_codegen(module, &gated(machine))?)
    };
    // With no optional pass run: the result the optimized one is held to.
    let with_limit = |limit: usize| limited_copy(m, pass, limit);
    let reference = result_of(&with_limit(0)?, Some(0));
    let reference = match reference {
        Ok(r) => r,
        Err(e) => {
            restore()?;
            return Err(bisect_error(
                format!("{who} does not run with no optional pass of {pipeline_text} and its code generation: {e}"),
            ));
        }
    };
    let mut last_result = String::new();
    let machine_passes = |full: &crate::Module| -> Result<usize> {
        Ok(Jit::with_codegen(full, &gated(None))?
            .bisect_decisions()
            .len())
    };
    let found = pipeline::bisect_search_staged(m, pass, machine_passes, |copy, machine| {
        let r = result_of(copy, machine)?;
        let bad = r != reference;
        if bad {
            last_result = r;
        }
        Ok(bad)
    });
    restore()?;
    let found = found.map_err(|e| match e {
        Error::ConditionNeverHolds { .. } => bisect_error(
            format!("{who} gives {reference} with and without the optional passes of {pipeline_text} and its code generation: no pass changes it"),
        ),
        other => other,
    })?;
    let (pass_name, unit, target, diffs) = culprit(&found, &with_limit, &gated)?;
    Ok(Culprit {
        index: found.index,
        total: found.total,
        pipeline: found.pipeline,
        runs: found.runs,
        pass: pass_name,
        unit,
        target,
        reference,
        result: last_result,
        diffs,
    })
}

/// The pass a bisection `found` (a pass of the pipeline, or of the back
/// end) and what it did: its name, unit, target, and diffs. `with_limit`
/// runs the pipeline's first optional passes on a copy of the module;
/// `gated` is the code generation running the back end's first ones.
fn culprit(
    found: &pipeline::StagedFound,
    with_limit: &dyn Fn(usize) -> Result<Module>,
    gated: &dyn Fn(Option<usize>) -> Codegen,
) -> Result<(String, String, String, Vec<String>)> {
    Ok(match &found.entry {
        Some(e) => {
            // The functions it changed, before and after.
            let before = with_limit(found.index - 1)?;
            let after = with_limit(found.index)?;
            let diffs = function_diffs(&before, &after, &e.pass);
            (e.pass.clone(), e.unit.to_string(), e.target.clone(), diffs)
        }
        None => {
            // The module after the whole pipeline and the back end's
            // decisions up to the culprit, for its change to the assembly.
            let full = with_limit(found.pipeline)?;
            let k = found.index - found.pipeline;
            let (d, unit, asked) = machine_culprit(&full, gated, k)?;
            let diffs = if d.function.is_empty() {
                Vec::new()
            } else {
                vec![machine_pass_diff(
                    &full,
                    gated,
                    &asked,
                    &d.function,
                    &d.pass,
                )?]
            };
            (d.pass, unit.to_string(), d.function, diffs)
        }
    })
}

/// The back end's optional pass `k` (1-based) in code generation for
/// `full`: its decision, its unit (`machine function` or `machine
/// module`), and the decisions up to it.
fn machine_culprit(
    full: &Module,
    gated: &dyn Fn(Option<usize>) -> Codegen,
    k: usize,
) -> Result<(super::GateDecision, &'static str, Vec<super::GateDecision>)> {
    // Every pass that asked (those past the limit too); the first k.
    let mut asked = Jit::with_codegen(full, &gated(Some(k)))?
        .bisect_decisions()
        .to_vec();
    let d = asked.get(k - 1).cloned().ok_or_else(|| {
        bisect_error(format!("the back end's optional pass {k} was not asked about again (code generation is not deterministic)"))
    })?;
    let unit = if d.function.is_empty() {
        "machine module"
    } else {
        "machine function"
    };
    asked.truncate(k);
    Ok((d, unit, asked))
}

/// The assembly of `function` before and after the last of the back end's
/// optional passes in `asked` (the JIT's decisions up to the culprit), as a
/// unified diff. `:asm`'s code has no JIT entry point or stubs, so the pass
/// is found there by its name and function and how many times it asked
/// before.
fn machine_pass_diff(
    module: &crate::Module,
    gated: &dyn Fn(Option<usize>) -> super::Codegen,
    asked: &[super::GateDecision],
    function: &str,
    pass: &str,
) -> Result<String> {
    use super::asm::{self, Filter, Syntax};
    let same = |d: &&super::GateDecision| d.pass == pass && d.function == function;
    let nth = asked.iter().filter(same).count();
    let (_, full) = asm::assembly_probed(module, &gated(None), Syntax::Att, Default::default())?;
    let Some(i) = full
        .decisions
        .iter()
        .filter(same)
        .nth(nth.saturating_sub(1))
        .map(|d| d.index)
    else {
        return Ok(String::new());
    };
    let text = |limit: usize| -> Result<String> {
        let code = asm::assembly(module, &gated(Some(limit)), Syntax::Att)?;
        Ok(code
            .render(Some(function), Filter::default().text_only(), &|_| None)?
            .text)
    };
    let (before, after) = (text(i - 1)?, text(i)?);
    Ok(crate::diff::unified(
        &before,
        &after,
        &format!("{function} before {pass}"),
        &format!("{function} after {pass}"),
        3,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::ElemType;

    #[test]
    fn bisect_says_when_no_pass_changes_the_outcome_or_the_subject_does_not_run() {
        let m = Module::from_ir(
            "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  %z = mul i32 %y, 1\n  ret i32 %z\n}\n",
            "f.ll",
        )
        .unwrap();
        let pass = pipeline::parse("instcombine").unwrap();
        let call = |function: &str| Subject::Call {
            function: function.into(),
            args: vec![Arg::Int(7)],
        };
        let message = |e: crate::Error| match e {
            crate::Error::Command {
                command, message, ..
            } if command == "bisect" => message,
            e => panic!("not an error of :bisect's: {e:?}"),
        };
        let e = bisect(&m, pass.as_ref(), "instcombine", &call("f"), "f").unwrap_err();
        let said = message(e);
        assert!(
            said.starts_with("f gives ")
                && said.ends_with(
                    " with and without the optional passes of instcombine and its code generation: no pass changes it"
                ),
            "{said}"
        );
        let e = bisect(&m, pass.as_ref(), "instcombine", &call("g"), "g").unwrap_err();
        let said = message(e);
        assert!(
            said.starts_with(
                "g does not run with no optional pass of instcombine and its code generation: "
            ),
            "{said}"
        );
    }

    #[test]
    fn floats_differ_relatively_integers_not_at_all() {
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let a = vec![f(&[1.0, 100.0, 0.0])];
        let b = vec![f(&[1.0, 100.001, 0.0])];
        let d = max_relative_difference(&None, &None, &a, &b, &[ElemType::F32]).unwrap();
        assert!((d - 1e-5).abs() < 1e-6, "{d}");
        let i = vec![vec![1u8, 0, 0, 0]];
        let j = vec![vec![2u8, 0, 0, 0]];
        assert_eq!(
            max_relative_difference(&None, &None, &i, &j, &[ElemType::I32]),
            None
        );
        let v = Some(Value::F64(2.0));
        let w = Some(Value::F64(2.0 + 2e-9));
        assert!(max_relative_difference(&v, &w, &[], &[], &[]).unwrap() < 2e-9);
        let n = Some(Value::Int { value: 1, bits: 32 });
        assert_eq!(max_relative_difference(&n, &v, &[], &[], &[]), None);
    }
}
