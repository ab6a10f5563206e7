// A small LLVM pass plugin for passlab's tests, built with clang++-19
// against LLVM 19's headers (see tests/plugin.rs):
//
//   plugin-strength-reduce  (function pass)  x * 2^k  ->  x << k
//   plugin-tag              (module pass)    marks every defined function
//                                            with "plugin-was-here"
//
// It registers both by name, as `opt -load-pass-plugin` users expect
// (`opt -passes=plugin-strength-reduce`), and adds the tagging pass at the
// start of LLVM's default pipelines (an extension point).

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

using namespace llvm;

namespace {

struct StrengthReduce : PassInfoMixin<StrengthReduce> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    SmallVector<BinaryOperator *, 8> Muls;
    for (auto &BB : F)
      for (auto &I : BB)
        if (auto *B = dyn_cast<BinaryOperator>(&I))
          if (B->getOpcode() == Instruction::Mul)
            if (auto *C = dyn_cast<ConstantInt>(B->getOperand(1)))
              if (C->getValue().isPowerOf2())
                Muls.push_back(B);
    for (auto *B : Muls) {
      auto *C = cast<ConstantInt>(B->getOperand(1));
      IRBuilder<> Builder(B);
      Value *Shl = Builder.CreateShl(B->getOperand(0), C->getValue().logBase2());
      B->replaceAllUsesWith(Shl);
      B->eraseFromParent();
    }
    return Muls.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
  }
};

struct Tag : PassInfoMixin<Tag> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    bool Changed = false;
    for (auto &F : M)
      if (!F.isDeclaration() && !F.hasFnAttribute("plugin-was-here")) {
        F.addFnAttr("plugin-was-here");
        Changed = true;
      }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return false; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "passlab-test-plugin", "1.0", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "plugin-strength-reduce") {
                    FPM.addPass(StrengthReduce());
                    return true;
                  }
                  return false;
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "plugin-tag") {
                    MPM.addPass(Tag());
                    return true;
                  }
                  return false;
                });
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(Tag()); });
          }};
}
