//! `strip-dead-internals`: a module pass that removes internal functions and
//! globals nothing refers to.

use crate::module::Module;
use crate::pass::{ModulePass, PassInfo};

/// Config key: also remove unreferenced internal globals.
pub const GLOBALS: &str = "strip-dead-internals.globals";

/// Removes functions (and, unless `strip-dead-internals.globals=false`,
/// global variables) with internal or private linkage and no uses, until
/// none is left: removing one may leave others unreferenced.
pub fn strip_dead_internals() -> ModulePass {
    let info = PassInfo::new("strip-dead-internals", 1)
        .describe("remove internal functions and globals that nothing refers to");
    ModulePass::new(info, |module, ctx| {
        let globals = ctx.config_bool(GLOBALS)?;
        module.remove_dead_internals(globals, &mut |name| {
            crate::prelude::remark(
                crate::prelude::RemarkKind::Passed,
                "strip-dead-internals",
                name,
                "removed: internal, and nothing refers to it",
            )
        });
        Ok(())
    })
}

// Defined here, beside the pass it runs: the module layer knows no passes.
impl Module {
    /// A copy holding only the named functions' bodies (the others become
    /// declarations), as `llvm-extract` does: for looking at, or
    /// benchmarking, one function of a large module.
    pub fn extract(&self, functions: &[&str]) -> crate::Result<Module> {
        for name in functions {
            self.function_ref(name)?;
        }
        let mut copy = self.copy();
        copy.keep_bodies_of(functions);
        let dead = strip_dead_internals();
        (&dead as &dyn crate::pass::Pass)
            .apply_in(&mut copy, &crate::context::PassContext::new())?;
        Ok(copy)
    }
}
