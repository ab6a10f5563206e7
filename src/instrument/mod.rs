//! Instruments: the five hooks of the seed design, called around every pass
//! the infrastructure runs — and around every pass LLVM runs inside an LLVM
//! pipeline, nested under it, with the IR unit named.
//!
//! Per pass: every instrument's `should_run` (not asked for passes in the
//! context's required set, nor for LLVM's required passes; all are asked and
//! the answers ANDed), then every `run_before_pass`, the pass, every
//! `run_after_pass`. `enter_pass_ctx` and `exit_pass_ctx` run when a context
//! that registered the instrument is entered and left (see
//! [`PassContext::enter`](crate::PassContext::enter)). An error from a hook
//! propagates: the pass fails, the module is rolled back, and the context's
//! instruments still get their exit when the scope ends.
//!
//! Built-in instruments, each a small module: [`Timing`], [`IrSize`],
//! [`PrintPasses`] before/after, [`PrintChanged`],
//! [`VerifyEach`], [`Bisect`], [`Trace`], [`Counts`], [`Remarks`] and [`DumpIr`]. Their results are
//! data (rows a table or chart can use) with a text rendering, and stay
//! readable after the context exits, until cleared.
//!
//! Every pass comes through the dispatch here — from `pass::call` for
//! passlab's passes, from the bridge in `pass/llvm_pass.rs` for the passes
//! LLVM runs — with a [`PassRun`] (the pass, its IR unit and name, nesting
//! depth, whether LLVM runs it, whether it may have changed anything);
//! LLVM's pass managers and adaptors are not passes (the shim filters
//! them). The
//! [`pass_clock`] stands still while hooks run, so instruments do not
//! inflate the times they report. Instruments never hold LLVM handles past
//! the outermost pass. This layer knows no pass kinds and no contexts.
//!
//! A custom instrument is a few closures:
//!
//! ```
//! use passlab::instrument::FnInstrument;
//! use passlab::{pipeline, Module, PassContext};
//! use std::cell::Cell;
//! use std::rc::Rc;
//!
//! let seen = Rc::new(Cell::new(0));
//! let counter = seen.clone();
//! let count = FnInstrument::new("count").on_before(move |_module, pass| {
//!     if pass.inside_llvm {
//!         counter.set(counter.get() + 1);
//!     }
//!     Ok(())
//! });
//! let mut m = Module::from_c("int f(int x) { return x + 1; }", "f.c").unwrap();
//! let scope = PassContext::inherit().with_instrument(Rc::new(count)).enter().unwrap();
//! pipeline::parse("default<O2>").unwrap().apply(&mut m).unwrap();
//! drop(scope);
//! assert!(seen.get() > 10);
//! ```

mod bisect;
mod counts;
mod dump_ir;
mod explore;
mod ir_size;
pub mod print;
mod remarks;
mod timing;
mod trace;
mod tracker;
mod verify;

pub use bisect::{Bisect, BisectEntry};
pub use counts::{Counts, PassCounts};
pub use dump_ir::{Dump, DumpIr};
pub use explore::{Explore, FunctionLog, PassNode, Reach, Recording, Version};
pub use ir_size::{IrSize, SizePoint};
pub use print::{Change, PassFilter, PrintChanged, PrintPasses, When};
pub use remarks::{
    compare as compare_remarks, counts_by_pass as remark_counts, emit as emit_remark,
    lineless_note, nothing_kept as remarks_nothing_kept, run_number as remark_run_number,
    runs_compared as remark_runs_compared, runs_table as remark_runs_table, table as remark_table,
    Remark, RemarkChange, RemarkComparison, RemarkDiff, RemarkFilter, RemarkKind, RemarkRun,
    Remarks, RemarksMark, UserRemark, SIZE_INFO,
};
pub use timing::{Timing, TimingNode, TimingReport, TimingRow};
pub use trace::Trace;
pub use tracker::{printer_stats, PrinterStats};
pub use verify::{VerifyEach, VerifyFailure};

/// One execution of a back-end pass, as code generation's probes saw it:
/// the back end runs under LLVM's legacy pass manager, outside passlab's
/// (see `jit::backend`), so the instruments that show it take its record
/// after the fact, in the order passes ran.
#[derive(Clone, Copy, Debug)]
pub struct MachineStep<'a> {
    /// The pass's command-line name (`x86-isel`, `greedy`) or LLVM's name.
    pub pass: &'a str,
    /// A module pass (`function` is empty).
    pub module_pass: bool,
    pub function: &'a str,
    pub changed: bool,
    /// The function's text before and after the pass (MIR, or IR before
    /// instruction selection), when the probes kept texts.
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

use crate::info::PassInfo;
use crate::llvm::{IrUnit, UnitRef};
use crate::module::Module;
use crate::{Error, Result};
use llvm_sys::prelude::LLVMValueRef;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Observes (and may veto) passes. Every hook has a do-nothing default.
pub trait Instrument {
    /// A short name for listings.
    fn name(&self) -> &str;

    /// Called when a context with this instrument is entered.
    fn enter_pass_ctx(&self) -> Result<()> {
        Ok(())
    }

    /// Called when that context is left.
    fn exit_pass_ctx(&self) -> Result<()> {
        Ok(())
    }

    /// Whether an optional pass should run.
    fn should_run(&self, _module: &Module, _pass: &PassRun) -> Result<bool> {
        Ok(true)
    }

    /// Called before a pass that runs.
    fn run_before_pass(&self, _module: &Module, _pass: &PassRun) -> Result<()> {
        Ok(())
    }

    /// Called after a pass that ran.
    fn run_after_pass(&self, _module: &Module, _pass: &PassRun) -> Result<()> {
        Ok(())
    }

    /// What code generation's probes must record for this instrument to
    /// see the back end; `None` (the default): it sees nothing of it.
    fn machine_needs(&self) -> Option<MachineNeeds> {
        None
    }

    /// What the back end did, after code generation, for an instrument
    /// whose [`machine_needs`](Instrument::machine_needs) is `Some`.
    fn machine_run(&self, _run: &MachineRun) -> Result<()> {
        Ok(())
    }

    /// What the instrument prints when a run (a pipeline, or code
    /// generation) has ended, such as a closing count; empty by default.
    fn closing(&self) -> String {
        String::new()
    }
}

/// What code generation's probes record for the instruments watching the
/// back end (the union of theirs is asked for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MachineNeeds {
    /// Which executions changed the code.
    pub changes: bool,
    /// Each changed function's text (MIR, or IR before instruction
    /// selection).
    pub texts: bool,
    /// The machine verifier after each pass.
    pub verify: bool,
    /// The opt-bisect gate, letting this many passes run (`u64::MAX`:
    /// all, counting them).
    pub bisect_limit: Option<u64>,
    /// The optimization remarks, and the `size-info` ones among them.
    pub remarks: bool,
    pub size_info: bool,
    /// The explorer's recording of code generation.
    pub recording: bool,
}

impl MachineNeeds {
    /// Knowing only which executions changed the code (timing, counts).
    pub fn changes() -> MachineNeeds {
        MachineNeeds {
            changes: true,
            ..MachineNeeds::default()
        }
    }

    /// Each changed function's text too (print, dump-ir).
    pub fn texts() -> MachineNeeds {
        MachineNeeds {
            texts: true,
            ..MachineNeeds::changes()
        }
    }
}

/// One back-end pass summed over its executions.
#[derive(Clone, Debug)]
pub struct MachinePass {
    /// Its name as instruments show it (the command-line argument, or
    /// LLVM's name when it has none).
    pub label: String,
    pub unit: IrUnit,
    pub runs: u64,
    pub changed: u64,
    pub time: Duration,
}

/// What code generation did, as the instruments watching it are told
/// (`jit::backend::record`).
pub struct MachineRun<'a> {
    /// What made the code (`codegen (O2)`).
    pub label: &'a str,
    /// The module's name in the session.
    pub module: &'a str,
    /// The whole of code generation.
    pub total: Duration,
    /// Each pass, in the order the target added them.
    pub passes: &'a [MachinePass],
    /// Each execution, in the order they ran.
    pub steps: &'a [MachineStep<'a>],
    /// The opt-bisect gate's decisions: pass, function, whether it ran.
    pub decisions: &'a [(&'a str, &'a str, bool)],
    pub remarks: &'a [Remark],
}

/// One pass as instruments see it: the pass, the IR unit it runs on and
/// where it sits in the nesting.
#[derive(Clone, Copy, Debug)]
pub struct PassRun<'a> {
    /// The pass. For a pass LLVM runs inside a pipeline: its pipeline name
    /// (`instcombine`, `loop-unroll`…), with the registry's opt level.
    pub info: &'a PassInfo,
    /// The IR unit: a module for the passes passlab runs; the module,
    /// call-graph SCC, function or loop for passes inside LLVM.
    pub unit: IrUnit,
    /// The unit's name: module, function, SCC as LLVM prints it
    /// (`(f, g)`), or `function:header` for a loop.
    pub target: &'a str,
    /// 0 for the outermost pass; one more for each pass it runs inside.
    pub depth: usize,
    /// Whether LLVM runs this pass inside an LLVM pipeline.
    pub inside_llvm: bool,
    /// In `run_after_pass`: false when the pass reported that it changed
    /// nothing (LLVM's "all analyses preserved"); true when it may have.
    pub may_have_changed: bool,
    /// The [`pass_clock`] when this hook's phase began (set by the
    /// dispatcher), so that a timing instrument reads no clock itself.
    pub clock: Duration,
    pub(crate) scope: Scope,
}

impl PassRun<'_> {
    /// The pass name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The names of the functions this pass could have changed: every
    /// defined function for a module pass, the function of a function or
    /// loop pass, an SCC's functions (and their callers, for the CGSCC
    /// passes that rewrite call sites, such as `argpromotion`).
    pub fn function_names(&self) -> Vec<String> {
        self.scope
            .functions(tracker::edits_callers(self.name()))
            .into_iter()
            .map(tracker::function_name)
            .collect()
    }
}

/// What a pass's IR unit is, for the instruments that work per function.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scope {
    /// The unit itself, alive during the hook.
    Unit(UnitRef),
    /// A deleted loop: the function it was in.
    Function(LLVMValueRef),
    /// A deleted unit whose functions are unknown.
    Gone,
}

impl Scope {
    pub(crate) fn module(module: &Module) -> Scope {
        Scope::Unit(UnitRef {
            kind: IrUnit::Module,
            handle: module.raw() as *const _,
        })
    }

    /// Whether the scope is the whole module.
    pub(crate) fn is_module(&self) -> bool {
        matches!(self, Scope::Unit(u) if u.kind == IrUnit::Module)
    }

    /// The defined functions in scope (see [`PassRun::function_names`]).
    pub(crate) fn functions(&self, callers: bool) -> Vec<LLVMValueRef> {
        match *self {
            Scope::Unit(u) => tracker::unit_functions(u, callers),
            Scope::Function(f) => vec![f],
            Scope::Gone => vec![],
        }
    }
}

// ---------------------------------------------------------------------------
// Calling the hooks.

thread_local! {
    static EPOCH: Instant = Instant::now();
    static OVERHEAD: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// A clock that stands still while instruments' hooks run, so that the time
/// between a pass's before and after hooks is the pass's own time, not the
/// time other instruments spent looking at it.
pub fn pass_clock() -> Duration {
    let now = EPOCH.with(|e| e.elapsed());
    now.saturating_sub(OVERHEAD.with(Cell::get))
}

/// The total time spent in instruments' hooks on this thread.
pub fn hook_time() -> Duration {
    OVERHEAD.with(Cell::get)
}

/// The nesting depth of the pass about to run.
pub(crate) fn depth() -> usize {
    DEPTH.with(Cell::get)
}

/// Undoes one level of nesting when dropped (after the pass's after hooks,
/// or when it fails).
pub(crate) struct Nesting(());

impl Drop for Nesting {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Runs one phase of hooks with the pass clock stopped; `f` gets the pass
/// clock at the start of the phase.
fn timed<R>(f: impl FnOnce(Duration) -> R) -> R {
    let start = Instant::now();
    let overhead = OVERHEAD.with(Cell::get);
    let clock = EPOCH
        .with(|e| start.duration_since(*e))
        .saturating_sub(overhead);
    let r = f(clock);
    let spent = start.elapsed();
    OVERHEAD.with(|o| o.set(o.get() + spent));
    r
}

fn guarded<R>(
    instrument: &dyn Instrument,
    hook: &'static str,
    f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(Error::Instrument {
            instrument: instrument.name().to_string(),
            hook,
            message: format!("panicked: {}", crate::error::panic_message(&p)),
        }),
    }
}

/// Asks every instrument (all of them; the answers ANDed). The first error
/// propagates.
pub(crate) fn should_run(
    instruments: &[Rc<dyn Instrument>],
    module: &Module,
    run: &PassRun,
) -> Result<bool> {
    timed(|clock| {
        let run = PassRun { clock, ..*run };
        let mut answer = true;
        for i in instruments {
            answer &= guarded(i.as_ref(), "should_run", || i.should_run(module, &run))?;
        }
        Ok(answer)
    })
}

/// Every instrument's `run_before_pass`; on success the nesting deepens
/// until the returned guard drops.
pub(crate) fn before(
    instruments: &[Rc<dyn Instrument>],
    module: &Module,
    run: &PassRun,
) -> Result<Nesting> {
    timed(|clock| {
        let run = PassRun { clock, ..*run };
        for i in instruments {
            guarded(i.as_ref(), "run_before_pass", || {
                i.run_before_pass(module, &run)
            })?;
        }
        Ok::<(), Error>(())
    })?;
    DEPTH.with(|d| d.set(d.get() + 1));
    Ok(Nesting(()))
}

/// Every instrument's `run_after_pass`. `nesting` (from [`before`]) is
/// released first, so the pass is reported at its own depth.
pub(crate) fn after(
    instruments: &[Rc<dyn Instrument>],
    module: &Module,
    run: &PassRun,
    nesting: Nesting,
) -> Result<()> {
    drop(nesting);
    timed(|clock| {
        let run = PassRun { clock, ..*run };
        for i in instruments {
            guarded(i.as_ref(), "run_after_pass", || {
                i.run_after_pass(module, &run)
            })?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Instruments from closures.

type EnterExit = Box<dyn Fn() -> Result<()>>;
type Decide = Box<dyn Fn(&Module, &PassRun) -> Result<bool>>;
type Observe = Box<dyn Fn(&Module, &PassRun) -> Result<()>>;

/// An instrument built from closures for the hooks you need.
pub struct FnInstrument {
    name: String,
    enter: Option<EnterExit>,
    exit: Option<EnterExit>,
    should_run: Option<Decide>,
    before: Option<Observe>,
    after: Option<Observe>,
}

impl FnInstrument {
    /// An instrument named `name` whose hooks do nothing yet.
    pub fn new(name: &str) -> FnInstrument {
        FnInstrument {
            name: name.into(),
            enter: None,
            exit: None,
            should_run: None,
            before: None,
            after: None,
        }
    }

    /// Sets `enter_pass_ctx`.
    pub fn on_enter(mut self, f: impl Fn() -> Result<()> + 'static) -> Self {
        self.enter = Some(Box::new(f));
        self
    }

    /// Sets `exit_pass_ctx`.
    pub fn on_exit(mut self, f: impl Fn() -> Result<()> + 'static) -> Self {
        self.exit = Some(Box::new(f));
        self
    }

    /// Sets `should_run`.
    pub fn on_should_run(
        mut self,
        f: impl Fn(&Module, &PassRun) -> Result<bool> + 'static,
    ) -> Self {
        self.should_run = Some(Box::new(f));
        self
    }

    /// Sets `run_before_pass`.
    pub fn on_before(mut self, f: impl Fn(&Module, &PassRun) -> Result<()> + 'static) -> Self {
        self.before = Some(Box::new(f));
        self
    }

    /// Sets `run_after_pass`.
    pub fn on_after(mut self, f: impl Fn(&Module, &PassRun) -> Result<()> + 'static) -> Self {
        self.after = Some(Box::new(f));
        self
    }
}

impl Instrument for FnInstrument {
    fn name(&self) -> &str {
        &self.name
    }
    fn enter_pass_ctx(&self) -> Result<()> {
        self.enter.as_ref().map_or(Ok(()), |f| f())
    }
    fn exit_pass_ctx(&self) -> Result<()> {
        self.exit.as_ref().map_or(Ok(()), |f| f())
    }
    fn should_run(&self, module: &Module, pass: &PassRun) -> Result<bool> {
        self.should_run
            .as_ref()
            .map_or(Ok(true), |f| f(module, pass))
    }
    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        self.before.as_ref().map_or(Ok(()), |f| f(module, pass))
    }
    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        self.after.as_ref().map_or(Ok(()), |f| f(module, pass))
    }
}
