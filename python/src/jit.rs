//! The JIT and machine code from Python: `passlab.Buffer` (shared memory a
//! JIT-compiled function reads and writes; `numpy.asarray(buf)` is a view
//! of it, no copy), `passlab.JIT` (calls in an isolated child process, and
//! TVM's time evaluator), and `Module.asm` (the code generator's assembly,
//! with the side-by-side view as HTML).

use crate::errors::check;
use crate::local::{Kind, Local};
use crate::module_type::{self as module, PyModule_};
use crate::run_core;
use passlab::jit::{self, Arg, Buffer, ElemType, Fill, Jit, TimeSpec};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt};
use std::rc::Rc;

/// numpy's type string for an element type (little-endian x86-64).
fn typestr(t: ElemType) -> &'static str {
    match t {
        ElemType::I8 => "|i1",
        ElemType::I16 => "<i2",
        ElemType::I32 => "<i4",
        ElemType::I64 => "<i8",
        ElemType::F32 => "<f4",
        ElemType::F64 => "<f8",
    }
}

/// `Buffer(type, length, fill="zeros")`: a typed array in memory the
/// isolated child a call runs in shares with this process. `type` is
/// `i8`…`i64`, `f32`, `f64`; `fill` is `zeros`, `ones`, `range` or
/// `random` (with `seed`). `numpy.asarray(buf)` is a view of it.
#[pyclass(name = "Buffer", module = "passlab", frozen)]
pub struct PyBuffer {
    inner: Local<Rc<Buffer>>,
}

static BUFFER: Kind = Kind {
    name: "passlab.Buffer",
    instead: "passlab.Buffer(type, len(buf)) here, then .load(data) with data = \
              buf.tobytes() taken on the buffer's own thread",
};

#[pymethods]
impl PyBuffer {
    #[new]
    #[pyo3(signature = (r#type, length, fill="zeros", seed=0))]
    fn new(py: Python<'_>, r#type: &str, length: usize, fill: &str, seed: u64) -> PyResult<Self> {
        let ty = check(ElemType::parse(r#type))?;
        let fill = match fill {
            "zeros" => Fill::Zeros,
            "ones" => Fill::Ones,
            "range" => Fill::Range,
            "random" => Fill::Random(seed),
            other => {
                return Err(crate::errors::to_py(passlab::Error::Invalid(format!(
                    "unknown fill '{other}'; valid are: zeros, ones, range, random"
                ))))
            }
        };
        let buffer = run_core(py, || Buffer::new(ty, length, fill))?;
        Ok(PyBuffer {
            inner: Local::new(Rc::new(buffer), &BUFFER),
        })
    }

    #[getter]
    fn r#type(&self) -> PyResult<&'static str> {
        Ok(self.inner.get()?.elem_type().name())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.inner.get()?.len())
    }

    /// numpy's array interface: a view of the shared memory, no copy (the
    /// array keeps this buffer alive).
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.inner.get()?;
        let d = PyDict::new(py);
        d.set_item("shape", (inner.len(),))?;
        d.set_item("typestr", typestr(inner.elem_type()))?;
        d.set_item("data", (inner.address(), false))?;
        d.set_item("version", 3)?;
        Ok(d)
    }

    /// The contents as bytes (a copy).
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        Ok(pyo3::types::PyBytes::new(py, self.inner.get()?.bytes()))
    }

    /// Replaces the contents with `data` (bytes of the same length).
    fn load(&self, data: &[u8]) -> PyResult<()> {
        check(self.inner.get()?.load(data))
    }

    fn __repr__(&self) -> String {
        match self.inner.get() {
            Ok(inner) => format!("<passlab.Buffer {}>", inner.summary()),
            Err(_) => self.inner.foreign_repr().unwrap_or_default(),
        }
    }
}

fn args<'a>(
    values: &'a [Bound<'_, PyAny>],
    keep: &'a mut Vec<Rc<Buffer>>,
) -> PyResult<Vec<Arg<'a>>> {
    for v in values {
        if let Ok(b) = v.cast::<PyBuffer>() {
            keep.push(b.get().inner.get()?.clone());
        }
    }
    let mut buffers = keep.iter();
    values
        .iter()
        .map(|v| {
            if v.cast::<PyBuffer>().is_ok() {
                Ok(Arg::Buffer(buffers.next().map(Rc::as_ref).ok_or_else(|| PyTypeError::new_err("buffer"))?))
            } else if v.is_instance_of::<pyo3::types::PyBool>() || v.is_instance_of::<PyInt>() {
                Ok(Arg::Int(v.extract::<i64>()?))
            } else if v.is_instance_of::<PyFloat>() {
                Ok(Arg::Float(v.extract::<f64>()?))
            } else {
                Err(PyTypeError::new_err(format!(
                    "a call's arguments are ints, floats and passlab.Buffer (or numpy arrays through \
                     passlab.JIT.call); got {}",
                    v.get_type().name()?
                )))
            }
        })
        .collect()
}

fn value(py: Python<'_>, v: Option<jit::Value>) -> PyResult<Py<PyAny>> {
    Ok(match v {
        None => py.None(),
        Some(jit::Value::Int { value, bits: 1 }) => (value != 0)
            .into_pyobject(py)?
            .to_owned()
            .into_any()
            .unbind(),
        Some(jit::Value::Int { value, .. }) => value.into_pyobject(py)?.into_any().unbind(),
        Some(jit::Value::F32(x)) => (x as f64).into_pyobject(py)?.into_any().unbind(),
        Some(jit::Value::F64(x)) => x.into_pyobject(py)?.into_any().unbind(),
        Some(jit::Value::Ptr(p)) => p.into_pyobject(py)?.into_any().unbind(),
    })
}

/// A module compiled by LLVM's code generator (in a child process), its
/// functions called in an isolated child: a crash, a hang or a fatal error
/// there is an error here, and the interpreter goes on.
#[pyclass(name = "JIT", module = "passlab", frozen, subclass)]
pub struct PyJit {
    inner: Local<Jit>,
}

static JIT: Kind = Kind {
    name: "passlab.JIT",
    instead: "passlab.JIT(module) here, of a module made on this thread",
};

#[pymethods]
impl PyJit {
    /// Compiles `module` at code generator level `opt_level` (0-3) for the
    /// module's processor; `timeout_s` bounds each call; `allow_host` lets
    /// calls bind what the module does not define from this process's
    /// libraries beyond the C/C++ runtime (the REPL's `allow=host`).
    #[new]
    #[pyo3(signature = (module, opt_level=2, timeout_s=None, allow_host=false))]
    fn new(
        py: Python<'_>,
        module: &Bound<'_, PyModule_>,
        opt_level: u32,
        timeout_s: Option<f64>,
        allow_host: bool,
    ) -> PyResult<Self> {
        if opt_level > 3 {
            return Err(crate::errors::to_py(passlab::Error::Invalid(format!(
                "opt_level must be 0, 1, 2 or 3; got {opt_level}"
            ))));
        }
        let m = module::read(module)?;
        let core = m.get()?;
        let mut jit = run_core(py, || Jit::new(core, opt_level))?;
        jit.set_allow_host(allow_host);
        if let Some(t) = timeout_s {
            // (try_: a number too large for a Duration, 1e300, is an error
            // here, not a panic that reaches Python as PanicException)
            let timeout = std::time::Duration::try_from_secs_f64(t)
                .ok()
                .filter(|d| !d.is_zero());
            let Some(timeout) = timeout else {
                return Err(crate::errors::to_py(passlab::Error::Invalid(format!(
                    "timeout_s must be a positive number of seconds that fits a duration; got {t}"
                ))));
            };
            jit = jit.with_timeout(timeout);
        }
        Ok(PyJit {
            inner: Local::new(jit, &JIT),
        })
    }

    /// Calls `function` with ints, floats and passlab.Buffer arguments;
    /// returns its value (None for void). What it printed goes to
    /// sys.stdout and sys.stderr.
    #[pyo3(signature = (function, *arguments))]
    fn _call(
        &self,
        py: Python<'_>,
        function: &str,
        arguments: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let jit = self.inner.get()?;
        let mut keep = Vec::new();
        let a = args(&arguments, &mut keep)?;
        let r = run_core(py, || jit.call(function, &a))?;
        crate::write_to(py, "stdout", &r.stdout);
        crate::write_to(py, "stderr", &r.stderr);
        value(py, r.value)
    }

    /// TVM's time evaluator: one warm-up call, then `repeat` repeats of
    /// `number` calls (grown until a repeat lasts `min_repeat_ms`); returns
    /// a dict: value, number, per_call_s (one mean per repeat), mean_s,
    /// median_s, stdev_s, min_s, max_s, summary.
    #[pyo3(signature = (function, *arguments, number=10, repeat=5, min_repeat_ms=0))]
    fn _time<'py>(
        &self,
        py: Python<'py>,
        function: &str,
        arguments: Vec<Bound<'py, PyAny>>,
        number: u64,
        repeat: usize,
        min_repeat_ms: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let jit = self.inner.get()?;
        let mut keep = Vec::new();
        let a = args(&arguments, &mut keep)?;
        let spec = TimeSpec {
            number,
            repeat,
            min_repeat_ms,
        };
        let r = run_core(py, || jit.time(function, &a, spec))?;
        let d = PyDict::new(py);
        d.set_item("value", value(py, r.value)?)?;
        d.set_item("number", r.number)?;
        d.set_item(
            "per_call_s",
            r.per_call
                .iter()
                .map(|t| t.as_secs_f64())
                .collect::<Vec<_>>(),
        )?;
        d.set_item("mean_s", r.mean().as_secs_f64())?;
        d.set_item("median_s", r.median().as_secs_f64())?;
        d.set_item("stdev_s", r.stdev().as_secs_f64())?;
        d.set_item("min_s", r.min().as_secs_f64())?;
        d.set_item("max_s", r.max().as_secs_f64())?;
        d.set_item("summary", r.summary())?;
        Ok(d)
    }

    /// The functions that can be called, with their signatures as LLVM
    /// spells them.
    fn functions(&self) -> PyResult<Vec<(String, String)>> {
        Ok(self
            .inner
            .get()?
            .callable()
            .map(|(name, sig)| (name.to_string(), sig.to_string()))
            .collect())
    }

    /// Machine code bytes of a function, when known.
    fn code_bytes(&self, function: &str) -> PyResult<Option<u64>> {
        Ok(self.inner.get()?.code_bytes(function))
    }
}

/// The assembly LLVM's code generator makes for a module: `text`, and per
/// function (`functions`); displayed as passlab's side-by-side view.
#[pyclass(name = "Assembly", module = "passlab", frozen)]
pub struct PyAssembly {
    state: Local<AssemblyState>,
}

struct AssemblyState {
    inner: jit::asm::Assembly,
    function: Option<String>,
    all: bool,
}

static ASSEMBLY: Kind = Kind {
    name: "passlab.Assembly",
    instead: "call Module.asm on this thread, or pass on its text, a str",
};

#[pymethods]
impl PyAssembly {
    /// The text, as the REPL's `:asm` shows it (directives and unused
    /// labels left out unless `all=True` was given).
    #[getter]
    fn text(&self) -> PyResult<String> {
        let state = self.state.get()?;
        let filter = state.filter().text_only();
        Ok(
            check(state.inner.render(state.function.as_deref(), filter, &|p| {
                std::fs::read_to_string(p).ok()
            }))?
            .text,
        )
    }

    /// Everything LLVM printed.
    #[getter]
    fn raw(&self) -> PyResult<String> {
        Ok(self.state.get()?.inner.text.clone())
    }

    /// The functions and their sizes in bytes.
    #[getter]
    fn functions(&self) -> PyResult<Vec<(String, Option<u64>)>> {
        Ok(self
            .state
            .get()?
            .inner
            .functions
            .iter()
            .map(|f| (f.name.clone(), f.bytes))
            .collect())
    }

    fn __str__(&self) -> PyResult<String> {
        self.text()
    }

    #[pyo3(signature = (include=None, exclude=None))]
    fn _repr_mimebundle_<'py>(
        &self,
        py: Python<'py>,
        include: Option<Bound<'py, PyAny>>,
        exclude: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = (include, exclude);
        let state = self.state.get()?;
        let r = check(
            state
                .inner
                .render(state.function.as_deref(), state.filter(), &|p| {
                    std::fs::read_to_string(p).ok()
                }),
        )?;
        let d = PyDict::new(py);
        d.set_item("text/plain", &r.text)?;
        if let Some(html) = r.html {
            d.set_item("text/html", html)?;
        }
        Ok(d)
    }
}

impl AssemblyState {
    fn filter(&self) -> jit::asm::Filter {
        if self.all {
            jit::asm::Filter::all()
        } else {
            jit::asm::Filter::default()
        }
    }
}

/// `Module.asm(function=None, opt_level=2, syntax="att", all=False)`.
pub fn asm(
    slf: &Bound<'_, PyModule_>,
    function: Option<String>,
    opt_level: u32,
    syntax: &str,
    all: bool,
) -> PyResult<PyAssembly> {
    let py = slf.py();
    let syntax = jit::asm::Syntax::parse(syntax)
        .map_err(|e| crate::errors::to_py(passlab::Error::Invalid(format!("syntax {e}"))))?;
    if opt_level > 3 {
        return Err(crate::errors::to_py(passlab::Error::Invalid(format!(
            "opt_level must be 0, 1, 2 or 3; got {opt_level}"
        ))));
    }
    let m = module::read(slf)?;
    let core = m.get()?;
    let inner = run_core(py, || {
        jit::asm::assembly(core, &jit::Codegen::level(opt_level), syntax)
    })?;
    if let Some(f) = &function {
        if inner.function(f).is_none() {
            return Err(crate::errors::to_py(passlab::Error::Invalid(format!(
                "no function '{f}' in the machine code; it has: {}",
                inner
                    .functions
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))));
        }
    }
    Ok(PyAssembly {
        state: Local::new(
            AssemblyState {
                inner,
                function,
                all,
            },
            &ASSEMBLY,
        ),
    })
}
