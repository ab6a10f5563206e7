//! `strip-dead-internals`: a module pass that removes internal functions and
//! globals nothing refers to.

use crate::module::Module;
use crate::pass::{ModulePass, PassInfo};
use inkwell::module::Linkage;
use inkwell::values::BasicValue;
use llvm_sys::core::*;

/// Config key: also remove unreferenced internal globals.
pub const GLOBALS: &str = "strip-dead-internals.globals";

fn is_local(linkage: Linkage) -> bool {
    matches!(linkage, Linkage::Internal | Linkage::Private)
}

/// Removes functions (and, unless `strip-dead-internals.globals=false`,
/// global variables) with internal or private linkage and no uses, until
/// none is left: removing one may leave others unreferenced.
pub fn strip_dead_internals() -> ModulePass {
    let info = PassInfo::new("strip-dead-internals", 1)
        .describe("remove internal functions and globals that nothing refers to");
    ModulePass::new(info, |module, ctx| {
        let globals = ctx.config_bool(GLOBALS)?;
        module.with_ir(|ir| loop {
            let mut removed = false;
            let dead_functions: Vec<_> = ir
                .get_functions()
                .filter(|f| is_local(f.get_linkage()))
                .filter(|f| {
                    f.as_global_value()
                        .as_pointer_value()
                        .get_first_use()
                        .is_none()
                })
                .collect();
            for f in dead_functions {
                crate::prelude::remark(
                    crate::prelude::RemarkKind::Passed,
                    "strip-dead-internals",
                    &f.get_name().to_string_lossy(),
                    "removed: internal, and nothing refers to it",
                );
                // SAFETY: nothing uses `f` (no first use), so no IR refers to
                // it, and this loop holds the only handle to it; the list was
                // collected before any deletion, and a function listed here
                // is not used by another listed one.
                unsafe { f.delete() };
                removed = true;
            }
            if globals {
                let dead_globals: Vec<_> = ir
                    .get_globals()
                    .filter(|g| is_local(g.get_linkage()))
                    .filter(|g| g.as_pointer_value().get_first_use().is_none())
                    .collect();
                for g in dead_globals {
                    // SAFETY: as for functions: `g` has no use, so no IR
                    // refers to it, and this loop holds the only handle.
                    unsafe { g.delete() };
                    removed = true;
                }
            }
            if !removed {
                break;
            }
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
        // SAFETY: `copy` owns its module, alive for the whole loop; each `f`
        // is a function of it, and deleting a body keeps the function, so
        // `LLVMGetNextFunction(f)` stays valid; the name is copied at once.
        unsafe {
            let mut f = LLVMGetFirstFunction(copy.raw());
            while !f.is_null() {
                let mut len = 0;
                let name = crate::ffi::str_from(LLVMGetValueName2(f, &mut len), len).into_owned();
                if LLVMIsDeclaration(f) == 0 && !functions.contains(&name.as_str()) {
                    crate::ffi::plab_delete_body(f);
                } else if functions.contains(&name.as_str()) {
                    // Kept functions must survive on their own, as llvm-extract makes them.
                    LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMExternalLinkage);
                }
                f = LLVMGetNextFunction(f);
            }
        }
        let dead = strip_dead_internals();
        (&dead as &dyn crate::pass::Pass)
            .apply_in(&mut copy, &crate::context::PassContext::new())?;
        Ok(copy)
    }
}
