//! [`Bisect`]: `-opt-bisect-limit` for every optional pass — passlab's and
//! LLVM's — plus a skip list by name; and [`search`], which halves the
//! limit until it finds the pass that first makes a result go bad.

use super::{Instrument, PassRun};
use crate::llvm::IrUnit;
use crate::module::Module;
use crate::table::Table;
use crate::Result;
use std::cell::RefCell;
use std::collections::BTreeSet;

/// One optional pass Bisect was asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BisectEntry {
    /// 1-based, in the order passes were asked about (LLVM's numbering).
    pub index: usize,
    pub pass: String,
    pub unit: IrUnit,
    pub target: String,
    pub ran: bool,
}

impl std::fmt::Display for BisectEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BISECT: {} pass ({}) {} on {} {}",
            if self.ran { "running" } else { "NOT running" },
            self.index,
            self.pass,
            self.unit,
            self.target
        )
    }
}

/// Runs only the first `limit` optional passes (all when `None`) and never
/// the skipped names; records every decision. Required passes (the
/// context's, and LLVM's pass managers and required passes) are not asked
/// and always run.
pub struct Bisect {
    limit: Option<usize>,
    skip: BTreeSet<String>,
    entries: RefCell<Vec<BisectEntry>>,
    /// Keep entries (a search only needs the count).
    keep: bool,
    count: RefCell<usize>,
}

impl Bisect {
    /// Runs the first `limit` optional passes.
    pub fn new(limit: Option<usize>) -> Bisect {
        Bisect {
            limit,
            skip: BTreeSet::new(),
            entries: RefCell::new(Vec::new()),
            keep: true,
            count: RefCell::new(0),
        }
    }

    /// Whether it records each decision (for [`Bisect::entries`]); a
    /// search turns this off for the runs whose decisions it does not read.
    pub fn keeping(mut self, keep: bool) -> Bisect {
        self.keep = keep;
        self
    }

    /// Never runs passes of these names (full text or base name).
    pub fn skipping<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Bisect {
        self.skip.extend(names.into_iter().map(Into::into));
        self
    }

    /// Every decision so far.
    pub fn entries(&self) -> Vec<BisectEntry> {
        self.entries.borrow().clone()
    }

    /// How many optional passes were asked about.
    pub fn asked(&self) -> usize {
        *self.count.borrow()
    }

    /// Forgets the decisions and restarts the count.
    pub fn clear(&self) {
        self.entries.borrow_mut().clear();
        *self.count.borrow_mut() = 0;
    }

    /// The decisions as LLVM prints them, one line each.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for e in self.entries.borrow().iter() {
            out.push_str(&e.to_string());
            out.push('\n');
        }
        out
    }

    /// The passes that did not run, as a table.
    pub fn table(&self) -> Table {
        let entries = self.entries.borrow();
        let mut t = Table::new("bisect: passes not run", &["#>", "pass", "unit", "target"]);
        for e in entries.iter().filter(|e| !e.ran) {
            t.push([
                e.index.to_string(),
                e.pass.clone(),
                e.unit.to_string(),
                e.target.clone(),
            ]);
        }
        let ran = entries.iter().filter(|e| e.ran).count();
        t.notes.push(format!(
            "{} optional passes asked, {} ran{}",
            entries.len(),
            ran,
            self.limit
                .map(|l| format!(" (limit {l})"))
                .unwrap_or_default()
        ));
        t
    }

    /// `bisect=N` as `:instrument` reads it: the first N optional passes
    /// run; the message says what is wrong with `value` (missing, or not a
    /// number).
    pub fn limited(value: Option<&str>) -> std::result::Result<Bisect, String> {
        let v = value.ok_or("bisect needs a limit: bisect=N")?;
        let n = v
            .parse::<usize>()
            .map_err(|_| format!("bisect expects a number, got '{v}'"))?;
        Ok(Bisect::new(Some(n)))
    }

    /// How many more optional passes may run under the limit (None: no
    /// limit): what the back end's gate gets after a run.
    pub fn remaining(&self) -> Option<usize> {
        self.limit.map(|l| l.saturating_sub(self.asked()))
    }

    /// The back end's decisions (pass, function, ran), numbered on from
    /// the passes asked so far, as LLVM numbers opt and llc's together.
    pub fn add_back_end<'a>(&self, decisions: impl IntoIterator<Item = (&'a str, &'a str, bool)>) {
        for (pass, function, ran) in decisions {
            let mut count = self.count.borrow_mut();
            *count += 1;
            if self.keep {
                self.entries.borrow_mut().push(BisectEntry {
                    index: *count,
                    pass: pass.to_string(),
                    unit: if function.is_empty() {
                        IrUnit::Module
                    } else {
                        IrUnit::Function
                    },
                    target: function.to_string(),
                    ran,
                });
            }
        }
    }

    fn skipped(&self, name: &str) -> bool {
        self.skip.contains(name) || self.skip.contains(crate::info::base_name(name))
    }
}

impl Instrument for Bisect {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds {
            bisect_limit: Some(self.remaining().map_or(u64::MAX, |r| r as u64)),
            ..super::MachineNeeds::changes()
        })
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        self.add_back_end(run.decisions.iter().copied());
        Ok(())
    }

    fn name(&self) -> &str {
        "bisect"
    }

    fn should_run(&self, _module: &Module, pass: &PassRun) -> Result<bool> {
        let mut count = self.count.borrow_mut();
        *count += 1;
        let ran = self.limit.is_none_or(|l| *count <= l) && !self.skipped(pass.name());
        if self.keep {
            self.entries.borrow_mut().push(BisectEntry {
                index: *count,
                pass: pass.name().to_string(),
                unit: pass.unit,
                target: pass.target.to_string(),
                ran,
            });
        }
        Ok(ran)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_a_number() {
        assert_eq!(Bisect::limited(Some("12")).unwrap().remaining(), Some(12));
        assert_eq!(
            Bisect::limited(None).err().as_deref(),
            Some("bisect needs a limit: bisect=N")
        );
        assert_eq!(
            Bisect::limited(Some("-1")).err().as_deref(),
            Some("bisect expects a number, got '-1'")
        );
    }
}
