//! Instruments from Python: instances of `@pass_instrument` classes, whose
//! hooks the core calls for every pass — LLVM's inner passes included — in
//! the seeds' order and with their exception rules (the core's
//! `instrument` module); and the built-in instruments, their results as
//! plain Python data.

use crate::errors::stash;
use crate::local::{Kind, Local};
use crate::module_type::lend;
use crate::pass_info::{unit_name, PyPassInfo};
use passlab::instrument::{
    Counts, IrSize, PassFilter, PassRun, PrintPasses, RemarkFilter, RemarkKind, Remarks, Timing,
};
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
        return Ok(Rc::new(ClearedOnExit(t.get().inner.get()?.clone())));
    }
    if let Ok(t) = object.cast::<PyIrSize>() {
        return Ok(t.get().inner.get()?.clone());
    }
    if let Ok(t) = object.cast::<PyCounts>() {
        return Ok(t.get().inner.get()?.clone());
    }
    if let Ok(t) = object.cast::<PyPrint>() {
        return Ok(t.get().inner.get()?.clone());
    }
    if let Ok(t) = object.cast::<PyDumpIr>() {
        return Ok(t.get().inner.get()?.clone());
    }
    if let Ok(t) = object.cast::<PyRemarks>() {
        return Ok(t.get().inner.get()?.clone());
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

/// The timing instrument as TVM's: its records are cleared when the context
/// it was given to exits (read them with `render()` inside the `with`), and
/// when `override_instruments` replaces it. The core's (the REPL's `:with
/// timing`) keeps them until cleared.
struct ClearedOnExit(Rc<Timing>);

impl Instrument for ClearedOnExit {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn enter_pass_ctx(&self) -> passlab::Result<()> {
        self.0.enter_pass_ctx()
    }
    fn exit_pass_ctx(&self) -> passlab::Result<()> {
        let exited = self.0.exit_pass_ctx();
        self.0.clear();
        exited
    }
    fn should_run(&self, module: &Module, pass: &PassRun) -> passlab::Result<bool> {
        self.0.should_run(module, pass)
    }
    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> passlab::Result<()> {
        self.0.run_before_pass(module, pass)
    }
    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> passlab::Result<()> {
        self.0.run_after_pass(module, pass)
    }
    fn machine_needs(&self) -> Option<passlab::instrument::MachineNeeds> {
        self.0.machine_needs()
    }
    fn machine_run(&self, run: &passlab::instrument::MachineRun) -> passlab::Result<()> {
        self.0.machine_run(run)
    }
    fn closing(&self) -> String {
        self.0.closing()
    }
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
#[pyclass(name = "PassTimingInstrument", module = "passlab.instrument", frozen)]
pub struct PyTiming {
    inner: Local<Rc<Timing>>,
}

/// What to do instead of using an instrument on another thread.
const INSTRUMENT_INSTEAD: &str = "an instrument records the passes run on its own thread";

static TIMING: Kind = Kind {
    name: "passlab.instrument.PassTimingInstrument",
    instead: INSTRUMENT_INSTEAD,
};
static IR_SIZE: Kind = Kind {
    name: "passlab.instrument.IRSizeInstrument",
    instead: INSTRUMENT_INSTEAD,
};
static COUNTS: Kind = Kind {
    name: "passlab.instrument.PassCountsInstrument",
    instead: INSTRUMENT_INSTEAD,
};
static PRINT: Kind = Kind {
    name: "passlab.instrument.PrintIRInstrument",
    instead: INSTRUMENT_INSTEAD,
};
static REMARKS: Kind = Kind {
    name: "passlab.instrument.RemarksInstrument",
    instead: INSTRUMENT_INSTEAD,
};
static DUMP_IR: Kind = Kind {
    name: "passlab.instrument.DumpIRInstrument",
    instead: INSTRUMENT_INSTEAD,
};
static CHART: Kind = Kind {
    name: "passlab.Chart",
    instead: "draw it on this thread, or pass on its svg() text or png() bytes",
};

#[pymethods]
impl PyTiming {
    #[new]
    fn new() -> Self {
        PyTiming {
            inner: Local::new(Rc::new(Timing::new()), &TIMING),
        }
    }

    /// The timing tree as text: each pass with its total and own time.
    fn render(&self) -> PyResult<String> {
        Ok(self.inner.get()?.report().tree_text())
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
        let report = self.inner.get()?.report();
        let d = PyDict::new(py);
        d.set_item("text/plain", report.tree_text())?;
        d.set_item("text/html", report.tree_table().to_html())?;
        Ok(d)
    }

    /// One row per pass name: name, IR unit, runs, own and total seconds.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .get()?
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

    /// The chart `:plot timing` draws: the `top` passes by own time.
    #[pyo3(signature = (top=12))]
    fn chart(&self, top: usize) -> PyResult<PyChart> {
        Ok(PyChart::new(passlab::chart::Chart::timing(
            &self.inner.get()?.report(),
            top,
        )))
    }

    /// Seconds in the outermost passes.
    #[getter]
    fn total_s(&self) -> PyResult<f64> {
        Ok(secs(self.inner.get()?.report().total()))
    }

    fn clear(&self) -> PyResult<()> {
        self.inner.get()?.clear();
        Ok(())
    }
}

/// The module's size after every pass.
#[pyclass(name = "IRSizeInstrument", module = "passlab.instrument", frozen)]
pub struct PyIrSize {
    inner: Local<Rc<IrSize>>,
}

#[pymethods]
impl PyIrSize {
    #[new]
    fn new() -> Self {
        PyIrSize {
            inner: Local::new(Rc::new(IrSize::new()), &IR_SIZE),
        }
    }

    /// One row per pass run: pass, IR unit, target, depth, instructions,
    /// blocks, functions, and the change in instructions.
    #[pyo3(signature = (changes_only=false))]
    fn rows<'py>(&self, py: Python<'py>, changes_only: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let inner = self.inner.get()?;
        let points = if changes_only {
            inner.changes()
        } else {
            inner.series()
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

    /// The chart `:plot ir-size` draws: instructions after each pass.
    fn chart(&self) -> PyResult<PyChart> {
        Ok(PyChart::new(passlab::chart::Chart::ir_size(
            &self.inner.get()?.series(),
        )))
    }

    #[pyo3(signature = (changes_only=false))]
    fn to_pandas<'py>(&self, py: Python<'py>, changes_only: bool) -> PyResult<Bound<'py, PyAny>> {
        frame(py, self.rows(py, changes_only)?)
    }

    fn render(&self) -> PyResult<String> {
        Ok(self.inner.get()?.table().to_text())
    }

    fn clear(&self) -> PyResult<()> {
        self.inner.get()?.clear();
        Ok(())
    }
}

/// How often each pass ran, changed the IR, and was skipped.
#[pyclass(name = "PassCountsInstrument", module = "passlab.instrument", frozen)]
pub struct PyCounts {
    inner: Local<Rc<Counts>>,
}

#[pymethods]
impl PyCounts {
    #[new]
    fn new() -> Self {
        PyCounts {
            inner: Local::new(Rc::new(Counts::new()), &COUNTS),
        }
    }

    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .get()?
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

    fn render(&self) -> PyResult<String> {
        Ok(self.inner.get()?.table().to_text())
    }

    fn clear(&self) -> PyResult<()> {
        self.inner.get()?.clear();
        Ok(())
    }
}

/// Writes the IR after each pass that changed it into numbered files in a
/// folder passlab makes, with an index (`:instrument dump-ir --out DIR`):
/// the whole module, or the `functions` named alone; only the `passes`
/// named, if any. A folder of the user's is refused unless `replace`.
#[pyclass(name = "DumpIRInstrument", module = "passlab.instrument", frozen)]
pub struct PyDumpIr {
    inner: Local<Rc<passlab::instrument::DumpIr>>,
}

#[pymethods]
impl PyDumpIr {
    #[new]
    #[pyo3(signature = (out, passes=None, functions=None, replace=false))]
    fn new(
        out: std::path::PathBuf,
        passes: Option<Vec<String>>,
        functions: Option<Vec<String>>,
        replace: bool,
    ) -> PyResult<Self> {
        let row = passlab::session::builtin_named("dump-ir")
            .ok_or_else(|| PyTypeError::new_err("passlab has no dump-ir instrument"))?;
        let value = passes.map(|p| p.join(","));
        let functions = functions.unwrap_or_default();
        let spec = passlab::session::Spec {
            value: value.as_deref(),
            functions: &functions,
            kinds: &[],
            out: Some(&out),
            replace,
            printed: None,
        };
        let made = crate::errors::check((row.make)(&spec))?;
        let dump = made
            .any
            .downcast::<passlab::instrument::DumpIr>()
            .map_err(|_| PyTypeError::new_err("dump-ir made another instrument"))?;
        Ok(PyDumpIr {
            inner: Local::new(dump, &DUMP_IR),
        })
    }

    /// The folder written into.
    #[getter]
    fn folder(&self) -> PyResult<std::path::PathBuf> {
        Ok(self.inner.get()?.folder())
    }

    /// The files written so far, in order: number, pass, unit, target,
    /// file, instructions.
    fn dumps<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .get()?
            .dumps()
            .into_iter()
            .map(|x| {
                let d = PyDict::new(py);
                d.set_item("number", x.number)?;
                d.set_item("pass", x.pass)?;
                d.set_item("unit", x.unit)?;
                d.set_item("target", x.target)?;
                d.set_item("file", x.file)?;
                d.set_item("instructions", x.instructions)?;
                Ok(d)
            })
            .collect()
    }

    /// Why writing stopped early (the size limit, an error), or None.
    #[getter]
    fn stopped(&self) -> PyResult<Option<String>> {
        Ok(self.inner.get()?.stopped())
    }
}

/// The built-in instruments' table (`:help instrument`): each one's name,
/// its class in `passlab.instrument` ("" when Python has none) and what it
/// records.
#[pyfunction]
pub fn builtin_instruments() -> Vec<(&'static str, &'static str, &'static str)> {
    passlab::session::BUILTINS
        .iter()
        .map(|b| (b.name, b.python, b.summary))
        .collect()
}

/// Writes what a print instrument prints to Python's `sys.stdout`, as the
/// passes run (a notebook shows it in the cell).
struct PyStdout;

impl std::io::Write for PyStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf).into_owned();
        Python::attach(|py| crate::write_to(py, "stdout", &text));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Prints the IR before (or after) the passes it selects — every pass,
/// LLVM's inner ones included, unless `passes` or `functions` narrow it —
/// to `sys.stdout` as they run, or keeps it for `output()` with
/// `keep=True` (TVM's `PrintBeforeAll`/`PrintAfterAll`, and `:instrument
/// print-before/after`).
#[pyclass(name = "PrintIRInstrument", module = "passlab.instrument", frozen)]
pub struct PyPrint {
    inner: Local<Rc<PrintPasses>>,
}

#[pymethods]
impl PyPrint {
    #[new]
    #[pyo3(signature = (when="after", passes=None, functions=None, keep=false))]
    fn new(
        when: &str,
        passes: Option<Vec<String>>,
        functions: Option<Vec<String>>,
        keep: bool,
    ) -> PyResult<Self> {
        let mut filter = match passes {
            Some(p) => PassFilter::passes(p),
            None => PassFilter::all(),
        };
        if let Some(f) = functions {
            filter.functions = f.into_iter().collect();
        }
        let print = match when {
            "before" => PrintPasses::before(filter),
            "after" => PrintPasses::after(filter),
            other => {
                return Err(crate::errors::to_py(passlab::Error::Invalid(format!(
                    "when is 'before' or 'after'; got '{other}'"
                ))))
            }
        };
        let print = if keep {
            print
        } else {
            print.writing_to(Box::new(PyStdout))
        };
        Ok(PyPrint {
            inner: Local::new(Rc::new(print), &PRINT),
        })
    }

    /// What was printed so far, when made with `keep=True` (emptied).
    fn output(&self) -> PyResult<String> {
        Ok(self.inner.get()?.output())
    }
}

/// The optimization remarks LLVM's passes emit while it is on (what
/// `-Rpass`, `-Rpass-missed` and `-Rpass-analysis` show), for every pass
/// run: inlining decisions, vectorization, LICM, GVN…
#[pyclass(name = "RemarksInstrument", module = "passlab.instrument", frozen)]
pub struct PyRemarks {
    inner: Local<Rc<Remarks>>,
}

#[pymethods]
impl PyRemarks {
    /// Keeps the remarks of `kinds` (`passed`, `missed`, `analysis`,
    /// `failure`), of `passes`, in `functions` (all when not given).
    #[new]
    #[pyo3(signature = (kinds=None, passes=None, functions=None))]
    fn new(
        kinds: Option<Vec<String>>,
        passes: Option<Vec<String>>,
        functions: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let kinds = kinds
            .unwrap_or_default()
            .iter()
            .map(|k| {
                RemarkKind::parse(k).ok_or_else(|| {
                    crate::errors::to_py(passlab::Error::Invalid(format!(
                        "unknown remark kind '{k}'; valid are: {}",
                        RemarkKind::NAMES.join(", ")
                    )))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let filter = RemarkFilter {
            passes: passes.unwrap_or_default(),
            kinds,
            functions: functions.unwrap_or_default(),
        };
        Ok(PyRemarks {
            inner: Local::new(Rc::new(Remarks::filtered(filter)), &REMARKS),
        })
    }

    /// One dict per remark: kind, pass, name, function, file, line, column,
    /// message, args (a dict).
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .get()?
            .remarks()
            .into_iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("kind", r.kind.name())?;
                d.set_item("pass", &r.pass)?;
                d.set_item("name", &r.name)?;
                d.set_item("function", &r.function)?;
                d.set_item("file", &r.file)?;
                d.set_item("line", r.line)?;
                d.set_item("column", r.column)?;
                d.set_item("message", &r.message)?;
                let args = PyDict::new(py);
                for (k, v) in &r.args {
                    args.set_item(k, v)?;
                }
                d.set_item("args", args)?;
                Ok(d)
            })
            .collect()
    }

    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        frame(py, self.rows(py)?)
    }

    /// The remarks grouped as `:report remarks` shows them.
    fn render(&self) -> PyResult<String> {
        let remarks = self.inner.get()?.remarks();
        Ok(passlab::instrument::remark_table(&remarks, &RemarkFilter::default()).to_text())
    }
}

/// A chart, as passlab's kernel shows it: SVG and PNG in a notebook
/// (`_repr_mimebundle_`), `save("x.png")` or `.svg`.
#[pyclass(name = "Chart", module = "passlab", frozen)]
pub struct PyChart {
    inner: Local<passlab::chart::Chart>,
}

impl PyChart {
    fn new(chart: passlab::chart::Chart) -> PyChart {
        PyChart {
            inner: Local::new(chart, &CHART),
        }
    }
}

#[pymethods]
impl PyChart {
    #[getter]
    fn title(&self) -> PyResult<String> {
        Ok(self.inner.get()?.title.clone())
    }

    /// The chart as SVG text.
    fn svg(&self) -> PyResult<String> {
        crate::errors::check(self.inner.get()?.svg())
    }

    /// The chart as PNG bytes.
    fn png<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        Ok(pyo3::types::PyBytes::new(
            py,
            &crate::errors::check(self.inner.get()?.png())?,
        ))
    }

    /// Writes the chart: PNG or SVG, by the path's suffix.
    fn save(&self, path: &str) -> PyResult<()> {
        crate::errors::check(self.inner.get()?.write(path))
    }

    #[pyo3(signature = (include=None, exclude=None))]
    fn _repr_mimebundle_<'py>(
        &self,
        py: Python<'py>,
        include: Option<Bound<'py, PyAny>>,
        exclude: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = (include, exclude);
        let bundle = crate::errors::check(passlab::session::Bundle::chart(self.inner.get()?))?;
        let d = PyDict::new(py);
        for (mime, data) in &bundle.data {
            d.set_item(mime, data)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        match self.inner.get() {
            Ok(chart) => format!("<passlab.Chart '{}'>", chart.title),
            Err(_) => self.inner.foreign_repr().unwrap_or_default(),
        }
    }
}
