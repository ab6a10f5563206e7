//! `Pass` and its kinds. A pass is the core's [`PassRef`]; calling it on a
//! module is the core's transactional `apply` under the current context
//! (a failure leaves the module as it was), and a `Sequential` gates its
//! passes by that context as `:run` does.

use crate::errors::{check, stash};
use crate::module_type::{lend, PyModule_};
use crate::names::note_name;
use crate::pass_info::{unit_name, PyPassInfo};
use crate::{context, run_core};
use passlab::registry::{self, PassKind};
use passlab::{ModulePass, PassInfo, PassRef, PrintIr, Sequential};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A pass: `new = pass_(mod)` runs it under the current PassContext on a
/// copy of `mod` and returns the copy, `mod` left as it was (TVM's modules
/// are values); `pass_(mod, inplace=True)`, or `mod.apply(pass_)`, changes
/// `mod` itself and returns it. If the pass fails the error is raised and
/// `mod` is as it was.
#[pyclass(name = "Pass", module = "passlab.transform", subclass, frozen)]
pub struct PyPass {
    pub pass: PassRef,
    /// The instance of a class decorated with `module_pass` or
    /// `function_pass`, whose attributes the pass forwards (TVM's).
    pub instance: Option<Py<PyAny>>,
}

impl PyPass {
    pub fn new(pass: PassRef) -> Self {
        PyPass {
            pass,
            instance: None,
        }
    }
}

/// Runs `pass` on `module` itself: the core's transactional apply.
pub fn apply_in_place(pass: &PassRef, module: &Bound<'_, PyModule_>) -> PyResult<()> {
    let py = module.py();
    let mut m = module.try_borrow_mut().map_err(|_| {
        PyTypeError::new_err(
            "this module is being transformed by a pass already; \
             a hook or pass gets the module it may use as its argument",
        )
    })?;
    let core = m.get_mut()?;
    let pass = pass.clone();
    run_core(py, || pass.apply(core))
}

#[pymethods]
impl PyPass {
    #[pyo3(signature = (module, inplace=false))]
    fn __call__<'py>(
        &self,
        module: Bound<'py, PyModule_>,
        inplace: bool,
    ) -> PyResult<Bound<'py, PyModule_>> {
        let py = module.py();
        if inplace {
            apply_in_place(&self.pass, &module)?;
            return Ok(module);
        }
        let mut copy = {
            let this = crate::module_type::read(&module)?;
            if this.lent_to_read() {
                // A pass run from a hook would call the hooks again, on
                // and on.
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "this module is lent to an instrument to read; an instrument \
                     cannot change it or run passes on it (write a pass)",
                ));
            }
            if this.lent_to_change() {
                this.passed_on.store(true, Ordering::Relaxed);
            }
            this.get()?.copy()
        };
        drop(module);
        let pass = self.pass.clone();
        run_core(py, || pass.apply(&mut copy))?;
        Bound::new(py, PyModule_::owned(copy))
    }

    /// One step of an episode, for passlab.gym (not a public API): the
    /// core's `apply_step` under the current context, in place and without
    /// a snapshot. `before` is the fingerprint the module had after the
    /// last step; if the pass fails, the module is made again from `start`
    /// by the passes `done` (the episode so far), so it is left as it was.
    /// Returns whether the module changed and its fingerprint.
    fn _step(
        &self,
        module: Bound<'_, PyModule_>,
        before: u64,
        start: Bound<'_, PyModule_>,
        done: Vec<PyRef<'_, PyPass>>,
    ) -> PyResult<(bool, u64)> {
        let py = module.py();
        let done: Vec<PassRef> = done.iter().map(|p| p.pass.clone()).collect();
        let start = crate::module_type::read(&start)?;
        let start = start.get()?;
        let mut m = crate::module_type::write(&module)?;
        let core = m.get_mut()?;
        let pass = self.pass.clone();
        let ctx = passlab::PassContext::current();
        let stepped = run_core(py, || {
            pass.apply_step(core, &ctx, before, || {
                passlab::pass::replay(start, &done, &ctx)
            })
        })?;
        Ok((stepped.changed, stepped.fingerprint))
    }

    /// Attributes of the decorated class's instance (`cm = CountMuls();
    /// cm(mod); cm.n`), as TVM's class passes forward them.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        match &self.instance {
            Some(instance) => Ok(instance.bind(py).getattr(name)?.unbind()),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "'{}' pass has no attribute '{name}'",
                self.pass.info().name
            ))),
        }
    }

    /// The pass's PassInfo.
    #[getter]
    fn info(&self) -> PyPassInfo {
        PyPassInfo::of(self.pass.info())
    }

    /// The passes of a sequential, in order (empty for other kinds).
    #[getter]
    fn passes(&self) -> Vec<PyPass> {
        self.pass
            .children()
            .iter()
            .map(|p| PyPass::new(p.clone()))
            .collect()
    }

    fn __repr__(&self) -> String {
        let info = self.pass.info();
        format!(
            "<passlab Pass '{}' opt_level={}>",
            info.name, info.opt_level
        )
    }
}

/// One pass by the name `:run` takes: any LLVM pass with its parameters
/// (`instcombine`, `loop-unroll<O3>`, `function(loop-mssa(licm))`,
/// `default<O2>`) or a passlab pass.
#[pyclass(name = "LLVMPass", module = "passlab.transform", extends = PyPass, frozen)]
pub struct PyLlvmPass;

#[pymethods]
impl PyLlvmPass {
    #[new]
    fn new(name: &str) -> PyResult<(Self, PyPass)> {
        let pass = check(registry::get_pass(name))?;
        Ok((PyLlvmPass, PyPass::new(pass)))
    }
}

/// Runs its passes in order, each gated by the current context (opt level,
/// required and disabled passes), TVM's Sequential.
#[pyclass(name = "Sequential", module = "passlab.transform", extends = PyPass, frozen)]
pub struct PySequential;

#[pymethods]
impl PySequential {
    #[new]
    #[pyo3(signature = (passes=None, opt_level=0, name="sequential", required=None))]
    fn new(
        passes: Option<Vec<PyRef<'_, PyPass>>>,
        opt_level: u32,
        name: &str,
        required: Option<Vec<String>>,
    ) -> PyResult<(Self, PyPass)> {
        let passes = passes
            .unwrap_or_default()
            .iter()
            .map(|p| p.pass.clone())
            .collect();
        let info = PassInfo::new(name, opt_level).requires(required.unwrap_or_default());
        note_name(name);
        Ok((
            PySequential,
            PyPass::new(Arc::new(Sequential::with_info(info, passes))),
        ))
    }
}

/// Prints the module at its point of a sequence and changes nothing.
#[pyclass(name = "PrintIR", module = "passlab.transform", extends = PyPass, frozen)]
pub struct PyPrintIr;

#[pymethods]
impl PyPrintIr {
    #[new]
    #[pyo3(signature = (header=""))]
    fn new(header: &str) -> (Self, PyPass) {
        (PyPrintIr, PyPass::new(Arc::new(PrintIr::new(header))))
    }
}

/// A pass written in Python over the whole module (`module_pass`).
#[pyclass(name = "ModulePass", module = "passlab.transform", extends = PyPass, frozen)]
pub struct PyModulePass;

/// A pass written in Python over one function at a time (`function_pass`).
#[pyclass(name = "FunctionPass", module = "passlab.transform", extends = PyPass, frozen)]
pub struct PyFunctionPass;

/// A function pass whose body is `transform(func, mod, ctx)`, a Python
/// callable: `func` is the function as a `passlab.ir.Value`, edited in
/// place through the IR API (the body returns None, or `func`). Functions
/// marked optnone are skipped; adding or removing functions is an error;
/// an exception leaves the module as it was and is raised as itself.
#[pyfunction]
#[pyo3(signature = (transform, name, opt_level, required=None, instance=None))]
pub fn make_function_pass(
    py: Python<'_>,
    transform: Py<PyAny>,
    name: &str,
    opt_level: u32,
    required: Option<Vec<String>>,
    instance: Option<Py<PyAny>>,
) -> PyResult<Py<PyFunctionPass>> {
    if name.trim().is_empty() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a pass needs a name",
        ));
    }
    let info = PassInfo::new(name, opt_level).requires(required.unwrap_or_default());
    note_name(name);
    let pass_name = name.to_string();
    let pass = passlab::FunctionPass::by_name(info, move |m, function, _ctx| {
        Python::attach(|py| {
            lend(py, NonNull::from(&mut *m), true, |lent| {
                let ctx = context::current(py)?;
                let func = crate::ir::function(lent, function)?;
                let func = Bound::new(py, func)?;
                let out = transform
                    .bind(py)
                    .call1((func.clone(), lent.clone(), ctx))?;
                if out.is_none() || out.is(&func) {
                    return Ok(());
                }
                Err(PyTypeError::new_err(format!(
                    "function pass '{pass_name}' returned {}; a function pass edits the \
                     function in place and returns None",
                    out.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                )))
            })
            .map_err(stash)
        })
    });
    let init = PyClassInitializer::from(PyPass {
        pass: Arc::new(pass),
        instance,
    })
    .add_subclass(PyFunctionPass);
    Py::new(py, init)
}

/// A pipeline as `:run` takes it (`mem2reg,instcombine`, `default<O2>`).
#[pyfunction]
pub fn parse_pipeline(text: &str) -> PyResult<PyPass> {
    check(passlab::pipeline::parse(text)).map(PyPass::new)
}

/// A module pass whose body is `transform(mod, ctx)`, a Python callable:
/// it changes `mod` in place or returns another `passlab.Module` to take
/// its place. An exception leaves the module as it was and is raised to the
/// caller as itself.
#[pyfunction]
#[pyo3(signature = (transform, name, opt_level, required=None, instance=None))]
pub fn make_module_pass(
    py: Python<'_>,
    transform: Py<PyAny>,
    name: &str,
    opt_level: u32,
    required: Option<Vec<String>>,
    instance: Option<Py<PyAny>>,
) -> PyResult<Py<PyModulePass>> {
    if name.trim().is_empty() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a pass needs a name",
        ));
    }
    let info = PassInfo::new(name, opt_level).requires(required.unwrap_or_default());
    note_name(name);
    let pass_name = name.to_string();
    let pass = ModulePass::new(info, move |m, _ctx| {
        Python::attach(|py| {
            let result = lend(py, NonNull::from(&mut *m), true, |lent| {
                let ctx = context::current(py)?;
                let out = transform.bind(py).call1((lent.clone(), ctx))?;
                if out.is_none()
                    && crate::module_type::read(lent)?
                        .passed_on
                        .load(Ordering::Relaxed)
                {
                    let message = format!(
                        "module pass '{pass_name}' called a pass on its module and returned None: \
                         a pass returns a new module (TVM's value semantics) and leaves its input \
                         as it was; return that module, or call the pass with inplace=True"
                    );
                    PyErr::warn(
                        py,
                        &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                        &std::ffi::CString::new(message).unwrap_or_default(),
                        1,
                    )?;
                }
                if out.is_none() || out.is(lent) {
                    return Ok(None);
                }
                let other = out.cast::<PyModule_>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "module pass '{pass_name}' returned {}; a module pass returns \
                         a passlab.Module or None",
                        out.get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default()
                    ))
                })?;
                let snapshot = crate::module_type::read(other)?.get()?.snapshot();
                Ok(Some(snapshot))
            });
            match result {
                Ok(None) => Ok(()),
                Ok(Some(snapshot)) => m.restore(&snapshot),
                Err(e) => Err(stash(e)),
            }
        })
    });
    let init = PyClassInitializer::from(PyPass {
        pass: Arc::new(pass),
        instance,
    })
    .add_subclass(PyModulePass);
    Py::new(py, init)
}

/// Every pass in the registry: name, kind (`rust` or LLVM's IR unit),
/// parameters, opt level and description.
#[pyfunction]
pub fn list_passes(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    registry::passes()
        .into_iter()
        .map(|e| {
            let d = PyDict::new(py);
            d.set_item("name", &e.name)?;
            match &e.kind {
                PassKind::Rust => {
                    d.set_item("kind", "rust")?;
                    d.set_item("params", py.None())?;
                }
                PassKind::Llvm { unit, params } => {
                    d.set_item("kind", unit_name(*unit))?;
                    d.set_item("params", params)?;
                }
            }
            d.set_item("opt_level", e.opt_level)?;
            d.set_item("description", &e.description)?;
            Ok(d)
        })
        .collect()
}

/// The named pools of passes `:tune` draws from (`default`, `size`), each
/// as the pass texts `:run` takes.
#[pyfunction]
pub fn pools() -> Vec<(String, Vec<String>)> {
    passlab::tune::POOLS
        .iter()
        .map(|(name, passes)| {
            (
                name.to_string(),
                passes().iter().map(|p| p.to_string()).collect(),
            )
        })
        .collect()
}

/// The leaderboard's corpus, as paths under passlab's sample inputs.
#[pyfunction]
pub fn sample_corpus() -> Vec<&'static str> {
    passlab::tune::SAMPLE_CORPUS.to_vec()
}

/// How opt-19 runs one action: its options and its `-passes=` text.
#[pyfunction]
pub fn opt_spelling(element: &str) -> (Vec<String>, String) {
    passlab::pipeline::opt_spelling(element)
}

/// `text` (pass texts joined by commas) as one `opt-19 -passes=` pipeline
/// that runs each element alone over the whole module with fresh analyses,
/// as passlab runs a list, under the current context's tuning: the
/// pipeline and the plugins it loads; None when opt-19 cannot run it as
/// one text (a passlab pass, an element needing options).
#[pyfunction]
pub fn opt_pipeline(text: &str) -> Option<(String, Vec<String>)> {
    passlab::pipeline::llvm_spelling(text).map(|s| (s.passes, s.plugins))
}

/// -Oz's own pipeline as the actions that make it, one after the other.
#[pyfunction]
pub fn oz_ordering() -> Vec<String> {
    passlab::tune::OZ_ORDERING
        .iter()
        .map(|p| p.to_string())
        .collect()
}
