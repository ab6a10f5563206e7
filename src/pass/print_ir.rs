//! PrintIR: prints the module at its point of a sequence.

use super::registry::BuiltIn;
use super::{Pass, PassInfo, PassRef};
use crate::context::PassContext;
use crate::module::Module;
use crate::{console, Result};
use std::sync::Arc;

inventory::submit! {
    BuiltIn {
        info: || PrintIr::new("").info().clone(),
        make: || Arc::new(PrintIr::new("")) as PassRef,
    }
}

/// Prints the whole module (through [`console::emit`]) and changes nothing.
pub struct PrintIr {
    info: PassInfo,
    header: String,
}

impl PrintIr {
    /// A PrintIR pass whose output starts with `; <header>`.
    pub fn new(header: &str) -> PrintIr {
        PrintIr {
            info: PassInfo::new("PrintIR", 0)
                .describe("print the module at this point of a sequence"),
            header: header.to_string(),
        }
    }
}

impl Pass for PrintIr {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn run(&self, module: &mut Module, _ctx: &PassContext) -> Result<()> {
        let header = if self.header.is_empty() {
            "PrintIR".to_string()
        } else {
            self.header.clone()
        };
        console::emit(&format!("; {header}\n{}", module.print()));
        Ok(())
    }
}
