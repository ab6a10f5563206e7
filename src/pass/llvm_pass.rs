//! LLVM passes: any text LLVM's new pass manager accepts (`instcombine`,
//! `loop-unroll<O3>`, `function(loop-mssa(licm))`, `default<O2>`…).
//!
//! The context's config sets LLVM's pipeline tuning options (`keys`:
//! `llvm.loop_vectorization`, `llvm.slp_vectorization`,
//! `llvm.loop_interleaving`, `llvm.loop_unrolling`, `llvm.merge_functions`,
//! `llvm.call_graph_profile`, `llvm.inliner_threshold`; an unset key is
//! what clang-19 sets at the pipeline's -O level, LLVM's default in a
//! pipeline that names no level) and the target
//! (`target.cpu`, `target.features`). The `Bridge` is the `llvm::Hooks`
//! implementation. It shows every pass LLVM runs to the instruments (with
//! its IR unit and nesting depth), skips disabled optional passes inside
//! LLVM, and stops at the next optional pass on an interrupt. An
//! instrument cannot stop LLVM mid-pipeline: its first error is kept,
//! later optional passes are skipped, and the error is returned when LLVM
//! returns (then `apply` rolls back).

use super::{Pass, PassInfo};
use crate::config::ConfigOption;
use crate::context::PassContext;
use crate::info::base_name;
use crate::instrument::{self, PassRun, Scope};
use crate::llvm::{self, Hooks, IrUnit, Tuning, UnitRef};
use crate::module::Module;
use crate::{Error, Result};
use llvm_sys::prelude::LLVMValueRef;
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;
use std::time::Duration;

/// The config keys of LLVM's pipeline tuning options.
pub mod keys {
    pub const LOOP_VECTORIZATION: &str = "llvm.loop_vectorization";
    pub const SLP_VECTORIZATION: &str = "llvm.slp_vectorization";
    pub const LOOP_INTERLEAVING: &str = "llvm.loop_interleaving";
    pub const LOOP_UNROLLING: &str = "llvm.loop_unrolling";
    pub const MERGE_FUNCTIONS: &str = "llvm.merge_functions";
    pub const CALL_GRAPH_PROFILE: &str = "llvm.call_graph_profile";
    pub const INLINER_THRESHOLD: &str = "llvm.inliner_threshold";
    pub const TARGET_CPU: &str = "target.cpu";
    pub const TARGET_FEATURES: &str = "target.features";
}

inventory::submit!(crate::config::Declarations(config_options));

fn config_options() -> Vec<ConfigOption> {
    let d = Tuning::default();
    use keys::*;
    vec![
        ConfigOption::new(
            LOOP_VECTORIZATION,
            d.loop_vectorization,
            "PipelineTuningOptions::LoopVectorization (unset: as clang-19 at the pipeline's -O level, on at O2, O3, Os; to switch the pass off, disable loop-vectorize)",
        ),
        ConfigOption::new(
            SLP_VECTORIZATION,
            d.slp_vectorization,
            "SLP vectorization in default<On> pipelines (unset: as clang-19 at the level, on at O2, O3, Os, Oz)",
        ),
        ConfigOption::new(
            LOOP_INTERLEAVING,
            d.loop_interleaving,
            "loop interleaving in default<On> pipelines (unset: as clang-19 at the level, on above O1)",
        ),
        ConfigOption::new(
            LOOP_UNROLLING,
            d.loop_unrolling,
            "loop unrolling in default<On> pipelines (unset: as clang-19 at the level, on above O1)",
        ),
        ConfigOption::new(MERGE_FUNCTIONS, d.merge_functions, "run mergefunc in default<On> pipelines"),
        ConfigOption::new(CALL_GRAPH_PROFILE, d.call_graph_profile, "call-graph profile in default<On> pipelines"),
        ConfigOption::new(
            INLINER_THRESHOLD,
            i64::from(d.inliner_threshold),
            "inliner threshold (-1: LLVM's default for the opt level)",
        )
        .with_range(-1.0, f64::from(i32::MAX)),
        ConfigOption::new(
            TARGET_CPU,
            "",
            "the processor to optimize and generate code for: a name LLVM knows (x86-64-v3, znver4, …), host (this machine's, as clang's -march=native), or empty (the module's own, clang's default)",
        )
        .with_check(llvm::check_cpu),
        ConfigOption::new(
            TARGET_FEATURES,
            "",
            "processor features, +feature or -feature separated by commas (+avx2,-fma), host (this machine's), or empty (the module's own)",
        )
        .with_check(llvm::check_features),
    ]
}

/// The tuning options a pipeline runs with: each key the context sets, as
/// set; an unset key as clang-19 sets it for its -O level when the
/// pipeline names one level (`default<O2>`, `lto-pre-link<Oz>`…), so that
/// `:run O2` is `clang -O2`; otherwise LLVM's own default, as opt-19's.
pub(crate) fn tuning(ctx: &PassContext, pipeline: &str) -> Result<Tuning> {
    use keys::*;
    let clang = llvm::clang_tuning(pipeline);
    let set = ctx.config_set();
    let flag = |key: &str, clang: Option<bool>| -> Result<bool> {
        match (set.contains_key(key), clang) {
            (false, Some(b)) => Ok(b),
            _ => ctx.config_bool(key),
        }
    };
    let threshold = ctx.config_int(INLINER_THRESHOLD)?;
    Ok(Tuning {
        loop_vectorization: flag(LOOP_VECTORIZATION, clang.map(|c| c.loop_vectorization))?,
        slp_vectorization: flag(SLP_VECTORIZATION, clang.map(|c| c.slp_vectorization))?,
        loop_interleaving: flag(LOOP_INTERLEAVING, clang.map(|c| c.loop_interleaving))?,
        loop_unrolling: flag(LOOP_UNROLLING, clang.map(|c| c.loop_unrolling))?,
        merge_functions: flag(MERGE_FUNCTIONS, clang.map(|c| c.merge_functions))?,
        call_graph_profile: flag(CALL_GRAPH_PROFILE, clang.map(|c| c.call_graph_profile))?,
        inliner_threshold: i32::try_from(threshold).map_err(|_| Error::ConfigType {
            key: INLINER_THRESHOLD.into(),
            expected: "a 32-bit integer".into(),
            got: threshold.to_string(),
        })?,
    })
}

/// The processor a context optimizes for (`target.cpu`, `target.features`).
pub(crate) fn target(ctx: &PassContext) -> Result<llvm::Target> {
    use keys::*;
    let text = |key: &str| -> Result<String> {
        Ok(match ctx.config(key)? {
            crate::ConfigValue::Str(s) => s,
            other => other.to_string(),
        })
    };
    llvm::Target::new(&text(TARGET_CPU)?, &text(TARGET_FEATURES)?)
}

/// A pipeline of LLVM passes, run by LLVM's new pass manager in one go.
pub struct LlvmPass {
    info: PassInfo,
}

impl LlvmPass {
    /// An LLVM pipeline; the text is checked by LLVM's parser now (the
    /// registry, which knows every name, adds suggestions to the error),
    /// after passlab's check of what its passes would do outside the module
    /// (files written, programs started, files read: `outside.rs`).
    pub fn new(text: &str) -> Result<LlvmPass> {
        let text = text.trim();
        super::outside::check(text)?;
        if let Err(message) = llvm::check_pipeline(text) {
            return Err(Error::Pipeline {
                text: text.to_string(),
                message,
                suggestions: Vec::new(),
            });
        }
        let (opt_level, description) = defaults(text, base_name(text));
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
pub(super) fn unknown_name(message: &str) -> Option<&str> {
    let start = message.find('\'')? + 1;
    let end = start + message[start..].find('\'')?;
    Some(&message[start..end])
}

/// Forwards the passes LLVM runs to the context's instruments (nested
/// under the LlvmPass, with their IR unit) and skips LLVM's optional passes
/// whose names the context disables — except the pass this LlvmPass is (a
/// direct call ignores gating). LLVM cannot be stopped from a callback, so
/// the first instrument error is kept, every later optional pass is
/// skipped, and the error is returned when LLVM is done (the module is then
/// rolled back by `apply`).
struct Bridge<'a> {
    module: &'a Module,
    ctx: &'a PassContext,
    own: &'a str,
    infos: HashMap<(usize, usize), Rc<PassInfo>>,
    open: Vec<Open>,
    error: Option<Error>,
}

/// A pass LLVM started and has not finished.
struct Open {
    info: Rc<PassInfo>,
    unit: IrUnit,
    target: String,
    depth: usize,
    /// For a loop: its function, in case the pass deletes the loop.
    function: Option<LLVMValueRef>,
    nesting: instrument::Nesting,
}

impl Bridge<'_> {
    fn info(&mut self, pass: &str) -> Rc<PassInfo> {
        // Keyed by where the name lives: the shim hands out LLVM's own
        // (stable) copy of each pass name, so no string is hashed per pass.
        let key = (pass.as_ptr() as usize, pass.len());
        if let Some(i) = self.infos.get(&key) {
            if i.name == pass {
                return i.clone();
            }
        }
        let (opt_level, description) = defaults(pass, base_name(pass));
        let info = Rc::new(PassInfo::new(pass, opt_level).describe(&description));
        self.infos.insert(key, info.clone());
        info
    }

    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }
}

impl Hooks for Bridge<'_> {
    fn should_run(&mut self, pass: &str, unit: UnitRef, name: &str) -> bool {
        if self.error.is_some() {
            return false;
        }
        if crate::interrupt::requested() {
            self.fail(Error::Interrupted {
                pass: format!("{} (before {pass} on {name})", self.own),
            });
            return false;
        }
        if pass != self.own && self.ctx.disabled().contains(pass) {
            return false;
        }
        let instruments = self.ctx.instruments();
        if instruments.is_empty() || self.ctx.required().contains(pass) {
            return true;
        }
        let info = self.info(pass);
        let run = PassRun {
            info: &info,
            unit: unit.kind,
            target: name,
            depth: instrument::depth(),
            inside_llvm: true,
            may_have_changed: true,
            clock: Duration::ZERO,
            scope: Scope::Unit(unit),
        };
        match instrument::should_run(instruments, self.module, &run) {
            Ok(answer) => answer,
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    fn before(&mut self, pass: &str, unit: UnitRef, name: &str) {
        let instruments = self.ctx.instruments();
        if self.error.is_some() || instruments.is_empty() {
            return;
        }
        let info = self.info(pass);
        let depth = instrument::depth();
        let run = PassRun {
            info: &info,
            unit: unit.kind,
            target: name,
            depth,
            inside_llvm: true,
            may_have_changed: true,
            clock: Duration::ZERO,
            scope: Scope::Unit(unit),
        };
        match instrument::before(instruments, self.module, &run) {
            Ok(nesting) => {
                let function = (unit.kind == IrUnit::Loop)
                    .then(|| run.scope.functions(false).first().copied())
                    .flatten();
                self.open.push(Open {
                    info: info.clone(),
                    unit: unit.kind,
                    target: name.to_string(),
                    depth,
                    function,
                    nesting,
                });
            }
            Err(e) => self.fail(e),
        }
    }

    fn after(&mut self, _pass: &str, unit: UnitRef, invalidated: bool, preserved_all: bool) {
        if self.error.is_some() {
            return;
        }
        let Some(open) = self.open.pop() else {
            return;
        };
        let scope = if invalidated {
            open.function.map_or(Scope::Gone, Scope::Function)
        } else {
            Scope::Unit(unit)
        };
        let run = PassRun {
            info: &open.info,
            unit: open.unit,
            target: &open.target,
            depth: open.depth,
            inside_llvm: true,
            may_have_changed: !preserved_all,
            clock: Duration::ZERO,
            scope,
        };
        if let Err(e) = instrument::after(self.ctx.instruments(), self.module, &run, open.nesting) {
            self.fail(e);
        }
    }
}

impl Pass for LlvmPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        // Again: a file a parameter names may have changed since the text
        // was parsed (a named pass is parsed once and run many times).
        super::outside::check(&self.info.name)?;
        let tuning = tuning(ctx, &self.info.name)?;
        let target = target(ctx)?;
        // The cost models read the processor from each function, as clang
        // wrote it: a context's target is written there first.
        llvm::set_target(module.raw(), &target);
        let module: &Module = module;
        let raw = module.raw();
        let triple = module.triple();
        // A crash names the pass that crashed (the culprit inside the
        // pipeline); anything else, the pipeline.
        let failed = |e: llvm::RunError| match e.crash {
            Some(crash) => Error::PassCrashed {
                pass: crash.pass.unwrap_or_else(|| self.info.name.clone()),
                how: crash.how,
                reason: e.message,
            },
            None => Error::PassFailed {
                pass: self.info.name.clone(),
                reason: e.message,
            },
        };
        if ctx.disabled().is_empty()
            && ctx.instruments().is_empty()
            && !crate::interrupt::watching()
        {
            return llvm::run_pipeline(raw, &triple, &tuning, &target, &self.info.name, None)
                .map_err(failed);
        }
        let mut bridge = Bridge {
            module,
            ctx,
            own: &self.info.name,
            infos: HashMap::default(),
            open: Vec::new(),
            error: None,
        };
        let result = llvm::run_pipeline(
            raw,
            &triple,
            &tuning,
            &target,
            &self.info.name,
            Some(&mut bridge),
        );
        // Passes left open by an error unwind their nesting here.
        bridge.open.clear();
        if let Some(e) = bridge.error {
            return Err(e);
        }
        result.map_err(failed)
    }
}

/// Opt levels and descriptions for the LLVM passes people use most; every
/// other LLVM pass has opt level 0 (it runs whenever it is listed).
const LLVM_DEFAULTS: &[(&str, u32, &str)] = &[
    ("mem2reg", 1, "promote allocas to SSA registers"),
    ("sroa", 1, "scalar replacement of aggregates"),
    ("early-cse", 1, "early common subexpression elimination"),
    ("simplifycfg", 1, "simplify the control-flow graph"),
    ("instcombine", 1, "combine redundant instructions"),
    ("instsimplify", 1, "remove redundant instructions"),
    ("dce", 1, "dead code elimination"),
    ("adce", 1, "aggressive dead code elimination"),
    ("sccp", 1, "sparse conditional constant propagation"),
    (
        "ipsccp",
        1,
        "interprocedural sparse conditional constant propagation",
    ),
    ("reassociate", 1, "reassociate expressions"),
    ("globalopt", 1, "optimize global variables"),
    ("globaldce", 1, "remove unreachable globals"),
    ("deadargelim", 1, "remove dead arguments"),
    ("function-attrs", 1, "infer function attributes"),
    (
        "correlated-propagation",
        1,
        "value propagation from conditions",
    ),
    ("jump-threading", 1, "thread jumps through conditions"),
    ("tailcallelim", 1, "tail call elimination"),
    ("loop-rotate", 1, "rotate loops"),
    ("loop-simplify", 1, "canonicalize natural loops"),
    ("lcssa", 1, "loop-closed SSA form"),
    ("indvars", 1, "canonicalize induction variables"),
    ("loop-deletion", 1, "delete dead loops"),
    ("loop-idiom", 1, "recognize loop idioms (memset, memcpy)"),
    ("memcpyopt", 1, "optimize memcpy and memset"),
    ("always-inline", 0, "inline always_inline functions"),
    ("inline", 2, "the function inliner"),
    ("gvn", 2, "global value numbering"),
    ("newgvn", 2, "global value numbering (NewGVN)"),
    ("licm", 2, "loop-invariant code motion"),
    ("dse", 2, "dead store elimination"),
    ("mldst-motion", 2, "merged load/store motion"),
    ("bdce", 2, "bit-tracking dead code elimination"),
    (
        "argpromotion",
        2,
        "promote by-reference arguments to scalars",
    ),
    ("simple-loop-unswitch", 2, "unswitch loops"),
    ("loop-unroll", 2, "unroll loops"),
    ("loop-vectorize", 2, "vectorize loops"),
    (
        "slp-vectorizer",
        2,
        "superword-level parallelism vectorizer",
    ),
    (
        "aggressive-instcombine",
        3,
        "expensive instruction combining",
    ),
    ("loop-unroll-and-jam", 3, "unroll and jam loop nests"),
    ("loop-interchange", 3, "interchange loops in a nest"),
    ("loop-fusion", 3, "fuse adjacent loops"),
    ("callsite-splitting", 3, "split call sites on conditions"),
];

/// Opt level and description of an LLVM pipeline text with base name `base`.
pub(crate) fn defaults(text: &str, base: &str) -> (u32, String) {
    if matches!(
        base,
        "default" | "thinlto-pre-link" | "thinlto" | "lto-pre-link" | "lto"
    ) {
        let level = text
            .find("<O")
            .and_then(|i| text[i + 2..].chars().next())
            .and_then(|c| c.to_digit(10));
        let level = level.unwrap_or(2);
        return (level, format!("LLVM's standard {base} pipeline"));
    }
    if text != base {
        return (0, "an LLVM pipeline".into());
    }
    LLVM_DEFAULTS
        .iter()
        .find(|(n, _, _)| *n == base)
        .map(|(_, level, d)| (*level, d.to_string()))
        .unwrap_or((0, String::new()))
}

#[cfg(test)]
mod tests {
    use crate::Module;

    const IR: &str = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n";

    /// Found by fuzzing (`:run codegenprepare`): LLVM 19's codegenprepare
    /// crashed the process (it reads the profile summary without asking
    /// for it; opt-19 segfaults too). Every run computes the summary first.
    #[test]
    fn codegenprepare_runs_on_its_own() {
        let mut m = Module::from_ir(
            &format!("target triple = \"x86_64-pc-linux-gnu\"\n{IR}"),
            "m.ll",
        )
        .unwrap();
        for text in [
            "codegenprepare",
            "function(codegenprepare)",
            "instcombine,codegenprepare",
        ] {
            crate::pipeline::parse(text).unwrap().apply(&mut m).unwrap();
        }
        m.verify().unwrap();
    }
}
