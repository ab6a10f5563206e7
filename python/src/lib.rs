//! `passlab._passlab`: the extension module under the Python package in
//! `python/passlab/`. Python objects here are the core's objects — a
//! [`passlab::Module`], a [`passlab::PassRef`], a [`passlab::PassContext`]
//! entered on the core's own stack, instruments the core calls — with no
//! command strings in between; the package's `.py` files only add the
//! seeds' decorators and names.
//!
//! * [`module`]: `Module`, and modules lent to Python code for the length of
//!   one call (a hook, a Python pass).
//! * [`passes`]: `Pass` and its kinds, Python passes.
//! * [`context`]: `PassContext` with `with`.
//! * [`instruments`]: Python instruments and the built-in ones.
//! * [`errors`]: `passlab.Error` and one subclass per error kind; a Python
//!   exception raised in a hook or a pass reaches the caller as itself.
//! * [`local`]: state used only on the thread that made it.
//!
//! Everything runs on the calling thread. The GIL is released while LLVM
//! works and taken again for each call into Python; objects holding LLVM
//! state (or the core's `Rc`s) belong to the thread that made them: their
//! state is a [`local::Local`], and using one on another thread raises
//! `passlab.ThreadError` (pyo3's `unsendable` panicked instead, and a
//! `PanicException` is not an `Exception`).

use pyo3::prelude::*;

mod context;
mod errors;
mod graph;
mod instruments;
mod ir;
mod jit;
mod local;
mod module;
mod module_type;
mod names;
mod pass_info;
mod passes;
mod search;
mod session;

#[pymodule]
fn _passlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<module_type::PyModule_>()?;
    m.add_class::<pass_info::PyPassInfo>()?;
    m.add_class::<passes::PyPass>()?;
    m.add_class::<passes::PyLlvmPass>()?;
    m.add_class::<passes::PySequential>()?;
    m.add_class::<passes::PyPrintIr>()?;
    m.add_class::<passes::PyModulePass>()?;
    m.add_class::<context::PyPassContext>()?;
    m.add_class::<session::PySession>()?;
    m.add_class::<ir::PyValue>()?;
    m.add_class::<jit::PyBuffer>()?;
    m.add_class::<jit::PyJit>()?;
    m.add_class::<jit::PyAssembly>()?;
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<passes::PyFunctionPass>()?;
    m.add_class::<instruments::PyTiming>()?;
    m.add_class::<instruments::PyIrSize>()?;
    m.add_class::<instruments::PyCounts>()?;
    m.add_class::<instruments::PyPrint>()?;
    m.add_class::<instruments::PyRemarks>()?;
    m.add_class::<instruments::PyDumpIr>()?;
    m.add_class::<instruments::PyChart>()?;
    m.add_function(wrap_pyfunction!(passes::parse_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(passes::make_module_pass, m)?)?;
    m.add_function(wrap_pyfunction!(passes::make_function_pass, m)?)?;
    m.add_function(wrap_pyfunction!(passes::list_passes, m)?)?;
    m.add_function(wrap_pyfunction!(instruments::builtin_instruments, m)?)?;
    m.add_function(wrap_pyfunction!(context::config_options, m)?)?;
    m.add_function(wrap_pyfunction!(module::feature_names, m)?)?;
    m.add_function(wrap_pyfunction!(module::observation_spaces, m)?)?;
    m.add_function(wrap_pyfunction!(passes::pools, m)?)?;
    m.add_function(wrap_pyfunction!(search::tune_instructions, m)?)?;
    m.add_function(wrap_pyfunction!(passes::oz_ordering, m)?)?;
    m.add_function(wrap_pyfunction!(passes::opt_spelling, m)?)?;
    m.add_function(wrap_pyfunction!(passes::opt_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(passes::sample_corpus, m)?)?;
    m.add("LLVM_VERSION", "19")?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// Moves a value into a closure that runs while the GIL is released.
///
/// `Python::detach` asks for `Send` because another thread *could* run the
/// closure; it runs on this one, synchronously, and everything it touches
/// (modules, the thread's pass contexts) belongs to this thread.
pub(crate) struct OnThisThread<T>(T);

// SAFETY: `detach` runs its closure on the calling thread before it
// returns; nothing wrapped here is moved to or shared with another thread.
unsafe impl<T> Send for OnThisThread<T> {}

impl<T> OnThisThread<T> {
    pub(crate) fn new(value: T) -> Self {
        OnThisThread(value)
    }
    /// The value (a method, so that a closure captures the whole wrapper
    /// rather than its field).
    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

/// Runs core work with the GIL released, printing what passes printed
/// (PrintIR) and the warnings to Python's `sys.stdout` and `sys.stderr`, so
/// that a notebook shows them; a core error becomes the Python exception of
/// its kind, or the Python exception a hook or pass raised.
pub(crate) fn run_core<R>(
    py: Python<'_>,
    work: impl FnOnce() -> passlab::Result<R>,
) -> PyResult<R> {
    errors::clear_pending();
    let work = OnThisThread::new(work);
    let ((result, printed), warnings) = py
        .detach(move || {
            let work = work.into_inner();
            OnThisThread::new(passlab::console::capture_warnings(|| {
                passlab::console::capture(work)
            }))
        })
        .into_inner();
    write_to(py, "stdout", &printed);
    write_to(py, "stderr", &warnings);
    match result {
        Ok(r) => {
            errors::clear_pending();
            Ok(r)
        }
        Err(e) => Err(errors::to_py(e)),
    }
}

fn write_to(py: Python<'_>, stream: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    let written = py
        .import("sys")
        .and_then(|sys| sys.getattr(stream))
        .and_then(|s| s.call_method1("write", (text,)).map(|_| ()));
    if written.is_err() {
        // No usable sys.stdout (a closed stream, a pipe whose reader has
        // gone): the text goes to the process's own stream, and is dropped
        // if that fails too (print! would panic on a closed pipe).
        use std::io::Write;
        let _ = if stream == "stdout" {
            std::io::stdout().write_all(text.as_bytes())
        } else {
            std::io::stderr().write_all(text.as_bytes())
        };
    }
}
