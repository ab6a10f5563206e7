//! `passlab.Session`: the command language, for `%%passlab` cells in any
//! Python notebook (`passlab/magic.py` renders what it gives as passlab's
//! kernel renders it).

use crate::errors::{self, to_py};
use crate::local::{Kind, Local};
use crate::OnThisThread;
use passlab::session::{Item, Output};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A session of the command language: its modules, contexts and settings
/// live as long as this object.
#[pyclass(name = "Session", module = "passlab")]
pub struct PySession {
    inner: Local<passlab::session::Session>,
}

static KIND: Kind = Kind {
    name: "passlab.Session",
    instead: "a session's modules and contexts belong to its thread",
};

/// One command's output as a list of `(kind, value)`: `("stream", text)`,
/// `("stderr", text)`, `("display", {mime: data})`.
fn items<'py>(py: Python<'py>, output: Output) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for item in output.items {
        match item {
            Item::Stream(text) => list.append(("stream", text))?,
            Item::Stderr(text) => list.append(("stderr", text))?,
            Item::Display(bundle) => {
                let data = PyDict::new(py);
                for (mime, value) in &bundle.data {
                    data.set_item(mime, value)?;
                }
                list.append(("display", data))?;
            }
        }
    }
    Ok(list)
}

#[pymethods]
impl PySession {
    #[new]
    fn new() -> Self {
        PySession {
            inner: Local::new(passlab::session::Session::new(), &KIND),
        }
    }

    /// Runs a cell of commands; calls `each(items, last)` after each
    /// command with its output (see `items`) and whether it was the cell's
    /// last. The first error stops the cell and is raised; a failed command
    /// changes nothing.
    fn execute_each(&mut self, py: Python<'_>, code: &str, each: Py<PyAny>) -> PyResult<()> {
        let session = OnThisThread::new(self.inner.get_mut()?);
        errors::clear_pending();
        let mut failed: Option<PyErr> = None;
        let failed_ref = OnThisThread::new(&mut failed);
        let result = py
            .detach(move || {
                let session = session.into_inner();
                let failed = failed_ref.into_inner();
                OnThisThread::new(session.execute_each(code, |output, last| {
                    if failed.is_some() {
                        return;
                    }
                    let called = Python::attach(|py| {
                        let list = items(py, output)?;
                        each.bind(py).call1((list, last)).map(|_| ())
                    });
                    if let Err(e) = called {
                        *failed = Some(e);
                    }
                }))
            })
            .into_inner();
        if let Some(e) = failed {
            return Err(e);
        }
        result.map_err(to_py)
    }

    /// Completions at `pos` in `line`: where the word starts, and the words.
    fn complete(&self, line: &str, pos: usize) -> PyResult<(usize, Vec<String>)> {
        Ok(self.inner.get()?.complete(line, pos))
    }
}
