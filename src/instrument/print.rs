//! Printing IR around passes: [`PrintPasses`] (LLVM's `-print-before` /
//! `-print-after`, filtered by pass and function) and [`PrintChanged`]
//! (`-print-changed=diff`: a unified diff per changed function, only for
//! the passes that changed something; the others are counted).
//!
//! Both print one function at a time with one module-wide slot tracker
//! (see `tracker::FunctionPrinter`), and [`PrintChanged`] finds changed
//! functions by fingerprint, printing only those and diffing in-process
//! (the `similar` crate) — LLVM's own `-print-changed=diff` prints every
//! function the pass ran on and runs the system `diff` for each.

use super::tracker::{module_functions, ChangeTracker, FunctionPrinter};
use super::{Instrument, PassRun, Scope};
use crate::llvm::IrUnit;
use crate::module::Module;
use crate::Result;
use llvm_sys::prelude::LLVMValueRef;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::Write;

/// Which passes and functions to print. Empty sets match everything; a
/// pass matches by its full text or its base name (`loop-unroll` matches
/// `loop-unroll<O3>`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassFilter {
    pub passes: BTreeSet<String>,
    pub functions: BTreeSet<String>,
}

impl PassFilter {
    /// Everything.
    pub fn all() -> PassFilter {
        PassFilter::default()
    }

    /// Only these passes.
    pub fn passes<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> PassFilter {
        PassFilter {
            passes: names.into_iter().map(Into::into).collect(),
            functions: BTreeSet::new(),
        }
    }

    /// Also restrict to these functions.
    pub fn in_functions<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        names: I,
    ) -> PassFilter {
        self.functions.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether a pass of this name is selected.
    pub fn pass_matches(&self, name: &str) -> bool {
        self.passes.is_empty()
            || self.passes.contains(name)
            || self.passes.contains(crate::info::base_name(name))
    }

    /// Whether a function of this name is selected.
    pub fn function_matches(&self, name: &str) -> bool {
        self.functions.is_empty() || self.functions.contains(name)
    }
}

/// Where printed text goes: kept for [`output`](PrintPasses::output), or
/// written as it is produced (for output too large to keep).
enum Out {
    Keep(String),
    Write(Box<dyn Write>),
}

impl Out {
    fn put(&mut self, text: &str) {
        match self {
            Out::Keep(s) => s.push_str(text),
            // A failing writer (a closed pipe) must not fail the pipeline.
            Out::Write(w) => {
                let _ = w.write_all(text.as_bytes());
            }
        }
    }

    fn take(&mut self) -> String {
        match self {
            Out::Keep(s) => std::mem::take(s),
            Out::Write(w) => {
                let _ = w.flush();
                String::new()
            }
        }
    }
}

/// When [`PrintPasses`] prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Before,
    After,
}

impl When {
    fn word(self) -> &'static str {
        match self {
            When::Before => "Before",
            When::After => "After",
        }
    }
}

struct PrintState {
    out: Out,
    printer: Option<(llvm_sys::prelude::LLVMModuleRef, FunctionPrinter)>,
}

/// Prints the IR before or after the selected passes: the whole module for
/// a module pass (or the selected functions), otherwise the functions of
/// the pass's unit (a loop pass prints its function).
pub struct PrintPasses {
    when: When,
    filter: PassFilter,
    state: RefCell<PrintState>,
}

impl PrintPasses {
    /// Prints before the selected passes; text is kept for `output`.
    pub fn before(filter: PassFilter) -> PrintPasses {
        PrintPasses::new(When::Before, filter)
    }

    /// Prints after the selected passes; text is kept for `output`.
    pub fn after(filter: PassFilter) -> PrintPasses {
        PrintPasses::new(When::After, filter)
    }

    fn new(when: When, filter: PassFilter) -> PrintPasses {
        PrintPasses {
            when,
            filter,
            state: RefCell::new(PrintState {
                out: Out::Keep(String::new()),
                printer: None,
            }),
        }
    }

    /// Writes to `w` as passes run instead of keeping the text.
    pub fn writing_to(self, w: Box<dyn Write>) -> PrintPasses {
        self.state.borrow_mut().out = Out::Write(w);
        self
    }

    /// The text printed so far (emptied by the call).
    pub fn output(&self) -> String {
        self.state.borrow_mut().out.take()
    }

    fn print(&self, module: &Module, pass: &PassRun) {
        if !self.filter.pass_matches(pass.name()) {
            return;
        }
        let mut s = self.state.borrow_mut();
        let whole_module = pass.scope.is_module() && self.filter.functions.is_empty();
        if whole_module {
            let text = module.print();
            s.out.put(&format!(
                "; *** IR Dump {} {} on module {} ***\n{}\n",
                self.when.word(),
                pass.name(),
                pass.target,
                text
            ));
            return;
        }
        let functions: Vec<LLVMValueRef> = match pass.scope {
            Scope::Unit(u) if u.kind == IrUnit::Module => module_functions(module.raw()),
            _ => pass.scope.functions(false),
        };
        let raw = module.raw();
        if !matches!(&s.printer, Some((m, _)) if *m == raw) {
            s.printer = Some((raw, FunctionPrinter::new(raw)));
        }
        for f in functions {
            let name = super::tracker::function_name(f);
            if !self.filter.function_matches(&name) {
                continue;
            }
            let text = match &mut s.printer {
                Some((_, p)) => p.print(f),
                None => continue,
            };
            let on = if pass.unit == IrUnit::Function || pass.scope.is_module() {
                format!("function {name}")
            } else {
                format!("{} {} (function {name})", pass.unit, pass.target)
            };
            s.out.put(&format!(
                "; *** IR Dump {} {} on {on} ***\n{text}\n",
                self.when.word(),
                pass.name(),
            ));
        }
        if pass.scope.is_module() || pass.depth == 0 {
            // The numbering may be stale after a module pass.
            if let Some((_, p)) = &mut s.printer {
                p.refresh();
            }
        }
    }
}

impl PrintPasses {
    /// Prints a back-end pass's function, as the middle end's are printed.
    pub fn machine_step(&self, step: &super::MachineStep) {
        let text = match self.when {
            When::Before => step.before,
            When::After => step.after.or(step.before),
        };
        let Some(text) = text else { return };
        if step.module_pass
            || !self.filter.pass_matches(step.pass)
            || !self.filter.function_matches(step.function)
        {
            return;
        }
        self.state.borrow_mut().out.put(&format!(
            "; *** IR Dump {} {} on function {} ***\n{text}\n",
            self.when.word(),
            step.pass,
            step.function
        ));
    }
}

impl Instrument for PrintPasses {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds::texts())
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        run.steps.iter().for_each(|st| self.machine_step(st));
        Ok(())
    }

    fn name(&self) -> &str {
        match self.when {
            When::Before => "print-before",
            When::After => "print-after",
        }
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        if pass.depth == 0 {
            self.state.borrow_mut().printer = None;
        }
        if self.when == When::Before {
            self.print(module, pass);
        }
        Ok(())
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        if self.when == When::After {
            self.print(module, pass);
        }
        if pass.depth == 0 {
            self.state.borrow_mut().printer = None;
        }
        Ok(())
    }
}

/// One diff [`PrintChanged`] printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The pass's position among the passes that ran (0-based, in the
    /// order they ended).
    pub index: usize,
    pub pass: String,
    pub unit: IrUnit,
    pub target: String,
    pub function: String,
    /// The unified diff of the function's text.
    pub diff: String,
}

struct ChangedState {
    out: Out,
    tracker: ChangeTracker,
    keep: bool,
    changes: Vec<Change>,
    ran: usize,
    changed: usize,
    unchanged: usize,
    /// Diffs being computed on another thread, and what each belongs to
    /// (its heading, and the change to keep), in order.
    diffs: crate::diff::Background<String>,
    waiting: std::collections::VecDeque<(String, Option<Change>)>,
}

impl ChangedState {
    /// Writes (and keeps) the diffs that are ready, in order; with `wait`,
    /// all of them.
    fn flush(&mut self, wait: bool) {
        let mut lost = 0;
        for diff in self.diffs.ready(wait, &mut lost) {
            self.emit(diff);
        }
        for _ in 0..lost {
            self.emit("(the diff was lost: its thread failed)\n".to_string());
        }
    }

    /// Queues the diff of one function's `before` and `after` texts, to be
    /// computed on another thread and written under `heading` in order.
    fn queue(
        &mut self,
        heading: String,
        change: Option<Change>,
        name: String,
        before: String,
        after: String,
    ) {
        self.waiting.push_back((heading, change));
        self.diffs.submit(move || {
            crate::diff::unified(
                &before,
                &after,
                &format!("{name} (before)"),
                &format!("{name} (after)"),
                3,
            )
        });
    }

    fn emit(&mut self, diff: String) {
        let Some((heading, change)) = self.waiting.pop_front() else {
            return;
        };
        self.out.put(&heading);
        self.out.put(&diff);
        if let Some(mut c) = change {
            c.diff = diff;
            self.changes.push(c);
        }
    }
}

/// Prints a unified diff, per function, after each selected pass that
/// changed the IR; counts the passes that did not. A pass whose only
/// changes were made by passes nested in it (a pass manager such as
/// `inliner-wrapper`) counts as changed without printing them again.
pub struct PrintChanged {
    filter: PassFilter,
    state: RefCell<ChangedState>,
}

impl Default for PrintChanged {
    fn default() -> Self {
        PrintChanged::new(PassFilter::all())
    }
}

impl PrintChanged {
    /// Diffs after the selected passes; diffs are kept ([`changes`](Self::changes)).
    pub fn new(filter: PassFilter) -> PrintChanged {
        PrintChanged {
            filter,
            state: RefCell::new(ChangedState {
                out: Out::Keep(String::new()),
                tracker: ChangeTracker::new(true),
                keep: true,
                changes: Vec::new(),
                ran: 0,
                changed: 0,
                unchanged: 0,
                diffs: Default::default(),
                waiting: Default::default(),
            }),
        }
    }

    /// Writes the diffs to `w` as passes run instead of keeping them.
    pub fn writing_to(self, w: Box<dyn Write>) -> PrintChanged {
        {
            let mut s = self.state.borrow_mut();
            s.out = Out::Write(w);
            s.keep = false;
        }
        self
    }

    /// The diffs kept so far.
    pub fn changes(&self) -> Vec<Change> {
        let mut s = self.state.borrow_mut();
        s.flush(true);
        s.changes.clone()
    }

    /// (passes that changed the IR, passes that did not).
    pub fn counts(&self) -> (usize, usize) {
        let s = self.state.borrow();
        (s.changed, s.unchanged)
    }

    /// The text printed so far, with a closing count (emptied by the call).
    pub fn output(&self) -> String {
        let mut s = self.state.borrow_mut();
        s.flush(true);
        let mut text = s.out.take();
        text.push_str(&format!(
            "; {} passes changed the IR, {} did not\n",
            s.changed, s.unchanged
        ));
        text
    }

    /// A back-end pass: counted, and when it changed a selected function,
    /// its diff (MIR after instruction selection).
    pub fn machine_step(&self, step: &super::MachineStep) {
        let mut s = self.state.borrow_mut();
        let index = s.ran;
        s.ran += 1;
        if !step.changed {
            s.unchanged += 1;
            return;
        }
        s.changed += 1;
        let (Some(before), Some(after)) = (step.before, step.after) else {
            return;
        };
        if step.module_pass
            || !self.filter.pass_matches(step.pass)
            || !self.filter.function_matches(step.function)
        {
            return;
        }
        let name = step.function.to_string();
        let heading = format!("*** IR Dump After {} on function {name} ***\n", step.pass);
        let change = s.keep.then(|| Change {
            index,
            pass: step.pass.to_string(),
            unit: IrUnit::Function,
            target: name.clone(),
            function: name.clone(),
            diff: String::new(),
        });
        s.queue(heading, change, name, before.to_string(), after.to_string());
        s.flush(false);
    }

    /// Forgets diffs and counts.
    pub fn clear(&self) {
        let mut s = self.state.borrow_mut();
        s.flush(true);
        s.changes.clear();
        s.out.take();
        s.ran = 0;
        s.changed = 0;
        s.unchanged = 0;
    }
}

impl Instrument for PrintChanged {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds::texts())
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        run.steps.iter().for_each(|st| self.machine_step(st));
        Ok(())
    }

    fn closing(&self) -> String {
        self.output()
    }

    fn name(&self) -> &str {
        "print-changed"
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        self.state.borrow_mut().tracker.before(module, pass);
        Ok(())
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        let change = s.tracker.after(module, pass);
        let index = s.ran;
        s.ran += 1;
        if change.changed {
            s.changed += 1;
        } else {
            s.unchanged += 1;
        }
        if pass.depth == 0 {
            s.tracker.finish();
        }
        if !change.functions.is_empty() && self.filter.pass_matches(pass.name()) {
            for f in change.functions {
                if !self.filter.function_matches(&f.name) {
                    continue;
                }
                let before = f.before.unwrap_or_default();
                let after = f.after.unwrap_or_default();
                let on = match pass.unit {
                    IrUnit::Function => format!("function {}", f.name),
                    unit => format!("{unit} {} (function {})", pass.target, f.name),
                };
                let heading = format!("*** IR Dump After {} on {on} ***\n", pass.name());
                let change = s.keep.then(|| Change {
                    index,
                    pass: pass.name().to_string(),
                    unit: pass.unit,
                    target: pass.target.to_string(),
                    function: f.name.clone(),
                    diff: String::new(),
                });
                s.queue(heading, change, f.name, before, after);
            }
        }
        // What is ready goes out now; all of it when the run ends.
        s.flush(pass.depth == 0);
        Ok(())
    }
}
