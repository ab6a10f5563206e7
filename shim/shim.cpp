// passlab's C++ shim over LLVM 19.
//
// The LLVM C API covers most of what passlab needs; this file adds the few
// things it lacks, behind a small C ABI that `src/ffi.rs` declares:
//
// * a pass runner that keeps one PassBuilder and its analysis managers
//   across runs (LLVMRunPasses rebuilds all of them on
//   every call, which dominates the cost of one cheap pass on a small module);
// * PassInstrumentationCallbacks forwarded to Rust, so that instruments see
//   every pass LLVM runs inside a pipeline;
// * IR parsing with structured diagnostics (line, column, source line);
// * bitcode with use-list order (an exact snapshot for rollback);
// * a content fingerprint, IR statistics and the list of pass names.
//
// Nothing here may throw or unwind: LLVM is built with -fno-exceptions and
// the Rust callbacks catch their own panics.

#include "llvm/ADT/Any.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LazyCallGraph.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/LoopInfo.h"
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

void send(plab_sink sink, void *user, StringRef s) {
  if (sink)
    sink(user, s.data(), s.size());
}

void initTargets() { plab_init_targets(); }

// ---------------------------------------------------------------------------
// Instrumentation: which IR unit a callback's `Any` holds, and its name.


int unitOf(Any IR, const void *&handle) {
  if (const auto *M = any_cast<const Module *>(&IR)) {
    handle = *M;
    return PLAB_MODULE;
  }
  if (const auto *F = any_cast<const Function *>(&IR)) {
    handle = *F;
    return PLAB_FUNCTION;
  }
  if (const auto *C = any_cast<const LazyCallGraph::SCC *>(&IR)) {
    handle = *C;
    return PLAB_CGSCC;
  }
  if (const auto *L = any_cast<const Loop *>(&IR)) {
    handle = *L;
    return PLAB_LOOP;
  }
  handle = nullptr;
  return PLAB_OTHER;
}

// The pass a run on this thread started last and its IR unit, copied as
// it starts (a crash leaves the IR in whatever state the pass made it):
// what a crash report names.
struct CurrentPass {
  const char *Name = nullptr; // a registered pass name: static, or the runner's
  size_t NameLength = 0;
  int Unit = PLAB_OTHER;
  char UnitName[256];
  size_t UnitLength = 0;
};

CurrentPass &currentPass() {
  thread_local CurrentPass C;
  return C;
}

// Notes `Name` on `IR` as the pass running now; cheap, since it runs before
// every pass: names are referred to or copied, never built.
void noteCurrentPass(StringRef Name, Any IR) {
  CurrentPass &C = currentPass();
  C.Name = Name.data();
  C.NameLength = Name.size();
  const void *H;
  C.Unit = unitOf(IR, H);
  StringRef U;
  if (C.Unit == PLAB_MODULE)
    U = static_cast<const Module *>(H)->getModuleIdentifier();
  else if (C.Unit == PLAB_FUNCTION)
    U = static_cast<const Function *>(H)->getName();
  else if (C.Unit == PLAB_LOOP)
    U = static_cast<const Loop *>(H)->getHeader()->getParent()->getName();
  C.UnitLength = std::min(U.size(), sizeof C.UnitName);
  memcpy(C.UnitName, U.data(), C.UnitLength);
}

// "the pass 'licm' crashed on a loop in function 'f': ..."
std::string crashReport() {
  const CurrentPass &C = currentPass();
  std::string Report = "LLVM crashed";
  if (C.Name) {
    Report = "the pass '" + std::string(C.Name, C.NameLength) + "' crashed";
    std::string U(C.UnitName, C.UnitLength);
    switch (C.Unit) {
    case PLAB_MODULE:
      Report += " on module '" + U + "'";
      break;
    case PLAB_FUNCTION:
      Report += " on function '" + U + "'";
      break;
    case PLAB_LOOP:
      Report += " on a loop in function '" + U + "'";
      break;
    case PLAB_CGSCC:
      Report += " on a call-graph SCC";
      break;
    }
  }
  return Report + ": " + plab::fatalMessage();
}

// The name of an IR unit: the module identifier, the function, the SCC as
// LLVM prints it, or `function:header` for a loop. Module and function names
// are returned in place; the others are built in `name`.
StringRef unitName(int Unit, const void *H, std::string &name) {
  switch (Unit) {
  case PLAB_MODULE:
    return static_cast<const Module *>(H)->getModuleIdentifier();
  case PLAB_FUNCTION:
    return static_cast<const Function *>(H)->getName();
  }
  name.clear();
  switch (Unit) {
  case PLAB_CGSCC:
    name = static_cast<const LazyCallGraph::SCC *>(H)->getName();
    break;
  case PLAB_LOOP: {
    const BasicBlock *Hd = static_cast<const Loop *>(H)->getHeader();
    name = Hd->getParent()->getName().str() + ":";
    if (Hd->hasName()) {
      name += Hd->getName().str();
    } else {
      // An unnamed header: its position among the function's blocks.
      unsigned I = 0;
      for (const BasicBlock &BB : *Hd->getParent()) {
        if (&BB == Hd)
          break;
        ++I;
      }
      name += "block" + std::to_string(I);
    }
    break;
  }
  }
  return name;
}

const Function *functionOf(Any IR) {
  if (const auto *F = any_cast<const Function *>(&IR))
    return *F;
  if (const auto *L = any_cast<const Loop *>(&IR))
    return (*L)->getHeader()->getParent();
  return nullptr;
}

// ---------------------------------------------------------------------------
// Pass plugins (as `opt -load-pass-plugin`): loaded once, for the process;
// every PassBuilder made afterwards gets their callbacks.

std::vector<std::unique_ptr<PassPlugin>> &plugins() {
  static std::vector<std::unique_ptr<PassPlugin>> P;
  return P;
}

// The pipeline names of plugin pass classes, which LLVM's class-to-name map
// does not know (plugins rarely register them): filled when a plugin's
// passes are found, so instruments can name them.
StringMap<std::string> &pluginClassNames() {
  static StringMap<std::string> M;
  return M;
}

// ---------------------------------------------------------------------------
// The runner: one PassBuilder and its analysis managers, kept across runs.

// -Oz's inline-and-simplify unit with the inliner's options, as
// `scc-oz-module-inliner<inline-threshold=-20;inlinehint-threshold=-20>`:
// what `opt-19 -inline-threshold=-20 -inlinehint-threshold=-20
// -passes=scc-oz-module-inliner` runs. LLVM reads those options when it
// builds the unit, so the pass sets them (as opt's command line would),
// builds and runs the unit, and puts them back to unset. The parameters
// are the options' names; each is optional.
namespace {
const char *const OzInlinerName = "scc-oz-module-inliner";
const char *const OzInlinerOptions[] = {"inline-threshold", "inlinehint-threshold"};

// The options are the process's: while a pipeline holding the unit runs,
// no other pipeline may (its inliner would read them), so a run takes this
// lock exclusively when its pipeline holds the unit and shared otherwise
// (threads of one process: tests, Python). Parsing notes the unit in
// `ParsedOzInlinerOptions` (per thread).
//
// A fork must not copy the options set, nor the lock held by a thread the
// child will not have: before a fork the forking thread takes the lock
// alone (waiting for other threads' runs), the parent then lets it go,
// and the child starts with a lock of its own (the old one cannot be
// unlocked there: its holder's thread id is the parent's).
std::shared_mutex *InlinerOptionsLock = new std::shared_mutex;
thread_local bool ParsedOzInlinerOptions = false;
// Runs of this thread in progress: a run inside a run (an instrument's
// hook running a pipeline) already holds the lock.
thread_local int RunsInProgress = 0;
thread_local bool ForkHoldsLock = false;

void beforeFork() {
  if (RunsInProgress == 0) {
    InlinerOptionsLock->lock();
    ForkHoldsLock = true;
  }
}
void afterForkInParent() {
  if (ForkHoldsLock) {
    ForkHoldsLock = false;
    InlinerOptionsLock->unlock();
  }
}
void afterForkInChild() {
  // The only thread: the old lock is left as it is.
  ForkHoldsLock = false;
  InlinerOptionsLock = new std::shared_mutex;
}
[[maybe_unused]] const int ForkHandlers = pthread_atfork(beforeFork, afterForkInParent, afterForkInChild);

// Puts the unit's options back to unset (after a run a fatal error
// abandoned, whose unit could not).
void resetOzInlinerOptions() {
  auto &Registered = cl::getRegisteredOptions();
  for (const char *Name : OzInlinerOptions) {
    auto It = Registered.find(Name);
    if (It != Registered.end())
      It->second->reset();
  }
}

struct OzInlinerWithOptions : PassInfoMixin<OzInlinerWithOptions> {
  PassBuilder *PB;
  // (option, value) in the order written.
  SmallVector<std::pair<std::string, int>, 2> Options;

  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM) {
    auto &Registered = cl::getRegisteredOptions();
    SmallVector<cl::Option *, 2> Set;
    for (auto &[Name, Value] : Options) {
      auto It = Registered.find(Name);
      if (It == Registered.end())
        report_fatal_error("LLVM has no option -" + Twine(Name));
      It->second->addOccurrence(1, Name, std::to_string(Value));
      Set.push_back(It->second);
    }
    struct Unset {
      SmallVector<cl::Option *, 2> &Set;
      ~Unset() {
        for (cl::Option *O : Set)
          O->reset();
      }
    } Restore{Set};
    ModuleInlinerWrapperPass Unit =
        PB->buildInlinerPipeline(OptimizationLevel::Oz, ThinOrFullLTOPhase::None);
    return Unit.run(M, MAM);
  }

  void printPipeline(raw_ostream &OS, function_ref<StringRef(StringRef)>) {
    OS << OzInlinerName << '<';
    for (size_t I = 0; I < Options.size(); ++I)
      OS << (I ? ";" : "") << Options[I].first << '=' << Options[I].second;
    OS << '>';
  }

  static bool isRequired() { return false; }
};

// Parses `scc-oz-module-inliner<NAME=INT;...>` (NAME among
// OzInlinerOptions, each at most once).
bool parseOzInliner(PassBuilder *PB, StringRef Name, ModulePassManager &MPM) {
  if (!Name.consume_front(OzInlinerName) || !Name.consume_front("<") || !Name.consume_back(">"))
    return false;
  OzInlinerWithOptions P;
  P.PB = PB;
  SmallVector<StringRef, 2> Parts;
  Name.split(Parts, ';', -1, false);
  if (Parts.empty())
    return false;
  for (StringRef Part : Parts) {
    auto [Key, Value] = Part.split('=');
    int V;
    if (Value.getAsInteger(10, V))
      return false;
    if (llvm::none_of(OzInlinerOptions, [&](const char *O) { return Key == O; }))
      return false;
    if (llvm::any_of(P.Options, [&](auto &O) { return O.first == Key; }))
      return false;
    P.Options.push_back({Key.str(), V});
  }
  MPM.addPass(std::move(P));
  ParsedOzInlinerOptions = true;
  return true;
}
} // namespace

struct Runner {
  std::unique_ptr<TargetMachine> TM;
  PassInstrumentationCallbacks PIC;
  std::unique_ptr<PassBuilder> PB;
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  const plab_hooks *Hooks = nullptr;
  // Reused buffer for the name of the IR unit passed to a hook.
  std::string Scratch;

  // Returns the pipeline name of a pass class, or "" for pass managers,
  // adaptors and other unnamed infrastructure.
  StringRef nameOf(StringRef ClassName) {
    // Class names are static strings (getTypeName<PassT>()): cache by
    // address, so a callback does not hash the name every time.
    auto It = NameCache.find(ClassName.data());
    if (It != NameCache.end() && It->second.first == ClassName.size())
      return It->second.second;
    StringRef Name = PIC.getPassNameForClassName(ClassName);
    if (Name.empty()) {
      auto P = pluginClassNames().find(ClassName);
      if (P != pluginClassNames().end())
        Name = P->second;
    }
    // Several pipeline names build this class; the map keeps the first
    // registered (alphabetically), an ML-advisor variant. Report the name
    // default<On> pipelines are described with.
    if (Name == "inliner-ml-advisor-release")
      Name = "inliner-wrapper";
    NameCache[ClassName.data()] = {ClassName.size(), Name};
    return Name;
  }
  DenseMap<const char *, std::pair<size_t, StringRef>> NameCache;

  void registerCallbacks() {
    // First, so that it has run when a hook or the pass crashes.
    PIC.registerBeforeNonSkippedPassCallback([this](StringRef P, Any IR) {
      StringRef Name = nameOf(P);
      if (!Name.empty())
        noteCurrentPass(Name, IR);
    });
    PIC.registerShouldRunOptionalPassCallback([this](StringRef P, Any IR) {
      // What LLVM's OptNoneInstrumentation does: optional passes skip
      // functions (and their loops) marked optnone.
      if (const Function *F = functionOf(IR))
        if (F->hasOptNone())
          return false;
      if (!Hooks || !Hooks->should_run)
        return true;
      StringRef Name = nameOf(P);
      if (Name.empty())
        return true;
      const void *H;
      int Unit = unitOf(IR, H);
      StringRef U = unitName(Unit, H, Scratch);
      plab::InRust Rust;
      return Hooks->should_run(Hooks->user, Name.data(), Name.size(), Unit, U.data(), U.size(), H);
    });
    PIC.registerBeforeNonSkippedPassCallback([this](StringRef P, Any IR) {
      if (!Hooks || !Hooks->before)
        return;
      StringRef Name = nameOf(P);
      if (Name.empty())
        return;
      const void *H;
      int Unit = unitOf(IR, H);
      StringRef U = unitName(Unit, H, Scratch);
      plab::InRust Rust;
      Hooks->before(Hooks->user, Name.data(), Name.size(), Unit, U.data(), U.size(), H);
    });
    PIC.registerAfterPassCallback([this](StringRef P, Any IR, const PreservedAnalyses &PA) {
      if (!Hooks || !Hooks->after)
        return;
      StringRef Name = nameOf(P);
      if (Name.empty())
        return;
      const void *H;
      int Unit = unitOf(IR, H);
      plab::InRust Rust;
      Hooks->after(Hooks->user, Name.data(), Name.size(), Unit, H, false, PA.areAllPreserved());
    });
    PIC.registerAfterPassInvalidatedCallback([this](StringRef P, const PreservedAnalyses &PA) {
      if (!Hooks || !Hooks->after)
        return;
      StringRef Name = nameOf(P);
      if (Name.empty())
        return;
      plab::InRust Rust;
      Hooks->after(Hooks->user, Name.data(), Name.size(), PLAB_OTHER, nullptr, true,
                   PA.areAllPreserved());
    });
  }

  // Pipelines are parsed anew for every run: some passes are single-use
  // (ModuleInlinerWrapperPass moves its inner pass manager away in run()),
  // and parsing is cheap next to the PassBuilder and analysis registration
  // that the runner keeps.
  //
  // A `default<O1|O2|O3|Os|Oz>` element at the top level is built as clang
  // builds it (buildPerModuleDefaultPipeline), not parsed: LLVM 19's parser
  // sets the SLP vectorizer by the level (on at O2, O3, Os; off at O1, Oz)
  // whatever the tuning options say, so the parsed `default<Oz>` lacks the
  // SLP vectorizer that `clang -Oz` runs. The elements between are parsed
  // together, as one text.
  std::unique_ptr<ModulePassManager> parse(StringRef Text, plab_sink sink, void *user) {
    auto MPM = std::make_unique<ModulePassManager>();
    if (Text.trim().empty()) {
      // LLVM's own error for an empty pipeline.
      if (Error E = PB->parsePassPipeline(*MPM, Text)) {
        send(sink, user, toString(std::move(E)));
        return nullptr;
      }
      return MPM;
    }
    std::string Run;
    auto flush = [&]() -> bool {
      if (Run.empty())
        return true;
      Error E = PB->parsePassPipeline(*MPM, Run);
      Run.clear();
      if (E) {
        send(sink, user, toString(std::move(E)));
        return false;
      }
      return true;
    };
    int Depth = 0;
    size_t Start = 0;
    for (size_t I = 0; I <= Text.size(); ++I) {
      char C = I < Text.size() ? Text[I] : ',';
      if (C == '(' || C == '<')
        ++Depth;
      else if (C == ')' || C == '>')
        --Depth;
      if (C != ',' || Depth != 0)
        continue;
      StringRef Element = Text.slice(Start, I).trim();
      Start = I + 1;
      std::optional<OptimizationLevel> Level;
      if (Element == "default<O1>")
        Level = OptimizationLevel::O1;
      else if (Element == "default<O2>")
        Level = OptimizationLevel::O2;
      else if (Element == "default<O3>")
        Level = OptimizationLevel::O3;
      else if (Element == "default<Os>")
        Level = OptimizationLevel::Os;
      else if (Element == "default<Oz>")
        Level = OptimizationLevel::Oz;
      if (!Level) {
        if (!Run.empty())
          Run += ",";
        Run += Element.str();
        continue;
      }
      if (!flush())
        return nullptr;
      MPM->addPass(PB->buildPerModuleDefaultPipeline(*Level));
    }
    if (!flush())
      return nullptr;
    return MPM;
  }

  void clearAnalyses() {
    LAM.clear();
    FAM.clear();
    CGAM.clear();
    MAM.clear();
  }
};

} // namespace

namespace plab {

Recovery *&innermost() {
  thread_local Recovery *R = nullptr;
  return R;
}

int &rustDepth() {
  thread_local int D = 0;
  return D;
}

std::string &fatalMessage() {
  thread_local std::string M;
  return M;
}

namespace {
void onFatalError(void *, const char *Reason, bool) {
  Recovery *R = innermost();
  if (R && R->RustDepth == rustDepth()) {
    fatalMessage() = Reason ? Reason : "";
    std::longjmp(R->Jump, 1);
  }
  errs() << "LLVM ERROR: " << (Reason ? Reason : "") << "\n";
}
} // namespace

void installFatalHandler() {
  static bool Installed = [] {
    install_fatal_error_handler(onFatalError, nullptr);
    return true;
  }();
  (void)Installed;
}

int &crashSignal() {
  thread_local int S = 0;
  return S;
}

namespace {
const int CrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction PreviousActions[NSIG];

void onCrash(int Sig, siginfo_t *Info, void *Context) {
  // Only async-signal-safe work before the jump: thread-local reads and an
  // int written; the guard makes the message once it is back.
  Recovery *R = innermost();
  if (R && R->RustDepth == rustDepth()) {
    crashSignal() = Sig;
    std::longjmp(R->Jump, 1);
  }
  // Not inside a guard (or inside a Rust hook): what was there before.
  const struct sigaction &Old = PreviousActions[Sig];
  if ((Old.sa_flags & SA_SIGINFO) && Old.sa_sigaction) {
    Old.sa_sigaction(Sig, Info, Context);
    return;
  }
  if (!(Old.sa_flags & SA_SIGINFO) && Old.sa_handler != SIG_DFL && Old.sa_handler != SIG_IGN) {
    Old.sa_handler(Sig);
    return;
  }
  signal(Sig, SIG_DFL);
  raise(Sig);
}

// An alternate signal stack for this thread, freed with the thread, unless
// it has one (Rust's std gives its threads one).
struct AltStack {
  void *Memory = nullptr;
  AltStack() {
    stack_t Old;
    if (sigaltstack(nullptr, &Old) == 0 && !(Old.ss_flags & SS_DISABLE))
      return;
    const size_t Size = 1 << 16;
    Memory = malloc(Size);
    if (!Memory)
      return;
    stack_t S;
    S.ss_sp = Memory;
    S.ss_flags = 0;
    S.ss_size = Size;
    if (sigaltstack(&S, nullptr) != 0) {
      free(Memory);
      Memory = nullptr;
    }
  }
  ~AltStack() {
    if (!Memory)
      return;
    stack_t S;
    S.ss_sp = nullptr;
    S.ss_flags = SS_DISABLE;
    S.ss_size = 0;
    sigaltstack(&S, nullptr);
    free(Memory);
  }
};
} // namespace

void installCrashHandlers() {
  static bool Installed = [] {
    struct sigaction A;
    memset(&A, 0, sizeof A);
    A.sa_sigaction = onCrash;
    // NODEFER: the jump leaves the handler without returning, and the
    // signal must not stay blocked for the next crash.
    A.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&A.sa_mask);
    for (int Sig : CrashSignals)
      sigaction(Sig, &A, &PreviousActions[Sig]);
    return true;
  }();
  (void)Installed;
  thread_local AltStack Stack;
  (void)Stack;
}

// In a forked child whose crash signals are back at their defaults: the
// handlers again, with those defaults as what was there before.
void catchCrashesAgain() {
  // First: a process that never installed them does so here, with the
  // defaults as what was there before.
  installCrashHandlers();
  struct sigaction A;
  memset(&A, 0, sizeof A);
  A.sa_sigaction = onCrash;
  A.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&A.sa_mask);
  for (int Sig : CrashSignals) {
    struct sigaction Now;
    // Ours already: what it records as before stays (never itself).
    if (sigaction(Sig, nullptr, &Now) == 0 && (Now.sa_flags & SA_SIGINFO) &&
        Now.sa_sigaction == onCrash)
      continue;
    sigaction(Sig, &A, &PreviousActions[Sig]);
  }
}

namespace {
std::atomic<unsigned long> CrashesCaught{0};
} // namespace

void noteCrashCaught() { CrashesCaught.fetch_add(1, std::memory_order_relaxed); }

std::string describeCrash(int Signal) {
  switch (Signal) {
  case SIGSEGV:
    return "segmentation fault (SIGSEGV: an invalid memory access, or a stack overflow)";
  case SIGBUS:
    return "bus error (SIGBUS: an invalid memory access)";
  case SIGILL:
    return "illegal instruction (SIGILL: a trap, or code that should not be reached)";
  case SIGFPE:
    return "arithmetic exception (SIGFPE: an integer division by zero)";
  case SIGABRT:
    return "abort (SIGABRT: a failed assertion, or abort() called)";
  }
  return "signal " + std::to_string(Signal);
}

} // namespace plab

using plab::guarded;

namespace {
// Sends what a guard caught, as LLVM prints it (or the crash, in words).
void sendFatal(plab_sink sink, void *user) {
  if (plab::crashSignal() != 0)
    send(sink, user, "LLVM crashed: " + plab::fatalMessage());
  else
    send(sink, user, "LLVM ERROR: " + plab::fatalMessage());
}

// Keeps the errors passes report through the module's context during a
// run. With no handler of its own for them, LLVMContext::diagnose prints
// an error and calls exit(1): a profile reader given a file that is not a
// profile (memprof-use<profile-filename=notes.txt>: "invalid
// instrumentation profile data") would end the session. Everything else
// (warnings, remarks, and whether remarks are wanted) goes to the handler
// that was there before, so the remarks instrument sees what it saw.
struct ErrorKeeper : DiagnosticHandler {
  std::unique_ptr<DiagnosticHandler> Prev;
  std::string Errors;
  // False once the run is over but the keeper could not be taken out (a
  // handler installed during the run wraps it): it then passes errors on.
  bool Keeping = true;

  explicit ErrorKeeper(std::unique_ptr<DiagnosticHandler> P) : Prev(std::move(P)) {
    // What the C API reads back (LLVMContextGetDiagnosticHandler) stays
    // what it set.
    if (Prev) {
      DiagHandlerCallback = Prev->DiagHandlerCallback;
      DiagnosticContext = Prev->DiagnosticContext;
    }
  }

  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    if (Keeping && DI.getSeverity() == DS_Error) {
      std::string S;
      raw_string_ostream OS(S);
      DiagnosticPrinterRawOStream DP(OS);
      DI.print(DP);
      OS.flush();
      if (!Errors.empty())
        Errors += "; ";
      Errors += S;
      return true;
    }
    return Prev && Prev->handleDiagnostics(DI);
  }
  bool isAnalysisRemarkEnabled(StringRef P) const override {
    return Prev ? Prev->isAnalysisRemarkEnabled(P)
                : DiagnosticHandler::isAnalysisRemarkEnabled(P);
  }
  bool isMissedOptRemarkEnabled(StringRef P) const override {
    return Prev ? Prev->isMissedOptRemarkEnabled(P)
                : DiagnosticHandler::isMissedOptRemarkEnabled(P);
  }
  bool isPassedOptRemarkEnabled(StringRef P) const override {
    return Prev ? Prev->isPassedOptRemarkEnabled(P)
                : DiagnosticHandler::isPassedOptRemarkEnabled(P);
  }
  bool isAnyRemarkEnabled() const override {
    return Prev ? Prev->isAnyRemarkEnabled() : DiagnosticHandler::isAnyRemarkEnabled();
  }
};

// Installs an ErrorKeeper on `C` for as long as it lives (not inside a
// guard: a fatal error jumps over the destructors there, and the handler
// must come off all the same).
struct KeepErrors {
  LLVMContext &C;
  ErrorKeeper *Keeper;
  explicit KeepErrors(LLVMContext &Ctx) : C(Ctx) {
    auto K = std::make_unique<ErrorKeeper>(C.getDiagnosticHandler());
    Keeper = K.get();
    C.setDiagnosticHandler(std::move(K));
  }
  // The errors kept so far.
  const std::string &errors() const { return Keeper->Errors; }
  ~KeepErrors() {
    if (C.getDiagHandlerPtr() != Keeper) {
      // Wrapped by a handler put in during the run: left in place (it
      // belongs to the context now), passing everything on.
      Keeper->Keeping = false;
      return;
    }
    std::unique_ptr<DiagnosticHandler> Ours = C.getDiagnosticHandler();
    auto *K = static_cast<ErrorKeeper *>(Ours.get());
    C.setDiagnosticHandler(K->Prev ? std::move(K->Prev) : std::make_unique<DiagnosticHandler>());
  }
};
} // namespace

extern "C" {

/// Registers the native target (with its assembly printer and parser)
/// once per process. Every user of LLVM's target registry calls this first:
/// the runners, the in-process clang and the JIT. Registration is not
/// thread-safe, and clang compiling on one thread while another registered
/// the target crashed in `initAsmInfo` (a test thread race, seen in
/// tests/module.rs); a function-local static makes it happen once.
void plab_init_targets() {
  static bool Done = [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    InitializeNativeTargetAsmParser();
    // Bitcode once, with its symbol table: writing one initializes
    // function-local statics inside LLVM (the symbol table's builder has
    // one) under a lock. Forked children write bitcode (clang's, the
    // units' for LTO); had another thread been initializing such a static
    // at the fork, the child would wait for that lock forever (seen once in
    // the tests). The callers fork after this call, which waits for the
    // initialization to end.
    LLVMContext C;
    Module M("passlab-warm", C);
    M.setTargetTriple(sys::getDefaultTargetTriple());
    auto *F = Function::Create(FunctionType::get(Type::getVoidTy(C), false),
                               GlobalValue::ExternalLinkage, "f", M);
    IRBuilder<> B(BasicBlock::Create(C, "entry", F));
    B.CreateRetVoid();
    Function::Create(FunctionType::get(Type::getVoidTy(C), false), GlobalValue::ExternalLinkage,
                     "g", M);
    SmallVector<char, 0> Buf;
    raw_svector_ostream OS(Buf);
    WriteBitcodeToFile(M, OS, true);
    return true;
  }();
  (void)Done;
}

/// Whether the last call on this thread that failed was abandoned by an
/// LLVM fatal error (then the state it worked on must not be used or freed
/// again); clears the mark.
bool plab_take_fatal() {
  bool Was = !plab::fatalMessage().empty();
  plab::fatalMessage().clear();
  return Was;
}

// Probes of the guard, for its tests (src/ffi.rs): each claim of
// shim/guard.h is checked through them.

/// An LLVM fatal error raised inside a guard: false, as every guarded entry
/// point returns when its work was abandoned.
bool plab_probe_guarded_fatal(const char *message) {
  return guarded([&] { report_fatal_error(Twine(message)); });
}

/// Calls `callback(user)` as the runner calls an instrument hook: inside a
/// guard, marked as a call into Rust. True when it returned.
bool plab_probe_hook(void (*callback)(void *), void *user) {
  return guarded([&] {
    plab::InRust Rust;
    callback(user);
  });
}

/// An LLVM fatal error raised with no guard of its own (as LLVM's C API,
/// called from a hook, would raise one).
void plab_probe_unguarded_fatal(const char *message) { report_fatal_error(Twine(message)); }

void plab_tuning_defaults(plab_tuning *out) {
  PipelineTuningOptions PTO;
  out->loop_interleaving = PTO.LoopInterleaving;
  out->loop_vectorization = PTO.LoopVectorization;
  out->slp_vectorization = PTO.SLPVectorization;
  out->loop_unrolling = PTO.LoopUnrolling;
  out->merge_functions = PTO.MergeFunctions;
  out->call_graph_profile = PTO.CallGraphProfile;
  out->inliner_threshold = PTO.InlinerThreshold;
}

/// Creates a runner for modules of `triple` (empty: the host). Returns null
/// and sends a message when the target is unknown.
Runner *plab_runner_new(const char *triple, const char *cpu, const char *features, bool pic,
                        const plab_tuning *tuning, plab_sink sink, void *user) {
  initTargets();
  std::string T = (triple && *triple) ? std::string(triple) : sys::getDefaultTargetTriple();
  std::string Err;
  const Target *Tgt = TargetRegistry::lookupTarget(T, Err);
  auto R = std::make_unique<Runner>();
  if (Tgt) {
    // As clang-19 does for the module it compiled: the module's triple
    // and, unless the context names them, no CPU or feature override (the
    // functions' own target-cpu attributes apply); position-independent
    // code when the module says it is (clang's -fPIE, Debian's default: a
    // "PIC Level" flag), which passes such as rel-lookup-table-converter
    // ask the target machine; default codegen level.
    R->TM.reset(Tgt->createTargetMachine(
        T, cpu ? cpu : "", features ? features : "", TargetOptions(),
        pic ? std::optional<Reloc::Model>(Reloc::PIC_) : std::nullopt, std::nullopt,
        CodeGenOptLevel::Default));
  }
  if (!R->TM) {
    send(sink, user, "cannot create a target machine for '" + T + "': " + Err);
    return nullptr;
  }
  PipelineTuningOptions PTO;
  PTO.LoopInterleaving = tuning->loop_interleaving;
  PTO.LoopVectorization = tuning->loop_vectorization;
  PTO.SLPVectorization = tuning->slp_vectorization;
  PTO.LoopUnrolling = tuning->loop_unrolling;
  PTO.MergeFunctions = tuning->merge_functions;
  PTO.CallGraphProfile = tuning->call_graph_profile;
  PTO.InlinerThreshold = tuning->inliner_threshold;
  R->PB = std::make_unique<PassBuilder>(R->TM.get(), PTO, std::nullopt, &R->PIC);
  for (auto &P : plugins())
    P->registerPassBuilderCallbacks(*R->PB);
  R->PB->registerPipelineParsingCallback(
      [PB = R->PB.get()](StringRef Name, ModulePassManager &MPM,
                         ArrayRef<PassBuilder::PipelineElement> Inner) {
        return Inner.empty() && parseOzInliner(PB, Name, MPM);
      });
  R->PB->registerModuleAnalyses(R->MAM);
  R->PB->registerCGSCCAnalyses(R->CGAM);
  R->PB->registerFunctionAnalyses(R->FAM);
  R->PB->registerLoopAnalyses(R->LAM);
  R->PB->crossRegisterProxies(R->LAM, R->FAM, R->CGAM, R->MAM);
  R->registerCallbacks();
  return R.release();
}

void plab_runner_free(Runner *R) { delete R; }

/// Parses a pipeline without running it.
bool plab_runner_check(Runner *R, const char *pipeline, plab_sink sink, void *user) {
  bool Parsed = false;
  if (!guarded([&] { Parsed = R->parse(pipeline, sink, user) != nullptr; })) {
    sendFatal(sink, user);
    return false;
  }
  return Parsed;
}

/// The pipeline as LLVM prints it once parsed (what `opt
/// -print-pipeline-passes` prints): a spelling `opt -passes=` accepts as it
/// is, with the nesting LLVM inferred written out (`licm` becomes
/// `function(loop-mssa(licm))`).
bool plab_runner_spell(Runner *R, const char *pipeline, plab_sink sink, void *user) {
  std::unique_ptr<ModulePassManager> MPM;
  if (!guarded([&] { MPM = R->parse(pipeline, sink, user); })) {
    sendFatal(sink, user);
    return false;
  }
  if (!MPM)
    return false;
  std::string Text;
  raw_string_ostream OS(Text);
  MPM->printPipeline(OS, [&](StringRef ClassName) {
    StringRef Name = R->PIC.getPassNameForClassName(ClassName);
    if (Name.empty()) {
      // A plugin's pass: the name it was found under when it was loaded.
      auto P = pluginClassNames().find(ClassName);
      if (P != pluginClassNames().end())
        Name = P->second;
    }
    return Name.empty() ? ClassName : Name;
  });
  OS.flush();
  send(sink, user, Text);
  return true;
}

/// Runs a pipeline over a module. Analyses are cleared afterwards, since the
/// module may be changed or replaced before the next run. Returns 1 when it
/// ran, 0 when the pipeline does not parse (LLVM's message sent), 3 when it
/// ran but a pass reported an error through the context (LLVM's messages
/// sent; the module is whatever the passes left, for the caller to put
/// back), and 2 when a pass reported a fatal error (`report_fatal_error`,
/// e.g. instcombine's "did not reach a fixpoint"): the run was abandoned
/// where it was (its message sent), and neither the runner nor the module
/// may be used or freed again, since their state is whatever the pass left.
/// 4 is 2 for a crash signal (the crash report sent; `plab_last_crash`
/// says which pass and how).
int plab_runner_run(Runner *R, LLVMModuleRef M, const char *pipeline, const plab_hooks *hooks,
                    plab_sink sink, void *user) {
  std::unique_ptr<ModulePassManager> MPM;
  ParsedOzInlinerOptions = false;
  if (!guarded([&] { MPM = R->parse(pipeline, sink, user); })) {
    sendFatal(sink, user);
    return 2;
  }
  if (!MPM)
    return 0;
  // Held until this function returns, also when a fatal error abandons
  // the run (the guard returns here).
  bool SetsOptions = ParsedOzInlinerOptions;
  std::unique_lock<std::shared_mutex> Alone(*InlinerOptionsLock, std::defer_lock);
  std::shared_lock<std::shared_mutex> Beside(*InlinerOptionsLock, std::defer_lock);
  if (RunsInProgress == 0) {
    if (SetsOptions)
      Alone.lock();
    else
      Beside.lock();
  }
  struct InProgress {
    InProgress() { ++RunsInProgress; }
    ~InProgress() { --RunsInProgress; }
  } Counting;
  R->Hooks = hooks;
  currentPass().Name = nullptr;
  currentPass().UnitLength = 0;
  KeepErrors Kept(unwrapM(M)->getContext());
  if (!guarded([&] {
        // Passes of the code generator's IR pipeline read the profile
        // summary as a cached module analysis and crash when it is not
        // there (LLVM 19's codegenprepare dereferences it: opt-19
        // -passes=codegenprepare segfaults). llc's pipeline computes it
        // first; so does every run here. It reads the module's metadata
        // only, and is no pass: instruments do not see it.
        R->MAM.getResult<ProfileSummaryAnalysis>(*unwrapM(M));
        MPM->run(*unwrapM(M), R->MAM);
      })) {
    // Abandoned mid-run: what the pass managers hold is left alone; the
    // unit's options, if it set them, are put back.
    (void)MPM.release();
    R->Hooks = nullptr;
    if (SetsOptions)
      resetOzInlinerOptions();
    if (plab::crashSignal() != 0) {
      send(sink, user, crashReport());
      return 4;
    }
    sendFatal(sink, user);
    return 2;
  }
  R->Hooks = nullptr;
  R->clearAnalyses();
  if (!Kept.errors().empty()) {
    // The module is whatever the passes left; the caller puts it back.
    send(sink, user, Kept.errors());
    return 3;
  }
  return 1;
}

/// How many crashes guards caught in this process.
unsigned long plab_crashes_caught() { return plab::CrashesCaught.load(std::memory_order_relaxed); }

/// In a forked child whose crash signals were reset to their defaults
/// (`child::default_signals`): crashes inside a guard are caught again,
/// the others end the child as the defaults do.
void plab_catch_crashes_again() { plab::catchCrashesAgain(); }

/// After `plab_runner_run` returned 4 on this thread: the name of the pass
/// that was running (nothing when the crash came before any pass started)
/// to `pass`, and the crash in words to `how`.
void plab_last_crash(plab_sink pass, plab_sink how, void *user) {
  const CurrentPass &C = currentPass();
  if (C.Name)
    send(pass, user, StringRef(C.Name, C.NameLength));
  send(how, user, plab::fatalMessage());
}

/// Loads an LLVM pass plugin (new pass manager) for the whole process, as
/// `opt -load-pass-plugin` does. Runners made afterwards know its passes.
/// Returns false and sends LLVM's message when it cannot be loaded.
bool plab_load_plugin(const char *path, plab_sink sink, void *user) {
  initTargets();
  // A plugin finds LLVM's symbols in the process, as in opt. Where passlab
  // itself was loaded with RTLD_LOCAL (Python's import of the extension),
  // LLVM's library came with it and its symbols are not the process's:
  // made global here, so that a plugin loads from Python as in the REPL.
  Dl_info Info;
  if (dladdr(reinterpret_cast<void *>(&LLVMContextCreate), &Info) && Info.dli_fname)
    dlopen(Info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  bool Loaded = false;
  if (!guarded([&] {
        Expected<PassPlugin> P = PassPlugin::Load(path);
        if (!P) {
          send(sink, user, toString(P.takeError()));
          return;
        }
        plugins().push_back(std::make_unique<PassPlugin>(std::move(*P)));
        Loaded = true;
      })) {
    sendFatal(sink, user);
    return false;
  }
  return Loaded;
}

/// Whether `name` is a pass the runner's parser accepts as a module (0),
/// CGSCC (1), function (2) or loop (3) pass; -1 when none. For a plugin's
/// pass, the C++ classes it builds that LLVM cannot name are remembered
/// under `name` (for instruments) and sent, one per call, to `sink`.
int passUnit(Runner *R, const char *name, bool remember, plab_sink sink, void *user);

int plab_runner_pass_unit(Runner *R, const char *name, bool remember, plab_sink sink,
                          void *user) {
  int Found = -1;
  if (!guarded([&] { Found = passUnit(R, name, remember, sink, user); }))
    return -1;
  return Found;
}

int passUnit(Runner *R, const char *name, bool remember, plab_sink sink, void *user) {
  static const char *Wrappers[] = {"module", "cgscc", "function", "loop"};
  for (int Unit = 0; Unit < 4; ++Unit) {
    std::string Text = std::string(Wrappers[Unit]) + "(" + name + ")";
    ModulePassManager MPM;
    if (Error E = R->PB->parsePassPipeline(MPM, Text)) {
      consumeError(std::move(E));
      continue;
    }
    std::string S;
    raw_string_ostream OS(S);
    MPM.printPipeline(OS, [&](StringRef Class) -> StringRef {
      StringRef Known = R->PIC.getPassNameForClassName(Class);
      if (!Known.empty())
        return Known;
      if (remember)
        pluginClassNames()[Class] = name;
      send(sink, user, (Class + "\n").str());
      return Class;
    });
    return Unit;
  }
  return -1;
}

/// The pipeline names LLVM's parser knows, in `opt --print-passes` form.
void plab_runner_print_passes(Runner *R, plab_sink sink, void *user) {
  std::string S;
  raw_string_ostream OS(S);
  R->PB->printPassNames(OS);
  OS.flush();
  send(sink, user, S);
}

/// Text IR or bitcode into `ctx`. On failure returns null, sends the message
/// and fills `diag` with the position (1-based, 0 when unknown) and sends the
/// offending line to `line_sink`.
LLVMModuleRef plab_parse_ir(LLVMContextRef ctx, const char *data, size_t len, const char *name,
                            plab_diag *diag, plab_sink sink, void *user, plab_sink line_sink) {
  SMDiagnostic D;
  auto Buf = MemoryBuffer::getMemBufferCopy(StringRef(data, len), name);
  std::unique_ptr<Module> M;
  if (!guarded([&] { M = parseIR(Buf->getMemBufferRef(), D, *unwrapC(ctx)); })) {
    // What the parser built stays in the context, which the caller leaks.
    (void)M.release();
    diag->line = 0;
    diag->column = 0;
    sendFatal(sink, user);
    send(line_sink, user, "");
    return nullptr;
  }
  if (!M) {
    diag->line = D.getLineNo() > 0 ? D.getLineNo() : 0;
    diag->column = D.getColumnNo() >= 0 && D.getLineNo() > 0 ? D.getColumnNo() + 1 : 0;
    send(sink, user, D.getMessage());
    send(line_sink, user, D.getLineContents());
    return nullptr;
  }
  return wrapM(M.release());
}

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

// ---------------------------------------------------------------------------
// Name counters: each symbol table's `LastUnique`, which picks the suffix of
// the next name that collides (`%cmp9`). Neither bitcode nor cloning keeps
// it, so a module read back (from clang's child, a snapshot) or copied
// would name what passes create otherwise than the module it came from
// (`%cmp6`): clang -O2's own output is the in-memory module's. The counter
// is private; the explicit instantiation below is the standard's way to
// name a private member (access is not checked there).

} // extern "C"

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
  std::string S;
  raw_string_ostream OS(S);
  bool Broken = true;
  if (!guarded([&] { Broken = verifyModule(*unwrapM(M), &OS); })) {
    sendFatal(sink, user);
    return false;
  }
  OS.flush();
  if (Broken)
    send(sink, user, S);
  return !Broken;
}

// ---------------------------------------------------------------------------
// Fingerprints: a content hash of what a pass can change.

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
void hashInstruction(Hasher &Hs, const Instruction &I) {
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
void hashHeader(Hasher &Hs, const Function &F) {
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

void hashFunction(Hasher &Hs, const Function &F) {
  hashHeader(Hs, F);
  for (const BasicBlock &BB : F) {
    Hs.ptr(&BB);
    for (const Instruction &I : BB)
      hashInstruction(Hs, I);
  }
}
} // namespace

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
  std::string S;
  raw_string_ostream OS(S);
  bool Broken = true;
  if (!guarded([&] { Broken = verifyFunction(*reinterpret_cast<Function *>(FR), &OS); })) {
    sendFatal(sink, user);
    return false;
  }
  OS.flush();
  if (Broken)
    send(sink, user, S);
  return !Broken;
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
