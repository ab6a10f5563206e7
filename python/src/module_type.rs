//! The `passlab.Module` class's data: a module Python owns, or one lent
//! to Python code for the length of a call (an instrument's hook sees the
//! module a pass is running on; a Python pass gets the module to change),
//! and how the other classes borrow it ([`read`], [`write`], [`lend`]). A
//! lent module refuses every use once its call has returned, rather than
//! reach a module that may be gone. Either is used on the thread that made
//! it only ([`Local`]). The class's Python methods are in `module.rs`,
//! which uses the other classes; they use only this file, so no file
//! circle runs through the module class.

use crate::local::{Kind, Local};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::cell::Cell;
use std::ptr::NonNull;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

/// An LLVM IR module: from C or C++ (clang-19, as clang hands it to its
/// pipeline), IR text, bitcode or a file.
#[pyclass(name = "Module", module = "passlab")]
pub struct PyModule_ {
    pub(crate) holder: Local<Holder>,
    /// Set when a pass was called on this module (lent to a Python pass)
    /// without `inplace`: its result is a new module, which the Python
    /// pass must return, or it is lost.
    pub passed_on: AtomicBool,
}

pub(crate) static KIND: Kind = Kind {
    name: "passlab.Module",
    instead: "passlab.Module.from_bitcode(data) copies one, with data = mod.bitcode() \
              taken on the module's own thread; pickling copies it too",
};

pub(crate) enum Holder {
    Owned(passlab::Module),
    /// A module the core owns, lent for one call.
    Lent {
        module: NonNull<passlab::Module>,
        alive: Rc<Cell<bool>>,
        mutable: bool,
    },
}

impl PyModule_ {
    pub fn owned(module: passlab::Module) -> Self {
        PyModule_ {
            holder: Local::new(Holder::Owned(module), &KIND),
            passed_on: AtomicBool::new(false),
        }
    }

    pub fn get(&self) -> PyResult<&passlab::Module> {
        match self.holder.get()? {
            Holder::Owned(m) => Ok(m),
            Holder::Lent { module, alive, .. } => {
                if !alive.get() {
                    return Err(gone());
                }
                // SAFETY: `alive` is true only while the call that lent the
                // module runs (`lend` clears it when the call returns, even
                // by an exception), and the lender keeps the module alive
                // and unmoved for that call. The loan is reached only on
                // the thread that made it (`Local`), the one running the
                // call.
                Ok(unsafe { module.as_ref() })
            }
        }
    }

    pub fn get_mut(&mut self) -> PyResult<&mut passlab::Module> {
        match self.holder.get_mut()? {
            Holder::Owned(m) => Ok(m),
            Holder::Lent {
                module,
                alive,
                mutable,
            } => {
                if !alive.get() {
                    return Err(gone());
                }
                if !*mutable {
                    return Err(PyRuntimeError::new_err(
                        "this module is lent to an instrument to read; \
                         an instrument cannot change it (write a pass)",
                    ));
                }
                // SAFETY: as in `get`; a mutable loan comes from a `&mut`
                // the lender does not use until the call returns.
                Ok(unsafe { module.as_mut() })
            }
        }
    }
}

impl PyModule_ {
    /// Whether this is a module lent to an instrument to read.
    pub fn lent_to_read(&self) -> bool {
        matches!(self.holder.get(), Ok(Holder::Lent { mutable: false, .. }))
    }

    /// Whether this is a module lent to a Python pass to change.
    pub fn lent_to_change(&self) -> bool {
        matches!(self.holder.get(), Ok(Holder::Lent { mutable: true, .. }))
    }

    /// The module for an edit through the IR API: only a module lent to a
    /// Python pass, which verifies the IR when it returns and puts the
    /// module back if it fails.
    pub fn edit_ir(&mut self) -> PyResult<&mut passlab::Module> {
        if matches!(self.holder.get()?, Holder::Owned(_)) {
            return Err(PyRuntimeError::new_err(
                "IR is changed inside a pass (module_pass or function_pass), which verifies \
                 it and puts the module back if it fails; this module is not lent to one",
            ));
        }
        self.get_mut()
    }
}

/// The module object behind `slf`, to read: a RuntimeError while a pass
/// is transforming it (from a hook or a Python pass that reached it other
/// than as its argument), where pyo3's `borrow` would panic.
pub fn read<'py>(slf: &Bound<'py, PyModule_>) -> PyResult<PyRef<'py, PyModule_>> {
    slf.try_borrow().map_err(|_| busy())
}

/// As [`read`], to change.
pub fn write<'py>(slf: &Bound<'py, PyModule_>) -> PyResult<PyRefMut<'py, PyModule_>> {
    slf.try_borrow_mut().map_err(|_| busy())
}

/// The error for a module a pass is transforming.
pub fn busy() -> PyErr {
    PyRuntimeError::new_err(
        "this module is being transformed by a pass, which has not returned; \
         a hook or a pass uses the module it is given as its argument",
    )
}

pub(crate) fn gone() -> PyErr {
    PyRuntimeError::new_err(
        "this module was lent to a hook or a pass for the length of that call, \
         which has returned; keep mod.copy() instead",
    )
}

/// Calls `f` with `module` lent to Python as a `passlab.Module`; the loan
/// ends when `f` returns.
pub fn lend<R>(
    py: Python<'_>,
    module: NonNull<passlab::Module>,
    mutable: bool,
    f: impl FnOnce(&Bound<'_, PyModule_>) -> PyResult<R>,
) -> PyResult<R> {
    struct EndLoan(Rc<Cell<bool>>);
    impl Drop for EndLoan {
        fn drop(&mut self) {
            self.0.set(false);
        }
    }
    let alive = Rc::new(Cell::new(true));
    let _end = EndLoan(alive.clone());
    let object = Bound::new(
        py,
        PyModule_ {
            holder: Local::new(
                Holder::Lent {
                    module,
                    alive,
                    mutable,
                },
                &KIND,
            ),
            passed_on: AtomicBool::new(false),
        },
    )?;
    f(&object)
}
