//! LLVM passes: any text LLVM's new pass manager accepts (`instcombine`,
//! `loop-unroll<O3>`, `function(loop-mssa(licm))`, `default<O2>`…).

use super::{Pass, PassInfo};
use crate::config::ConfigOption;
use crate::context::PassContext;
use crate::llvm::{self, Hooks, IrUnit, Tuning};
use crate::module::Module;
use crate::registry;
use crate::{Error, Result};
use std::collections::BTreeSet;

/// The config keys of LLVM's pipeline tuning options.
pub mod keys {
    pub const LOOP_VECTORIZATION: &str = "llvm.loop_vectorization";
    pub const SLP_VECTORIZATION: &str = "llvm.slp_vectorization";
    pub const LOOP_INTERLEAVING: &str = "llvm.loop_interleaving";
    pub const LOOP_UNROLLING: &str = "llvm.loop_unrolling";
    pub const MERGE_FUNCTIONS: &str = "llvm.merge_functions";
    pub const CALL_GRAPH_PROFILE: &str = "llvm.call_graph_profile";
    pub const INLINER_THRESHOLD: &str = "llvm.inliner_threshold";
}

pub(crate) fn config_options() -> Vec<ConfigOption> {
    let d = Tuning::default();
    use keys::*;
    vec![
        ConfigOption::new(
            LOOP_VECTORIZATION,
            d.loop_vectorization,
            "PipelineTuningOptions::LoopVectorization (to switch the pass off, disable loop-vectorize)",
        ),
        ConfigOption::new(SLP_VECTORIZATION, d.slp_vectorization, "SLP vectorization in default<On> pipelines"),
        ConfigOption::new(LOOP_INTERLEAVING, d.loop_interleaving, "loop interleaving in default<On> pipelines"),
        ConfigOption::new(LOOP_UNROLLING, d.loop_unrolling, "loop unrolling in default<On> pipelines"),
        ConfigOption::new(MERGE_FUNCTIONS, d.merge_functions, "run mergefunc in default<On> pipelines"),
        ConfigOption::new(CALL_GRAPH_PROFILE, d.call_graph_profile, "call-graph profile in default<On> pipelines"),
        ConfigOption::new(
            INLINER_THRESHOLD,
            i64::from(d.inliner_threshold),
            "inliner threshold (-1: LLVM's default for the opt level)",
        ),
    ]
}

fn tuning(ctx: &PassContext) -> Result<Tuning> {
    use keys::*;
    let threshold = ctx.config_int(INLINER_THRESHOLD)?;
    Ok(Tuning {
        loop_vectorization: ctx.config_bool(LOOP_VECTORIZATION)?,
        slp_vectorization: ctx.config_bool(SLP_VECTORIZATION)?,
        loop_interleaving: ctx.config_bool(LOOP_INTERLEAVING)?,
        loop_unrolling: ctx.config_bool(LOOP_UNROLLING)?,
        merge_functions: ctx.config_bool(MERGE_FUNCTIONS)?,
        call_graph_profile: ctx.config_bool(CALL_GRAPH_PROFILE)?,
        inliner_threshold: i32::try_from(threshold).map_err(|_| Error::ConfigType {
            key: INLINER_THRESHOLD.into(),
            expected: "a 32-bit integer".into(),
            got: threshold.to_string(),
        })?,
    })
}

/// A pipeline of LLVM passes, run by LLVM's new pass manager in one go.
pub struct LlvmPass {
    info: PassInfo,
}

impl LlvmPass {
    /// An LLVM pipeline; the text is checked by LLVM's parser now, and an
    /// unknown pass name suggests the nearest registered ones.
    pub fn new(text: &str) -> Result<LlvmPass> {
        let text = text.trim();
        if let Err(message) = llvm::check_pipeline(text) {
            let suggestions = unknown_name(&message)
                .map(registry::suggest)
                .unwrap_or_default();
            return Err(Error::Pipeline {
                text: text.to_string(),
                message,
                suggestions,
            });
        }
        let base = registry::base_name(text);
        let (opt_level, description) = registry::llvm_pass_defaults(text, base);
        Ok(LlvmPass {
            info: PassInfo::new(text, opt_level).describe(&description),
        })
    }

    /// The pipeline text.
    pub fn text(&self) -> &str {
        &self.info.name
    }
}

/// The pass name in LLVM messages such as `unknown pass name 'foo'`.
fn unknown_name(message: &str) -> Option<&str> {
    let start = message.find('\'')? + 1;
    let end = start + message[start..].find('\'')?;
    Some(&message[start..end])
}

/// Skips LLVM's optional passes whose names the context disables, except
/// the pass this LlvmPass is (a direct call ignores gating).
struct SkipDisabled<'a> {
    disabled: &'a BTreeSet<String>,
    own: &'a str,
}

impl Hooks for SkipDisabled<'_> {
    fn should_run(&mut self, pass: &str, _unit: IrUnit, _ir: &str) -> bool {
        pass == self.own || !self.disabled.contains(pass)
    }
}

impl Pass for LlvmPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        let tuning = tuning(ctx)?;
        let mut skip = SkipDisabled {
            disabled: ctx.disabled(),
            own: &self.info.name,
        };
        let hooks: Option<&mut dyn Hooks> = if ctx.disabled().is_empty() {
            None
        } else {
            Some(&mut skip)
        };
        llvm::run_pipeline(
            module.raw(),
            &module.triple(),
            &tuning,
            &self.info.name,
            hooks,
        )
        .map_err(|reason| Error::PassFailed {
            pass: self.info.name.clone(),
            reason,
        })
    }
}
