//! `passlab.Error` and a subclass per [`passlab::ErrorKind`], carrying the
//! core's message (the one the REPL prints); `passlab.ThreadError`, for an
//! object used on a thread other than the one that made it; and the slot
//! that carries a Python exception raised in a hook or a Python pass
//! across the core.

use passlab::ErrorKind;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::cell::RefCell;

create_exception!(
    passlab,
    Error,
    PyException,
    "Every error passlab raises; `kind` names its kind."
);

macro_rules! kinds {
    ($($kind:ident => $class:ident, $doc:literal;)*) => {
        $(create_exception!(passlab, $class, Error, $doc);)*

        fn class_of(py: Python<'_>, kind: ErrorKind) -> Bound<'_, pyo3::types::PyType> {
            match kind {
                $(ErrorKind::$kind => py.get_type::<$class>(),)*
                #[allow(unreachable_patterns)]
                _ => py.get_type::<Error>(),
            }
        }

        /// Adds the classes to the extension module.
        pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            let py = m.py();
            m.add("Error", py.get_type::<Error>())?;
            $(m.add(stringify!($class), py.get_type::<$class>())?;)*
            m.add("ThreadError", thread_error_type(py)?)?;
            Ok(())
        }
    };
}

kinds! {
    Parse => ParseError, "Malformed LLVM IR text or bitcode.";
    Compile => CompileError, "clang rejected a C or C++ source.";
    Link => LinkError, "Modules could not be linked together.";
    Codegen => CodegenError, "LLVM's code generator failed on a module.";
    Io => IoError, "Reading or writing a file failed.";
    UnknownPass => UnknownPassError, "A pass name is not in the registry.";
    Pipeline => PipelineError, "LLVM's pipeline parser rejected pipeline text.";
    DependencyCycle => DependencyCycleError, "Required passes depend on each other in a cycle.";
    Config => ConfigError, "A configuration key is unknown, or its value has the wrong type.";
    PassFailed => PassFailedError, "A pass returned an error, panicked or crashed; the module is as it was.";
    Verify => VerifyError, "The IR does not verify.";
    FunctionSetChanged => FunctionSetChangedError, "A function pass added or removed functions.";
    NotFound => NotFoundError, "A name (function, module) does not exist.";
    Instrument => InstrumentError, "An instrument's hook failed.";
    Command => CommandError, "A command of the command language was misused.";
    Chart => ChartError, "A chart could not be drawn.";
    Tool => ToolError, "One of LLVM's tools failed.";
    Interrupted => InterruptedError, "An interrupt stopped a pass; the module is as it was.";
    Invalid => InvalidError, "An invalid argument.";
    Internal => InternalError, "A bug in passlab; the module is as it was.";
}

/// `passlab.ThreadError`: a subclass of both `passlab.Error` and
/// `RuntimeError` (what Python raises for an object used where it cannot
/// be), which `create_exception!` cannot make (one base), so it is made as
/// `type("ThreadError", (Error, RuntimeError), {...})` once.
static THREAD_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn thread_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    THREAD_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(
                py,
                [py.get_type::<Error>(), py.get_type::<PyRuntimeError>()],
            )?;
            let namespace = PyDict::new(py);
            namespace.set_item("__module__", "passlab")?;
            namespace.set_item(
                "__doc__",
                "A passlab object was used on a thread other than the one that made it \
                 (each object belongs to its thread); also a RuntimeError.",
            )?;
            let class = py
                .get_type::<PyType>()
                .call1(("ThreadError", bases, namespace))?;
            Ok::<_, PyErr>(class.cast_into::<PyType>()?.unbind())
        })
        .map(|class| class.bind(py))
}

/// A `passlab.ThreadError` with `message`.
pub fn thread_error(py: Python<'_>, message: String) -> PyErr {
    match thread_error_type(py) {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    }
}

thread_local! {
    /// A Python exception raised by Python code the core called (a hook, a
    /// Python pass), waiting for the core to return.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Forgets a Python exception the core did not report (an exit hook's
/// error dropped while another error was on its way).
pub fn clear_pending() {
    PENDING.with(|p| p.borrow_mut().take());
}

/// Keeps `err` to be raised when the core returns, and gives the core an
/// error saying what happened (which the core may wrap: "instrument X
/// failed in run_before_pass: …").
pub fn stash(err: PyErr) -> passlab::Error {
    let message = Python::attach(|py| {
        let text = err
            .value(py)
            .str()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let name = err
            .get_type(py)
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "exception".into());
        if text.is_empty() {
            format!("python raised {name}")
        } else {
            format!("python raised {name}: {text}")
        }
    });
    PENDING.with(|p| *p.borrow_mut() = Some(err));
    passlab::Error::Invalid(message)
}

/// The Python exception for a core error: the exception Python code raised
/// if that is what stopped the core, else the class of the error's kind
/// with the core's message.
pub fn to_py(e: passlab::Error) -> PyErr {
    if let Some(raised) = PENDING.with(|p| p.borrow_mut().take()) {
        return raised;
    }
    Python::attach(|py| {
        let class = class_of(py, e.kind());
        PyErr::from_type(class, e.to_string())
    })
}

/// A core result as a Python one.
pub fn check<T>(r: passlab::Result<T>) -> PyResult<T> {
    r.map_err(to_py)
}
