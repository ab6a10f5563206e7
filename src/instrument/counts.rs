//! [`Counts`]: how many passes ran, were skipped, and changed the IR, in
//! total and per pass name.

use super::tracker::ChangeTracker;
use super::{Instrument, PassRun};
use crate::module::Module;
use crate::table::Table;
use crate::Result;
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;

/// Counts for one pass name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassCounts {
    pub name: String,
    pub ran: u64,
    pub changed: u64,
    /// Asked by `should_run` and not run (by any instrument's answer).
    pub skipped: u64,
}

#[derive(Default)]
struct State {
    rows: Vec<PassCounts>,
    index: HashMap<String, usize>,
    /// A pass asked about whose before hook has not come (yet).
    pending: Option<String>,
    tracker: Option<ChangeTracker>,
}

impl State {
    fn row(&mut self, name: &str) -> &mut PassCounts {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                self.rows.push(PassCounts {
                    name: name.to_string(),
                    ..PassCounts::default()
                });
                self.index.insert(name.to_string(), self.rows.len() - 1);
                self.rows.len() - 1
            }
        };
        &mut self.rows[i]
    }

    /// A pass asked about and then not started was skipped.
    fn settle(&mut self, starting: Option<&str>) {
        if let Some(p) = self.pending.take() {
            if starting != Some(p.as_str()) {
                self.row(&p).skipped += 1;
            }
        }
    }
}

/// Counts passes run, skipped and changing the IR (by fingerprint, per
/// function in the pass's scope; see [`PrintChanged`](super::PrintChanged)).
#[derive(Default)]
pub struct Counts {
    state: RefCell<State>,
}

impl Counts {
    pub fn new() -> Counts {
        Counts::default()
    }

    /// Adds passes this instrument could not watch itself (code generation
    /// in a forked child): per name, executions and how many changed the
    /// code.
    pub fn add_measured(&self, passes: &[(String, u64, u64)]) {
        let mut s = self.state.borrow_mut();
        for (name, ran, changed) in passes {
            let row = s.row(name);
            row.ran += ran;
            row.changed += changed;
        }
    }

    /// Per pass name, most runs first.
    pub fn rows(&self) -> Vec<PassCounts> {
        let mut s = self.state.borrow_mut();
        s.settle(None);
        let mut rows = s.rows.clone();
        rows.sort_by(|a, b| b.ran.cmp(&a.ran).then(a.name.cmp(&b.name)));
        rows
    }

    /// The totals over all names.
    pub fn totals(&self) -> PassCounts {
        let mut t = PassCounts {
            name: "total".into(),
            ..PassCounts::default()
        };
        for r in self.rows() {
            t.ran += r.ran;
            t.changed += r.changed;
            t.skipped += r.skipped;
        }
        t
    }

    /// Forgets the counts.
    pub fn clear(&self) {
        *self.state.borrow_mut() = State::default();
    }

    /// The counts as a table.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "passes run, changed and skipped",
            &["pass", "ran>", "changed>", "skipped>"],
        );
        for r in self.rows() {
            t.push([
                r.name.clone(),
                r.ran.to_string(),
                r.changed.to_string(),
                r.skipped.to_string(),
            ]);
        }
        let tot = self.totals();
        t.notes.push(format!(
            "{} passes ran, {} changed the IR, {} skipped",
            tot.ran, tot.changed, tot.skipped
        ));
        t
    }
}

impl Instrument for Counts {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds::changes())
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        let rows: Vec<_> = run
            .passes
            .iter()
            .map(|p| (p.label.clone(), p.runs, p.changed))
            .collect();
        self.add_measured(&rows);
        Ok(())
    }

    fn name(&self) -> &str {
        "counts"
    }

    fn should_run(&self, _module: &Module, pass: &PassRun) -> Result<bool> {
        let mut s = self.state.borrow_mut();
        s.settle(None);
        s.pending = Some(pass.name().to_string());
        Ok(true)
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        s.settle(Some(pass.name()));
        s.row(pass.name()).ran += 1;
        s.tracker
            .get_or_insert_with(|| ChangeTracker::new(false))
            .before(module, pass);
        Ok(())
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        s.settle(None);
        let changed = match &mut s.tracker {
            Some(t) => {
                let c = t.after(module, pass).changed;
                if pass.depth == 0 {
                    t.finish();
                }
                c
            }
            None => false,
        };
        if changed {
            s.row(pass.name()).changed += 1;
        }
        Ok(())
    }

    fn exit_pass_ctx(&self) -> Result<()> {
        self.state.borrow_mut().settle(None);
        Ok(())
    }
}
