//! [`Timing`]: how long each pass took, as a tree (each pass under the pass
//! that ran it, with total and self time) and as a flat per-name aggregate
//! like LLVM's `-time-passes`.
//!
//! Passes with the same name under the same parent are aggregated into one
//! node with a count, so the tree of `default<O2>` over sqlite3 has ~100
//! nodes, not 300,000. Time is the [`pass_clock`](super::pass_clock) the
//! dispatcher hands to every hook, which stands still while instruments'
//! hooks run: instruments do not inflate the times they report. The data stay until [`Timing::clear`].
//!
//! Each outermost pass (a `:run`'s pipeline) and each measured addition
//! (code generation) is a run of its own: [`Timing::report`] is the total
//! over every run since the instrument was made or cleared, as TVM's
//! `PassTimingInstrument` renders everything since its context was
//! entered; [`Timing::run_report`] one run's.

use super::{Instrument, PassRun};
use crate::llvm::IrUnit;
use crate::module::Module;
use crate::table::{ms, pct, Table};
use crate::Result;
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::time::Duration;

#[derive(Default)]
struct Node {
    name: String,
    unit: Option<IrUnit>,
    count: u64,
    total: Duration,
    children: Vec<usize>,
    index: HashMap<String, usize>,
}

#[derive(Default)]
struct State {
    /// Each run's unnamed root holds its outermost passes.
    nodes: Vec<Node>,
    /// The runs' roots, oldest first.
    runs: Vec<usize>,
    /// Open passes: node and start time.
    stack: Vec<(usize, Duration)>,
}

impl State {
    /// A new run's root.
    fn start_run(&mut self) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.runs.push(id);
        id
    }

    fn child(&mut self, parent: usize, name: &str, unit: IrUnit) -> usize {
        if let Some(&id) = self.nodes[parent].index.get(name) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: name.to_string(),
            unit: Some(unit),
            ..Node::default()
        });
        self.nodes[parent].children.push(id);
        self.nodes[parent].index.insert(name.to_string(), id);
        id
    }
}

/// Times every pass (see the module documentation).
pub struct Timing {
    state: RefCell<State>,
}

impl Default for Timing {
    fn default() -> Self {
        Timing::new()
    }
}

impl Timing {
    pub fn new() -> Timing {
        Timing {
            state: RefCell::new(State::default()),
        }
    }

    /// Forgets everything measured so far.
    pub fn clear(&self) {
        *self.state.borrow_mut() = State::default();
    }

    /// Adds passes this instrument could not watch itself, as another
    /// process measured them (code generation in a forked child, timed by
    /// the shim's probes; see `jit::backend::Backend`): a node `name` at the
    /// top, `total` long, holding each pass as (name, unit, executions,
    /// time).
    pub fn add_measured(
        &self,
        name: &str,
        total: Duration,
        passes: &[(String, IrUnit, u64, Duration)],
    ) {
        let mut s = self.state.borrow_mut();
        let run = s.start_run();
        let root = s.child(run, name, IrUnit::Module);
        s.nodes[root].count += 1;
        s.nodes[root].total += total;
        for (pass, unit, count, time) in passes {
            let id = s.child(root, pass, *unit);
            s.nodes[id].count += count;
            s.nodes[id].total += *time;
        }
    }

    /// What has been measured so far: the total over every run.
    pub fn report(&self) -> TimingReport {
        let runs = (0..self.runs())
            .filter_map(|i| self.run_report(i))
            .collect::<Vec<_>>();
        let mut roots: Vec<TimingNode> = Vec::new();
        for run in runs {
            merge(&mut roots, run.roots);
        }
        TimingReport { roots }
    }

    /// How many runs were measured (outermost passes, and code generation
    /// added with [`add_measured`](Timing::add_measured)).
    pub fn runs(&self) -> usize {
        self.state.borrow().runs.len()
    }

    /// The names of run `index`'s outermost passes (`O2`, `codegen (…)`).
    pub fn run_label(&self, index: usize) -> Option<String> {
        let s = self.state.borrow();
        let root = *s.runs.get(index)?;
        let names: Vec<&str> = s.nodes[root]
            .children
            .iter()
            .map(|&c| s.nodes[c].name.as_str())
            .collect();
        Some(names.join(", "))
    }

    /// What run `index` (0 the oldest) measured.
    pub fn run_report(&self, index: usize) -> Option<TimingReport> {
        let s = self.state.borrow();
        let root = *s.runs.get(index)?;
        fn build(s: &State, id: usize) -> TimingNode {
            let n = &s.nodes[id];
            let children: Vec<TimingNode> = n.children.iter().map(|&c| build(s, c)).collect();
            let inner: Duration = children.iter().map(|c| c.total).sum();
            TimingNode {
                name: n.name.clone(),
                unit: n.unit.unwrap_or(IrUnit::Module),
                count: n.count,
                total: n.total,
                self_time: n.total.saturating_sub(inner),
                children,
            }
        }
        let roots: Vec<TimingNode> = s.nodes[root]
            .children
            .iter()
            .map(|&c| build(&s, c))
            .collect();
        Some(TimingReport { roots })
    }
}

/// Adds `from` into `into`, node by node of the same name.
fn merge(into: &mut Vec<TimingNode>, from: Vec<TimingNode>) {
    for n in from {
        match into.iter_mut().find(|m| m.name == n.name) {
            Some(m) => {
                m.count += n.count;
                m.total += n.total;
                m.self_time += n.self_time;
                merge(&mut m.children, n.children);
            }
            None => into.push(n),
        }
    }
}

impl Instrument for Timing {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds::changes())
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        let rows: Vec<_> = run
            .passes
            .iter()
            .map(|p| (p.label.clone(), p.unit, p.runs, p.time))
            .collect();
        self.add_measured(run.label, run.total, &rows);
        Ok(())
    }

    fn name(&self) -> &str {
        "timing"
    }

    fn run_before_pass(&self, _module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        if pass.depth == 0 {
            // Whatever a failed run left open.
            s.stack.clear();
        }
        // A pass at depth d sits under the open pass at depth d - 1; passes
        // that ran before this instrument was registered are not on the
        // stack, so trust the stack, not `depth`. An outermost pass starts
        // a run.
        let parent = match s.stack.last() {
            Some(&(n, _)) => n,
            None if pass.depth == 0 || s.runs.is_empty() => s.start_run(),
            None => *s.runs.last().unwrap_or(&0),
        };
        let id = s.child(parent, pass.name(), pass.unit);
        s.stack.push((id, pass.clock));
        Ok(())
    }

    fn run_after_pass(&self, _module: &Module, pass: &PassRun) -> Result<()> {
        let now = pass.clock;
        let mut s = self.state.borrow_mut();
        if let Some((id, start)) = s.stack.pop() {
            let n = &mut s.nodes[id];
            n.count += 1;
            n.total += now.saturating_sub(start);
        }
        Ok(())
    }

    fn exit_pass_ctx(&self) -> Result<()> {
        // A pass that failed never got its after hook.
        self.state.borrow_mut().stack.clear();
        Ok(())
    }
}

/// One node of the timing tree: a pass name under its parent, aggregated
/// over all its runs there.
#[derive(Clone, Debug)]
pub struct TimingNode {
    pub name: String,
    pub unit: IrUnit,
    /// How many times it ran here.
    pub count: u64,
    /// Time from before to after, summed over runs.
    pub total: Duration,
    /// `total` minus the children's totals.
    pub self_time: Duration,
    pub children: Vec<TimingNode>,
}

/// A flat row: one pass name over the whole tree.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingRow {
    pub name: String,
    pub unit: IrUnit,
    pub count: u64,
    pub self_time: Duration,
    pub total: Duration,
}

/// What a [`Timing`] measured.
#[derive(Clone, Debug)]
pub struct TimingReport {
    /// The outermost passes.
    pub roots: Vec<TimingNode>,
}

impl TimingReport {
    /// The sum of the outermost passes' times.
    pub fn total(&self) -> Duration {
        self.roots.iter().map(|r| r.total).sum()
    }

    /// Every node, depth first, with its depth.
    pub fn nodes(&self) -> Vec<(usize, &TimingNode)> {
        fn walk<'a>(n: &'a TimingNode, d: usize, out: &mut Vec<(usize, &'a TimingNode)>) {
            out.push((d, n));
            for c in &n.children {
                walk(c, d + 1, out);
            }
        }
        let mut out = Vec::new();
        for r in &self.roots {
            walk(r, 0, &mut out);
        }
        out
    }

    /// Per pass name, summed over the tree, by self time (largest first):
    /// LLVM's `-time-passes`.
    pub fn flat(&self) -> Vec<TimingRow> {
        let mut rows: Vec<TimingRow> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::default();
        for (_, n) in self.nodes() {
            let i = *index.entry(&n.name).or_insert_with(|| {
                rows.push(TimingRow {
                    name: n.name.clone(),
                    unit: n.unit,
                    count: 0,
                    self_time: Duration::ZERO,
                    total: Duration::ZERO,
                });
                rows.len() - 1
            });
            rows[i].count += n.count;
            rows[i].self_time += n.self_time;
            rows[i].total += n.total;
        }
        rows.sort_by(|a, b| b.self_time.cmp(&a.self_time).then(a.name.cmp(&b.name)));
        rows
    }

    /// The number of distinct pass names that ran inside LLVM pipelines
    /// (below the outermost passes' LLVM pipelines).
    pub fn distinct_passes(&self) -> usize {
        self.flat().len()
    }

    /// TVM's rendering: one line per node, indented by depth,
    /// `name: total [self] (% of total; % of parent)`, in milliseconds.
    pub fn tree_text(&self) -> String {
        let total = self.total().as_secs_f64();
        let mut out = String::new();
        fn walk(n: &TimingNode, depth: usize, parent: f64, total: f64, out: &mut String) {
            let t = n.total.as_secs_f64();
            let runs = if n.count > 1 {
                format!(" ×{}", n.count)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "{}{}{runs}: {}ms [{}ms] ({}; {})\n",
                "  ".repeat(depth),
                n.name,
                ms(n.total),
                ms(n.self_time),
                pct(t, total),
                pct(t, parent),
            ));
            for c in &n.children {
                walk(c, depth + 1, t, total, out);
            }
        }
        for r in &self.roots {
            walk(r, 0, total, total, &mut out);
        }
        out
    }

    /// The tree as a table (pass, unit, runs, total, self, % of total).
    pub fn tree_table(&self) -> Table {
        let total = self.total().as_secs_f64();
        let mut t = Table::new(
            "pass timing (tree; self = total minus nested passes)",
            &["pass", "unit", "runs>", "total ms>", "self ms>", "% total>"],
        );
        for (d, n) in self.nodes() {
            t.push([
                format!("{}{}", "  ".repeat(d), n.name),
                n.unit.to_string(),
                n.count.to_string(),
                ms(n.total),
                ms(n.self_time),
                pct(n.total.as_secs_f64(), total),
            ]);
        }
        t.notes.push(format!("total {} ms", ms(self.total())));
        t
    }

    /// The flat aggregate as a table, top `limit` rows by self time (all when
    /// `None`); the rest summed in a note.
    pub fn flat_table(&self, limit: Option<usize>) -> Table {
        let total = self.total().as_secs_f64();
        let rows = self.flat();
        let mut t = Table::new(
            "pass timing (per pass name, by self time)",
            &["pass", "unit", "runs>", "self ms>", "% total>", "total ms>"],
        );
        let shown = limit.unwrap_or(rows.len()).min(rows.len());
        for r in &rows[..shown] {
            t.push([
                r.name.clone(),
                r.unit.to_string(),
                r.count.to_string(),
                ms(r.self_time),
                pct(r.self_time.as_secs_f64(), total),
                ms(r.total),
            ]);
        }
        if shown < rows.len() {
            let rest: Duration = rows[shown..].iter().map(|r| r.self_time).sum();
            t.notes.push(format!(
                "{} more passes: {} ms self",
                rows.len() - shown,
                ms(rest)
            ));
        }
        t.notes.push(format!(
            "{} distinct passes, total {} ms",
            rows.len(),
            ms(self.total())
        ));
        t
    }
}

impl std::fmt::Display for TimingReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.tree_text())
    }
}
