//! `passlab.Error` and a subclass per [`passlab::ErrorKind`], carrying the
//! core's message (the one the REPL prints); `passlab.ThreadError`, for an
//! object used on a thread other than the one that made it; and the slot
//! that carries a Python exception raised in a hook or a Python pass
//! across the core.

use passlab::ErrorKind;
use pyo3::create_exception;
use pyo3::exceptions::{PyBaseException, PyException, PyRuntimeError};
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

/// Each kind's class: its name, the built-in class it also derives from
/// (what Python code, TVM or CompilerGym would raise for such a failure, so
/// that `except LookupError` catches an unknown pass as it would in TVM),
/// and its docstring. The table in docs/src/python.md lists the same.
const KINDS: [(ErrorKind, &str, &str, &str); 20] = [
    (ErrorKind::Parse, "ParseError", "ValueError", "Malformed LLVM IR text or bitcode (also a ValueError)."),
    (ErrorKind::Compile, "CompileError", "OSError", "clang rejected a C or C++ source: a failed compile job (also an OSError)."),
    (ErrorKind::Link, "LinkError", "ValueError", "Modules could not be linked together (also a ValueError)."),
    (ErrorKind::Codegen, "CodegenError", "RuntimeError", "LLVM's code generator failed on a module (also a RuntimeError)."),
    (ErrorKind::Io, "IoError", "OSError", "Reading or writing a file failed (also an OSError)."),
    (ErrorKind::UnknownPass, "UnknownPassError", "LookupError", "A pass name is not in the registry (also a LookupError)."),
    (ErrorKind::Pipeline, "PipelineError", "ValueError", "LLVM's pipeline parser rejected pipeline text (also a ValueError)."),
    (ErrorKind::DependencyCycle, "DependencyCycleError", "ValueError", "Required passes depend on each other in a cycle (also a ValueError)."),
    (ErrorKind::Config, "ConfigError", "AttributeError", "A configuration key is unknown, or its value has the wrong type (also an AttributeError, as TVM's)."),
    (ErrorKind::PassFailed, "PassFailedError", "RuntimeError", "A pass returned an error, panicked or crashed; the module is as it was (also a RuntimeError)."),
    (ErrorKind::Verify, "VerifyError", "ValueError", "The IR does not verify (also a ValueError)."),
    (ErrorKind::FunctionSetChanged, "FunctionSetChangedError", "RuntimeError", "A function pass added or removed functions (also a RuntimeError)."),
    (ErrorKind::NotFound, "NotFoundError", "KeyError", "A name (function, module) does not exist (also a KeyError)."),
    (ErrorKind::Instrument, "InstrumentError", "RuntimeError", "An instrument's hook failed (also a RuntimeError)."),
    (ErrorKind::Command, "CommandError", "ValueError", "A command of the command language was misused (also a ValueError)."),
    (ErrorKind::Chart, "ChartError", "RuntimeError", "A chart could not be drawn (also a RuntimeError)."),
    (ErrorKind::Tool, "ToolError", "OSError", "One of LLVM's tools failed: a failed job (also an OSError)."),
    (ErrorKind::Interrupted, "InterruptedError", "RuntimeError", "An interrupt stopped a pass; the module is as it was (also a RuntimeError)."),
    (ErrorKind::Invalid, "InvalidError", "ValueError", "An invalid argument (also a ValueError)."),
    (ErrorKind::Internal, "InternalError", "RuntimeError", "A bug in passlab; the module is as it was (also a RuntimeError)."),
];

/// The classes of `KINDS`, in its order, then `MissingFileError`.
static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// `type(name, (first, second), {...})`: a class deriving from both, with
/// `BaseException`'s `__str__` (a `KeyError`'s would quote the message).
fn both(
    py: Python<'_>,
    name: &str,
    first: &Bound<'_, PyType>,
    second: &Bound<'_, PyAny>,
    doc: &str,
) -> PyResult<Py<PyType>> {
    let bases = PyTuple::new(py, [first.as_any(), second])?;
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "passlab")?;
    namespace.set_item("__doc__", doc)?;
    namespace.set_item(
        "__str__",
        py.get_type::<PyBaseException>().getattr("__str__")?,
    )?;
    let class = py.get_type::<PyType>().call1((name, bases, namespace))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

fn classes(py: Python<'_>) -> PyResult<&Vec<Py<PyType>>> {
    CLASSES.get_or_try_init(py, || {
        let builtins = py.import("builtins")?;
        let error = py.get_type::<Error>();
        let mut out = KINDS
            .iter()
            .map(|(_, name, builtin, doc)| {
                both(py, name, &error, &builtins.getattr(*builtin)?, doc)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let io = out[4].bind(py).clone();
        out.push(both(
            py,
            "MissingFileError",
            &io,
            &builtins.getattr("FileNotFoundError")?,
            "A file to read does not exist (an IoError, also a FileNotFoundError).",
        )?);
        Ok(out)
    })
}

/// The class for an error of `kind` (a missing file's: `MissingFileError`).
fn class_of<'py>(py: Python<'py>, kind: ErrorKind, missing_file: bool) -> Bound<'py, PyType> {
    let Ok(classes) = classes(py) else {
        return py.get_type::<Error>();
    };
    if missing_file {
        return classes[KINDS.len()].bind(py).clone();
    }
    match KINDS.iter().position(|(k, ..)| *k == kind) {
        Some(i) => classes[i].bind(py).clone(),
        None => py.get_type::<Error>(),
    }
}

/// Adds the classes to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    let classes = classes(py)?;
    for class in classes {
        let class = class.bind(py);
        m.add(class.name()?.to_string(), class)?;
    }
    m.add("ThreadError", thread_error_type(py)?)?;
    Ok(())
}

/// `passlab.ThreadError`: a subclass of both `passlab.Error` and
/// `RuntimeError` (what Python raises for an object used where it cannot
/// be), made once as the kinds' classes are.
static THREAD_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn thread_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    THREAD_ERROR
        .get_or_try_init(py, || {
            both(
                py,
                "ThreadError",
                &py.get_type::<Error>(),
                py.get_type::<PyRuntimeError>().as_any(),
                "A passlab object was used on a thread other than the one that made it \
                 (each object belongs to its thread); also a RuntimeError.",
            )
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
        let missing =
            matches!(&e, passlab::Error::Io { message, .. } if message.contains("no such file"));
        let class = class_of(py, e.kind(), missing);
        PyErr::from_type(class, e.to_string())
    })
}

/// A core result as a Python one.
pub fn check<T>(r: passlab::Result<T>) -> PyResult<T> {
    r.map_err(to_py)
}
