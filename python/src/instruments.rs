//! Instruments from Python: instances of `@pass_instrument` classes, whose
//! hooks the core calls for every pass — LLVM's inner passes included — in
//! the seeds' order and with their exception rules (the core's
//! `instrument` module); and the built-in instruments, their results as
//! plain Python data.

use crate::errors::stash;
use crate::module::lend;
use crate::passes::{unit_name, PyPassInfo};
use passlab::instrument::{Counts, IrSize, PassRun, Timing};
use passlab::{Instrument, Module};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ptr::NonNull;
use std::rc::Rc;

/// The attribute `passlab.instrument.pass_instrument` sets on a class.
const MARK: &str = "__passlab_instrument__";

const HOOKS: [&str; 5] = [
    "enter_pass_ctx",
    "exit_pass_ctx",
    "should_run",
    "run_before_pass",
    "run_after_pass",
];

/// An instance of a `@pass_instrument` class.
struct PyInstrument {
    object: Py<PyAny>,
    name: String,
    /// Which of the five hooks the class defines (the others do nothing).
    has: [bool; 5],
}

impl PyInstrument {
    fn simple(&self, hook: usize) -> passlab::Result<()> {
        if !self.has[hook] {
            return Ok(());
        }
        Python::attach(|py| self.object.bind(py).call_method0(HOOKS[hook]).map(|_| ()))
            .map_err(stash)
    }

    fn with_pass<R>(
        &self,
        hook: usize,
        module: &Module,
        run: &PassRun<'_>,
        f: impl FnOnce(Bound<'_, PyAny>) -> PyResult<R>,
    ) -> passlab::Result<R> {
        Python::attach(|py| {
            lend(py, NonNull::from(module), false, |m| {
                let info = PyPassInfo::of_run(run, hook == 4);
                let out = self
                    .object
                    .bind(py)
                    .call_method1(HOOKS[hook], (m.clone(), info))?;
                f(out)
            })
        })
        .map_err(stash)
    }
}

impl Instrument for PyInstrument {
    fn name(&self) -> &str {
        &self.name
    }

    fn enter_pass_ctx(&self) -> passlab::Result<()> {
        self.simple(0)
    }

    fn exit_pass_ctx(&self) -> passlab::Result<()> {
        self.simple(1)
    }

    fn should_run(&self, module: &Module, pass: &PassRun) -> passlab::Result<bool> {
        if !self.has[2] {
            return Ok(true);
        }
        self.with_pass(2, module, pass, |answer| answer.is_truthy())
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> passlab::Result<()> {
        if !self.has[3] {
            return Ok(());
        }
        self.with_pass(3, module, pass, |_| Ok(()))
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> passlab::Result<()> {
        if !self.has[4] {
            return Ok(());
        }
        self.with_pass(4, module, pass, |_| Ok(()))
    }
}

/// The core instrument for a Python object given as one.
pub fn to_core(object: &Bound<'_, PyAny>) -> PyResult<Rc<dyn Instrument>> {
    if let Ok(t) = object.cast::<PyTiming>() {
        return Ok(t.borrow().inner.clone());
    }
    if let Ok(t) = object.cast::<PyIrSize>() {
        return Ok(t.borrow().inner.clone());
    }
    if let Ok(t) = object.cast::<PyCounts>() {
        return Ok(t.borrow().inner.clone());
    }
    let class = object.get_type();
    let marked = class
        .getattr(MARK)
        .map(|v| v.is_truthy().unwrap_or(false))
        .unwrap_or(false);
    if !marked {
        let what = class.name().map(|n| n.to_string()).unwrap_or_default();
        let hint = if object.is_instance_of::<pyo3::types::PyType>() {
            " (a class: pass an instance, MyInstrument())"
        } else {
            " (decorate its class with @passlab.instrument.pass_instrument)"
        };
        return Err(PyTypeError::new_err(format!(
            "{what} is not an instrument{hint}"
        )));
    }
    // Hooks left as `PassInstrument`'s do-nothing defaults are not called
    // (a Python call per pass and hook adds up over LLVM's inner passes).
    let py = object.py();
    let base = py
        .import("passlab.instrument")
        .and_then(|m| m.getattr("PassInstrument"))
        .ok();
    let mut has = [false; 5];
    for (k, hook) in HOOKS.iter().enumerate() {
        let Ok(defined) = class.getattr(*hook) else {
            continue;
        };
        let default = base.as_ref().and_then(|b| b.getattr(*hook).ok());
        has[k] = !default.is_some_and(|d| d.is(&defined));
    }
    Ok(Rc::new(PyInstrument {
        object: object.clone().unbind(),
        name: class.name()?.to_string(),
        has,
    }))
}

fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

/// Calls `pandas.DataFrame(rows)`.
fn frame<'py>(py: Python<'py>, rows: Vec<Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
    py.import("pandas")?.getattr("DataFrame")?.call1((rows,))
}

/// Times every pass, LLVM's inner passes nested under the pass that ran
/// them (TVM's PassTimingInstrument).
#[pyclass(
    name = "PassTimingInstrument",
    module = "passlab.instrument",
    unsendable
)]
pub struct PyTiming {
    inner: Rc<Timing>,
}

#[pymethods]
impl PyTiming {
    #[new]
    fn new() -> Self {
        PyTiming {
            inner: Rc::new(Timing::new()),
        }
    }

    /// The timing tree as text: each pass with its total and own time.
    fn render(&self) -> String {
        self.inner.report().tree_text()
    }

    /// In a notebook: the tree as text, and as a table.
    #[pyo3(signature = (include=None, exclude=None))]
    fn _repr_mimebundle_<'py>(
        &self,
        py: Python<'py>,
        include: Option<Bound<'py, PyAny>>,
        exclude: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = (include, exclude);
        let report = self.inner.report();
        let d = PyDict::new(py);
        d.set_item("text/plain", report.tree_text())?;
        d.set_item("text/html", report.tree_table().to_html())?;
        Ok(d)
    }

    /// One row per pass name: name, IR unit, runs, own and total seconds.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .report()
            .flat()
            .into_iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("name", r.name)?;
                d.set_item("ir_unit", unit_name(r.unit))?;
                d.set_item("count", r.count)?;
                d.set_item("self_s", secs(r.self_time))?;
                d.set_item("total_s", secs(r.total))?;
                Ok(d)
            })
            .collect()
    }

    /// `rows()` as a pandas DataFrame.
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        frame(py, self.rows(py)?)
    }

    /// Seconds in the outermost passes.
    #[getter]
    fn total_s(&self) -> f64 {
        secs(self.inner.report().total())
    }

    fn clear(&self) {
        self.inner.clear()
    }
}

/// The module's size after every pass.
#[pyclass(name = "IRSizeInstrument", module = "passlab.instrument", unsendable)]
pub struct PyIrSize {
    inner: Rc<IrSize>,
}

#[pymethods]
impl PyIrSize {
    #[new]
    fn new() -> Self {
        PyIrSize {
            inner: Rc::new(IrSize::new()),
        }
    }

    /// One row per pass run: pass, IR unit, target, depth, instructions,
    /// blocks, functions, and the change in instructions.
    #[pyo3(signature = (changes_only=false))]
    fn rows<'py>(&self, py: Python<'py>, changes_only: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let points = if changes_only {
            self.inner.changes()
        } else {
            self.inner.series()
        };
        points
            .into_iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("pass", &*p.pass)?;
                d.set_item("ir_unit", unit_name(p.unit))?;
                d.set_item("target", &*p.target)?;
                d.set_item("depth", p.depth)?;
                d.set_item("instructions", p.instructions)?;
                d.set_item("blocks", p.blocks)?;
                d.set_item("functions", p.functions)?;
                d.set_item("delta", p.delta)?;
                Ok(d)
            })
            .collect()
    }

    #[pyo3(signature = (changes_only=false))]
    fn to_pandas<'py>(&self, py: Python<'py>, changes_only: bool) -> PyResult<Bound<'py, PyAny>> {
        frame(py, self.rows(py, changes_only)?)
    }

    fn render(&self) -> String {
        self.inner.table().to_text()
    }

    fn clear(&self) {
        self.inner.clear()
    }
}

/// How often each pass ran, changed the IR, and was skipped.
#[pyclass(
    name = "PassCountsInstrument",
    module = "passlab.instrument",
    unsendable
)]
pub struct PyCounts {
    inner: Rc<Counts>,
}

#[pymethods]
impl PyCounts {
    #[new]
    fn new() -> Self {
        PyCounts {
            inner: Rc::new(Counts::new()),
        }
    }

    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .rows()
            .into_iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("name", r.name)?;
                d.set_item("ran", r.ran)?;
                d.set_item("changed", r.changed)?;
                d.set_item("skipped", r.skipped)?;
                Ok(d)
            })
            .collect()
    }

    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        frame(py, self.rows(py)?)
    }

    fn render(&self) -> String {
        self.inner.table().to_text()
    }

    fn clear(&self) {
        self.inner.clear()
    }
}
