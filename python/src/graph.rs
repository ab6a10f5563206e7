//! `passlab.Graph`: a function's control-flow graph (`Module.cfg`), drawn
//! by Graphviz as SVG in a notebook (`_repr_svg_`), with its DOT text and
//! its blocks as text.

use crate::errors::check;
use crate::module_type::{self as module, PyModule_};
use crate::run_core;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A function's control-flow graph: `title`, `dot` (Graphviz's text),
/// `text` (the blocks and edges), `svg` (laid out by Graphviz's dot);
/// shown as a picture in a notebook.
#[pyclass(name = "Graph", module = "passlab", frozen)]
pub struct PyGraph {
    inner: passlab::graph::Graph,
    svg: OnceLock<String>,
}

#[pymethods]
impl PyGraph {
    /// `cfg: FUNCTION` (and `after PIPELINE`).
    #[getter]
    fn title(&self) -> String {
        self.inner.title.clone()
    }

    /// The graph in Graphviz's language.
    #[getter]
    fn dot(&self) -> String {
        self.inner.dot.clone()
    }

    /// The blocks, their sizes and their successors, as text.
    #[getter]
    fn text(&self) -> String {
        self.inner.text.clone()
    }

    /// The graph laid out by Graphviz as SVG (raises ToolError when dot
    /// fails or is not installed).
    #[getter]
    fn svg(&self, py: Python<'_>) -> PyResult<String> {
        if let Some(s) = self.svg.get() {
            return Ok(s.clone());
        }
        let s = run_core(py, || self.inner.svg())?;
        Ok(self.svg.get_or_init(|| s).clone())
    }

    /// The graph laid out as PNG bytes.
    fn png<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let bytes = run_core(py, || self.inner.png())?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// Writes `.svg`, `.png` or `.dot`; a file passlab did not write is
    /// not replaced.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        check(self.inner.write(&path.to_string_lossy()))
    }

    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py)
    }

    fn __str__(&self) -> String {
        self.inner.text.clone()
    }

    fn __repr__(&self) -> String {
        let first = self.inner.text.lines().next().unwrap_or_default();
        format!("<passlab.Graph {first}>")
    }
}

/// `Module.cfg`: the graph of `function`, or of it after `after` ran on a
/// copy of the module.
pub fn cfg(
    slf: &Bound<'_, PyModule_>,
    function: &str,
    after: Option<&str>,
    lines: usize,
) -> PyResult<PyGraph> {
    let py = slf.py();
    let m = module::read(slf)?;
    let core = m.get()?;
    let inner = run_core(py, || {
        passlab::graph::of_function(core, function, after, lines)
    })?;
    Ok(PyGraph {
        inner,
        svg: OnceLock::new(),
    })
}
