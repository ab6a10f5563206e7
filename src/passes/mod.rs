//! The Rust passes that ship with passlab, written against the IR through
//! the public API ([`ModulePass`](crate::ModulePass),
//! [`FunctionPass`](crate::FunctionPass), [`Module::with_ir`](crate::Module::with_ir)).

mod fold_int;
mod strip_dead;

pub use fold_int::fold_int;
pub use strip_dead::strip_dead_internals;

use crate::config::ConfigOption;
use crate::pass::PassRef;
use std::sync::Arc;

type Constructor = Arc<dyn Fn() -> PassRef + Send + Sync>;

/// Constructors of the built-in passes, for the registry.
pub(crate) fn builtin() -> Vec<Constructor> {
    vec![
        Arc::new(|| Arc::new(strip_dead_internals()) as PassRef),
        Arc::new(|| Arc::new(fold_int()) as PassRef),
    ]
}

/// The config options the built-in passes read.
pub(crate) fn config_options() -> Vec<ConfigOption> {
    vec![
        ConfigOption::new(
            strip_dead::GLOBALS,
            true,
            "strip-dead-internals also removes unreferenced internal globals",
        ),
        ConfigOption::new(
            fold_int::IDENTITIES,
            true,
            "fold-int also simplifies x+0, x*1, x&0 and the like",
        ),
    ]
}
