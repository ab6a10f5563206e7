//! The Rust passes that ship with passlab, written against the IR through
//! the public API ([`ModulePass`](crate::ModulePass),
//! [`FunctionPass`](crate::FunctionPass), [`Module::with_ir`](crate::Module::with_ir)).

#![forbid(unsafe_code)]

mod fold_int;
mod strip_dead;

pub use fold_int::fold_int;
pub use strip_dead::strip_dead_internals;

use crate::config::ConfigOption;
use crate::pass::registry::BuiltIn;
use crate::pass::{Pass, PassRef};
use std::sync::Arc;

inventory::submit! {
    BuiltIn {
        info: || strip_dead_internals().info().clone(),
        make: || Arc::new(strip_dead_internals()) as PassRef,
    }
}

inventory::submit! {
    BuiltIn {
        info: || fold_int().info().clone(),
        make: || Arc::new(fold_int()) as PassRef,
    }
}

inventory::submit!(crate::config::Declarations(config_options));

/// The config options the built-in passes read.
fn config_options() -> Vec<ConfigOption> {
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
