// LLVM's fatal errors at the shim's entry points.
//
// `report_fatal_error` (LLVM 19's instcombine short of a fixpoint, a
// plugin's or clang's `llvm_fatal_error`, …) calls the installed handler and
// then ends the process. passlab installs a handler that jumps back to the
// innermost entry point of the shim that guards its work with `guarded`,
// which then reports the error to Rust instead. What this can and cannot
// skip, and why that is safe:
//
// * Only C++ frames are jumped over. Rust calls LLVM through the shim's
//   entry points, each guarded; a guard records how many calls into Rust
//   (instrument hooks during a run) were on the stack when it was set, and
//   the handler jumps only to a guard at the current depth. A fatal error
//   reached from inside a Rust hook through an unguarded call (LLVM's C API
//   directly) would have Rust frames in between: the handler then does not
//   jump, and LLVM ends the process as it always did.
// * The destructors skipped are those of the abandoned work: its pass
//   managers, analysis results, the module being built or changed. The
//   callers never use or free that state again (`src/llvm.rs` leaks the
//   runner, `Module`'s drop leaks a poisoned module and its context, a
//   context a parse or compile was abandoned in is leaked): memory, not
//   correctness.
// * No lock of LLVM's is held: `report_fatal_error` reads the handler under
//   its mutex and calls it after releasing it; the shim itself takes no
//   lock. Locks taken by the code that failed are the one case not ruled
//   out here, and `tests/fatal_error.rs` runs the session on after each
//   kind of fatal error to show none was left held on the paths it covers.
//
// Crashes are caught the same way (what LLVM's CrashRecoveryContext does
// for clang): while a guard is set, SIGSEGV, SIGBUS, SIGILL, SIGFPE and
// SIGABRT (a plugin's null pointer, LLVM's `abort`, a stack overflow, run
// on an alternate signal stack each guarding thread gets) jump back to the
// innermost guard at the current Rust depth, and the guard reports the
// signal (crashSignal()). What was skipped is treated as above: the work
// is abandoned and never touched again. A crash outside any guard, or
// inside a Rust hook, goes to the handler that was there before (Rust's,
// Python's) or ends the process as it always did. What this cannot undo:
// a crash inside malloc (its lock) or one that corrupted memory the rest
// of the process uses; LLVM's own crash recovery has the same limits.
// Forked children reset these handlers to the defaults (a crash there is
// the child's); `:tune`'s child sets them again (catchCrashesAgain), so
// that a trial that crashes names its pass, and ends after that trial
// (noteCrashCaught counts the crashes caught), as what a crash left behind
// is not trusted with another.
//
// Each claim has a test: `guard_tests` in src/ffi.rs (through the
// `plab_probe_*` entry points: fatal errors caught again and again on any
// thread, one inside a hook caught below the hook, one with a Rust frame
// in between ending the process instead of jumping) and
// tests/fatal_error.rs (a run, the in-process clang: the session goes on,
// its modules as they were).
#pragma once

#include <csetjmp>
#include <string>

namespace plab {

struct Recovery {
  std::jmp_buf Jump;
  int RustDepth;
  Recovery *Outer;
};

// The innermost guard of this thread, and how many Rust calls are on its
// stack now.
Recovery *&innermost();
int &rustDepth();
// The message of the last fatal error a guard caught on this thread.
std::string &fatalMessage();
void installFatalHandler();
// The signal that abandoned the last guarded call on this thread, or 0
// (none, or an LLVM fatal error).
int &crashSignal();
// The crash handlers, once per process, and an alternate signal stack for
// the calling thread, once per thread (a stack overflow leaves no stack
// for the handler to run on).
void installCrashHandlers();
// In a forked child whose crash signals were reset to their defaults: the
// handlers again (crashes outside a guard still take the defaults).
void catchCrashesAgain();
// What a crash signal is, in words ("segmentation fault (SIGSEGV, an
// invalid memory access)").
std::string describeCrash(int Signal);
// Counts the crashes guards caught in this process (a process that caught
// one may have memory the crash left behind: a forked child ends after it).
void noteCrashCaught();

// Runs `Body`; true when it ran to its end, false when an LLVM fatal error
// abandoned it (its message in fatalMessage()).
template <typename F> bool guarded(F &&Body) {
  installFatalHandler();
  installCrashHandlers();
  fatalMessage().clear();
  crashSignal() = 0;
  Recovery R;
  R.RustDepth = rustDepth();
  R.Outer = innermost();
  if (setjmp(R.Jump) != 0) {
    innermost() = R.Outer;
    // (the message is made here, not in the signal handler, where
    // allocating is not safe)
    if (crashSignal() != 0) {
      noteCrashCaught();
      fatalMessage() = describeCrash(crashSignal());
    }
    return false;
  }
  innermost() = &R;
  Body();
  innermost() = R.Outer;
  return true;
}

// Marks a call into Rust (an instrument hook) for as long as it lives.
struct InRust {
  InRust() { ++rustDepth(); }
  ~InRust() { --rustDepth(); }
};

} // namespace plab

// Registers the native target once per process (shim.cpp).
extern "C" void plab_init_targets();
