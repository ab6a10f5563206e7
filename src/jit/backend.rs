//! What LLVM's back end did while it generated code: its passes, in the
//! order the target added them, and each execution (unit, time, whether the
//! machine code changed), as the shim's probes recorded them in the
//! code-generation child (`plab_emit_probed` in shim/mc.cpp; LLVM 19 runs
//! the back end under the legacy pass manager, which has no
//! instrumentation callbacks). [`super::asm::assembly_probed`] returns it;
//! the session hands it to the timing and counts instruments.

use std::collections::BTreeMap;
use std::time::Duration;

/// What the back end did while it made the code: its passes in the order
/// the target added them and, per pass execution, the unit, the time since
/// the previous one and whether the code changed (the shim's probes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Backend {
    /// (name as LLVM prints it, command-line argument, module pass?).
    pub passes: Vec<(String, String, bool)>,
    pub runs: Vec<BackendRun>,
    /// The whole of code generation, as the child measured it.
    pub total: Duration,
}

/// One execution of a back-end pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendRun {
    pub pass: usize,
    /// The function (empty for a module pass).
    pub function: String,
    pub time: Duration,
    pub changed: bool,
}

/// One back-end pass, summed over its executions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendPass {
    pub name: String,
    pub argument: String,
    /// A module pass (otherwise it runs per function).
    pub module: bool,
    pub runs: u64,
    pub changed: u64,
    pub time: Duration,
}

impl BackendPass {
    /// The name instruments show: the pass's command-line argument
    /// (`x86-isel`, `greedy`), as the middle end's pipeline names, or the
    /// name LLVM prints when it has none.
    pub fn label(&self) -> &str {
        if self.argument.is_empty() {
            &self.name
        } else {
            &self.argument
        }
    }
}

impl Backend {
    /// Reads the probes' record (see `plab_emit_probed` in shim/mc.cpp).
    pub(super) fn parse(text: &str) -> Backend {
        let mut b = Backend::default();
        let mut last = 0u64;
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["P", name, arg, unit] => {
                    b.passes
                        .push((name.to_string(), arg.to_string(), *unit == "module"))
                }
                ["T", ns] => b.total = Duration::from_nanos(ns.parse().unwrap_or(0)),
                [pass, function, ns, changed] => {
                    let (Ok(pass), Ok(ns)) = (pass.parse::<usize>(), ns.parse::<u64>()) else {
                        continue;
                    };
                    if pass >= b.passes.len() {
                        continue;
                    }
                    b.runs.push(BackendRun {
                        pass,
                        function: function.to_string(),
                        time: Duration::from_nanos(ns.saturating_sub(last)),
                        changed: *changed == "1",
                    });
                    last = ns;
                }
                _ => {}
            }
        }
        b
    }

    /// Each pass summed over its executions, in the order they were added
    /// (passes with the same name and argument are one).
    pub fn per_pass(&self) -> Vec<BackendPass> {
        let mut out: Vec<BackendPass> = Vec::new();
        let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
        let mut slot = vec![0usize; self.passes.len()];
        for (i, (name, arg, module)) in self.passes.iter().enumerate() {
            slot[i] = *index.entry((name.clone(), arg.clone())).or_insert_with(|| {
                out.push(BackendPass {
                    name: name.clone(),
                    argument: arg.clone(),
                    module: *module,
                    runs: 0,
                    changed: 0,
                    time: Duration::ZERO,
                });
                out.len() - 1
            });
        }
        for r in &self.runs {
            let p = &mut out[slot[r.pass]];
            p.runs += 1;
            p.changed += r.changed as u64;
            p.time += r.time;
        }
        out.retain(|p| p.runs > 0);
        out
    }
}
