//! Comparing pipelines on one function: for each pipeline, copy the module,
//! run the pipeline under the current context, JIT-compile, check the result
//! against the first pipeline's, and time it.

use super::{Arg, Codegen, Jit, TimeResult, TimeSpec, Value};
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
    /// How code was generated for it (`codegen O2`, `codegen O3, cpu host (znver3)`).
    pub codegen: String,
    pub value: Option<Value>,
    /// Checksums of the buffer arguments after one call.
    pub buffers: Vec<u64>,
    /// Whether value and buffers equal the first pipeline's.
    pub same_result: bool,
    pub time: TimeResult,
}

/// The result of [`compare`].
#[derive(Clone, Debug)]
pub struct Comparison {
    pub function: String,
    pub entries: Vec<Entry>,
    /// Floating-point operations per call, if known: adds a GFLOP/s column.
    pub flops: Option<f64>,
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
    let saved: Vec<Option<Vec<u8>>> = args
        .iter()
        .map(|a| match a {
            Arg::Buffer(b) => Some(b.bytes().to_vec()),
            _ => None,
        })
        .collect();
    let restore = || -> Result<()> {
        for (a, s) in args.iter().zip(&saved) {
            if let (Arg::Buffer(b), Some(bytes)) = (a, s) {
                b.load(bytes)?;
            }
        }
        Ok(())
    };
    let mut entries: Vec<Entry> = Vec::new();
    let result = (|| -> Result<()> {
        let total = candidates.len() * 2;
        for (i, c) in candidates.iter().enumerate() {
            progress(&Progress {
                done: 2 * i,
                total,
                stage: format!("compiling {}", c.label),
            });
            let pass = pipeline::parse(&c.pipeline)?;
            let mut copy = module.copy();
            let counts = Rc::new(Counts::new());
            let start = Instant::now();
            let context = c.context.clone().unwrap_or_else(PassContext::inherit);
            let codegen = Codegen::from_context(&context)?;
            {
                let scope = context.with_instrument(counts.clone()).enter()?;
                let r = pass.apply(&mut copy);
                scope.exit()?;
                r?;
            }
            let jit = Jit::with_codegen(&copy, &codegen)?;
            let compile = start.elapsed();
            restore()?;
            let once = jit.call(function, args)?;
            let buffers: Vec<u64> = args
                .iter()
                .filter_map(|a| match a {
                    Arg::Buffer(b) => Some(b.checksum()),
                    _ => None,
                })
                .collect();
            restore()?;
            progress(&Progress {
                done: 2 * i + 1,
                total,
                stage: format!("timing {}", c.label),
            });
            let time = jit.time(function, args, spec)?;
            let same_result = entries
                .first()
                .is_none_or(|first| first.value == once.value && first.buffers == buffers);
            entries.push(Entry {
                pipeline: c.label.clone(),
                passes_run: counts.totals().ran,
                compile,
                instructions: copy.instruction_count(),
                codegen: codegen.label(),
                value: once.value,
                buffers,
                same_result,
                time,
            });
        }
        progress(&Progress {
            done: total,
            total,
            stage: String::new(),
        });
        Ok(())
    })();
    restore()?;
    result?;
    Ok(Comparison {
        function: function.to_string(),
        entries,
        flops: None,
    })
}

impl Comparison {
    /// Pipeline, passes run, compile ms, IR instructions, runtime median ±
    /// stdev, speedup vs the first, and whether the result matched.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            &format!("{}: pipelines compared (runtime per call)", self.function),
            &[
                "pipeline",
                "code generation",
                "passes run>",
                "compile ms>",
                "instructions>",
                "runtime us>",
                "± us>",
                "speedup>",
                "result",
            ],
        );
        if self.flops.is_some() {
            t.columns
                .insert(7, ("GFLOP/s".into(), crate::table::Align::Right));
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
                format!("{:.3}", median * 1e6),
                format!("{:.3}", e.time.stdev().as_secs_f64() * 1e6),
                base.map_or("-".into(), |b| format!("{:.2}x", b / median)),
                if e.same_result {
                    "same".into()
                } else {
                    "DIFFERENT: possible miscompile".into()
                },
            ];
            if let Some(flops) = self.flops {
                row.insert(7, format!("{:.2}", flops / median / 1e9));
            }
            t.push(row);
        }
        t
    }
}
