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

/// The pass name of LLVM's instruction-count remarks, asked for only when
/// named (`:instrument remarks=size-info`).
pub const SIZE_INFO: &str = "size-info";

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
    /// The run it came from (1 for the first the instrument recorded).
    pub run: usize,
    /// The pass execution it came from: its index in the run (0 for the
    /// outermost pass; the explorer numbers executions the same way), name
    /// and IR unit.
    pub execution: usize,
    pub execution_pass: String,
    pub unit: String,
}

impl Remark {
    /// A remark as shim/remarks.cpp flattens it (the back end's come so
    /// from the code-generation child), not yet attached to an execution.
    pub fn from_flat(text: &str) -> Option<Remark> {
        parse(text)
    }
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
            run: 0,
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
    let file = clean_path(f.next()?);
    let line = f.next()?.parse().unwrap_or(0);
    let column = f.next()?.parse().unwrap_or(0);
    // On one line: a few remarks (stack-frame-layout's) are tables of
    // lines, which tables and listings show as one.
    let message = f.next()?.split_whitespace().collect::<Vec<_>>().join(" ");
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
        run: 0,
        execution: 0,
        execution_pass: String::new(),
        unit: String::new(),
    })
}

/// `path` with `.` and `dir/..` taken out (LLVM joins the compilation's
/// folder and the file as clang was given it: `/a/notebooks/../zlib/x.c`).
fn clean_path(path: &str) -> String {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in std::path::Path::new(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.to_string_lossy().into_owned()
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
    /// Its kinds and functions as `:instrument remarks` settings, each
    /// after a space (` kinds=missed functions=f,g`; empty when it keeps
    /// every kind in every function).
    pub fn settings(&self) -> String {
        let mut spec = String::new();
        if !self.kinds.is_empty() {
            let k: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
            spec.push_str(&format!(" kinds={}", k.join(",")));
        }
        if !self.functions.is_empty() {
            spec.push_str(&format!(" functions={}", self.functions.join(",")));
        }
        spec
    }

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

/// One run the instrument recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemarkRun {
    /// The outermost pass (a pipeline as written), then what whoever ran
    /// it adds ([`Remarks::label_last_run`]): the module, the context.
    pub label: String,
    /// Remarks kept from it.
    pub remarks: usize,
}

/// The runs recorded, as a table: each run's number, what ran and how
/// many remarks were kept from it.
pub fn runs_table(runs: &[RemarkRun]) -> Table {
    let mut t = Table::new(
        &format!("runs the remarks instrument recorded: {}", runs.len()),
        &["run>", "what ran", "remarks>"],
    );
    for (i, x) in runs.iter().enumerate() {
        t.push([(i + 1).to_string(), x.label.clone(), x.remarks.to_string()]);
    }
    t
}

/// The run `word` names among `count` recorded (numbered from 1); the
/// message says why not.
pub fn run_number(count: usize, word: &str) -> std::result::Result<usize, String> {
    word.parse::<usize>()
        .ok()
        .filter(|n| (1..=count).contains(n))
        .ok_or_else(|| {
            format!(
                "'{word}' is not a run: {count} recorded, numbered 1 to {count} (:report remarks runs lists them)"
            )
        })
}

/// The two runs a comparison compares among `count` recorded: the two
/// named, or the last two; the message says why not.
pub fn runs_compared(
    count: usize,
    named: Option<(&str, &str)>,
) -> std::result::Result<(usize, usize), String> {
    match named {
        Some((x, y)) => Ok((run_number(count, x)?, run_number(count, y)?)),
        None if count >= 2 => Ok((count - 1, count)),
        None => Err("compare needs two runs and one is recorded: :undo, then :run another pipeline (or the same under :with cpu=...)".into()),
    }
}

/// Why there is nothing to show of run `run` (`label`, whose remarks are
/// `all`) through `filter`: it made none, or the filter keeps none.
/// `None` when some are kept.
pub fn nothing_kept(
    all: &[Remark],
    filter: &RemarkFilter,
    run: usize,
    label: &str,
) -> Option<String> {
    if all.iter().any(|x| filter.keeps(x)) {
        return None;
    }
    let described = filter.describe();
    Some(if all.is_empty() {
        format!("run {run} ({label}) made no remarks")
    } else {
        match all.len() {
            1 => format!("the one remark of run {run} is not kept by {described}"),
            n => format!("none of the {n} remarks of run {run} is kept by {described}"),
        }
    })
}

/// Where [`Remarks::rollback`] goes back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemarksMark {
    remarks: usize,
    runs: usize,
}

#[derive(Default)]
struct State {
    remarks: Vec<Remark>,
    runs: Vec<RemarkRun>,
    /// The passes started and not ended: (execution index, name, unit).
    running: Vec<(usize, String, String)>,
    /// Pass executions so far in the run under way.
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

    /// Whether the filter names LLVM's `size-info` remarks, which are
    /// asked for only then (counting the whole module after every pass of
    /// the back end costs more than the rest of code generation).
    pub fn wants_size_info(&self) -> bool {
        self.filter.passes.iter().any(|p| p == SIZE_INFO)
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

    /// The remarks of run `run` (1-based).
    pub fn of_run(&self, run: usize) -> Vec<Remark> {
        let st = self.state.borrow();
        st.remarks
            .iter()
            .filter(|r| r.run == run)
            .cloned()
            .collect()
    }

    /// The runs recorded, the first first.
    pub fn runs(&self) -> Vec<RemarkRun> {
        self.state.borrow().runs.clone()
    }

    /// Adds `more` to the last run's label (say, the module and the
    /// context's settings, which this layer does not know).
    pub fn label_last_run(&self, more: &str) {
        if let Some(r) = self.state.borrow_mut().runs.last_mut() {
            if !more.is_empty() {
                r.label.push(' ');
                r.label.push_str(more);
            }
        }
    }

    /// Records a run made elsewhere — code generation's, whose remarks the
    /// child sent — as the next run, labelled `label`; the filter applies.
    pub fn add_run(&self, label: &str, remarks: Vec<Remark>) {
        let mut st = self.state.borrow_mut();
        let run = st.runs.len() + 1;
        let kept: Vec<Remark> = remarks
            .into_iter()
            .filter(|r| self.filter.keeps(r))
            .map(|mut r| {
                r.run = run;
                r
            })
            .collect();
        st.runs.push(RemarkRun {
            label: label.to_string(),
            remarks: kept.len(),
        });
        st.remarks.extend(kept);
    }

    /// What is recorded now, to go back to with [`Remarks::rollback`].
    pub fn mark(&self) -> RemarksMark {
        let st = self.state.borrow();
        RemarksMark {
            remarks: st.remarks.len(),
            runs: st.runs.len(),
        }
    }

    /// Forgets what was recorded since `mark` (a run that failed leaves
    /// nothing behind).
    pub fn rollback(&self, mark: RemarksMark) {
        let mut st = self.state.borrow_mut();
        st.remarks.truncate(mark.remarks);
        st.runs.truncate(mark.runs);
    }

    /// Forgets what was recorded.
    pub fn clear(&self) {
        let mut st = self.state.borrow_mut();
        st.remarks.clear();
        st.runs.clear();
    }

    /// Attaches the queued remarks to the innermost running pass.
    fn drain(&self, st: &mut State) {
        let queued = QUEUE.with(|q| std::mem::take(&mut *q.borrow_mut()));
        let (execution, execution_pass, unit) =
            st.running
                .last()
                .cloned()
                .unwrap_or((st.executions, String::new(), String::new()));
        let run = st.runs.len();
        for mut r in queued {
            r.run = run;
            r.execution = execution;
            r.execution_pass.clone_from(&execution_pass);
            r.unit.clone_from(&unit);
            if self.filter.keeps(&r) {
                st.remarks.push(r);
                if let Some(last) = st.runs.last_mut() {
                    last.remarks += 1;
                }
            }
        }
    }
}

/// A table of the remarks `filter` keeps, by pass and kind: how many,
/// in how many functions, and the commonest message (numbers masked, so
/// that "cost=260" and "cost=35" count as one).
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
        let short = shorten(example, 90);
        if short != example {
            // The whole message on hover, in HTML.
            t.hover
                .insert((t.rows.len(), 4), format!("{} ({count}×)", example.trim()));
        }
        let example = short;
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

/// How a remark changed from one run to another ([`compare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RemarkChange {
    Appeared,
    Disappeared,
    Changed,
}

impl RemarkChange {
    pub fn name(self) -> &'static str {
        match self {
            RemarkChange::Appeared => "appeared",
            RemarkChange::Disappeared => "disappeared",
            RemarkChange::Changed => "changed",
        }
    }
}

/// The remarks of one place (source position, pass, function) that differ
/// between two runs: what only the first said, what only the second said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemarkDiff {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub pass: String,
    pub function: String,
    pub change: RemarkChange,
    /// `kind: message` of the remarks only the first run made here.
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// Two runs' remarks compared (see [`compare`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemarkComparison {
    pub diffs: Vec<RemarkDiff>,
    /// Places where both runs said the same.
    pub same: usize,
    /// The first run's file compared as the second's (see [`compare`]).
    pub renamed: Option<(String, String)>,
}

impl RemarkComparison {
    pub fn count(&self, change: RemarkChange) -> usize {
        self.diffs.iter().filter(|d| d.change == change).count()
    }

    /// A table of the differences (at most `top` rows), titled with the
    /// two runs' labels.
    pub fn table(&self, a: &str, b: &str, top: usize) -> Table {
        let mut t = Table::new(
            &format!(
                "remarks of {a} → {b}: {} appeared, {} disappeared, {} changed, {} places the same",
                self.count(RemarkChange::Appeared),
                self.count(RemarkChange::Disappeared),
                self.count(RemarkChange::Changed),
                self.same
            ),
            &["where", "pass", "function", "change", "before", "after"],
        );
        if let Some((old, new)) = &self.renamed {
            t.notes
                .push(format!("{old} and {new} compared line by line as one file"));
        }
        let cell = |v: &[String]| {
            v.iter()
                .map(|m| shorten(m, 110))
                .collect::<Vec<_>>()
                .join("; ")
        };
        for d in self.diffs.iter().take(top) {
            let place = if d.line == 0 {
                "-".to_string()
            } else {
                format!("{}:{}:{}", d.file, d.line, d.column)
            };
            t.push([
                place,
                d.pass.clone(),
                d.function.clone(),
                d.change.name().to_string(),
                cell(&d.before),
                cell(&d.after),
            ]);
        }
        if self.diffs.len() > top {
            t.notes.push(format!(
                "… {} more differences (top=N shows more; passes=, kinds=, functions= narrow)",
                self.diffs.len() - top
            ));
        }
        t
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// The remarks of run `a` and run `b` (those `filter` keeps) compared
/// place by place — a place is a source position (file, line, column),
/// the pass and the function; without debug info every remark of a pass
/// in a function shares one place. Within a place the remarks both runs
/// made (same kind and message) cancel; what is left is a remark that
/// appeared, disappeared, or changed (say "vectorized loop (vectorization
/// width: 4 …)" → "… width: 16", or "not inlined … cost=260" → "inlined"
/// at the same call).
///
/// When each run's remarks name one source file and not the same one (two
/// modules made from two versions of a file, `before.c` and `after.c`),
/// the two files are compared as one, under the second's name.
pub fn compare(a: &[Remark], b: &[Remark], filter: &RemarkFilter) -> RemarkComparison {
    type Place<'r> = (&'r str, u32, u32, &'r str, &'r str);
    let files = |rs: &'_ [Remark]| -> std::collections::BTreeSet<String> {
        rs.iter()
            .filter(|r| filter.keeps(r) && r.line > 0)
            .map(|r| r.file.clone())
            .collect()
    };
    let (fa, fb) = (files(a), files(b));
    let renamed = match (fa.len(), fb.len()) {
        (1, 1) if fa != fb => fa.into_iter().next().zip(fb.into_iter().next()),
        _ => None,
    };
    let mut places: BTreeMap<Place, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (side, rs) in [(0, a), (1, b)] {
        for r in rs.iter().filter(|r| filter.keeps(r)) {
            let file = match &renamed {
                Some((old, new)) if side == 0 && r.file == *old => new.as_str(),
                _ => r.file.as_str(),
            };
            let e = places
                .entry((file, r.line, r.column, &r.pass, &r.function))
                .or_default();
            let said = format!("{}: {}", r.kind.name(), r.message.trim());
            if side == 0 { &mut e.0 } else { &mut e.1 }.push(said);
        }
    }
    let mut out = RemarkComparison {
        renamed: renamed.clone(),
        ..RemarkComparison::default()
    };
    for ((file, line, column, pass, function), (mut before, mut after)) in places {
        before.sort();
        after.sort();
        let (only_a, only_b) = cancel(&before, &after);
        let change = match (only_a.is_empty(), only_b.is_empty()) {
            (true, true) => {
                out.same += 1;
                continue;
            }
            (true, false) => RemarkChange::Appeared,
            (false, true) => RemarkChange::Disappeared,
            (false, false) => RemarkChange::Changed,
        };
        out.diffs.push(RemarkDiff {
            file: file.to_string(),
            line,
            column,
            pass: pass.to_string(),
            function: function.to_string(),
            change,
            before: only_a,
            after: only_b,
        });
    }
    out
}

/// What only `before` and only `after` said, both sorted: what both said
/// cancels (a multiset difference of sorted lists).
fn cancel(before: &[String], after: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < before.len() || j < after.len() {
        match (before.get(i), after.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_a.push(x.clone());
                i += 1;
            }
            (Some(_), Some(y)) => {
                only_b.push(y.clone());
                j += 1;
            }
            (Some(x), None) => {
                only_a.push(x.clone());
                i += 1;
            }
            (None, Some(y)) => {
                only_b.push(y.clone());
                j += 1;
            }
            (None, None) => break,
        }
    }
    (only_a, only_b)
}

/// Remarks kept by `filter`, counted by the pass that emitted them and by
/// kind (in [`RemarkKind::NAMES`]' order), the most remarked pass first.
pub fn counts_by_pass(remarks: &[Remark], filter: &RemarkFilter) -> Vec<(String, [usize; 4])> {
    let mut by: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for r in remarks.iter().filter(|r| filter.keeps(r)) {
        by.entry(&r.pass).or_default()[r.kind as usize] += 1;
    }
    let mut rows: Vec<(String, [usize; 4])> =
        by.into_iter().map(|(p, c)| (p.to_string(), c)).collect();
    rows.sort_by(|a, b| {
        let (x, y): (usize, usize) = (a.1.iter().sum(), b.1.iter().sum());
        y.cmp(&x).then(a.0.cmp(&b.0))
    });
    rows
}

/// What to say of `lineless` remarks without a source line: when none of
/// `remarks` has one, the module has no debug info; otherwise LLVM gave
/// those none.
pub fn lineless_note(remarks: &[Remark], lineless: usize) -> Option<String> {
    let counted = match lineless {
        0 => return None,
        1 => "1 remark".to_string(),
        n => format!("{n} remarks"),
    };
    if remarks.iter().all(|r| r.line == 0) {
        Some(format!(
            "{counted} without a source line: the module has no debug info (load it with cflags=-g)"
        ))
    } else {
        Some(format!(
            "{counted} without a source line (their passes gave none)"
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
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds {
            remarks: true,
            size_info: self.wants_size_info(),
            ..super::MachineNeeds::default()
        })
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        self.add_run(
            &format!("{} on {}", run.label, run.module),
            run.remarks.to_vec(),
        );
        Ok(())
    }

    fn name(&self) -> &str {
        "remarks"
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut st = self.state.borrow_mut();
        if pass.depth == 0 {
            // A run begins: what a failed run left behind is dropped.
            st.running.clear();
            st.executions = 0;
            st.runs.push(RemarkRun {
                label: pass.name().to_string(),
                remarks: 0,
            });
            QUEUE.with(|q| q.borrow_mut().clear());
            // SAFETY: the module is alive for the whole outermost pass,
            // and with it its context; the handler is removed after it
            // (or, if the pass fails, stays harmlessly: it only queues).
            let ctx = unsafe { llvm_sys::core::LLVMGetModuleContext(module.raw()) };
            // SAFETY: `ctx` is live; the sink is a plain function.
            unsafe {
                crate::ffi::plab_remarks_install(
                    ctx,
                    on_remark,
                    std::ptr::null_mut(),
                    self.wants_size_info() as u32,
                )
            };
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
    fn a_filter_spells_its_kinds_and_functions_as_settings() {
        let mut f = RemarkFilter::default();
        assert_eq!(f.settings(), "");
        f.passes = vec!["gvn".into()];
        assert_eq!(f.settings(), "");
        f.kinds = vec![RemarkKind::Missed, RemarkKind::Passed];
        assert_eq!(f.settings(), " kinds=missed,passed");
        f.functions = vec!["f".into(), "g".into()];
        assert_eq!(f.settings(), " kinds=missed,passed functions=f,g");
    }

    #[test]
    fn runs_are_numbered_from_one_and_compared_two_at_a_time() {
        assert_eq!(run_number(3, "1"), Ok(1));
        assert_eq!(run_number(3, "3"), Ok(3));
        for bad in ["0", "4", "x", "-1"] {
            assert_eq!(
                run_number(3, bad),
                Err(format!("'{bad}' is not a run: 3 recorded, numbered 1 to 3 (:report remarks runs lists them)"))
            );
        }
        assert_eq!(runs_compared(3, None), Ok((2, 3)));
        assert_eq!(runs_compared(3, Some(("3", "1"))), Ok((3, 1)));
        assert!(runs_compared(3, Some(("1", "9")))
            .unwrap_err()
            .starts_with("'9' is not a run"));
        assert!(runs_compared(1, None)
            .unwrap_err()
            .starts_with("compare needs two runs"));
        let t = runs_table(&[
            RemarkRun {
                label: "O2 on m".into(),
                remarks: 4,
            },
            RemarkRun {
                label: "O3 on m".into(),
                remarks: 0,
            },
        ]);
        assert_eq!(t.title, "runs the remarks instrument recorded: 2");
        assert_eq!(t.rows, [["1", "O2 on m", "4"], ["2", "O3 on m", "0"]]);
    }

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

    fn remark(kind: RemarkKind, pass: &str, line: u32, message: &str) -> Remark {
        let mut r = parse(&format!(
            "passed\x1f{pass}\x1fX\x1fg\x1fa.c\x1f{line}\x1f3\x1f{message}"
        ))
        .unwrap();
        r.kind = kind;
        r
    }

    #[test]
    fn comparing_runs_cancels_what_both_said() {
        use RemarkKind::*;
        let a = [
            remark(
                Missed,
                "inline",
                4,
                "'h' not inlined into 'g' because too costly to inline (cost=260, threshold=225)",
            ),
            remark(
                Passed,
                "loop-vectorize",
                9,
                "vectorized loop (vectorization width: 4, interleaved count: 2)",
            ),
            remark(
                Missed,
                "licm",
                12,
                "failed to move load with loop-invariant address",
            ),
            remark(Passed, "gvn", 20, "load eliminated"),
        ];
        let b = [
            remark(
                Passed,
                "inline",
                4,
                "'h' inlined into 'g' with (cost=260, threshold=375)",
            ),
            remark(
                Passed,
                "loop-vectorize",
                9,
                "vectorized loop (vectorization width: 16, interleaved count: 2)",
            ),
            remark(Passed, "gvn", 20, "load eliminated"),
            remark(Analysis, "slp-vectorizer", 30, "cannot SLP vectorize list"),
        ];
        let c = compare(&a, &b, &RemarkFilter::default());
        assert_eq!(c.same, 1);
        let changes: Vec<_> = c.diffs.iter().map(|d| (d.line, d.change)).collect();
        assert_eq!(
            changes,
            vec![
                (4, RemarkChange::Changed),
                (9, RemarkChange::Changed),
                (12, RemarkChange::Disappeared),
                (30, RemarkChange::Appeared)
            ]
        );
        assert!(
            c.diffs[1].after[0].contains("width: 16"),
            "{:?}",
            c.diffs[1]
        );
        let t = c.table("run 1", "run 2", 2).to_text();
        assert!(
            t.contains("1 appeared, 1 disappeared, 2 changed, 1 places the same"),
            "{t}"
        );
        assert!(t.contains("2 more differences"), "{t}");
        // A filter narrows both sides.
        let only_inline = RemarkFilter {
            passes: vec!["inline".into()],
            ..Default::default()
        };
        assert_eq!(compare(&a, &b, &only_inline).diffs.len(), 1);
        let counts = counts_by_pass(&a, &RemarkFilter::default());
        assert_eq!(counts.len(), 4);
        assert_eq!(
            counts.iter().find(|c| c.0 == "inline").unwrap().1,
            [0, 1, 0, 0]
        );
    }

    #[test]
    fn paths_lose_their_dots() {
        assert_eq!(clean_path("/a/nb/../zlib/./x.c"), "/a/zlib/x.c");
        assert_eq!(clean_path("../x.c"), "../x.c");
        assert_eq!(clean_path(""), "");
    }

    #[test]
    fn messages_differing_in_numbers_are_one_shape() {
        assert_eq!(
            mask_numbers("cost=260, threshold=225"),
            "cost=N, threshold=N"
        );
    }
}
