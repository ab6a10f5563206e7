// The shim's common part: LLVM's headers, the C ABI's shared types and
// the few helpers every file of the shim uses (see shim.cpp).
#pragma once

#include "llvm/ADT/Any.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LazyCallGraph.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSlotTracker.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/ValueSymbolTable.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Analysis/ProfileSummaryInfo.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm-c/Core.h"
#include "llvm-c/Types.h"

#include "guard.h"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <pthread.h>
#include <shared_mutex>
#include <string>

using namespace llvm;

// `any_cast` compares the address of `Any::TypeId<T>::Id` with the one the
// code that made the `Any` used. Those variables are template statics that
// every object using them defines (weakly): in an executable the loader
// makes libLLVM use the executable's copy, but a shared object hides its
// symbols (a Rust cdylib such as the Python module exports only its entry
// point), so its own copies would differ from libLLVM's and every cast
// would fail. Declaring them instantiated elsewhere makes the shim refer to
// libLLVM's, which exports them.
namespace llvm {
extern template char Any::TypeId<const Module *>::Id;
extern template char Any::TypeId<const Function *>::Id;
extern template char Any::TypeId<const LazyCallGraph::SCC *>::Id;
extern template char Any::TypeId<const Loop *>::Id;
} // namespace llvm

extern "C" {

/// Receives a byte string from the shim (messages, bitcode, pass lists).
typedef void (*plab_sink)(void *user, const char *data, size_t len);

/// The IR unit a pass runs on, as reported to instrumentation hooks.
enum plab_unit { PLAB_MODULE = 0, PLAB_CGSCC = 1, PLAB_FUNCTION = 2, PLAB_LOOP = 3, PLAB_OTHER = 4 };

/// Hooks called for every named pass LLVM runs inside a pipeline. Pass
/// managers and adaptors are filtered out. `should_run` is only asked for
/// optional passes (LLVM's required passes bypass it) and may be null.
///
/// `handle` is the IR unit itself (Module*, LazyCallGraph::SCC*, Function*
/// or Loop*), valid during the call only; `plab_unit_functions` turns it
/// into functions.
struct plab_hooks {
  void *user;
  bool (*should_run)(void *user, const char *pass, size_t pass_len, int unit,
                     const char *ir, size_t ir_len, const void *handle);
  void (*before)(void *user, const char *pass, size_t pass_len, int unit,
                 const char *ir, size_t ir_len, const void *handle);
  /// `handle` is null and `invalidated` true when the pass deleted its IR
  /// unit; `preserved_all` is true when the pass reported no change.
  void (*after)(void *user, const char *pass, size_t pass_len, int unit, const void *handle,
                bool invalidated, bool preserved_all);
};

/// The PipelineTuningOptions passlab exposes as configuration.
struct plab_tuning {
  bool loop_interleaving;
  bool loop_vectorization;
  bool slp_vectorization;
  bool loop_unrolling;
  bool merge_functions;
  bool call_graph_profile;
  int32_t inliner_threshold;
};

struct plab_diag {
  int32_t line;   // 1-based; 0 when unknown
  int32_t column; // 1-based; 0 when unknown
};
}

namespace {

inline Module *unwrapM(LLVMModuleRef M) { return reinterpret_cast<Module *>(M); }
inline LLVMModuleRef wrapM(Module *M) { return reinterpret_cast<LLVMModuleRef>(M); }
inline LLVMContext *unwrapC(LLVMContextRef C) { return reinterpret_cast<LLVMContext *>(C); }

inline void send(plab_sink sink, void *user, StringRef s) {
  if (sink)
    sink(user, s.data(), s.size());
}

inline void initTargets() { plab_init_targets(); }
} // namespace

using plab::guarded;

namespace plab {
/// Sends what a guard caught, as LLVM prints it (or the crash, in words).
void sendFatal(plab_sink sink, void *user);
} // namespace plab
using plab::sendFatal;

/// Runs the verifier `Verify(raw_ostream &)` (true when broken) under a
/// guard; returns true when the IR is valid, else sends its messages (or
/// what the guard caught).
template <typename Verify> bool verifiedUnderGuard(Verify V, plab_sink sink, void *user) {
  std::string S;
  raw_string_ostream OS(S);
  bool Broken = true;
  if (!guarded([&] { Broken = V(OS); })) {
    sendFatal(sink, user);
    return false;
  }
  OS.flush();
  if (Broken)
    send(sink, user, S);
  return !Broken;
}
