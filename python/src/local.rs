//! [`Local`]: state that belongs to the thread that made it. LLVM's objects
//! (a module, its context), `Rc`s shared with the core's instruments and a
//! session's state are used and freed on the thread that made them; a
//! Python object holding them can still reach any thread (a
//! `threading.Thread`'s closure, a `concurrent.futures` pool), so every use
//! of the state checks the thread first and raises `passlab.ThreadError` —
//! a `passlab.Error` and a `RuntimeError` — where pyo3's `unsendable`
//! panicked (a `PanicException`, which `except Exception` does not catch).

use crate::errors;
use pyo3::exceptions::PyResourceWarning;
use pyo3::prelude::*;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::thread::ThreadId;

/// What a [`Local`] holds, for its error: the Python class's name and what
/// to do instead of using the object on another thread.
pub struct Kind {
    /// The class as Python code names it (`passlab.Module`).
    pub name: &'static str,
    /// What to do instead, after "make one per thread" (`Module.from_bitcode(…)`).
    pub instead: &'static str,
}

/// A value used, and dropped, only on the thread that made it.
pub struct Local<T> {
    owner: ThreadId,
    /// The owner's `threading.get_ident()`, to name it in errors.
    owner_ident: u64,
    kind: &'static Kind,
    /// Dropped by `Drop` on the owner thread only; leaked elsewhere.
    value: ManuallyDrop<T>,
}

// SAFETY: the value is reached only through `get` and `get_mut`, which
// hand it out on the owner thread only, and dropped only there (`Drop`
// leaks it on any other thread, as pyo3's `unsendable` did); another
// thread only reads `owner`, `owner_ident` and `kind`, which are `Send`
// and `Sync` and never change. Moving a `Local` to another thread moves
// the value's bytes without running any of its code, so a `!Send` value
// (an `Rc`, LLVM's objects) is never used or freed off its thread.
unsafe impl<T> Send for Local<T> {}

// SAFETY: as for `Send`: through a shared `Local`, another thread reads
// only the immutable `owner`, `owner_ident` and `kind`; `get` refuses to
// give it the value.
unsafe impl<T> Sync for Local<T> {}

thread_local! {
    /// This thread's id (`ThreadId`s are never reused, unlike OS idents).
    static HERE: ThreadId = std::thread::current().id();
    /// This thread's `threading.get_ident()`, asked of Python once.
    static IDENT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The calling thread's id; `None` while the thread's locals are being
/// destroyed (then it owns nothing here).
fn here() -> Option<ThreadId> {
    HERE.try_with(|id| *id).ok()
}

/// The calling thread's `threading.get_ident()` (0 if Python cannot say).
fn ident(py: Python<'_>) -> u64 {
    if let Ok(Some(known)) = IDENT.try_with(Cell::get) {
        return known;
    }
    let asked = py
        .import("threading")
        .and_then(|t| t.call_method0("get_ident"))
        .and_then(|i| i.extract::<u64>())
        .unwrap_or(0);
    let _ = IDENT.try_with(|i| i.set(Some(asked)));
    asked
}

/// The name of the live Python thread whose ident is `ident`.
fn thread_name(py: Python<'_>, ident: u64) -> Option<String> {
    let threads = py
        .import("threading")
        .and_then(|t| t.call_method0("enumerate"))
        .ok()?;
    for thread in threads.try_iter().ok()?.flatten() {
        let same = thread
            .getattr("ident")
            .and_then(|i| i.extract::<u64>())
            .is_ok_and(|i| i == ident);
        if same {
            return thread.getattr("name").and_then(|n| n.extract()).ok();
        }
    }
    None
}

impl<T> Local<T> {
    /// `value`, owned by the calling thread.
    pub fn new(value: T, kind: &'static Kind) -> Local<T> {
        Local {
            owner: std::thread::current().id(),
            owner_ident: Python::try_attach(ident).unwrap_or(0),
            kind,
            value: ManuallyDrop::new(value),
        }
    }

    fn on_owner(&self) -> bool {
        here() == Some(self.owner)
    }

    /// The value, on the thread that made it; `passlab.ThreadError` on any
    /// other.
    pub fn get(&self) -> PyResult<&T> {
        if self.on_owner() {
            Ok(&self.value)
        } else {
            Err(self.wrong_thread())
        }
    }

    /// The value to change, on the thread that made it; `ThreadError` on
    /// any other.
    pub fn get_mut(&mut self) -> PyResult<&mut T> {
        if self.on_owner() {
            Ok(&mut self.value)
        } else {
            Err(self.wrong_thread())
        }
    }

    /// Ok on the thread that made the value, else the `ThreadError` (for
    /// methods that check before they start).
    pub fn check(&self) -> PyResult<()> {
        self.get().map(|_| ())
    }

    /// Off the thread that made it, what a `repr` says of the object
    /// instead of reading it (a `repr` must not raise):
    /// `<passlab.Module made on thread 'MainThread'>`.
    pub fn foreign_repr(&self) -> Option<String> {
        if self.on_owner() {
            return None;
        }
        Some(Python::attach(|py| {
            format!("<{} made on {}>", self.kind.name, self.owner_name(py))
        }))
    }

    /// The owner thread, as an error names it.
    fn owner_name(&self, py: Python<'_>) -> String {
        // An ident equal to this thread's is the ident of the owner, which
        // has ended, reused by the OS (ThreadIds are not reused).
        if self.owner_ident != ident(py) {
            if let Some(name) = thread_name(py, self.owner_ident) {
                return format!("thread '{name}'");
            }
        }
        "a thread that has ended".to_string()
    }

    fn message(&self, py: Python<'_>) -> String {
        let here = py
            .import("threading")
            .and_then(|t| t.call_method0("current_thread"))
            .and_then(|t| t.getattr("name"))
            .and_then(|n| n.extract::<String>())
            .map_or_else(|_| "this thread".to_string(), |n| format!("thread '{n}'"));
        format!(
            "this {} was made on {} and is used on {here}; a passlab object is used only on \
             the thread that made it: make one per thread ({})",
            self.kind.name,
            self.owner_name(py),
            self.kind.instead
        )
    }

    fn wrong_thread(&self) -> PyErr {
        Python::attach(|py| errors::thread_error(py, self.message(py)))
    }
}

impl<T> Drop for Local<T> {
    fn drop(&mut self) {
        if self.on_owner() {
            // SAFETY: `value` is dropped here once (`Local` is being
            // dropped and nothing reads `value` after), on the thread that
            // made it.
            unsafe { ManuallyDrop::drop(&mut self.value) };
            return;
        }
        if !std::mem::needs_drop::<T>() {
            return;
        }
        // Freed on another thread (the last reference went there, or the
        // garbage collector ran there): the value is leaked, as LLVM's
        // objects are freed only on the thread that made them, and Python
        // is told as it is of a file left open.
        let _ = Python::try_attach(|py| {
            // (Not while an exception is on its way: an object freed as a
            // frame unwinds; Python code must not run over it.)
            if PyErr::occurred(py) {
                return;
            }
            let message = format!(
                "a {} made on {} was freed on another thread; its memory is kept (leaked), \
                 as passlab frees an object only on the thread that made it",
                self.kind.name,
                self.owner_name(py)
            );
            let Ok(message) = std::ffi::CString::new(message) else {
                return;
            };
            let category = py.get_type::<PyResourceWarning>();
            if let Err(e) = PyErr::warn(py, &category, &message, 1) {
                e.write_unraisable(py, None);
            }
        });
    }
}
