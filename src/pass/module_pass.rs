//! Module passes: see the whole module, may add or remove functions.

use super::{guard_panics, verified, Pass, PassInfo};
use crate::context::PassContext;
use crate::module::Module;
use crate::Result;

type ModuleFn = dyn Fn(&mut Module, &PassContext) -> Result<()> + Send + Sync;

/// A pass over the whole module, written as a closure.
///
/// ```
/// use passlab::{Module, ModulePass, Pass, PassInfo};
/// // Adds `declare void @hook()` to the module.
/// let add_hook = ModulePass::new(PassInfo::new("add-hook", 0), |m, _ctx| {
///     m.with_ir(|ir| {
///         let void = ir.get_context().void_type();
///         ir.add_function("hook", void.fn_type(&[], false), None);
///     });
///     Ok(())
/// });
/// let mut m = Module::from_ir("", "empty.ll").unwrap();
/// (&add_hook as &dyn Pass).apply(&mut m).unwrap();
/// assert_eq!(m.function_names(), ["hook"]);
/// ```
pub struct ModulePass {
    info: PassInfo,
    body: Box<ModuleFn>,
}

impl ModulePass {
    /// A module pass running `body`.
    pub fn new<F>(info: PassInfo, body: F) -> ModulePass
    where
        F: Fn(&mut Module, &PassContext) -> Result<()> + Send + Sync + 'static,
    {
        ModulePass {
            info,
            body: Box::new(body),
        }
    }
}

impl Pass for ModulePass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn verifies_itself(&self) -> bool {
        true
    }

    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        guard_panics(&self.info.name, || (self.body)(module, ctx))?;
        verified(module, &self.info.name)
    }
}
