//! Comparing pipelines on one function: for each pipeline, copy the module,
//! run the pipeline under the current context, JIT-compile, check the result
//! against the first pipeline's, and time it.

use super::{Arg, Jit, TimeResult, TimeSpec, Value};
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
}

/// Runs each pipeline on a copy of `module` and times `function` (see the
/// module documentation). Buffer arguments are put back to their contents
/// before every call, so each pipeline sees the same input; they hold their
/// original contents afterwards.
pub fn compare(
    module: &Module,
    function: &str,
    args: &[Arg],
    pipelines: &[&str],
    spec: TimeSpec,
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
        for text in pipelines {
            let pass = pipeline::parse(text)?;
            let mut copy = module.copy();
            let counts = Rc::new(Counts::new());
            let start = Instant::now();
            {
                let scope = PassContext::inherit()
                    .with_instrument(counts.clone())
                    .enter()?;
                let r = pass.apply(&mut copy);
                scope.exit()?;
                r?;
            }
            let jit = Jit::new(&copy, 2)?;
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
            let time = jit.time(function, args, spec)?;
            let same_result = entries
                .first()
                .is_none_or(|first| first.value == once.value && first.buffers == buffers);
            entries.push(Entry {
                pipeline: text.to_string(),
                passes_run: counts.totals().ran,
                compile,
                instructions: copy.instruction_count(),
                value: once.value,
                buffers,
                same_result,
                time,
            });
        }
        Ok(())
    })();
    restore()?;
    result?;
    Ok(Comparison {
        function: function.to_string(),
        entries,
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
                "passes run>",
                "compile ms>",
                "instructions>",
                "runtime us>",
                "± us>",
                "speedup>",
                "result",
            ],
        );
        let base = self.entries.first().map(|e| e.time.median().as_secs_f64());
        for e in &self.entries {
            let median = e.time.median().as_secs_f64();
            t.push([
                e.pipeline.clone(),
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
            ]);
        }
        t
    }
}
