//! `strip-dead-internals`: a module pass that removes internal functions and
//! globals nothing refers to.

use crate::pass::{ModulePass, PassInfo};
use inkwell::module::Linkage;
use inkwell::values::BasicValue;

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
                // Safe: nothing uses `f`, and we hold no other handle to it.
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
