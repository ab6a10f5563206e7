//! [`VerifyEach`]: LLVM's verifier after every pass, LLVM's own included;
//! the first pass that breaks the IR is reported with the function.

use super::tracker::{function_name, module_functions};
use super::{Instrument, PassRun};
use crate::ffi;
use crate::module::Module;
use crate::{Error, Result};
use llvm_sys::prelude::LLVMValueRef;
use std::cell::RefCell;

/// The first broken IR [`VerifyEach`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyFailure {
    pub pass: String,
    /// The function that does not verify (None: a module-level problem).
    pub function: Option<String>,
    pub message: String,
}

/// Verifies after every pass: the functions of the pass's unit, or the
/// whole module after a module pass. The first failure is an error naming
/// the pass and the function (so the pipeline stops and is rolled back) and
/// stays readable through [`failure`](VerifyEach::failure).
#[derive(Default)]
pub struct VerifyEach {
    failure: RefCell<Option<VerifyFailure>>,
    checked: RefCell<u64>,
}

fn verify_function(f: LLVMValueRef) -> std::result::Result<(), String> {
    let mut sinks = ffi::Sinks::default();
    // SAFETY: the callers (below) pass only functions of the module being
    // checked, alive for this call; `sinks` outlives the call, and
    // `SINK_FIRST` expects exactly the `*mut Sinks` that `sinks.user()` gives.
    if unsafe { ffi::plab_verify_function(f, ffi::SINK_FIRST, sinks.user()) } {
        Ok(())
    } else {
        Err(sinks.first_text())
    }
}

impl VerifyEach {
    pub fn new() -> VerifyEach {
        VerifyEach::default()
    }

    /// The first failure, if any.
    pub fn failure(&self) -> Option<VerifyFailure> {
        self.failure.borrow().clone()
    }

    /// How many passes were checked.
    pub fn checked(&self) -> u64 {
        *self.checked.borrow()
    }

    /// Counts `n` more checks (the back end's, which its probes made).
    pub fn add_checked(&self, n: u64) {
        *self.checked.borrow_mut() += n;
    }

    /// Forgets the failure and the count.
    pub fn clear(&self) {
        *self.failure.borrow_mut() = None;
        *self.checked.borrow_mut() = 0;
    }
}

impl Instrument for VerifyEach {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds {
            verify: true,
            ..super::MachineNeeds::changes()
        })
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        self.add_checked(run.steps.iter().filter(|st| st.changed).count() as u64);
        Ok(())
    }

    fn name(&self) -> &str {
        "verify"
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        *self.checked.borrow_mut() += 1;
        let found = if pass.scope.is_module() {
            match module.verify() {
                Ok(()) => None,
                Err(message) => {
                    let function = module_functions(module.raw())
                        .into_iter()
                        .find(|&f| verify_function(f).is_err())
                        .map(function_name);
                    Some((function, message))
                }
            }
        } else {
            pass.scope.functions(false).into_iter().find_map(|f| {
                verify_function(f)
                    .err()
                    .map(|m| (Some(function_name(f)), m))
            })
        };
        let Some((function, message)) = found else {
            return Ok(());
        };
        let failure = VerifyFailure {
            pass: pass.name().to_string(),
            function: function.clone(),
            message: message.clone(),
        };
        self.failure.borrow_mut().get_or_insert(failure);
        let ir = match &function {
            Some(name) => module.print_function(name).ok(),
            None => Some(module.print()),
        };
        Err(Error::Verify {
            pass: match &function {
                Some(f) => format!("{} on function {f}", pass.name()),
                None => pass.name().to_string(),
            },
            message,
            ir,
        })
    }
}
