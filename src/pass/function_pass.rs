//! Function passes: one function at a time; the module's set of functions
//! must stay the same.

use super::{guard_panics, verified, Pass, PassInfo};
use crate::context::PassContext;
use crate::module::{is_skipped, Module};
use crate::{Error, Result};
use inkwell::values::FunctionValue;
use std::collections::BTreeSet;

type FunctionFn = dyn for<'ctx> Fn(FunctionValue<'ctx>, &PassContext) -> Result<()> + Send + Sync;
type NamedFn = dyn Fn(&mut Module, &str, &PassContext) -> Result<()> + Send + Sync;

enum Body {
    /// Gets each function as inkwell sees it (Rust passes).
    Inkwell(Box<FunctionFn>),
    /// Gets the module and each function's name (code that reaches the IR
    /// through the checked IR API, such as passes written in Python).
    Named(Box<NamedFn>),
}

/// A pass over each function with a body, written as a closure. Functions
/// marked `optnone` or [`passlab-skip`](crate::module::SKIP_ATTRIBUTE) are
/// skipped (TVM's `SkipOptimization`). Adding or removing a function (other
/// than an intrinsic declaration) is an error naming the pass.
pub struct FunctionPass {
    info: PassInfo,
    body: Body,
}

impl FunctionPass {
    /// A function pass running `body` on each function.
    pub fn new<F>(info: PassInfo, body: F) -> FunctionPass
    where
        F: for<'ctx> Fn(FunctionValue<'ctx>, &PassContext) -> Result<()> + Send + Sync + 'static,
    {
        FunctionPass {
            info,
            body: Body::Inkwell(Box::new(body)),
        }
    }

    /// A function pass whose body gets the module and one function's name
    /// at a time (the same functions, skipped ones aside, and the same
    /// checks as [`new`](FunctionPass::new)).
    pub fn by_name<F>(info: PassInfo, body: F) -> FunctionPass
    where
        F: Fn(&mut Module, &str, &PassContext) -> Result<()> + Send + Sync + 'static,
    {
        FunctionPass {
            info,
            body: Body::Named(Box::new(body)),
        }
    }
}

/// Functions that matter for the "same set of functions" rule: every
/// function except intrinsic declarations (which LLVM's own function passes
/// add freely).
fn function_set(module: &Module) -> BTreeSet<String> {
    module
        .function_names()
        .into_iter()
        .filter(|n| !n.starts_with("llvm."))
        .collect()
}

impl Pass for FunctionPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn verifies_itself(&self) -> bool {
        true
    }

    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        let name = &self.info.name;
        let before = function_set(module);
        guard_panics(name, || match &self.body {
            Body::Named(body) => {
                let names: Vec<String> = module.with_ir(|ir| {
                    ir.get_functions()
                        .filter(|f| f.count_basic_blocks() > 0 && !is_skipped(*f))
                        .map(|f| f.get_name().to_string_lossy().into_owned())
                        .collect()
                });
                for fname in names {
                    // A body that (wrongly) deleted a later function: the
                    // set check below reports it.
                    if module.function_ref(&fname).is_ok() {
                        body(module, &fname, ctx)?;
                    }
                }
                Ok(())
            }
            Body::Inkwell(body) => module.with_ir(|ir| {
                // Look each function up by name when its turn comes, so that a
                // body that (wrongly) deletes another function cannot leave us
                // holding a dangling handle; the set check below reports it.
                let names: Vec<String> = ir
                    .get_functions()
                    .map(|f| f.get_name().to_string_lossy().into_owned())
                    .collect();
                for fname in names {
                    let Some(func) = ir.get_function(&fname) else {
                        continue;
                    };
                    if func.count_basic_blocks() == 0 || is_skipped(func) {
                        continue;
                    }
                    body(func, ctx)?;
                }
                Ok(())
            }),
        })?;
        let after = function_set(module);
        if let Some(added) = after.difference(&before).next() {
            return Err(Error::FunctionSetChanged {
                pass: name.clone(),
                change: "added",
                function: added.clone(),
            });
        }
        if let Some(removed) = before.difference(&after).next() {
            return Err(Error::FunctionSetChanged {
                pass: name.clone(),
                change: "removed",
                function: removed.clone(),
            });
        }
        verified(module, name)
    }
}
