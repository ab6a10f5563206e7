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
// This file holds the runner (its lock, the fork handlers, plugins, the
// error keepers), parsing and bitcode; `jit_symbols.cpp` what the JIT asks
// of a module before it compiles; `fingerprint.cpp` name counters,
// fingerprints and statistics; `printer.cpp` IR units and the incremental
// printer; `shim.h` what they share.
//
// Nothing here may throw or unwind: LLVM is built with -fno-exceptions and
// the Rust callbacks catch their own panics.

#include "shim.h"

namespace {

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

// Sends what a guard caught, as LLVM prints it (or the crash, in words).
void plab::sendFatal(plab_sink sink, void *user) {
  if (plab::crashSignal() != 0)
    send(sink, user, "LLVM crashed: " + plab::fatalMessage());
  else
    send(sink, user, "LLVM ERROR: " + plab::fatalMessage());
}

namespace {

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

namespace {
// Bitcode of a small module of the native target, with its symbol table:
// writing one initializes function-local statics inside LLVM (the symbol
// table builder has one, reached for each symbol) under a lock. The
// builder makes no table, and reaches none of its statics, for a module
// without a data layout (an unseen error: the first warm module had none).
void writeWarmBitcode(SmallVector<char, 0> &Buf) {
  LLVMContext C;
  Module M("passlab-warm", C);
  const std::string Triple = sys::getDefaultTargetTriple();
  M.setTargetTriple(Triple);
  std::string Error;
  if (const Target *T = TargetRegistry::lookupTarget(Triple, Error)) {
    std::unique_ptr<TargetMachine> TM(
        T->createTargetMachine(Triple, "generic", "", TargetOptions(), std::nullopt));
    if (TM)
      M.setDataLayout(TM->createDataLayout());
  }
  if (M.getDataLayoutStr().empty())
    M.setDataLayout("e");
  auto *F = Function::Create(FunctionType::get(Type::getVoidTy(C), false),
                             GlobalValue::ExternalLinkage, "f", M);
  IRBuilder<> B(BasicBlock::Create(C, "entry", F));
  B.CreateRetVoid();
  Function::Create(FunctionType::get(Type::getVoidTy(C), false), GlobalValue::ExternalLinkage,
                   "g", M);
  raw_svector_ostream OS(Buf);
  WriteBitcodeToFile(M, OS, true);
}
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
    // Bitcode once, with its symbol table (`writeWarmBitcode`). Forked
    // children write bitcode (clang's, the units' for LTO); had another
    // thread been initializing one of the writer's statics at the fork,
    // the child would wait for that lock forever (seen twice in the tests:
    // a child of `Module::from_c` stuck in `irsymtab::build`). The callers
    // fork after this call, which waits for the initialization to end.
    SmallVector<char, 0> Buf;
    writeWarmBitcode(Buf);
    return true;
  }();
  (void)Done;
}

/// Whether the warm bitcode of `plab_init_targets` carries a symbol table
/// (its builder's statics are reached only when it does), for its test.
bool plab_probe_warm_bitcode_has_symtab() {
  plab_init_targets();
  SmallVector<char, 0> Buf;
  writeWarmBitcode(Buf);
  Expected<BitcodeFileContents> Contents =
      getBitcodeFileContents(MemoryBufferRef(StringRef(Buf.data(), Buf.size()), "warm"));
  if (!Contents) {
    consumeError(Contents.takeError());
    return false;
  }
  return !Contents->Symtab.empty();
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

} // extern "C"
