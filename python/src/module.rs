//! `passlab.Module`'s Python methods (its data, and how the other classes
//! borrow it, are in `module_type.rs`).

use crate::errors::{self, check};
use crate::module_type::{read, PyModule_};
use crate::run_core;
use passlab::module::{Lang, Level, Source};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

/// An observation space by CompilerGym's name (any case).
fn observation_space(name: &str) -> PyResult<&'static passlab::module::spaces::ObservationSpace> {
    passlab::module::spaces::space(name).map_err(errors::to_py)
}

/// The names of a space's values, in order (empty for text).
#[pyfunction]
pub fn feature_names(space: &str) -> PyResult<Vec<String>> {
    Ok((observation_space(space)?.names)())
}

/// The observation spaces' table: each space's name, NumPy dtype, length
/// (None: text), bounds and what it is.
#[pyfunction]
pub fn observation_spaces<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, pyo3::types::PyDict>>> {
    passlab::module::spaces::SPACES
        .iter()
        .map(|s| {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item("dtype", s.dtype.numpy())?;
            d.set_item("len", s.len)?;
            d.set_item("low", s.low)?;
            d.set_item("high", s.high)?;
            d.set_item("summary", s.summary)?;
            Ok(d)
        })
        .collect()
}

/// What `__reduce__` gives pickle: `Module.from_bitcode` and its arguments.
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>, String));

/// C or C++ given as a path or as source text: a `pathlib.Path`, or a
/// string of one line ending in a C or C++ extension, is a path.
fn c_source(source: &Bound<'_, PyAny>, name: Option<&str>, lang: Option<&str>) -> PyResult<Source> {
    let lang = lang.map(|l| check(Lang::parse(l))).transpose()?;
    if !source.is_instance_of::<pyo3::types::PyString>() {
        let path: PathBuf = source.extract().map_err(|_| {
            PyTypeError::new_err("from_c takes source text or a path (str or os.PathLike)")
        })?;
        return file_source(path, name, lang);
    }
    let text: String = source.extract()?;
    let looks_like_path = !text.contains('\n')
        && [".c", ".cc", ".cpp", ".cxx", ".h"]
            .iter()
            .any(|ext| text.trim_end().ends_with(ext));
    if looks_like_path {
        return file_source(PathBuf::from(text.trim()), name, lang);
    }
    let lang = lang.unwrap_or(Lang::C);
    let default_name = if lang == Lang::C {
        "input.c"
    } else {
        "input.cpp"
    };
    Ok(Source::text(lang, &text, name.unwrap_or(default_name)))
}

fn file_source(path: PathBuf, name: Option<&str>, lang: Option<Lang>) -> PyResult<Source> {
    let source = match lang {
        Some(lang) => Source::file_as(&path, lang),
        None => check(Source::file(&path))?,
    };
    Ok(match name {
        Some(n) => source.named(n),
        None => source,
    })
}

#[pymethods]
impl PyModule_ {
    /// Compiles C or C++ with clang-19 and takes the IR as clang hands it to
    /// its own pipeline at `level` (`-O<level> -Xclang -disable-llvm-passes`):
    /// `Module.from_c(text)`, `Module.from_c("file.c")`,
    /// `Module.from_c(pathlib.Path(...), level="O1", args=["-DN=4"])`.
    #[staticmethod]
    #[pyo3(signature = (source, name=None, level="O2", args=None, lang=None))]
    fn from_c(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        name: Option<&str>,
        level: &str,
        args: Option<Vec<String>>,
        lang: Option<&str>,
    ) -> PyResult<Self> {
        let level = check(Level::parse(level))?;
        let source = c_source(source, name, lang)?
            .level(level)
            .clang_args(args.unwrap_or_default());
        run_core(py, || passlab::Module::load(&[source])).map(Self::owned)
    }

    /// Parses LLVM IR text (verified, as opt-19 does).
    #[staticmethod]
    #[pyo3(signature = (text, name="module.ll"))]
    fn from_ir(py: Python<'_>, text: &str, name: &str) -> PyResult<Self> {
        run_core(py, || passlab::Module::from_ir(text, name)).map(Self::owned)
    }

    /// Reads LLVM bitcode.
    #[staticmethod]
    #[pyo3(signature = (data, name="module.bc"))]
    fn from_bitcode(py: Python<'_>, data: &[u8], name: &str) -> PyResult<Self> {
        run_core(py, || passlab::Module::from_bitcode(data, name)).map(Self::owned)
    }

    /// Loads a `.ll`, `.bc`, `.c` or C++ file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        run_core(py, || passlab::Module::from_file(&path)).map(Self::owned)
    }

    /// A function of the module as an IR value (`mod["sq"]`).
    fn __getitem__(slf: &Bound<'_, Self>, name: &str) -> PyResult<crate::ir::PyValue> {
        crate::ir::function(slf, name)
    }

    /// Every function of the module (declarations too) as IR values.
    fn ir_functions(slf: &Bound<'_, Self>) -> PyResult<Vec<crate::ir::PyValue>> {
        crate::ir::functions(slf)
    }

    /// An integer constant of the type `i1`…`i64` (inside a pass).
    fn const_int(slf: &Bound<'_, Self>, ty: &str, value: i64) -> PyResult<crate::ir::PyValue> {
        crate::ir::const_int(slf, ty, value)
    }

    /// The machine code LLVM's code generator makes for the module (or one
    /// function), at `opt_level`, in `syntax` (`att`, `intel`); displayed in
    /// a notebook side by side with the source when there is debug info.
    #[pyo3(signature = (function=None, opt_level=2, syntax="att", all=false))]
    fn asm(
        slf: &Bound<'_, Self>,
        function: Option<String>,
        opt_level: u32,
        syntax: &str,
        all: bool,
    ) -> PyResult<crate::jit::PyAssembly> {
        crate::jit::asm(slf, function, opt_level, syntax, all)
    }

    /// The control-flow graph of `function` (`passlab.Graph`: a picture in
    /// a notebook, `.dot`, `.svg`, `.text`), laid out by Graphviz; with
    /// `after`, in a copy of the module after that pipeline ran on it
    /// (this module stays as it is); blocks longer than `lines` are
    /// shortened.
    #[pyo3(signature = (function, after=None, lines=passlab::graph::MAX_LINES))]
    fn cfg(
        slf: &Bound<'_, Self>,
        function: &str,
        after: Option<&str>,
        lines: usize,
    ) -> PyResult<crate::graph::PyGraph> {
        crate::graph::cfg(slf, function, after, lines)
    }

    /// In a notebook: the summary, and the IR highlighted as passlab's
    /// kernel shows it (when it is not too long to).
    #[pyo3(signature = (include=None, exclude=None))]
    fn _repr_mimebundle_<'py>(
        &self,
        py: Python<'py>,
        include: Option<Bound<'py, PyAny>>,
        exclude: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = (include, exclude);
        let d = PyDict::new(py);
        d.set_item("text/plain", self.__repr__())?;
        if let Ok(m) = self.get() {
            if let Some(html) = passlab::highlight::ir(&m.print()) {
                d.set_item("text/html", html)?;
            }
        }
        Ok(d)
    }

    /// The module's name.
    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.get()?.name())
    }

    /// The target triple.
    #[getter]
    fn triple(&self) -> PyResult<String> {
        Ok(self.get()?.triple())
    }

    /// Instructions in function bodies (CompilerGym's IrInstructionCount).
    #[getter]
    fn instcount(&self) -> PyResult<u64> {
        Ok(self.get()?.instruction_count())
    }

    /// A hash of the module's IR: equal fingerprints, equal modules (what
    /// a gym step uses to tell an action that changed nothing).
    #[getter]
    fn fingerprint(&self) -> PyResult<u64> {
        Ok(self.get()?.fingerprint())
    }

    /// Names of the functions with a body, in module order.
    #[getter]
    fn functions(&self) -> PyResult<Vec<String>> {
        Ok(self.get()?.defined_functions())
    }

    /// Functions, blocks, instructions, and instructions per opcode.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.get()?.stats();
        let d = PyDict::new(py);
        d.set_item("functions", s.functions)?;
        d.set_item("blocks", s.blocks)?;
        d.set_item("instructions", s.instructions)?;
        let ops = PyDict::new(py);
        for (op, n) in &s.per_opcode {
            ops.set_item(op, n)?;
        }
        d.set_item("opcodes", ops)?;
        Ok(d)
    }

    /// The module as an observation space sees it, by CompilerGym's name
    /// (any case; `passlab.gym.OBSERVATION_SPACES`): a list of ints or
    /// floats for a vector (`InstCount`, `Autophase`, `InstCountNorm`,
    /// `IrInstructionCount`; the names in `feature_names`), a string for
    /// text (`Ir`, `IrSha1`).
    #[pyo3(signature = (space="InstCount"))]
    fn features(&self, py: Python<'_>, space: &str) -> PyResult<Py<PyAny>> {
        use passlab::module::spaces::Observation;
        let space = observation_space(space)?;
        Ok(match self.get()?.observe(space) {
            Observation::Ints(v) => v.into_pyobject(py)?.into_any().unbind(),
            Observation::Floats(v) => v.into_pyobject(py)?.into_any().unbind(),
            Observation::Text(t) => t.into_pyobject(py)?.into_any().unbind(),
        })
    }

    /// The IR text of the module, or of one function.
    #[pyo3(signature = (function=None))]
    fn text(&self, function: Option<&str>) -> PyResult<String> {
        let m = self.get()?;
        match function {
            None => Ok(m.print()),
            Some(f) => check(m.print_function(f)),
        }
    }

    /// The module as bitcode.
    fn bitcode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.get()?.bitcode()))
    }

    /// Writes the module: IR text for `.ll`, bitcode for `.bc`.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        check(self.get()?.save(path))
    }

    /// Raises VerifyError with LLVM's report when the module does not verify.
    fn verify(&self) -> PyResult<()> {
        self.get()?.verify().map_err(|report| {
            errors::to_py(passlab::Error::Verify {
                pass: "verify".into(),
                message: report,
                ir: None,
            })
        })
    }

    /// Runs `pass_` on this module itself (`pass_(mod, inplace=True)`) and
    /// returns it; on an error the module is as it was.
    fn apply<'py>(
        slf: Bound<'py, Self>,
        pass_: PyRef<'_, crate::passes::PyPass>,
    ) -> PyResult<Bound<'py, Self>> {
        crate::passes::apply_in_place(&pass_.pass, &slf)?;
        Ok(slf)
    }

    /// An independent copy (what a lent module gives to keep).
    fn copy(&self) -> PyResult<Self> {
        Ok(Self::owned(self.get()?.copy()))
    }

    fn __copy__(&self) -> PyResult<Self> {
        self.copy()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.copy()
    }

    /// Pickles as bitcode (Ray and multiprocessing send modules so).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let py = slf.py();
        let this = read(slf)?;
        let m = this.get()?;
        let ctor = py.get_type::<PyModule_>().getattr("from_bitcode")?;
        Ok((ctor, (PyBytes::new(py, &m.bitcode()), m.name())))
    }

    fn __str__(&self) -> PyResult<String> {
        Ok(self.get()?.print())
    }

    fn __repr__(&self) -> String {
        if let Some(foreign) = self.holder.foreign_repr() {
            return foreign;
        }
        match self.get() {
            Ok(m) => format!(
                "<passlab.Module '{}': {}, {}>",
                m.name(),
                passlab::table::count(m.defined_functions().len(), "function"),
                passlab::table::count(m.instruction_count(), "instruction")
            ),
            Err(_) => "<passlab.Module (a loan that has ended)>".into(),
        }
    }
}
