//! Sequential passes: an ordered list of passes, itself a pass.
//!
//! A sequential gates each element by the context, first runs a pass's
//! required passes (resolved through the registry, with cycles reported),
//! verifies after every pass when `passlab.verify_each` is set, and checks
//! for an interrupt between elements.

use super::registry;
use super::{call, verified, Pass, PassInfo, PassRef};
use crate::config::ConfigOption;
use crate::context::PassContext;
use crate::module::Module;
use crate::{Error, Result};

/// Config key: verify the module after every pass of a sequential, so that a
/// pass that breaks the IR is named exactly.
pub const VERIFY_EACH: &str = "passlab.verify_each";

inventory::submit!(crate::config::Declarations(config_options));

fn config_options() -> Vec<ConfigOption> {
    vec![ConfigOption::new(
        VERIFY_EACH,
        false,
        "verify the IR after every pass of a sequential",
    )]
}

/// An ordered list of passes (TVM's `Sequential`). Each pass runs only if
/// the context enables it (see [`PassContext::pass_enabled`]); its own
/// `required` passes are fetched from the registry and run before it,
/// without gating. An empty sequential is the identity.
pub struct Sequential {
    info: PassInfo,
    passes: Vec<PassRef>,
    /// Gate the elements at this opt level instead of the context's.
    at_level: Option<u32>,
}

impl Sequential {
    /// A sequential named `name` at opt level 0 (TVM's default).
    pub fn new(name: &str, passes: Vec<PassRef>) -> Sequential {
        Sequential::with_info(PassInfo::new(name, 0), passes)
    }

    /// A sequential with explicit info (opt level, required passes).
    pub fn with_info(info: PassInfo, passes: Vec<PassRef>) -> Sequential {
        Sequential {
            info,
            passes,
            at_level: None,
        }
    }

    /// Gates the elements at `opt_level` whatever the context's opt level
    /// (its disabled and required passes still apply): the named default
    /// pipelines (`O3`) run at their own level.
    pub fn at_opt_level(mut self, opt_level: u32) -> Sequential {
        self.at_level = Some(opt_level);
        self
    }
}

impl Pass for Sequential {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn children(&self) -> &[PassRef] {
        &self.passes
    }

    fn children_opt_level(&self) -> Option<u32> {
        self.at_level
    }

    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        let at_level;
        let ctx = match self.at_level {
            Some(level) if level != ctx.opt_level() => {
                at_level = ctx.clone().with_opt_level(level);
                &at_level
            }
            _ => ctx,
        };
        let verify_each = ctx.config_bool(VERIFY_EACH)?;
        for pass in &self.passes {
            let info = pass.info();
            if !ctx.pass_enabled(&info.name, info.opt_level) {
                continue;
            }
            if crate::interrupt::requested() {
                return Err(crate::Error::Interrupted {
                    pass: format!("{} (before {})", self.info.name, info.name),
                });
            }
            let mut chain = vec![info.name.clone()];
            for name in &info.required {
                run_required(name, &mut chain, module, ctx, verify_each)?;
            }
            call(pass.as_ref(), module, ctx)?;
            if verify_each && !pass.verifies_itself() {
                verified(module, &info.name)?;
            }
        }
        Ok(())
    }
}

/// Runs a required pass (after its own required passes), ungated. `chain`
/// holds the passes that led here, to report cycles.
fn run_required(
    name: &str,
    chain: &mut Vec<String>,
    module: &mut Module,
    ctx: &PassContext,
    verify_each: bool,
) -> Result<()> {
    if chain.iter().any(|n| n == name) {
        let mut cycle = chain.clone();
        cycle.push(name.to_string());
        return Err(Error::DependencyCycle { chain: cycle });
    }
    let pass = registry::get_pass(name)?;
    chain.push(name.to_string());
    for inner in &pass.info().required {
        run_required(inner, chain, module, ctx, verify_each)?;
    }
    chain.pop();
    call(pass.as_ref(), module, ctx)?;
    if verify_each && !pass.verifies_itself() {
        verified(module, name)?;
    }
    Ok(())
}
