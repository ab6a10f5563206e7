// The content hash behind fingerprints (`fingerprint.cpp`) and the
// incremental printer's per-block hashes (`printer.cpp`).
#pragma once

#include "shim.h"

namespace {
struct Hasher {
  uint64_t H = 0x9e3779b97f4a7c15ULL;
  void add(uint64_t V) {
    // splitmix64 step over the running state.
    uint64_t Z = (H ^ V) + 0x9e3779b97f4a7c15ULL;
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
    H = Z ^ (Z >> 31);
  }
  void ptr(const void *P) { add(reinterpret_cast<uintptr_t>(P)); }
  void str(StringRef S) { add(hash_value(S)); }
};

// What an instruction is made of (its operands by identity).
inline void hashInstruction(Hasher &Hs, const Instruction &I) {
  SmallVector<std::pair<unsigned, MDNode *>, 4> MDs;
  Hs.ptr(&I);
  Hs.add(I.getOpcode());
  Hs.ptr(I.getType());
  Hs.add(I.getRawSubclassOptionalData());
  for (const Use &U : I.operands())
    Hs.ptr(U.get());
  if (const auto *C = dyn_cast<CmpInst>(&I))
    Hs.add(C->getPredicate());
  else if (const auto *L = dyn_cast<LoadInst>(&I)) {
    Hs.add(L->getAlign().value());
    Hs.add(L->isVolatile());
    Hs.add(static_cast<unsigned>(L->getOrdering()));
  } else if (const auto *S = dyn_cast<StoreInst>(&I)) {
    Hs.add(S->getAlign().value());
    Hs.add(S->isVolatile());
    Hs.add(static_cast<unsigned>(S->getOrdering()));
  } else if (const auto *A = dyn_cast<AllocaInst>(&I)) {
    Hs.ptr(A->getAllocatedType());
    Hs.add(A->getAlign().value());
  } else if (const auto *G = dyn_cast<GetElementPtrInst>(&I))
    Hs.ptr(G->getSourceElementType());
  else if (const auto *Cl = dyn_cast<CallBase>(&I)) {
    Hs.ptr(Cl->getFunctionType());
    Hs.ptr(Cl->getAttributes().getRawPointer());
    Hs.add(Cl->getCallingConv());
    for (unsigned B = 0, E = Cl->getNumOperandBundles(); B != E; ++B)
      Hs.add(Cl->getOperandBundleAt(B).getTagID());
    if (const auto *CI = dyn_cast<CallInst>(Cl))
      Hs.add(CI->getTailCallKind());
  } else if (const auto *P = dyn_cast<PHINode>(&I))
    for (const BasicBlock *In : P->blocks())
      Hs.ptr(In);
  I.getAllMetadata(MDs);
  for (auto &KV : MDs) {
    Hs.add(KV.first);
    Hs.ptr(KV.second);
  }
}

// Operands are hashed by identity: constants, types, attribute lists and
// metadata are uniqued in the context, and instructions and arguments are
// themselves part of the hash, so any change of content changes the result.
// What a function's header is made of (all but its blocks).
inline void hashHeader(Hasher &Hs, const Function &F) {
  Hs.str(F.getName());
  Hs.add(F.getLinkage());
  Hs.add(F.getVisibility());
  Hs.add(F.getCallingConv());
  Hs.ptr(F.getFunctionType());
  Hs.ptr(F.getAttributes().getRawPointer());
  Hs.add(F.isDeclaration());
  Hs.add(static_cast<unsigned>(F.getUnnamedAddr()));
  Hs.add(F.isDSOLocal());
  Hs.add(F.getDLLStorageClass());
  Hs.str(F.getSection());
  Hs.add(F.getAlign() ? F.getAlign()->value() : 0);
  Hs.ptr(F.getComdat());
  Hs.ptr(F.hasPersonalityFn() ? F.getPersonalityFn() : nullptr);
  Hs.ptr(F.hasPrefixData() ? F.getPrefixData() : nullptr);
  Hs.ptr(F.hasPrologueData() ? F.getPrologueData() : nullptr);
  Hs.str(F.hasGC() ? StringRef(F.getGC()) : StringRef());
  SmallVector<std::pair<unsigned, MDNode *>, 4> MDs;
  F.getAllMetadata(MDs);
  for (auto &KV : MDs) {
    Hs.add(KV.first);
    Hs.ptr(KV.second);
  }
}

inline void hashFunction(Hasher &Hs, const Function &F) {
  hashHeader(Hs, F);
  for (const BasicBlock &BB : F) {
    Hs.ptr(&BB);
    for (const Instruction &I : BB)
      hashInstruction(Hs, I);
  }
}
} // namespace
