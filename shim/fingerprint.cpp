// Name counters, the verifier, fingerprints and statistics: what passlab reads
// of a module to check it, tell states apart and size it (see shim.cpp).

#include "shim.h"
#include "hash.h"

// ---------------------------------------------------------------------------
// Name counters: each symbol table's `LastUnique`, which picks the suffix of
// the next name that collides (`%cmp9`). Neither bitcode nor cloning keeps
// it, so a module read back (from clang's child, a snapshot) or copied
// would name what passes create otherwise than the module it came from
// (`%cmp6`): clang -O2's own output is the in-memory module's. The counter
// is private; the explicit instantiation below is the standard's way to
// name a private member (access is not checked there).

namespace {
template <typename Tag, typename Tag::type Member> struct Expose {
  friend typename Tag::type member(Tag) { return Member; }
};
struct LastUniqueTag {
  typedef uint32_t ValueSymbolTable::*type;
  friend type member(LastUniqueTag);
};
template struct Expose<LastUniqueTag, &ValueSymbolTable::LastUnique>;

uint32_t &lastUnique(const ValueSymbolTable &T) {
  return const_cast<ValueSymbolTable &>(T).*member(LastUniqueTag());
}
} // namespace

extern "C" {

/// The counters of `M`'s symbol tables as little-endian 32-bit words: the
/// module's, then each function's in order (0 for a declaration).
void plab_name_counters(LLVMModuleRef MR, plab_sink sink, void *user) {
  Module &M = *unwrapM(MR);
  std::string S;
  auto put = [&](uint32_t V) {
    for (int I = 0; I < 4; I++)
      S.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
  };
  put(lastUnique(M.getValueSymbolTable()));
  for (Function &F : M) {
    const ValueSymbolTable *T = F.getValueSymbolTable();
    put(T ? lastUnique(*T) : 0);
  }
  send(sink, user, S);
}

/// Sets `M`'s counters from words `plab_name_counters` wrote for a module
/// with the same functions in the same order (extra words are ignored,
/// missing ones leave counters as they are).
void plab_set_name_counters(LLVMModuleRef MR, const uint8_t *data, size_t len) {
  Module &M = *unwrapM(MR);
  size_t At = 0;
  auto next = [&](uint32_t &V) {
    if (At + 4 > len)
      return false;
    V = uint32_t(data[At]) | uint32_t(data[At + 1]) << 8 | uint32_t(data[At + 2]) << 16 |
        uint32_t(data[At + 3]) << 24;
    At += 4;
    return true;
  };
  uint32_t V;
  if (!next(V))
    return;
  lastUnique(M.getValueSymbolTable()) = V;
  for (Function &F : M) {
    if (!next(V))
      return;
    if (ValueSymbolTable *T = F.getValueSymbolTable())
      lastUnique(*T) = V;
  }
}

/// Verifies `M`; returns true when it is valid, else sends the messages.
bool plab_verify(LLVMModuleRef M, plab_sink sink, void *user) {
  return verifiedUnderGuard([&](raw_ostream &OS) { return verifyModule(*unwrapM(M), &OS); },
                            sink, user);
}

// ---------------------------------------------------------------------------
// Fingerprints: a content hash of what a pass can change.


uint64_t plab_fingerprint_function(LLVMValueRef F) {
  Hasher Hs;
  hashFunction(Hs, *reinterpret_cast<Function *>(F));
  return Hs.H;
}

uint64_t plab_fingerprint_module(LLVMModuleRef MR) {
  const Module &M = *unwrapM(MR);
  Hasher Hs;
  Hs.str(M.getTargetTriple());
  Hs.str(M.getDataLayoutStr());
  for (const GlobalVariable &G : M.globals()) {
    Hs.str(G.getName());
    Hs.add(G.getLinkage());
    Hs.add(G.getVisibility());
    Hs.add(G.isConstant());
    Hs.add(G.getAlign() ? G.getAlign()->value() : 0);
    Hs.add(static_cast<unsigned>(G.getUnnamedAddr()));
    Hs.ptr(G.getValueType());
    Hs.ptr(G.hasInitializer() ? G.getInitializer() : nullptr);
  }
  for (const GlobalAlias &A : M.aliases()) {
    Hs.str(A.getName());
    Hs.ptr(A.getAliasee());
  }
  for (const Function &F : M)
    hashFunction(Hs, F);
  for (const NamedMDNode &N : M.named_metadata()) {
    Hs.str(N.getName());
    for (const MDNode *Op : N.operands())
      Hs.ptr(Op);
  }
  return Hs.H;
}

// ---------------------------------------------------------------------------
// Statistics.

typedef void (*plab_function_stats)(void *user, const char *name, size_t len, bool declaration,
                                    uint64_t blocks, uint64_t instructions);

/// Totals of `M`; per function through `each` (may be null); per opcode into
/// `opcodes` (indexed by LLVM opcode, `n_opcodes` long, may be null).
void plab_stats(LLVMModuleRef MR, plab_function_stats each, void *user, uint64_t *opcodes,
                size_t n_opcodes, uint64_t *totals /* functions, blocks, instructions */) {
  const Module &M = *unwrapM(MR);
  uint64_t Fns = 0, Blocks = 0, Insts = 0;
  for (const Function &F : M) {
    uint64_t B = 0, I = 0;
    if (!F.isDeclaration()) {
      ++Fns;
      for (const BasicBlock &BB : F) {
        ++B;
        if (opcodes) {
          for (const Instruction &In : BB) {
            ++I;
            unsigned Op = In.getOpcode();
            if (Op < n_opcodes)
              ++opcodes[Op];
          }
        } else {
          I += BB.size();
        }
      }
    }
    Blocks += B;
    Insts += I;
    if (each)
      each(user, F.getName().data(), F.getName().size(), F.isDeclaration(), B, I);
  }
  totals[0] = Fns;
  totals[1] = Blocks;
  totals[2] = Insts;
}

size_t plab_opcode_limit() { return Instruction::OtherOpsEnd; }

/// Turns a function into a declaration (external linkage), as llvm-extract
/// does for the functions it does not keep.
void plab_delete_body(LLVMValueRef F) { reinterpret_cast<Function *>(F)->deleteBody(); }

const char *plab_opcode_name(unsigned op) { return Instruction::getOpcodeName(op); }

const char *plab_instruction_opcode_name(LLVMValueRef I) {
  return unwrap<Instruction>(I)->getOpcodeName();
}

} // extern "C"
