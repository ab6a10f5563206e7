//! The names of the passes made in Python, which a `PassContext` may name
//! (kept apart from `passes.rs`, which uses the context, so that the
//! context's check of its names does not use `passes.rs` back).

use crate::errors::check;
use passlab::registry;
use pyo3::prelude::*;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// The names of the passes made in Python (module and function passes,
/// Sequentials), which a `PassContext`'s `required_pass` and
/// `disabled_pass` may name besides the registry's passes.
static PYTHON_NAMES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

pub fn note_name(name: &str) {
    PYTHON_NAMES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(name.to_string());
}

/// Ok for a name `required_pass` and `disabled_pass` take: a pass made in
/// Python so far, a registered pass, or pipeline text a Sequential may
/// hold; else the core's error (the nearest names), as `LLVMPass` gives.
pub fn check_pass_name(name: &str) -> PyResult<()> {
    let known = PYTHON_NAMES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(name);
    if known {
        return Ok(());
    }
    check(registry::check_pass_name(name))
}
