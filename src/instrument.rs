//! [`Instrument`]: the five hooks of the seed design, called around every
//! pass the infrastructure runs.
//!
//! Per pass: every instrument's `should_run` (not asked for passes in the
//! context's required set; all are asked and the answers ANDed), then every
//! `run_before_pass`, the pass, every `run_after_pass`. `enter_pass_ctx` and
//! `exit_pass_ctx` run when a context that registered the instrument is
//! entered and left (see [`PassContext::enter`](crate::PassContext::enter)).

use crate::module::Module;
use crate::pass::PassInfo;
use crate::Result;

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
    fn should_run(&self, _module: &Module, _info: &PassInfo) -> Result<bool> {
        Ok(true)
    }

    /// Called before a pass that runs.
    fn run_before_pass(&self, _module: &Module, _info: &PassInfo) -> Result<()> {
        Ok(())
    }

    /// Called after a pass that ran.
    fn run_after_pass(&self, _module: &Module, _info: &PassInfo) -> Result<()> {
        Ok(())
    }
}
