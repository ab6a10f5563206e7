// Passes that crash, as passes being written do, for passlab's tests of
// crash recovery (tests/crash.rs): each crashes on a function named
// `boom` and leaves every other function alone.
//
//   crash-segv      a store through a null pointer (SIGSEGV)
//   crash-abort     abort(), as a failed assertion does (SIGABRT)
//   crash-overflow  endless recursion (a stack overflow: SIGSEGV on the
//                   guard page)

#include "llvm/IR/Function.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include <cstdlib>

using namespace llvm;

namespace {

enum class How { Segv, Abort, Overflow };

// Not inlined or turned into a loop: each call takes stack.
__attribute__((noinline)) int deeper(volatile int *Depth) {
  char Frame[512];
  Frame[*Depth % 512] = 1;
  ++*Depth;
  return deeper(Depth) + Frame[(*Depth * 7) % 512];
}

template <How H> struct Crash : PassInfoMixin<Crash<H>> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    if (F.getName() != "boom")
      return PreservedAnalyses::all();
    if (H == How::Segv)
      *(volatile int *)nullptr = 1;
    if (H == How::Abort)
      abort();
    if (H == How::Overflow) {
      volatile int Depth = 0;
      deeper(&Depth);
    }
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "crashing", "1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "crash-segv") {
                    FPM.addPass(Crash<How::Segv>());
                    return true;
                  }
                  if (Name == "crash-abort") {
                    FPM.addPass(Crash<How::Abort>());
                    return true;
                  }
                  if (Name == "crash-overflow") {
                    FPM.addPass(Crash<How::Overflow>());
                    return true;
                  }
                  return false;
                });
          }};
}
