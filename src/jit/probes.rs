//! What the back end did while it generated code, as the shim's probes
//! record it in the code-generation child (`plab_emit_probed` in
//! shim/mc.cpp): its passes in the order the target added them, each
//! execution (unit, time, whether the machine code changed, the text when
//! kept), the opt-bisect gate's decisions and the remarks. [`Reader`]
//! reads the record as the child streams it; `asm::assembly_probed` returns
//! the [`Backend`] it makes, and `backend::record` hands it to the
//! instruments.

use super::codegen::GateDecision;
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
    /// The opt-bisect gate's decisions (with `Codegen::bisect_limit`).
    pub decisions: Vec<GateDecision>,
    /// The optimization remarks (with `Probe::remarks`), flattened as
    /// shim/remarks.cpp writes them, each with the execution (an index
    /// into `runs`) that made it.
    pub remarks: Vec<(usize, String)>,
}

/// Reads the probes' record as it arrives, in pieces cut anywhere (the
/// child streams it while it compiles: the session reads a whole program's
/// record, hundreds of megabytes, as it is made, never holding it whole).
#[derive(Default)]
pub(crate) struct Reader {
    backend: Backend,
    /// What is left of the pieces fed: an incomplete line or text.
    pending: Vec<u8>,
    /// The time of the last execution noted (the record's are cumulative).
    last: u64,
}

impl Reader {
    /// Reads what `piece` completes.
    pub(crate) fn feed(&mut self, piece: &[u8]) {
        self.pending.extend_from_slice(piece);
        let mut at = 0;
        while let Some(end) = self.pending[at..].iter().position(|&c| c == b'\n') {
            let line = &self.pending[at..at + end];
            let remark = line.starts_with(b"R\t");
            if let Some(len) = line
                .strip_prefix(b"M\t")
                .or_else(|| line.strip_prefix(b"R\t"))
            {
                // A text: its length, then its bytes, all there or wait.
                let len = std::str::from_utf8(len)
                    .ok()
                    .and_then(|l| l.parse::<usize>().ok())
                    .unwrap_or(usize::MAX);
                let start = at + end + 1;
                let Some(stop) = start.checked_add(len).filter(|&s| s <= self.pending.len()) else {
                    if len == usize::MAX {
                        // A malformed length: the line is skipped.
                        at = start;
                        continue;
                    }
                    break;
                };
                let text = String::from_utf8_lossy(&self.pending[start..stop]).into_owned();
                if remark {
                    // Made by the execution noted next.
                    self.backend.remarks.push((self.backend.runs.len(), text));
                } else if let Some(run) = self.backend.runs.last_mut() {
                    run.text = Some(text);
                }
                at = stop;
                continue;
            }
            let line = String::from_utf8_lossy(line).into_owned();
            self.backend.line(&line, &mut self.last);
            at += end + 1;
        }
        self.pending.drain(..at);
    }

    /// The record read; a last line without its newline is read too, and a
    /// text cut short is kept as far as it goes.
    pub(crate) fn finish(mut self) -> Backend {
        if self.pending.starts_with(b"M\t") {
            let text = match self.pending.iter().position(|&c| c == b'\n') {
                Some(end) => String::from_utf8_lossy(&self.pending[end + 1..]).into_owned(),
                None => String::new(),
            };
            if let Some(run) = self.backend.runs.last_mut() {
                run.text = Some(text);
            }
        } else if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            self.backend.line(&line, &mut self.last);
        }
        self.backend
    }
}

/// One execution of a back-end pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendRun {
    pub pass: usize,
    /// The function (empty for a module pass).
    pub function: String,
    pub time: Duration,
    pub changed: bool,
    /// The unit's text after the pass, when it changed it and the probes
    /// kept texts: MIR (as llc's -print-after-all), or IR before
    /// instruction selection.
    pub text: Option<String>,
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
    /// Reads the probes' record (see `plab_emit_probed` in shim/mc.cpp):
    /// lines, each changed unit's text as `M\tlength\n` and the bytes, the
    /// gate's decisions last.
    #[cfg(test)]
    pub(super) fn parse(record: &[u8]) -> Backend {
        let mut r = Reader::default();
        r.feed(record);
        r.finish()
    }

    /// One line of the record (not a text's bytes), into `self`.
    fn line(&mut self, line: &str, last: &mut u64) {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["P", name, arg, unit] => {
                self.passes
                    .push((name.to_string(), arg.to_string(), *unit == "module"))
            }
            ["T", ns] => self.total = Duration::from_nanos(ns.parse().unwrap_or(0)),
            ["B", ..] => self.decisions.extend(GateDecision::parse(line)),
            [pass, function, ns, changed] => {
                let (Ok(pass), Ok(ns)) = (pass.parse::<usize>(), ns.parse::<u64>()) else {
                    return;
                };
                if pass >= self.passes.len() {
                    return;
                }
                self.runs.push(BackendRun {
                    pass,
                    function: function.to_string(),
                    time: Duration::from_nanos(ns.saturating_sub(*last)),
                    changed: *changed == "1",
                    text: None,
                });
                *last = ns;
            }
            _ => {}
        }
    }

    /// The name instruments show for pass `i` (see [`BackendPass::label`]).
    pub fn label(&self, i: usize) -> &str {
        match self.passes.get(i) {
            Some((name, arg, _)) if arg.is_empty() => name,
            Some((_, arg, _)) => arg,
            None => "",
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_read_with_texts_and_decisions() {
        let mut r = b"P\tX86 DAG->DAG Instruction Selection\tx86-isel\tfunction\nT\t900\n".to_vec();
        r.extend_from_slice(b"0\tf\t500\t1\nM\t13\n# Machine\ncod");
        r.extend_from_slice(b"R\t10\nspilled\x1f\nx\n0\tg\t700\t0\n");
        r.extend_from_slice(
            b"B\t1\tMachine CSE\tfunction (f)\t1\nB\t2\tMachine CSE\tfunction (g)\t0\n",
        );
        let b = Backend::parse(&r);
        assert_eq!(b.passes.len(), 1);
        assert_eq!(b.label(0), "x86-isel");
        assert_eq!(b.runs.len(), 2);
        assert_eq!(b.runs[0].text.as_deref(), Some("# Machine\ncod"));
        assert_eq!(b.runs[1].time, Duration::from_nanos(200));
        assert_eq!(b.runs[1].text, None);
        assert_eq!(b.total, Duration::from_nanos(900));
        assert_eq!(b.decisions.len(), 2);
        assert_eq!(b.decisions[1].function, "g");
        // A remark belongs to the execution noted after it.
        assert_eq!(b.remarks, vec![(1, "spilled\x1f\nx".to_string())]);
        assert!(!b.decisions[1].ran);
        // Read in pieces cut anywhere (as the child streams it), the same.
        for size in 1..r.len() {
            let mut reader = Reader::default();
            r.chunks(size).for_each(|piece| reader.feed(piece));
            assert_eq!(reader.finish(), b, "pieces of {size} bytes");
        }
        // A text cut short is kept as far as it goes.
        let b = Backend::parse(b"P\ta\t\tfunction\n0\tf\t1\t1\nM\t99\nabc");
        assert_eq!(b.runs[0].text.as_deref(), Some("abc"));
    }
}
