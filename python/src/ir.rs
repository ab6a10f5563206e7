//! `passlab.ir`: the IR of a module as Python objects — functions, blocks,
//! instructions, arguments, constants — over the core's checked IR API
//! (`passlab::module::ir`): a handle that is out of date raises instead of
//! reaching freed memory. IR is changed only inside a Python pass, which
//! verifies it and puts the module back if the pass fails.

use crate::errors::check;
use crate::local::{Kind, Local};
use crate::module_type::{self as module, PyModule_};
use passlab::module::ir::{TypeOf, Value, ValueKind};
use pyo3::prelude::*;
use pyo3::types::PyAny;

/// A value of a module's IR (see the `passlab.ir` docs): `kind` says which
/// (`function`, `block`, `instruction`, `argument`, `constant_int`,
/// `constant`, `global`, `other`).
#[pyclass(name = "Value", module = "passlab.ir", frozen)]
pub struct PyValue {
    /// The module (outside the `Local`: a reference any thread may drop;
    /// the module checks its own thread when it is used).
    module: Py<PyModule_>,
    handle: Local<Value>,
}

static KIND: Kind = Kind {
    name: "passlab.ir.Value",
    instead: "take values from a module made on this thread",
};

fn wrap(py: Python<'_>, module: &Py<PyModule_>, handle: Value) -> PyValue {
    PyValue {
        module: module.clone_ref(py),
        handle: Local::new(handle, &KIND),
    }
}

fn wrap_all(py: Python<'_>, module: &Py<PyModule_>, handles: Vec<Value>) -> Vec<PyValue> {
    handles.into_iter().map(|h| wrap(py, module, h)).collect()
}

impl PyValue {
    /// The handle, on the thread that made it.
    fn handle(&self) -> PyResult<Value> {
        self.handle.get().copied()
    }

    fn read<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&passlab::Module, Value) -> passlab::Result<R>,
    ) -> PyResult<R> {
        let handle = self.handle()?;
        let m = module::read(self.module.bind(py))?;
        check(f(m.get()?, handle))
    }

    fn edit<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut passlab::Module, Value) -> passlab::Result<R>,
    ) -> PyResult<R> {
        let handle = self.handle()?;
        let mut m = module::write(self.module.bind(py))?;
        check(f(m.edit_ir()?, handle))
    }
}

/// The module's functions as IR values (`mod.ir_functions()`), or one
/// (`mod["name"]`).
pub fn functions(slf: &Bound<'_, PyModule_>) -> PyResult<Vec<PyValue>> {
    let py = slf.py();
    let handles = module::read(slf)?.get()?.ir_functions();
    Ok(wrap_all(py, &slf.clone().unbind(), handles))
}

pub fn function(slf: &Bound<'_, PyModule_>, name: &str) -> PyResult<PyValue> {
    let py = slf.py();
    let handle = check(module::read(slf)?.get()?.ir_function(name))?;
    Ok(wrap(py, &slf.clone().unbind(), handle))
}

/// `mod.const_int("i32", 5)`: an integer constant of a type named `i1`…`i64`.
pub fn const_int(slf: &Bound<'_, PyModule_>, ty: &str, value: i64) -> PyResult<PyValue> {
    let py = slf.py();
    let handle = check(
        module::write(slf)?
            .edit_ir()?
            .ir_const_int(TypeOf::Name(ty), value),
    )?;
    Ok(wrap(py, &slf.clone().unbind(), handle))
}

#[pymethods]
impl PyValue {
    #[getter]
    fn kind(&self) -> PyResult<&'static str> {
        Ok(self.handle()?.kind().name())
    }

    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |m, h| m.ir_name(h))
    }

    /// The type as LLVM prints it (`i32`, `ptr`; `label` for a block).
    #[getter]
    fn r#type(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |m, h| m.ir_type(h))
    }

    /// A function's blocks.
    #[getter]
    fn blocks(&self, py: Python<'_>) -> PyResult<Vec<PyValue>> {
        let hs = self.read(py, |m, h| m.ir_blocks(h))?;
        Ok(wrap_all(py, &self.module, hs))
    }

    /// A block's or a function's instructions (a list: erasing one while
    /// going through it is fine).
    #[getter]
    fn instructions(&self, py: Python<'_>) -> PyResult<Vec<PyValue>> {
        let hs = self.read(py, |m, h| m.ir_instructions(h))?;
        Ok(wrap_all(py, &self.module, hs))
    }

    /// A function's arguments.
    #[getter]
    fn arguments(&self, py: Python<'_>) -> PyResult<Vec<PyValue>> {
        let hs = self.read(py, |m, h| m.ir_arguments(h))?;
        Ok(wrap_all(py, &self.module, hs))
    }

    /// The block of an instruction, the function of a block or argument.
    #[getter]
    fn parent(&self, py: Python<'_>) -> PyResult<Option<PyValue>> {
        let h = self.read(py, |m, h| m.ir_parent(h))?;
        Ok(h.map(|h| wrap(py, &self.module, h)))
    }

    /// An instruction's opcode as LLVM prints it (`mul`, `icmp`, `ret`).
    #[getter]
    fn opcode(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |m, h| m.ir_opcode(h))
    }

    #[getter]
    fn operands(&self, py: Python<'_>) -> PyResult<Vec<PyValue>> {
        let hs = self.read(py, |m, h| m.ir_operands(h))?;
        Ok(wrap_all(py, &self.module, hs))
    }

    /// The instructions (and constants) that use this value.
    #[getter]
    fn users(&self, py: Python<'_>) -> PyResult<Vec<PyValue>> {
        let hs = self.read(py, |m, h| m.ir_users(h))?;
        Ok(wrap_all(py, &self.module, hs))
    }

    /// An integer constant's value read as signed (None for other values).
    #[getter]
    fn int_value(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        Ok(self
            .read(py, |m, h| m.ir_int_constant(h))?
            .map(|c| c.signed))
    }

    /// An integer constant's value read as unsigned.
    #[getter]
    fn unsigned_value(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self
            .read(py, |m, h| m.ir_int_constant(h))?
            .map(|c| c.unsigned))
    }

    /// An integer constant's width in bits.
    #[getter]
    fn bits(&self, py: Python<'_>) -> PyResult<Option<u32>> {
        Ok(self.read(py, |m, h| m.ir_int_constant(h))?.map(|c| c.bits))
    }

    /// Replaces every use of this value by `value` (of the same type).
    fn replace_all_uses_with(&self, py: Python<'_>, value: PyRef<'_, PyValue>) -> PyResult<()> {
        let other = value.handle()?;
        self.edit(py, |m, h| m.ir_replace_all_uses(h, other))
    }

    /// Sets operand `index` to `value` (of the operand's type).
    fn set_operand(&self, py: Python<'_>, index: usize, value: PyRef<'_, PyValue>) -> PyResult<()> {
        let other = value.handle()?;
        self.edit(py, |m, h| m.ir_set_operand(h, index, other))
    }

    /// Erases an instruction nothing uses.
    fn erase(&self, py: Python<'_>) -> PyResult<()> {
        self.edit(py, |m, h| m.ir_erase(h))
    }

    /// Builds an instruction before this one (see `passlab.ir.Builder`).
    #[pyo3(signature = (op, operands, to=None, name=""))]
    fn build_before(
        &self,
        py: Python<'_>,
        op: &str,
        operands: Vec<PyRef<'_, PyValue>>,
        to: Option<&str>,
        name: &str,
    ) -> PyResult<PyValue> {
        let ops = operands
            .iter()
            .map(|o| o.handle())
            .collect::<PyResult<Vec<Value>>>()?;
        let h = self.edit(py, |m, h| m.ir_build(h, op, &ops, to, name))?;
        Ok(wrap(py, &self.module, h))
    }

    /// An integer constant of this value's (integer) type.
    fn const_int(&self, py: Python<'_>, value: i64) -> PyResult<PyValue> {
        let h = self.edit(py, |m, h| m.ir_const_int(TypeOf::Value(h), value))?;
        Ok(wrap(py, &self.module, h))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let handle = self.handle()?;
        match other.cast::<PyValue>() {
            Ok(o) => Ok(o.get().handle()? == handle),
            Err(_) => Ok(false),
        }
    }

    fn __hash__(&self) -> PyResult<u64> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.handle()?.hash(&mut h);
        Ok(h.finish())
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |m, h| m.ir_print(h))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let Ok(handle) = self.handle() else {
            return self.handle.foreign_repr().unwrap_or_default();
        };
        let kind = handle.kind();
        match kind {
            ValueKind::Function | ValueKind::Block => match self.read(py, |m, h| m.ir_name(h)) {
                Ok(name) => format!("<passlab.ir {} {name}>", kind.name()),
                Err(_) => format!("<passlab.ir {} (out of date)>", kind.name()),
            },
            _ => match self.read(py, |m, h| m.ir_print(h)) {
                Ok(text) => format!("<passlab.ir {}: {}>", kind.name(), text.trim()),
                Err(_) => format!("<passlab.ir {} (out of date)>", kind.name()),
            },
        }
    }
}
