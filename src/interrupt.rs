//! Interrupting what runs now, from another thread or a signal handler: a
//! JIT call ends (its child process gets SIGINT), and an LLVM pipeline or a
//! sequential stops before its next optional pass; the pass then fails with
//! [`Error::Interrupted`](crate::Error::Interrupted) and `apply` puts the
//! module back as it was. LLVM's required passes cannot be skipped, so a
//! pipeline stops at the next optional one.
//!
//! A front end calls [`request`] (Ctrl-C, a Jupyter interrupt); the session
//! clears the request before each command, so it never reaches the next.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Asks what runs now to stop. Async-signal-safe.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
    crate::jit::interrupt();
}

/// Whether an interrupt was requested and not cleared.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Forgets a pending request (the session does this before each command).
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// Makes LLVM pipelines interruptible: they then always run with the hooks
/// that can stop them (a few nanoseconds per pass). A `Session` turns this
/// on; a program that never interrupts keeps the hook-free path.
pub fn watch() {
    WATCHING.store(true, Ordering::SeqCst);
}

pub(crate) fn watching() -> bool {
    WATCHING.load(Ordering::Relaxed)
}
