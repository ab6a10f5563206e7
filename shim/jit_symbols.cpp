// What the JIT needs to know before it compiles: a module's symbols,
// what it calls outside itself, its constructors (see shim.cpp).

#include "shim.h"

extern "C" {

// ---------------------------------------------------------------------------
// What the JIT needs to know before it compiles.

namespace {
// The name the dynamic linker knows a global value by (no `\1` marker).
std::string linkName(const GlobalValue &G) {
  StringRef N = G.getName();
  if (N.starts_with("\1"))
    N = N.drop_front();
  return N.str();
}

// A declaration (not an intrinsic) that neither the module nor this process
// (the C library and everything else loaded) defines.
bool unresolved(const GlobalValue &G) {
  if (!G.isDeclaration() || G.getName().starts_with("llvm."))
    return false;
  if (const auto *F = dyn_cast<Function>(&G))
    if (F->isIntrinsic())
      return false;
  // A weak reference that nothing defines is null, as the static linker
  // makes it (optional hooks: `if (&hook) hook();`).
  if (G.hasExternalWeakLinkage())
    return false;
  std::string Name = linkName(G);
  // The JIT defines a program's `exit`, `atexit` and `__cxa_atexit` itself
  // (src/jit/mod.rs, `link`); glibc does not even export `atexit`
  // (libc_nonshared.a has it).
  if (Name == "exit" || Name == "atexit" || Name == "__cxa_atexit")
    return false;
  return dlsym(RTLD_DEFAULT, Name.c_str()) == nullptr;
}

// Whether `G` is the C runtime's module handle, `__dso_handle` (crtbegin.o
// defines it, hidden, so this process cannot give it): a program's one
// stands in for it (plab_stub_unresolved), and nothing reaching it is
// refused.
static bool runtimeHandle(const GlobalValue &G) {
  return isa<GlobalVariable>(G) && G.getName() == "__dso_handle";
}

// The global values `V` refers to, through constant expressions too.
void references(const Value *V, SmallPtrSetImpl<const Constant *> &Seen,
                SmallVectorImpl<const GlobalValue *> &Out) {
  const auto *C = dyn_cast<Constant>(V);
  if (!C || !Seen.insert(C).second)
    return;
  if (const auto *G = dyn_cast<GlobalValue>(C)) {
    Out.push_back(G);
    return;
  }
  if (const auto *BA = dyn_cast<BlockAddress>(C)) {
    Out.push_back(BA->getFunction());
    return;
  }
  for (const Use &U : C->operands())
    references(U.get(), Seen, Out);
}
} // namespace

namespace {
// For each defined function of `M` that reaches (by calls or references,
// through other functions and variables' initializers) global values that
// `label` names (a non-empty label), sends "FUNCTION\tLABEL,LABEL\n".
void reaching(Module &M, function_ref<std::string(const GlobalValue &)> label, plab_sink sink,
              void *user) {
  DenseMap<const GlobalValue *, SmallVector<const GlobalValue *, 8>> Refs;
  for (const Function &F : M) {
    if (F.isDeclaration())
      continue;
    SmallPtrSet<const Constant *, 32> Seen;
    auto &Out = Refs[&F];
    for (const BasicBlock &BB : F)
      for (const Instruction &I : BB)
        for (const Use &U : I.operands())
          references(U.get(), Seen, Out);
  }
  for (const GlobalVariable &G : M.globals())
    if (G.hasInitializer()) {
      SmallPtrSet<const Constant *, 32> Seen;
      references(G.getInitializer(), Seen, Refs[&G]);
    }
  for (const GlobalAlias &A : M.aliases()) {
    SmallPtrSet<const Constant *, 32> Seen;
    references(A.getAliasee(), Seen, Refs[&A]);
  }
  DenseMap<const GlobalValue *, std::string> Labels;
  auto labelOf = [&](const GlobalValue *G) -> const std::string & {
    auto It = Labels.find(G);
    if (It != Labels.end())
      return It->second;
    return Labels[G] = label(*G);
  };
  for (const Function &F : M) {
    if (F.isDeclaration())
      continue;
    SmallPtrSet<const GlobalValue *, 32> Visited;
    SmallVector<const GlobalValue *, 64> Work{&F};
    std::vector<std::string> Names;
    while (!Work.empty()) {
      const GlobalValue *G = Work.pop_back_val();
      if (!Visited.insert(G).second)
        continue;
      const std::string &L = labelOf(G);
      if (!L.empty())
        Names.push_back(L);
      auto It = Refs.find(G);
      if (It != Refs.end())
        for (const GlobalValue *R : It->second)
          Work.push_back(R);
    }
    if (Names.empty())
      continue;
    std::sort(Names.begin(), Names.end());
    std::string Line = F.getName().str() + "\t";
    for (size_t I = 0; I < Names.size(); ++I)
      Line += (I ? "," : "") + Names[I];
    send(sink, user, Line + "\n");
  }
}

// The C and C++ runtime every program gets from the system as well (glibc
// with the loader and the libraries it merged, libstdc++, libgcc): what a
// program binds there is what it would bind linked natively.
bool runtimeLibrary(StringRef File) {
  StringRef Base = File.rsplit('/').second.empty() ? File : File.rsplit('/').second;
  for (StringRef P : {"libc.so", "libm.so", "libmvec.so", "libstdc++.so", "libgcc_s.so", "ld-linux",
                      "ld64.so", "libpthread.so", "librt.so", "libdl.so", "linux-vdso.so"})
    if (Base.starts_with(P))
      return true;
  return false;
}

// Whether a runtime library (one loaded in this process) defines `Name`:
// the executable may hold a copy of a runtime variable (a copy relocation)
// or interpose a runtime function, and dladdr then names the executable.
bool runtimeDefines(const std::string &Name) {
  for (const char *Lib : {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"}) {
    void *H = dlopen(Lib, RTLD_LAZY | RTLD_NOLOAD);
    if (!H)
      continue;
    bool Found = dlsym(H, Name.c_str()) != nullptr;
    dlclose(H);
    if (Found)
      return true;
  }
  return false;
}

// For a declaration this process defines outside the C/C++ runtime (and
// that the JIT does not define itself), "NAME=FILE": the shared object (or
// executable) its definition comes from; otherwise "".
std::string hostBound(const GlobalValue &G) {
  if (!G.isDeclaration() || G.getName().starts_with("llvm.") || runtimeHandle(G))
    return "";
  if (const auto *F = dyn_cast<Function>(&G))
    if (F->isIntrinsic())
      return "";
  std::string Name = linkName(G);
  // The JIT's own definitions (src/jit/mod.rs, `link`) are not looked up.
  if (Name == "exit" || Name == "atexit" || Name == "__cxa_atexit" || Name == "malloc")
    return "";
  void *Address = dlsym(RTLD_DEFAULT, Name.c_str());
  if (!Address)
    return "";
  Dl_info Info{};
  StringRef File = dladdr(Address, &Info) && Info.dli_fname ? Info.dli_fname : "";
  if (runtimeLibrary(File) || runtimeDefines(Name))
    return "";
  // The executable's own path is long and machine-specific; its file name
  // says enough.
  StringRef Base = File.rsplit('/').second.empty() ? File : File.rsplit('/').second;
  return Name + "=" + (Base.empty() ? "this process" : Base.str());
}
} // namespace

/// For each defined function that reaches (by calls or references, through
/// other functions and variables' initializers) a symbol defined neither in
/// the module nor in this process, sends "FUNCTION\tSYMBOL,SYMBOL\n".
void plab_unresolved(LLVMModuleRef MR, plab_sink sink, void *user) {
  reaching(
      *unwrapM(MR),
      [](const GlobalValue &G) {
        return unresolved(G) && !runtimeHandle(G) ? linkName(G) : std::string();
      },
      sink, user);
}

/// For each defined function that reaches a symbol the module does not
/// define but this process does, outside the C/C++ runtime (libz, LLVM,
/// passlab's own executable…), sends "FUNCTION\tSYMBOL=FILE,SYMBOL=FILE\n":
/// a program run in the JIT would bind the host's definition there.
void plab_host_bound(LLVMModuleRef MR, plab_sink sink, void *user) {
  reaching(*unwrapM(MR), hostBound, sink, user);
}

/// Defines every unresolved declaration so that the module links: a
/// function prints that it was reached and aborts, a variable is zero. (The
/// JIT refuses to call a function that reaches one of them; these only
/// matter for one reached through a pointer at run time.)
void plab_stub_unresolved(LLVMModuleRef MR) {
  Module &M = *unwrapM(MR);
  LLVMContext &C = M.getContext();
  std::vector<Function *> Fs;
  for (Function &F : M)
    if (unresolved(F))
      Fs.push_back(&F);
  for (Function *F : Fs) {
    IRBuilder<> B(BasicBlock::Create(C, "entry", F));
    std::string Msg = "passlab: the program reached " + linkName(*F) +
                      ", which is defined neither in the module nor in the process\n";
    FunctionCallee Write = M.getOrInsertFunction(
        "write", FunctionType::get(B.getInt64Ty(), {B.getInt32Ty(), B.getPtrTy(), B.getInt64Ty()}, false));
    FunctionCallee Abort = M.getOrInsertFunction("abort", FunctionType::get(B.getVoidTy(), false));
    B.CreateCall(Write, {B.getInt32(2), B.CreateGlobalStringPtr(Msg), B.getInt64(Msg.size())});
    B.CreateCall(Abort);
    B.CreateUnreachable();
    F->setLinkage(GlobalValue::InternalLinkage);
  }
  for (GlobalVariable &G : M.globals())
    if (unresolved(G)) {
      G.setInitializer(Constant::getNullValue(G.getValueType()));
      G.setLinkage(GlobalValue::InternalLinkage);
    }
}

/// The entries of the static constructor or destructor list `Name`
/// (`llvm.global_ctors`, `llvm.global_dtors`) of `M`: each function with
/// its priority, in the list's order (null entries left out).
static std::vector<std::pair<uint64_t, Function *>> structors(Module &M, StringRef Name) {
  std::vector<std::pair<uint64_t, Function *>> Out;
  GlobalVariable *GV = M.getNamedGlobal(Name);
  if (!GV || !GV->hasInitializer())
    return Out;
  auto *List = dyn_cast<ConstantArray>(GV->getInitializer());
  if (!List)
    return Out;
  for (Value *Op : List->operands()) {
    auto *Entry = dyn_cast<ConstantStruct>(Op);
    if (!Entry || Entry->getNumOperands() < 2)
      continue;
    auto *Priority = dyn_cast<ConstantInt>(Entry->getOperand(0));
    auto *F = dyn_cast<Function>(Entry->getOperand(1)->stripPointerCasts());
    if (Priority && F)
      Out.push_back({Priority->getZExtValue(), F});
  }
  return Out;
}

/// Adds `void NAME()`, which does for a program what the C runtime does
/// before `main` (the JIT has no platform to do it): calls `M`'s static
/// constructors (`llvm.global_ctors`: C++'s global objects,
/// `__attribute__((constructor))`) in ascending priority, in the list's
/// order among equals, having first given its static destructors
/// (`llvm.global_dtors`) to `atexit` in ascending priority, so that they
/// run at exit in descending priority (LLVM's LangRef) and after every
/// handler given later (glibc's order). Whether there was anything to run.
bool plab_add_static_init(LLVMModuleRef MR, const char *Name) {
  Module &M = *unwrapM(MR);
  auto Ctors = structors(M, "llvm.global_ctors");
  auto Dtors = structors(M, "llvm.global_dtors");
  if (Ctors.empty() && Dtors.empty())
    return false;
  auto ByPriority = [](const auto &A, const auto &B) { return A.first < B.first; };
  std::stable_sort(Ctors.begin(), Ctors.end(), ByPriority);
  std::stable_sort(Dtors.begin(), Dtors.end(), ByPriority);
  LLVMContext &C = M.getContext();
  Function *Init = Function::Create(FunctionType::get(Type::getVoidTy(C), false),
                                    GlobalValue::ExternalLinkage, Name, M);
  IRBuilder<> B(BasicBlock::Create(C, "entry", Init));
  // The destructors first: glibc's exit runs the static destructors
  // (`.fini_array`) after every handler registered from the constructors
  // on, as the handler it registered before them.
  FunctionCallee AtExit = M.getOrInsertFunction(
      "atexit", FunctionType::get(B.getInt32Ty(), {B.getPtrTy()}, false));
  for (auto &[Priority, F] : Dtors)
    B.CreateCall(AtExit, {F});
  for (auto &[Priority, F] : Ctors)
    B.CreateCall(F->getFunctionType(), F);
  B.CreateRetVoid();
  return true;
}

/// An ORC LLJIT (as `LLVMOrcCreateLLJIT` makes one, for the C API's other
/// functions) with no platform: no static initializers run by the JIT (the
/// JIT never ran them) and no `atexit` of its own, which would clash with
/// the one the JIT gives programs (src/jit/mod.rs, `link`). On failure:
/// null, and the message to `sink`.
void *plab_create_lljit(plab_sink sink, void *user) {
  auto J = orc::LLJITBuilder().setPlatformSetUp(orc::setUpInactivePlatform).create();
  if (!J) {
    send(sink, user, toString(J.takeError()));
    return nullptr;
  }
  return J->release();
}

/// Sets the target CPU and features of every defined function (as clang's
/// `-march`/`-mcpu` would have), where given (non-empty); the cost models of
/// LLVM's IR passes and the code generator read them from there.
void plab_set_target(LLVMModuleRef MR, const char *cpu, const char *features) {
  for (Function &F : *unwrapM(MR)) {
    if (F.isDeclaration())
      continue;
    if (cpu && *cpu) {
      F.addFnAttr("target-cpu", cpu);
      F.addFnAttr("tune-cpu", cpu);
    }
    if (features && *features)
      F.addFnAttr("target-features", features);
  }
}

/// Whether `cpu` names a processor of `triple`'s target.
bool plab_cpu_known(const char *triple, const char *cpu) {
  initTargets();
  std::string T = (triple && *triple) ? std::string(triple) : sys::getDefaultTargetTriple();
  std::string Err;
  const Target *Tgt = TargetRegistry::lookupTarget(T, Err);
  if (!Tgt)
    return false;
  std::unique_ptr<MCSubtargetInfo> STI(Tgt->createMCSubtargetInfo(T, "", ""));
  return STI && STI->isCPUStringValid(cpu);
}

/// Whether some block of `M` has its address taken (`blockaddress`, as in
/// a computed-goto table: `static void *t[] = {&&a, &&b}`). CloneModule
/// maps global initializers before it clones function bodies, so such a
/// `blockaddress` gets a placeholder block that is never replaced: the copy
/// verifies and prints fine but cannot be compiled ("Undefined temporary
/// symbol"). Modules like that are copied through bitcode instead.
bool plab_module_takes_block_addresses(LLVMModuleRef MR) {
  for (Function &F : *unwrapM(MR))
    for (BasicBlock &BB : F)
      if (BB.hasAddressTaken())
        return true;
  return false;
}

/// Whether `M` is position-independent code (its "PIC Level" flag, which
/// clang sets for -fPIC and -fPIE).
bool plab_module_pic(LLVMModuleRef M) {
  return unwrapM(M)->getPICLevel() != PICLevel::NotPIC;
}

/// Bitcode of `M`, with use-list order so that reading it back gives the
/// same module.
void plab_write_bitcode(LLVMModuleRef M, bool uselist_order, plab_sink sink, void *user) {
  SmallVector<char, 0> Buf;
  raw_svector_ostream OS(Buf);
  if (guarded([&] { WriteBitcodeToFile(*unwrapM(M), OS, uselist_order); }))
    send(sink, user, StringRef(Buf.data(), Buf.size()));
}

} // extern "C"
