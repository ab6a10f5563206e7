// Bugs planted on purpose, for passlab's tests of reduction and hunting:
// an LLVM pass plugin (built as tests/plugin.rs builds strength_plugin.cpp)
// whose passes are wrong in one edge case each, the way real optimizer bugs
// are.
//
//   planted-sdiv   (function pass)  x sdiv 2^k  ->  x ashr k
//                  a miscompile: right for x >= 0 and for x a multiple of
//                  2^k, wrong for other negative x (-3 / 2 is -1, -3 >> 1
//                  is -2)
//   planted-cmp    (function pass)  x >=s C  ->  x >=u C, for a constant C
//                  of 2 or more (and >s likewise): right when x >= 0, wrong
//                  for negative x (-1 >=s 32 is false, -1 >=u 32 true)
//   planted-crash  (function pass)  crashes (a store through a null
//                  pointer) on a function that has a `urem`
//   planted-fatal  (function pass)  reports an LLVM fatal error on a
//                  function that has a `udiv`
//   planted-break  (function pass)  makes the first `xor` of a function use
//                  itself: IR the verifier refuses ("Only PHI nodes may
//                  reference their own value!")

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/ErrorHandling.h"

using namespace llvm;

namespace {

struct PlantedSdiv : PassInfoMixin<PlantedSdiv> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    SmallVector<BinaryOperator *, 8> Divs;
    for (auto &BB : F)
      for (auto &I : BB)
        if (auto *B = dyn_cast<BinaryOperator>(&I))
          if (B->getOpcode() == Instruction::SDiv)
            if (auto *C = dyn_cast<ConstantInt>(B->getOperand(1)))
              if (C->getValue().isPowerOf2() && C->getValue().logBase2() > 0)
                Divs.push_back(B);
    for (auto *B : Divs) {
      auto *C = cast<ConstantInt>(B->getOperand(1));
      IRBuilder<> Builder(B);
      // Wrong on purpose: sdiv rounds toward zero, ashr toward -infinity.
      Value *Shr = Builder.CreateAShr(B->getOperand(0), C->getValue().logBase2());
      B->replaceAllUsesWith(Shr);
      B->eraseFromParent();
    }
    return Divs.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
  }
};

struct PlantedCmp : PassInfoMixin<PlantedCmp> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    bool Changed = false;
    for (auto &BB : F)
      for (auto &I : BB)
        if (auto *C = dyn_cast<ICmpInst>(&I))
          if (C->getPredicate() == ICmpInst::ICMP_SGE || C->getPredicate() == ICmpInst::ICMP_SGT)
            if (auto *K = dyn_cast<ConstantInt>(C->getOperand(1)))
              if (K->getValue().sge(2)) {
                // Wrong on purpose: the unsigned comparison takes a
                // negative x for a huge one.
                C->setPredicate(C->getPredicate() == ICmpInst::ICMP_SGE ? ICmpInst::ICMP_UGE
                                                                       : ICmpInst::ICMP_UGT);
                Changed = true;
              }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

bool has(Function &F, unsigned Opcode) {
  for (auto &BB : F)
    for (auto &I : BB)
      if (I.getOpcode() == Opcode)
        return true;
  return false;
}

struct PlantedCrash : PassInfoMixin<PlantedCrash> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    if (has(F, Instruction::URem)) {
      volatile int *Null = nullptr;
      *Null = 1;
    }
    return PreservedAnalyses::all();
  }
};

struct PlantedFatal : PassInfoMixin<PlantedFatal> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    if (has(F, Instruction::UDiv))
      report_fatal_error("planted-fatal: a udiv, which this pass cannot handle");
    return PreservedAnalyses::all();
  }
};

struct PlantedBreak : PassInfoMixin<PlantedBreak> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    for (auto &BB : F)
      for (auto &I : BB)
        if (I.getOpcode() == Instruction::Xor) {
          I.setOperand(0, &I);
          return PreservedAnalyses::none();
        }
    return PreservedAnalyses::all();
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "planted-bugs", "0.1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "planted-sdiv") {
                    FPM.addPass(PlantedSdiv());
                    return true;
                  }
                  if (Name == "planted-cmp") {
                    FPM.addPass(PlantedCmp());
                    return true;
                  }
                  if (Name == "planted-crash") {
                    FPM.addPass(PlantedCrash());
                    return true;
                  }
                  if (Name == "planted-fatal") {
                    FPM.addPass(PlantedFatal());
                    return true;
                  }
                  if (Name == "planted-break") {
                    FPM.addPass(PlantedBreak());
                    return true;
                  }
                  return false;
                });
          }};
}
