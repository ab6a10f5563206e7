//! Interrupting what runs now, from another thread or a signal handler: a
//! JIT call ends (its child process gets SIGINT), and an LLVM pipeline or a
//! sequential stops before its next optional pass; the pass then fails with
//! [`Error::Interrupted`](crate::Error::Interrupted) and `apply` puts the
//! module back as it was. LLVM's required passes cannot be skipped, so a
//! pipeline stops at the next optional one.
//!
//! A front end calls [`request`] (Ctrl-C, a Jupyter interrupt); the session
//! clears the request before each command, so it never reaches the next.
//!
//! Who listens: the JIT reports the pid of the child that runs code
//! ([`interrupt_child`] signals it; this module does not reach into the
//! JIT); LLVM pipelines through the bridge's should-run hook, sequentials
//! between elements, and Rust passes, `:tune` and code generation poll
//! [`requested`]; so does every forked child's wait (`child::in_child`:
//! clang, LTO's link), which kills the child, and a project's load, which
//! starts no unit after a request and looks again once its units are in,
//! so that a request that came between two children is not lost. Only
//! [`clear`] forgets a request (the session before each command, and
//! `:reduce`, which ends with what it found): whoever else sees one leaves
//! it for the layers above to see too. [`request`] is
//! async-signal-safe, so the REPL's SIGINT handler and the kernel's
//! control thread call the same function.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static WATCHING: AtomicBool = AtomicBool::new(false);
/// The child process running JIT-compiled code now (0: none); the JIT
/// reports it here, so that a request reaches it.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Asks what runs now to stop. Async-signal-safe.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
    interrupt_child();
}

/// Interrupts the JIT-compiled code running now, as Ctrl-C would (SIGINT to
/// its child process): the call ends with "was interrupted" and the session
/// stays as it was. Safe from any thread and from a signal handler. Returns
/// whether something was running.
pub fn interrupt_child() -> bool {
    let pid = CHILD.load(Ordering::SeqCst);
    // SAFETY: `kill` takes no pointers and is async-signal-safe, so calling
    // it from any thread or a signal handler is sound; `pid > 0` rules out
    // signalling a process group. `pid` is the JIT's child (set while it
    // runs, cleared when the parent stops waiting), a process of ours.
    pid > 0 && unsafe { libc::kill(pid, libc::SIGINT) } == 0
}

/// The JIT says which child runs code now (0: none).
pub(crate) fn set_child(pid: i32) {
    CHILD.store(pid, Ordering::SeqCst);
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
