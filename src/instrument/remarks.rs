//! [`Remarks`]: LLVM's optimization remarks — what a pass did (`passed`),
//! could not do and why (`missed`), what it measured (`analysis`) — each
//! attached to the pass execution that emitted it.
//!
//! While the outermost pass of a run is under way, a diagnostic handler of
//! the shim (`shim/remarks.cpp`) sits on the module's context and asks
//! LLVM's passes for every remark (they build none otherwise); each lands in
//! a queue of this thread. Every hook drains the queue into the pass that
//! was running when the remarks came: the innermost one started and not yet
//! ended. A user's pass adds remarks to the same queue with [`emit`]
//! (the prelude's `remark`).
//!
//! ```
//! use passlab::instrument::Remarks;
//! use passlab::{pipeline, Module, PassContext};
//! use std::rc::Rc;
//!
//! let ir = "define internal i32 @sq(i32 %x) {\n  %m = mul i32 %x, %x\n  ret i32 %m\n}\n\
//!           define i32 @f(i32 %y) {\n  %s = call i32 @sq(i32 %y)\n  ret i32 %s\n}\n";
//! let mut m = Module::from_ir(ir, "f.ll").unwrap();
//! let remarks = Rc::new(Remarks::new());
//! let scope = PassContext::inherit().with_instrument(remarks.clone()).enter().unwrap();
//! pipeline::parse("default<O2>").unwrap().apply(&mut m).unwrap();
//! drop(scope);
//! let all = remarks.remarks();
//! assert!(all.iter().any(|r| r.pass == "inline" && r.message.contains("'sq' inlined into 'f'")));
//! ```

use super::{Instrument, PassRun};
use crate::module::Module;
use crate::table::Table;
use crate::Result;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::os::raw::c_char;

/// What a remark says a pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RemarkKind {
    /// The pass did something ("'f' inlined into 'g'", "vectorized loop").
    Passed,
    /// It could not, and says why.
    Missed,
    /// What it measured or found.
    Analysis,
    /// A transformation asked for (a pragma) that failed.
    Failure,
}

impl RemarkKind {
    /// The kinds by name, as filters take them.
    pub const NAMES: &'static [&'static str] = &["passed", "missed", "analysis", "failure"];

    pub fn parse(word: &str) -> Option<RemarkKind> {
        match word {
            "passed" => Some(RemarkKind::Passed),
            "missed" => Some(RemarkKind::Missed),
            "analysis" => Some(RemarkKind::Analysis),
            "failure" => Some(RemarkKind::Failure),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RemarkKind::Passed => "passed",
            RemarkKind::Missed => "missed",
            RemarkKind::Analysis => "analysis",
            RemarkKind::Failure => "failure",
        }
    }
}

/// One remark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remark {
    pub kind: RemarkKind,
    /// The pass that emitted it, as LLVM names it in remarks (`inline`,
    /// `loop-vectorize`, `licm`, `gvn`).
    pub pass: String,
    /// The remark's identifier (`Inlined`, `MissedDetails`, `Vectorized`).
    pub name: String,
    pub function: String,
    /// Source file, line and column (with debug info; line 0 without).
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The message, its arguments spelled in.
    pub message: String,
    /// The arguments by key (`Callee`, `Cost`, `Threshold`,
    /// `VectorizationFactor`…), in order.
    pub args: Vec<(String, String)>,
    /// The pass execution it came from: its index in the run (0 for the
    /// first pass that ran), name and IR unit.
    pub execution: usize,
    pub execution_pass: String,
    pub unit: String,
}

/// A remark as a user's pass emits it ([`emit`]).
#[derive(Clone, Debug, Default)]
pub struct UserRemark {
    pub pass: String,
    pub name: String,
    pub function: String,
    pub message: String,
}

thread_local! {
    /// Remarks not yet attached to their pass execution.
    static QUEUE: RefCell<Vec<Remark>> = const { RefCell::new(Vec::new()) };
    /// Remarks instruments recording on this thread (user remarks are
    /// dropped when none is).
    static LISTENING: Cell<usize> = const { Cell::new(0) };
}

/// Adds a remark from a user's pass (Rust or plugin) to the pass that is
/// running; dropped when no remarks instrument records.
pub fn emit(kind: RemarkKind, remark: UserRemark) {
    if LISTENING.with(Cell::get) == 0 {
        return;
    }
    QUEUE.with(|q| {
        q.borrow_mut().push(Remark {
            kind,
            pass: remark.pass,
            name: remark.name,
            function: remark.function,
            file: String::new(),
            line: 0,
            column: 0,
            message: remark.message,
            args: Vec::new(),
            execution: 0,
            execution_pass: String::new(),
            unit: String::new(),
        })
    });
}

/// The shim's sink: one flattened remark (see shim/remarks.cpp).
unsafe extern "C" fn on_remark(_user: *mut c_void, data: *const c_char, len: usize) {
    // SAFETY: the shim passes `len` readable bytes at `data`.
    let text = unsafe { crate::ffi::str_from(data, len) };
    // A panic must not unwind into LLVM: the remark is dropped instead.
    let _ = std::panic::catch_unwind(|| {
        if let Some(p) = parse(&text) {
            QUEUE.with(|q| q.borrow_mut().push(p));
        }
    });
}

/// A flattened remark, not yet attached to its pass execution.
fn parse(text: &str) -> Option<Remark> {
    let mut f = text.split('\x1f');
    let kind = match f.next()? {
        "passed" => RemarkKind::Passed,
        "missed" => RemarkKind::Missed,
        "failure" => RemarkKind::Failure,
        _ => RemarkKind::Analysis,
    };
    let pass = f.next()?.to_string();
    let name = f.next()?.to_string();
    let function = f.next()?.to_string();
    let file = f.next()?.to_string();
    let line = f.next()?.parse().unwrap_or(0);
    let column = f.next()?.parse().unwrap_or(0);
    let message = f.next()?.to_string();
    let mut args = Vec::new();
    while let (Some(k), Some(v)) = (f.next(), f.next()) {
        args.push((k.to_string(), v.to_string()));
    }
    Some(Remark {
        kind,
        pass,
        name,
        function,
        file,
        line,
        column,
        message,
        args,
        execution: 0,
        execution_pass: String::new(),
        unit: String::new(),
    })
}

/// Which remarks to keep: by the emitting pass's name (or the name of the
/// pass execution), kind and function; empty lists keep all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemarkFilter {
    pub passes: Vec<String>,
    pub kinds: Vec<RemarkKind>,
    pub functions: Vec<String>,
}

impl RemarkFilter {
    pub fn keeps(&self, r: &Remark) -> bool {
        (self.passes.is_empty()
            || self
                .passes
                .iter()
                .any(|p| *p == r.pass || *p == r.execution_pass))
            && (self.kinds.is_empty() || self.kinds.contains(&r.kind))
            && (self.functions.is_empty() || self.functions.contains(&r.function))
    }

    /// The filter in `:instrument`'s words (empty when it keeps all).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.passes.is_empty() {
            parts.push(format!("passes {}", self.passes.join(", ")));
        }
        if !self.kinds.is_empty() {
            let k: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
            parts.push(format!("kinds {}", k.join(", ")));
        }
        if !self.functions.is_empty() {
            parts.push(format!("functions {}", self.functions.join(", ")));
        }
        parts.join("; ")
    }
}

#[derive(Default)]
struct State {
    remarks: Vec<Remark>,
    /// The passes started and not ended: (execution index, name, unit).
    running: Vec<(usize, String, String)>,
    executions: usize,
    /// The context the handler is installed on, during a run.
    context: Option<llvm_sys::prelude::LLVMContextRef>,
}

/// Records LLVM's optimization remarks, each with the pass execution that
/// emitted it (see the module documentation).
#[derive(Default)]
pub struct Remarks {
    filter: RemarkFilter,
    state: RefCell<State>,
}

impl Remarks {
    pub fn new() -> Remarks {
        Remarks::default()
    }

    /// Keeps only the remarks `filter` keeps.
    pub fn filtered(filter: RemarkFilter) -> Remarks {
        Remarks {
            filter,
            ..Remarks::default()
        }
    }

    /// Every remark recorded, in the order they came.
    pub fn remarks(&self) -> Vec<Remark> {
        self.state.borrow().remarks.clone()
    }

    /// Forgets what was recorded.
    pub fn clear(&self) {
        self.state.borrow_mut().remarks.clear();
    }

    /// Attaches the queued remarks to the innermost running pass.
    fn drain(&self, st: &mut State) {
        let queued = QUEUE.with(|q| std::mem::take(&mut *q.borrow_mut()));
        let (execution, execution_pass, unit) =
            st.running
                .last()
                .cloned()
                .unwrap_or((st.executions, String::new(), String::new()));
        for mut r in queued {
            r.execution = execution;
            r.execution_pass.clone_from(&execution_pass);
            r.unit.clone_from(&unit);
            if self.filter.keeps(&r) {
                st.remarks.push(r);
            }
        }
    }

    /// A table of the remarks `filter` keeps, by pass and kind: how many,
    /// in how many functions, and the commonest message (numbers masked,
    /// so that "cost=260" and "cost=35" count as one).
    pub fn table(&self, filter: &RemarkFilter) -> Table {
        table(&self.state.borrow().remarks, filter)
    }
}

/// See [`Remarks::table`].
pub fn table(remarks: &[Remark], filter: &RemarkFilter) -> Table {
    type Group<'a> = (
        usize,
        BTreeMap<&'a str, ()>,
        BTreeMap<String, (usize, &'a str)>,
    );
    let mut groups: BTreeMap<(&str, RemarkKind), Group> = BTreeMap::new();
    let mut kept = 0;
    for r in remarks.iter().filter(|r| filter.keeps(r)) {
        kept += 1;
        let g = groups.entry((r.pass.as_str(), r.kind)).or_default();
        g.0 += 1;
        g.1.insert(&r.function, ());
        let shape = mask_numbers(&r.message);
        g.2.entry(shape).or_insert((0, &r.message)).0 += 1;
    }
    let mut rows: Vec<_> = groups.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    let title = match filter.describe() {
        d if d.is_empty() => format!("remarks: {kept}"),
        d => format!("remarks ({d}): {kept} of {}", remarks.len()),
    };
    let mut t = Table::new(
        &title,
        &[
            "pass",
            "kind",
            "remarks>",
            "functions>",
            "commonest message",
        ],
    );
    for ((pass, kind), (n, functions, shapes)) in rows {
        let (count, example) = shapes
            .values()
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(a.1)))
            .copied()
            .unwrap_or((0, ""));
        let example: String = example.chars().take(90).collect();
        t.push([
            pass.to_string(),
            kind.name().to_string(),
            n.to_string(),
            functions.len().to_string(),
            format!("{example} ({count}×)"),
        ]);
    }
    let lineless = remarks
        .iter()
        .filter(|r| filter.keeps(r) && r.line == 0)
        .count();
    if let Some(note) = lineless_note(remarks, lineless) {
        t.notes.push(note);
    }
    t
}

/// What to say of `lineless` remarks without a source line: when none of
/// `remarks` has one, the module has no debug info; otherwise LLVM gave
/// those none.
pub fn lineless_note(remarks: &[Remark], lineless: usize) -> Option<String> {
    if lineless == 0 {
        None
    } else if remarks.iter().all(|r| r.line == 0) {
        Some(format!(
            "{lineless} remarks without a source line: the module has no debug info (load it with cflags=-g)"
        ))
    } else {
        Some(format!(
            "{lineless} remarks without a source line (their passes gave none)"
        ))
    }
}

/// The message with each run of digits as `N`.
fn mask_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_number = false;
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

impl Instrument for Remarks {
    fn name(&self) -> &str {
        "remarks"
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut st = self.state.borrow_mut();
        if pass.depth == 0 {
            // A run begins: what a failed run left behind is dropped.
            st.running.clear();
            QUEUE.with(|q| q.borrow_mut().clear());
            // SAFETY: the module is alive for the whole outermost pass,
            // and with it its context; the handler is removed after it
            // (or, if the pass fails, stays harmlessly: it only queues).
            let ctx = unsafe { llvm_sys::core::LLVMGetModuleContext(module.raw()) };
            // SAFETY: `ctx` is live; the sink is a plain function.
            unsafe { crate::ffi::plab_remarks_install(ctx, on_remark, std::ptr::null_mut()) };
            if st.context.replace(ctx).is_none() {
                LISTENING.with(|l| l.set(l.get() + 1));
            }
        } else {
            self.drain(&mut st);
        }
        let index = st.executions;
        st.executions += 1;
        st.running
            .push((index, pass.name().to_string(), pass.target.to_string()));
        Ok(())
    }

    fn run_after_pass(&self, _module: &Module, pass: &PassRun) -> Result<()> {
        let mut st = self.state.borrow_mut();
        self.drain(&mut st);
        st.running.pop();
        if pass.depth == 0 {
            if let Some(ctx) = st.context.take() {
                // SAFETY: the module, and so its context, is still alive
                // after its outermost pass.
                unsafe { crate::ffi::plab_remarks_remove(ctx) };
                LISTENING.with(|l| l.set(l.get().saturating_sub(1)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattened_remarks_parse_with_their_arguments() {
        let p = parse("missed\x1finline\x1fTooCostly\x1fg\x1fa.c\x1f3\x1f7\x1f'h' not inlined\x1fCallee\x1fh\x1fCost\x1f260").unwrap();
        assert_eq!(p.kind, RemarkKind::Missed);
        assert_eq!(
            (p.pass.as_str(), p.name.as_str(), p.function.as_str()),
            ("inline", "TooCostly", "g")
        );
        assert_eq!((p.line, p.column), (3, 7));
        assert_eq!(
            p.args,
            vec![("Callee".into(), "h".into()), ("Cost".into(), "260".into())]
        );
        assert!(parse("passed\x1fonly").is_none());
    }

    #[test]
    fn messages_differing_in_numbers_are_one_shape() {
        assert_eq!(
            mask_numbers("cost=260, threshold=225"),
            "cost=N, threshold=N"
        );
    }
}
