//! [`IrSize`]: instructions, basic blocks and functions after every pass,
//! with the change each pass made — a series charts can plot.
//!
//! Counting the whole module after each of the ~300,000 passes
//! `default<O2>` runs over sqlite3 would cost more than the pipeline, so the
//! counts are kept per function and brought up to date only for the
//! functions in the pass's scope, and only when the pass did not report
//! that it changed nothing. Module passes recount everything, and so does
//! the end of every outermost pass: the series ends at the module's exact
//! count.

use super::tracker::{edits_callers, function_size, module_functions};
use super::{Instrument, PassRun};
use crate::llvm::IrUnit;
use crate::module::Module;
use crate::table::Table;
use crate::Result;
use llvm_sys::prelude::{LLVMModuleRef, LLVMValueRef};
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// The module's size after one pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizePoint {
    /// Position in the series (0-based).
    pub index: usize,
    pub pass: Rc<str>,
    pub unit: IrUnit,
    pub target: Rc<str>,
    pub depth: usize,
    pub instructions: u64,
    pub blocks: u64,
    pub functions: u64,
    /// Instructions after minus instructions before this pass (nested
    /// passes included).
    pub delta: i64,
}

#[derive(Default)]
struct Totals {
    functions: u64,
    blocks: u64,
    instructions: u64,
}

#[derive(Default)]
struct State {
    module: Option<LLVMModuleRef>,
    sizes: HashMap<LLVMValueRef, (u64, u64)>,
    totals: Totals,
    open: Vec<u64>,
    series: Vec<SizePoint>,
    names: HashMap<String, Rc<str>>,
    at: HashMap<(usize, usize), Rc<str>>,
}

impl State {
    fn recount(&mut self, module: LLVMModuleRef) {
        self.module = Some(module);
        self.sizes.clear();
        self.totals = Totals::default();
        for f in module_functions(module) {
            let (b, i) = function_size(f);
            self.sizes.insert(f, (b, i));
            self.totals.functions += 1;
            self.totals.blocks += b;
            self.totals.instructions += i;
        }
    }

    fn update(&mut self, f: LLVMValueRef) {
        let (b, i) = function_size(f);
        match self.sizes.insert(f, (b, i)) {
            Some((ob, oi)) => {
                self.totals.blocks = self.totals.blocks + b - ob;
                self.totals.instructions = self.totals.instructions + i - oi;
            }
            None => {
                self.totals.functions += 1;
                self.totals.blocks += b;
                self.totals.instructions += i;
            }
        }
    }

    /// One shared copy of each pass and unit name. Looked up first by where
    /// the text lives (pass names are LLVM's own stable copies, function
    /// names live in the IR), confirmed by comparing the text, so a point
    /// costs no string hashing.
    fn intern(&mut self, s: &str) -> Rc<str> {
        let key = (s.as_ptr() as usize, s.len());
        if let Some(r) = self.at.get(&key) {
            if &**r == s {
                return r.clone();
            }
        }
        let r = match self.names.get(s) {
            Some(r) => r.clone(),
            None => {
                let r: Rc<str> = Rc::from(s);
                self.names.insert(s.to_string(), r.clone());
                r
            }
        };
        self.at.insert(key, r.clone());
        r
    }
}

/// Records the IR size after every pass (see the module documentation).
#[derive(Default)]
pub struct IrSize {
    state: RefCell<State>,
}

impl IrSize {
    pub fn new() -> IrSize {
        IrSize::default()
    }

    /// Forgets the series.
    pub fn clear(&self) {
        *self.state.borrow_mut() = State::default();
    }

    /// The series so far, one point per pass, in the order passes ended.
    pub fn series(&self) -> Vec<SizePoint> {
        self.state.borrow().series.clone()
    }

    /// The points where the instruction count changed.
    pub fn changes(&self) -> Vec<SizePoint> {
        self.state
            .borrow()
            .series
            .iter()
            .filter(|p| p.delta != 0)
            .cloned()
            .collect()
    }

    /// The passes that changed the instruction count, as a table: all of
    /// them up to [`TABLE_ROWS`], else the largest changes (a series of
    /// hundreds of thousands of points does not print; the chart shows it
    /// whole).
    pub fn table(&self) -> Table {
        let s = self.state.borrow();
        let mut t = Table::new(
            "IR size after each pass that changed the instruction count",
            &[
                "#>",
                "pass",
                "unit",
                "target",
                "instructions>",
                "delta>",
                "blocks>",
                "functions>",
            ],
        );
        let changed: Vec<&SizePoint> = s.series.iter().filter(|p| p.delta != 0).collect();
        let mut shown = changed.clone();
        if shown.len() > TABLE_ROWS {
            // The largest changes (the first of equal ones), in run order.
            shown.sort_by_key(|p| (std::cmp::Reverse(p.delta.unsigned_abs()), p.index));
            shown.truncate(TABLE_ROWS);
            shown.sort_by_key(|p| p.index);
            t.title = format!(
                "IR size: the {TABLE_ROWS} largest of {} changes of the instruction count",
                changed.len()
            );
        }
        for p in shown {
            t.push([
                p.index.to_string(),
                format!("{}{}", "  ".repeat(p.depth), p.pass),
                p.unit.to_string(),
                p.target.to_string(),
                p.instructions.to_string(),
                format!("{:+}", p.delta),
                p.blocks.to_string(),
                p.functions.to_string(),
            ]);
        }
        t.notes.push(format!(
            "{} passes, {} left the instruction count unchanged",
            s.series.len(),
            s.series.len() - changed.len()
        ));
        if changed.len() > TABLE_ROWS {
            t.notes.push(format!(
                "{} smaller changes not listed; :plot ir-size charts the whole series",
                changed.len() - TABLE_ROWS
            ));
        }
        t
    }
}

/// The most rows [`IrSize::table`] lists.
pub const TABLE_ROWS: usize = 40;

impl Instrument for IrSize {
    fn name(&self) -> &str {
        "ir-size"
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        if pass.depth == 0 || s.module != Some(module.raw()) {
            s.open.clear();
            s.recount(module.raw());
        }
        let before = s.totals.instructions;
        s.open.push(before);
        Ok(())
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        if pass.depth == 0 || pass.scope.is_module() && pass.may_have_changed {
            s.recount(module.raw());
        } else if pass.may_have_changed {
            for f in pass.scope.functions(edits_callers(pass.name())) {
                s.update(f);
            }
        }
        let before = s.open.pop().unwrap_or(s.totals.instructions);
        let point = SizePoint {
            index: s.series.len(),
            pass: s.intern(pass.name()),
            unit: pass.unit,
            target: s.intern(pass.target),
            depth: pass.depth,
            instructions: s.totals.instructions,
            blocks: s.totals.blocks,
            functions: s.totals.functions,
            delta: s.totals.instructions as i64 - before as i64,
        };
        s.series.push(point);
        if pass.depth == 0 {
            // Function handles die with the module: never keep them.
            s.sizes.clear();
            s.at.clear();
            s.module = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{IrSize, SizePoint, TABLE_ROWS};
    use crate::llvm::IrUnit;

    fn point(index: usize, delta: i64) -> SizePoint {
        SizePoint {
            index,
            pass: "instcombine".into(),
            unit: IrUnit::Function,
            target: format!("f{index}").into(),
            depth: 1,
            instructions: 1000,
            blocks: 10,
            functions: 3,
            delta,
        }
    }

    #[test]
    fn long_series_list_their_largest_changes_in_run_order() {
        let size = IrSize::new();
        // Deltas 0, +1, -2, +3, ... : the largest are the last ones.
        size.state.borrow_mut().series = (0..200)
            .map(|i| point(i, if i % 2 == 0 { -(i as i64) } else { i as i64 }))
            .collect();
        let t = size.table();
        assert_eq!(t.rows.len(), TABLE_ROWS);
        let indices: Vec<usize> = t.rows.iter().map(|r| r[0].parse().unwrap()).collect();
        assert_eq!(indices, (160..200).collect::<Vec<_>>());
        assert!(t.title.contains("40 largest of 199 changes"), "{}", t.title);
        assert!(
            t.notes[1].starts_with("159 smaller changes"),
            "{:?}",
            t.notes
        );
        // A short series is listed whole.
        size.state.borrow_mut().series = (0..10).map(|i| point(i, i as i64)).collect();
        let t = size.table();
        assert_eq!(t.rows.len(), 9);
        assert_eq!(t.notes.len(), 1);
    }
}
