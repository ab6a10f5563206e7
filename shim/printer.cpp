// IR units and single functions for the instruments that work per pass,
// and the incremental printer (see shim.cpp).

#include "shim.h"
#include "hash.h"

extern "C" {

// ---------------------------------------------------------------------------
// IR units and single functions, for instruments that work per pass.

/// The functions a pass on this IR unit may have changed, written to `out`
/// (at most `cap`); returns how many there are. A module gives its defined
/// functions; a function itself; a loop its function; an SCC its functions
/// and, with `callers`, the functions that call into it (CGSCC passes such as
/// argpromotion rewrite call sites).
size_t plab_unit_functions(int unit, const void *handle, bool callers, LLVMValueRef *out,
                           size_t cap) {
  SmallVector<const Function *, 8> Fs;
  switch (unit) {
  case PLAB_MODULE:
    for (const Function &F : *static_cast<const Module *>(handle))
      if (!F.isDeclaration())
        Fs.push_back(&F);
    break;
  case PLAB_FUNCTION:
    Fs.push_back(static_cast<const Function *>(handle));
    break;
  case PLAB_LOOP:
    Fs.push_back(static_cast<const Loop *>(handle)->getHeader()->getParent());
    break;
  case PLAB_CGSCC: {
    SmallPtrSet<const Function *, 8> Seen;
    for (LazyCallGraph::Node &N : *static_cast<const LazyCallGraph::SCC *>(handle))
      if (Seen.insert(&N.getFunction()).second)
        Fs.push_back(&N.getFunction());
    if (callers) {
      size_t Own = Fs.size();
      for (size_t I = 0; I < Own; ++I)
        for (const User *U : Fs[I]->users())
          if (const auto *CB = dyn_cast<CallBase>(U))
            if (const Function *C = CB->getFunction())
              if (Seen.insert(C).second)
                Fs.push_back(C);
    }
    break;
  }
  default:
    break;
  }
  size_t N = Fs.size();
  for (size_t I = 0; I < N && I < cap; ++I)
    out[I] = reinterpret_cast<LLVMValueRef>(const_cast<Function *>(Fs[I]));
  return N;
}

/// Basic blocks and instructions of one function.
void plab_function_size(LLVMValueRef FR, uint64_t *blocks, uint64_t *instructions) {
  const Function &F = *reinterpret_cast<Function *>(FR);
  uint64_t B = 0, I = 0;
  for (const BasicBlock &BB : F) {
    ++B;
    I += BB.size();
  }
  *blocks = B;
  *instructions = I;
}

/// Verifies one function; returns true when valid, else sends the messages.
bool plab_verify_function(LLVMValueRef FR, plab_sink sink, void *user) {
  return verifiedUnderGuard(
      [&](raw_ostream &OS) { return verifyFunction(*reinterpret_cast<Function *>(FR), &OS); },
      sink, user);
}

/// Prints functions one at a time with one module-wide slot tracker, so
/// that printing each function costs its own size, not the module's (a
/// fresh `Function::print` numbers the whole module first). Global values
/// print by name. Metadata is numbered as functions are printed (the
/// tracker does not walk every instruction of the module first): the
/// module's own metadata first, then each function's in the order they are
/// printed, a node keeping its number for the printer's life — so a pass
/// that adds loop metadata gives the new nodes the next numbers instead of
/// renumbering every later one, and its diff shows only what it changed.
/// A function attribute set the tracker has not seen prints as `#-1`: the
/// caller then rebuilds the printer (see `plab_printer_function`'s result).
///
/// A pass usually changes a few blocks of a function, and LLVM's printer
/// costs the whole function's size (it tracks the column of every
/// character). So the printer keeps each function's text by block, with a
/// hash of everything the block's text is made of — its instructions and
/// their operands by identity, and the name or number of every local value
/// and block it mentions, predecessors included — and prints again only the
/// blocks whose hash changed (and the header when the function's own
/// attributes, arguments or metadata changed). The text is the one
/// `Value::print` gives, assembled from its parts. Functions with debug
/// records or address-taken blocks (text the hash would not cover) are
/// always printed whole. With PASSLAB_PRINTER_CHECK set, every assembled
/// text is compared with a whole print and the differences counted
/// (`plab_printer_stats`).
namespace {
struct BlockText {
  uint64_t Hash;
  std::string Text;
};
struct FunctionText {
  uint64_t HeaderHash;
  std::string Header;
  DenseMap<const BasicBlock *, BlockText> Blocks;
};
uint64_t PrinterWhole = 0, PrinterAssembled = 0, PrinterBlocks = 0, PrinterMismatches = 0;
} // namespace

// A buffered stream into a string. LLVM's printer wraps what it is given in
// a formatted_raw_ostream, which is buffered only when its target is:
// raw_string_ostream is not, and every token then went through a virtual
// write and a string append.
class BufferedString : public raw_ostream {
  std::string &S;
  void write_impl(const char *P, size_t N) override { S.append(P, N); }
  uint64_t current_pos() const override { return S.size(); }

public:
  explicit BufferedString(std::string &S) : S(S) {}
  ~BufferedString() override { flush(); }
};

struct Printer {
  ModuleSlotTracker MST;
  DenseMap<const Function *, FunctionText> Texts;
  const Function *Other = nullptr; // a function that is never printed by blocks
  bool Check;
  explicit Printer(const Module *M)
      : MST(M, /*ShouldInitializeAllMetadata=*/false), Check(getenv("PASSLAB_PRINTER_CHECK") != nullptr) {}

  bool stale(StringRef S) { return S.contains("<0x") || S.contains("#-1"); }

  std::string whole(const Function &F) {
    std::string S;
    {
      BufferedString OS(S);
      // Value::print with a tracker; Function::print would build a new one.
      static_cast<const Value &>(F).print(OS, MST);
    }
    return S;
  }

  // Makes the tracker number F afresh (it skips a function it believes it
  // holds, which may have changed since): through another function first.
  bool incorporate(const Function &F) {
    if (!Other || Other == &F) {
      Other = nullptr;
      for (const Function &G : *F.getParent())
        if (&G != &F) {
          Other = &G;
          break;
        }
    }
    if (!Other)
      return false;
    MST.incorporateFunction(*Other);
    MST.incorporateFunction(F);
    return true;
  }

  void label(Hasher &Hs, const Value *V) {
    if (V->hasName()) {
      Hs.str(V->getName());
    } else {
      Hs.add(0x51u);
      Hs.add(static_cast<uint64_t>(static_cast<int64_t>(MST.getLocalSlot(V))));
    }
  }

  uint64_t blockHash(const BasicBlock &BB) {
    Hasher Hs;
    Hs.ptr(&BB);
    label(Hs, &BB);
    Hs.add(BB.isEntryBlock());
    for (const BasicBlock *P : predecessors(&BB)) {
      Hs.ptr(P);
      label(Hs, P);
    }
    for (const Instruction &I : BB) {
      hashInstruction(Hs, I);
      if (!I.getType()->isVoidTy())
        label(Hs, &I);
      for (const Use &U : I.operands()) {
        const Value *V = U.get();
        if (isa<Instruction>(V) || isa<Argument>(V) || isa<BasicBlock>(V))
          label(Hs, V);
      }
      if (const auto *P = dyn_cast<PHINode>(&I))
        for (const BasicBlock *In : P->blocks())
          label(Hs, In);
    }
    return Hs.H;
  }

  uint64_t headerHash(const Function &F) {
    Hasher Hs;
    hashHeader(Hs, F);
    for (const Argument &A : F.args())
      label(Hs, &A);
    return Hs.H;
  }

  // What making an AssemblyWriter costs, in instructions printed (it walks
  // the module's global objects; printing an instruction costs about as
  // much as walking a few hundred of them).
  size_t WriterCost = 0;
  size_t writerCost(const Function &F) {
    if (!WriterCost) {
      size_t Objects = 0;
      for (const GlobalObject &GO : F.getParent()->global_objects()) {
        (void)GO;
        ++Objects;
      }
      WriterCost = 1 + Objects / 200;
    }
    return WriterCost;
  }

  static bool printable(const Function &F) {
    for (const BasicBlock &BB : F) {
      if (BB.hasAddressTaken())
        return false;
      for (const Instruction &I : BB)
        if (I.hasDbgRecords())
          return false;
    }
    return true;
  }

  // Splits a whole print into the header and one text per block; false
  // when it does not split as expected.
  static bool split(const Function &F, StringRef S, FunctionText &T) {
    size_t Open = S.find(" {\n");
    if (Open == StringRef::npos || !S.ends_with("}\n"))
      return false;
    T.Header = S.substr(0, Open).str();
    StringRef Rest = S.substr(Open + 2, S.size() - Open - 4);
    auto BB = F.begin();
    size_t Start = 0;
    for (size_t K = 1; K < Rest.size(); ++K) {
      if (Rest[K] == '\n' && Rest[K - 1] == '\n') {
        if (BB == F.end())
          return false;
        T.Blocks[&*BB++] = {0, Rest.substr(Start, K - Start).str()};
        Start = K;
      }
    }
    if (BB == F.end())
      return false;
    T.Blocks[&*BB++] = {0, Rest.substr(Start).str()};
    return BB == F.end();
  }

  // The text of F, or false when the tracker is stale.
  bool print(const Function &F, std::string &Out) {
    if (F.isDeclaration() || !printable(F) || !incorporate(F)) {
      Texts.erase(&F);
      Out = whole(F);
      ++PrinterWhole;
      return !stale(Out);
    }
    uint64_t H = headerHash(F);
    SmallVector<uint64_t, 64> Hashes;
    for (const BasicBlock &BB : F)
      Hashes.push_back(blockHash(BB));
    auto It = Texts.find(&F);
    // Each block printed on its own costs a walk over the module's global
    // objects (LLVM's AssemblyWriter collects comdats when it is made):
    // when many blocks changed, one whole print is cheaper.
    bool ByBlocks = It != Texts.end() && It->second.HeaderHash == H;
    if (ByBlocks) {
      size_t Changed = 0, ChangedSize = 0, Size = 0, K = 0;
      for (const BasicBlock &BB : F) {
        size_t N = BB.size();
        Size += N;
        auto Old = It->second.Blocks.find(&BB);
        if (Old == It->second.Blocks.end() || Old->second.Hash != Hashes[K]) {
          ++Changed;
          ChangedSize += N;
        }
        ++K;
      }
      ByBlocks = Changed * writerCost(F) + ChangedSize < Size + writerCost(F);
    }
    if (!ByBlocks) {
      // New here, its header changed, or too many blocks did: print it
      // whole, and keep its parts for next time.
      Out = whole(F);
      ++PrinterWhole;
      if (stale(Out))
        return false;
      FunctionText T;
      T.HeaderHash = H;
      if (split(F, Out, T)) {
        size_t K = 0;
        for (const BasicBlock &BB : F)
          T.Blocks[&BB].Hash = Hashes[K++];
        Texts[&F] = std::move(T);
      } else {
        Texts.erase(&F);
      }
      incorporate(F);
      return true;
    }
    FunctionText &T = It->second;
    DenseMap<const BasicBlock *, BlockText> Blocks;
    Out = T.Header;
    Out += " {";
    size_t K = 0;
    for (const BasicBlock &BB : F) {
      uint64_t BH = Hashes[K++];
      auto Old = T.Blocks.find(&BB);
      if (Old != T.Blocks.end() && Old->second.Hash == BH) {
        Out += Old->second.Text;
        Blocks[&BB] = std::move(Old->second);
        continue;
      }
      std::string S;
      {
        BufferedString OS(S);
        static_cast<const Value &>(BB).print(OS, MST);
      }
      ++PrinterBlocks;
      if (stale(S)) {
        Texts.erase(It);
        return false;
      }
      Out += S;
      Blocks[&BB] = {BH, std::move(S)};
    }
    Out += "}\n";
    T.Blocks = std::move(Blocks);
    ++PrinterAssembled;
    if (Check) {
      std::string W = whole(F);
      if (W != Out) {
        ++PrinterMismatches;
        errs() << "passlab printer: assembled text of " << F.getName() << " differs from a whole print\n";
        Out = W;
      }
      incorporate(F);
    }
    return true;
  }
};

Printer *plab_printer_new(LLVMModuleRef M) { return new Printer(unwrapM(M)); }

void plab_printer_free(Printer *P) { delete P; }

/// Sends the text of `F`. Returns false when the tracker was stale (some
/// metadata or attribute group had no number: an address, or `#-1`): the
/// text is then not sent and the caller should rebuild the printer and ask
/// again.
bool plab_printer_function(Printer *P, LLVMValueRef FR, plab_sink sink, void *user) {
  const Function &F = *reinterpret_cast<Function *>(FR);
  std::string S;
  bool Fresh = false;
  if (!guarded([&] { Fresh = P->print(F, S); })) {
    sendFatal(sink, user);
    return true;
  }
  if (!Fresh)
    return false;
  send(sink, user, S);
  return true;
}

/// How functions were printed since the process started: whole, assembled
/// from blocks, blocks printed, and (under PASSLAB_PRINTER_CHECK) assembled
/// texts that differed from a whole print.
void plab_printer_stats(uint64_t *whole, uint64_t *assembled, uint64_t *blocks, uint64_t *mismatches) {
  *whole = PrinterWhole;
  *assembled = PrinterAssembled;
  *blocks = PrinterBlocks;
  *mismatches = PrinterMismatches;
}

} // extern "C"
