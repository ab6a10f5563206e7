//! Passes: [`PassInfo`], the [`Pass`] trait and its kinds — module,
//! function, sequential, LLVM and PrintIR passes.
//!
//! A pass maps a module to a module under a [`PassContext`]. Calling a pass
//! directly with [`apply`](trait.Pass.html#method.apply) ignores gating, as
//! in TVM; a [`Sequential`] gates each of its passes by the context.
//! `apply` is transactional: if any pass fails (an error, a panic in a Rust
//! pass, IR that no longer verifies), the module is put back exactly as it
//! was before and the error names the pass; a panic anywhere else under
//! `apply` also puts the module back before it goes on.
//!
//! `apply` is snapshot → run → verify → restore on failure; `call` wraps
//! one pass in the context's instrument hooks (TVM's `Pass::operator()`).
//! The passes LLVM runs inside a pipeline reach the same hooks through the
//! bridge in `llvm_pass.rs`. The one registry of passes is
//! [`registry`](crate::registry), in this layer.

#![forbid(unsafe_code)]

mod function_pass;
pub(crate) mod llvm_pass;
mod module_pass;
pub(crate) mod outside;
mod print_ir;
pub mod registry;
mod sequential;

pub use function_pass::FunctionPass;
pub(crate) use llvm_pass::target;
pub use llvm_pass::{keys as llvm_keys, LlvmPass};
pub use module_pass::ModulePass;
pub use print_ir::PrintIr;
pub use sequential::Sequential;
pub use sequential::VERIFY_EACH;

pub use crate::info::PassInfo;

use crate::context::PassContext;
use crate::instrument::{self, PassRun, Scope};
use crate::llvm::IrUnit;
use crate::module::Module;
use crate::{Error, Result};
use std::sync::Arc;
use std::time::Duration;

/// A module-to-module transformation under a [`PassContext`].
pub trait Pass: Send + Sync {
    /// Name, opt level, required passes, description.
    fn info(&self) -> &PassInfo;

    /// Transforms `module` in place. The infrastructure calls this; callers
    /// use [`apply`](trait.Pass.html#method.apply), which adds instruments,
    /// verification and rollback.
    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()>;

    /// The passes inside a sequential, in order (empty for other kinds).
    fn children(&self) -> &[PassRef] {
        &[]
    }

    /// The opt level its children are gated at, when it is not the
    /// context's (a named default pipeline such as `O3`).
    fn children_opt_level(&self) -> Option<u32> {
        None
    }

    /// Whether `run` verifies the IR itself before it returns (the Rust pass
    /// kinds do, so that a sequential names the pass that broke the IR);
    /// the infrastructure then does not verify again.
    fn verifies_itself(&self) -> bool {
        false
    }
}

/// A shared handle to a pass.
pub type PassRef = Arc<dyn Pass>;

impl dyn Pass + '_ {
    /// Runs this pass on `module` under the current context, ignoring gating
    /// (as calling a pass directly does in TVM). On failure the module is
    /// left exactly as it was and the error names the failing pass.
    pub fn apply(&self, module: &mut Module) -> Result<()> {
        self.apply_in(module, &PassContext::current())
    }

    /// [`apply`](trait.Pass.html#method.apply) under an explicit context.
    pub fn apply_in(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        let before = module.fingerprint();
        let snapshot = module.snapshot_at(before);
        // No IR handle given out before the pass is used after it.
        module.ir_changed();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            call(self, module, ctx).and_then(|()| {
                crate::error::panic_point("pass::apply");
                // A pass that changed nothing cannot have broken the IR.
                if self.verifies_itself() || module.fingerprint() == before {
                    Ok(())
                } else {
                    verified(module, &self.info().name)
                }
            })
        }));
        // Nor any taken while it ran.
        module.ir_changed();
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                module.restore(&snapshot)?;
                Err(e)
            }
            // A panic outside a pass's own code (passes turn theirs into
            // errors) is a bug in passlab: the module is put back, and the
            // panic goes on to the caller's boundary (the session's names
            // the command).
            Err(panic) => {
                module.restore(&snapshot)?;
                std::panic::resume_unwind(panic)
            }
        }
    }
}

/// What [`apply_step`](trait.Pass.html#method.apply_step) did: whether
/// the module changed, and its fingerprint after the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stepped {
    pub changed: bool,
    pub fingerprint: u64,
}

impl dyn Pass + '_ {
    /// One step of an episode (a gym's `step`, CompilerGym's pass action):
    /// [`apply_in`](trait.Pass.html#method.apply_in) without the snapshot
    /// written before the pass, which costs as much as the step on a large
    /// module. `before` is the fingerprint the caller saw the module have
    /// (its last step's); `rebuild` makes the module again as it was (an
    /// episode replays its steps on its benchmark: [`replay`]), and is
    /// called only when the pass fails, so the module is still left exactly
    /// as it was. As CompilerGym does, a step that changed the module is
    /// verified. A stale `before` (the module changed between steps) costs
    /// at most a verification and says "changed" for a pass that was not.
    pub fn apply_step(
        &self,
        module: &mut Module,
        ctx: &PassContext,
        before: u64,
        rebuild: impl FnOnce() -> Result<Module>,
    ) -> Result<Stepped> {
        module.ir_changed();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            call(self, module, ctx)?;
            let after = module.fingerprint();
            if after != before && !self.verifies_itself() {
                verified(module, &self.info().name)?;
            }
            Ok(Stepped {
                changed: after != before,
                fingerprint: after,
            })
        }));
        module.ir_changed();
        match result {
            Ok(Ok(stepped)) => Ok(stepped),
            Ok(Err(e)) => {
                *module = rebuild()?;
                Err(e)
            }
            Err(panic) => {
                *module = rebuild()?;
                std::panic::resume_unwind(panic)
            }
        }
    }
}

/// `start` with `steps` applied one after the other by
/// [`apply_step`](trait.Pass.html#method.apply_step): an episode made
/// again (a failed step's `rebuild`).
pub fn replay(start: &Module, steps: &[PassRef], ctx: &PassContext) -> Result<Module> {
    let mut module = start.copy();
    let mut fingerprint = module.fingerprint();
    for pass in steps {
        let again = || {
            Err(Error::Internal {
                command: "replaying an episode".into(),
                message: format!(
                    "{} failed again while its episode was replayed",
                    pass.info().name
                ),
            })
        };
        fingerprint = pass
            .apply_step(&mut module, ctx, fingerprint, again)?
            .fingerprint;
    }
    Ok(module)
}

/// Runs one pass with the context's instruments around it (TVM's
/// `Pass::operator()`): should_run (skipped for required passes), before,
/// the pass, after. A skipped pass leaves the module alone.
pub(crate) fn call(pass: &dyn Pass, module: &mut Module, ctx: &PassContext) -> Result<()> {
    let info = pass.info();
    let instruments = ctx.instruments();
    if instruments.is_empty() {
        return pass.run(module, ctx);
    }
    let target = module.name();
    let run = PassRun {
        info,
        unit: IrUnit::Module,
        target: &target,
        depth: instrument::depth(),
        inside_llvm: false,
        may_have_changed: true,
        clock: Duration::ZERO,
        scope: Scope::module(module),
    };
    if !ctx.required().contains(&info.name) && !instrument::should_run(instruments, module, &run)? {
        return Ok(());
    }
    let nesting = instrument::before(instruments, module, &run)?;
    pass.run(module, ctx)?;
    let run = PassRun {
        scope: Scope::module(module),
        ..run
    };
    instrument::after(instruments, module, &run, nesting)
}

/// Ok when `module` verifies; else an error naming `pass`, keeping the
/// broken IR for printing.
pub(crate) fn verified(module: &Module, pass: &str) -> Result<()> {
    module.verify().map_err(|message| Error::Verify {
        pass: pass.to_string(),
        message,
        ir: Some(module.print()),
    })
}

/// Runs a Rust pass body, turning a panic into an error naming the pass.
pub(crate) fn guard_panics<R>(pass: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(
            e @ (Error::PassFailed { .. }
            | Error::PassCrashed { .. }
            | Error::Verify { .. }
            | Error::FunctionSetChanged { .. }),
        )) => Err(e),
        Ok(Err(e)) => Err(Error::PassFailed {
            pass: pass.to_string(),
            reason: e.to_string(),
        }),
        Err(p) => Err(Error::PassFailed {
            pass: pass.to_string(),
            reason: format!("panicked: {}", crate::error::panic_message(&p)),
        }),
    }
}

impl std::fmt::Debug for dyn Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.info();
        write!(f, "Pass({}, opt_level={})", info.name, info.opt_level)
    }
}
