//! `PassContext`: the seeds' context with `with`. Entering one builds the
//! core's [`passlab::PassContext`] and enters it on the core's own stack,
//! so every pass run inside — LLVM's inner passes too — is gated and
//! instrumented by it exactly as `:run` is under `:with`.

use crate::errors::check;
use crate::instruments::to_core;
use crate::local::{Kind, Local};
use crate::run_core;
use passlab::{ConfigValue, ContextGuard};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use std::cell::RefCell;

thread_local! {
    /// The entered Python contexts, innermost last (the core keeps its own
    /// stack of the core contexts they entered).
    static ENTERED: RefCell<Vec<Py<PyPassContext>>> = const { RefCell::new(Vec::new()) };
}

/// `PassContext(opt_level=2, required_pass=None, disabled_pass=None,
/// instruments=None, config=None)`: settings for the passes run inside
/// `with PassContext(...):`. Config keys and values are checked against the
/// registered options when the context is made.
#[pyclass(name = "PassContext", module = "passlab.transform")]
pub struct PyPassContext {
    state: Local<State>,
}

static KIND: Kind = Kind {
    name: "passlab.transform.PassContext",
    instead: "a context is entered on its own thread's stack of contexts",
};

/// A context's settings, and its guard while it is entered.
struct State {
    opt_level: u32,
    required: Vec<String>,
    disabled: Vec<String>,
    config: Vec<(String, ConfigValue)>,
    instruments: Vec<Py<PyAny>>,
    guard: Option<ContextGuard>,
}

fn config_value(key: &str, value: &Bound<'_, PyAny>) -> PyResult<ConfigValue> {
    if value.is_instance_of::<PyBool>() {
        Ok(ConfigValue::Bool(value.extract()?))
    } else if value.is_instance_of::<PyInt>() {
        Ok(ConfigValue::Int(value.extract()?))
    } else if value.is_instance_of::<PyFloat>() {
        Ok(ConfigValue::Float(value.extract()?))
    } else if value.is_instance_of::<PyString>() {
        Ok(ConfigValue::Str(value.extract()?))
    } else {
        Err(PyTypeError::new_err(format!(
            "config '{key}': a value is a bool, int, float or str; got {}",
            value.get_type().name()?
        )))
    }
}

impl PyPassContext {
    fn new_state(state: State) -> Self {
        PyPassContext {
            state: Local::new(state, &KIND),
        }
    }
}

/// `slf`'s state to read, on its thread (a RuntimeError where pyo3's
/// `borrow` would panic).
fn read<'py>(slf: &Bound<'py, PyPassContext>) -> PyResult<PyRef<'py, PyPassContext>> {
    let this = slf.try_borrow().map_err(|_| in_use())?;
    this.state.check()?;
    Ok(this)
}

/// As [`read`], to change.
fn write<'py>(slf: &Bound<'py, PyPassContext>) -> PyResult<PyRefMut<'py, PyPassContext>> {
    let this = slf.try_borrow_mut().map_err(|_| in_use())?;
    this.state.check()?;
    Ok(this)
}

fn in_use() -> PyErr {
    PyRuntimeError::new_err("this PassContext is in use (a call on it has not returned)")
}

impl State {
    /// The core context this one enters.
    fn core(&self, py: Python<'_>) -> PyResult<passlab::PassContext> {
        let mut ctx = passlab::PassContext::new()
            .with_opt_level(self.opt_level)
            .with_required(self.required.iter().cloned())
            .with_disabled(self.disabled.iter().cloned());
        for (key, value) in &self.config {
            ctx = check(ctx.with_config(key, value.clone()))?;
        }
        for instrument in &self.instruments {
            ctx = ctx.with_instrument(to_core(instrument.bind(py))?);
        }
        Ok(ctx)
    }
}

#[pymethods]
impl PyPassContext {
    #[new]
    #[pyo3(signature = (opt_level=2, required_pass=None, disabled_pass=None, instruments=None, config=None))]
    fn new(
        py: Python<'_>,
        opt_level: i64,
        required_pass: Option<Vec<String>>,
        disabled_pass: Option<Vec<String>>,
        instruments: Option<Vec<Py<PyAny>>>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opt_level = u32::try_from(opt_level)
            .ok()
            .filter(|l| *l <= 3)
            .ok_or_else(|| {
                crate::errors::to_py(passlab::Error::Invalid(format!(
                    "opt_level must be 0, 1, 2 or 3; got {opt_level}"
                )))
            })?;
        // Pass names are checked where they are typed, as :with checks
        // them: a typo would otherwise disable nothing, silently.
        for name in required_pass.iter().chain(disabled_pass.iter()).flatten() {
            crate::names::check_pass_name(name)?;
        }
        let mut values = Vec::new();
        if let Some(config) = config {
            for (key, value) in config.iter() {
                let key: String = key
                    .extract()
                    .map_err(|_| PyTypeError::new_err("config keys are strings"))?;
                values.push((key.clone(), config_value(&key, &value)?));
            }
        }
        let ctx = State {
            opt_level,
            required: required_pass.unwrap_or_default(),
            disabled: disabled_pass.unwrap_or_default(),
            config: values,
            instruments: instruments.unwrap_or_default(),
            guard: None,
        };
        // Checked now, as TVM checks them when a context is made: unknown
        // config keys, wrong value types, objects that are not instruments
        // (or instruments of another thread).
        ctx.core(py)?;
        Ok(PyPassContext::new_state(ctx))
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let py = slf.py();
        let core = {
            let this = read(&slf)?;
            let state = this.state.get()?;
            if state.guard.is_some() {
                return Err(PyRuntimeError::new_err(
                    "this PassContext is entered already",
                ));
            }
            state.core(py)?
        };
        // The instruments' enter_pass_ctx hooks run here (Python ones
        // included); if one raises, those already entered are exited and
        // the exception is raised.
        let guard = run_core(py, || core.enter())?;
        write(&slf)?.state.get_mut()?.guard = Some(guard);
        ENTERED.with(|e| e.borrow_mut().push(slf.clone().unbind()));
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(slf: Bound<'_, Self>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        let py = slf.py();
        read(&slf)?;
        ENTERED.with(|e| {
            let mut e = e.borrow_mut();
            if let Some(pos) = e.iter().rposition(|c| c.bind(py).is(&slf)) {
                e.remove(pos);
            }
        });
        let guard = write(&slf)?.state.get_mut()?.guard.take();
        if let Some(guard) = guard {
            run_core(py, || guard.exit())?;
        }
        Ok(false)
    }

    /// The innermost entered context, or a default one.
    #[staticmethod]
    fn current(py: Python<'_>) -> PyResult<Py<PyPassContext>> {
        current(py).map(Bound::unbind)
    }

    /// Replaces this (entered, innermost) context's instruments: the old
    /// ones' exit_pass_ctx, then the new ones' enter_pass_ctx; `None` (as
    /// TVM's) leaves it with none.
    #[pyo3(signature = (instruments))]
    fn override_instruments(
        slf: Bound<'_, Self>,
        instruments: Option<Vec<Py<PyAny>>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let instruments = instruments.unwrap_or_default();
        read(&slf)?;
        let innermost = ENTERED.with(|e| e.borrow().last().map(|c| c.bind(py).is(&slf)));
        if innermost != Some(true) {
            return Err(PyRuntimeError::new_err(
                "override_instruments works on the innermost entered PassContext",
            ));
        }
        let core = instruments
            .iter()
            .map(|i| to_core(i.bind(py)))
            .collect::<PyResult<Vec<_>>>()?;
        let result = run_core(py, || passlab::PassContext::override_instruments(core));
        // As the core: on an error the context is left with no instruments.
        write(&slf)?.state.get_mut()?.instruments = if result.is_ok() {
            instruments
        } else {
            Vec::new()
        };
        result
    }

    #[getter]
    fn opt_level(&self) -> PyResult<u32> {
        Ok(self.state.get()?.opt_level)
    }

    #[getter]
    fn required_pass(&self) -> PyResult<Vec<String>> {
        Ok(self.state.get()?.required.clone())
    }

    #[getter]
    fn disabled_pass(&self) -> PyResult<Vec<String>> {
        Ok(self.state.get()?.disabled.clone())
    }

    #[getter]
    fn instruments(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        let state = self.state.get()?;
        Ok(state.instruments.iter().map(|i| i.clone_ref(py)).collect())
    }

    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.state.get()?.config {
            match v {
                ConfigValue::Bool(b) => d.set_item(k, b)?,
                ConfigValue::Int(i) => d.set_item(k, i)?,
                ConfigValue::Float(x) => d.set_item(k, x)?,
                ConfigValue::Str(s) => d.set_item(k, s)?,
            }
        }
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = match self.state.get() {
            Ok(state) => state,
            Err(_) => return self.state.foreign_repr().unwrap_or_default(),
        };
        match state.core(py) {
            Ok(c) => format!("PassContext({})", c.summary()),
            Err(_) => "PassContext(?)".into(),
        }
    }
}

/// The innermost entered Python context. With none entered, the thread's
/// global context (TVM's): made and entered the first time it is asked
/// for, and never left, so that `PassContext.current().override_instruments`
/// registers instruments for the passes run outside any `with`.
pub fn current(py: Python<'_>) -> PyResult<Bound<'_, PyPassContext>> {
    if let Some(c) = ENTERED.with(|e| e.borrow().last().map(|c| c.clone_ref(py))) {
        return Ok(c.into_bound(py));
    }
    let global = Bound::new(
        py,
        PyPassContext::new_state(State {
            opt_level: passlab::PassContext::DEFAULT_OPT_LEVEL,
            required: Vec::new(),
            disabled: Vec::new(),
            config: Vec::new(),
            instruments: Vec::new(),
            guard: None,
        }),
    )?;
    PyPassContext::__enter__(global)
}

/// Every configuration option: key, type, default, description.
#[pyfunction]
pub fn config_options(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    passlab::config::options()
        .into_iter()
        .map(|o| {
            let d = PyDict::new(py);
            d.set_item("key", &o.key)?;
            d.set_item("type", o.ty().to_string())?;
            d.set_item("default", o.default.to_string())?;
            d.set_item("description", &o.description)?;
            Ok(d)
        })
        .collect()
}
