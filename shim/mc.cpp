// passlab's C++ shim over LLVM 19's machine-code layer (MC): what the C
// API lacks for showing machine code.
//
// * assembling the text the code generator printed into an object file,
//   as `llvm-mc -filetype=obj` does, so that each function's size in bytes
//   is read from the same code the reader sees (one code generation, not
//   two: assembling costs a tenth of generating);
// * the processor names a target knows, for suggestions when a name is
//   mistyped;
// * the assembly syntax (AT&T or Intel) the X86 printer uses;
// * code generation with every pass of the back end observed: LLVM 19 runs
//   it under the legacy pass manager, which has no instrumentation
//   callbacks, so `plab_emit_probed` hands TargetMachine a pass manager of
//   its own that adds, after each pass the target adds, a probe of the same
//   kind (a function pass after a function, machine-function or loop pass;
//   a module pass after a module pass: the pass manager's batching is
//   unchanged). A probe notes the time, the unit and whether the unit's
//   code changed (a hash of the machine function, or of the IR function
//   before instruction selection). On request a probe also keeps the
//   unit's text after each change (MIR as llc's -print-after-all prints
//   it, or IR before instruction selection) and runs the machine verifier
//   (or IR verifier) on what changed, as llc's -verify-machineinstrs does;
//   a failure ends the child with LLVM's report;
// * LLVM's opt-bisect over the back end: a pass gate on the module's
//   context (`plab_set_pass_gate`) that runs only the first N optional
//   passes that ask (the passes that call skipFunction: machine CSE,
//   machine LICM, the scheduler ...) and notes each decision.
//
// These run in the forked child that generates code (src/jit/asm.rs), or
// only read LLVM's tables. Nothing here may throw or unwind.

#include <set>

#include "llvm-c/Core.h"
#include "llvm-c/TargetMachine.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/CodeGen/MachineConstantPool.h"
#include "llvm/CodeGen/MachineFrameInfo.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineJumpTableInfo.h"
#include "llvm/CodeGen/MachineRegisterInfo.h"
#include "llvm/CodeGen/TargetRegisterInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/ModuleSlotTracker.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IR/StructuralHash.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Pass.h"
#include "llvm/PassInfo.h"
#include "llvm/PassRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <chrono>
#include <memory>
#include <string>

using namespace llvm;

extern "C" {

typedef void (*plab_sink)(void *user, const char *data, size_t len);
// shim/remarks.cpp
extern "C" void plab_remarks_install(LLVMContextRef ctx, plab_sink sink, void *user,
                                     unsigned options);
extern "C" void plab_remarks_remove(LLVMContextRef ctx);
void plab_init_targets();
// shim.cpp's function printer: the numbering the instruments' texts use.
struct Printer;
Printer *plab_printer_new(LLVMModuleRef M);
void plab_printer_free(Printer *P);
bool plab_printer_function(Printer *P, LLVMValueRef F, plab_sink sink, void *user);

static std::string tripleOr(const char *triple) {
  return (triple && *triple) ? std::string(triple) : sys::getDefaultTargetTriple();
}

/// Assembles `len` bytes of assembly text for `triple` (empty: the host's)
/// and `cpu`/`features` into an ELF object sent to `sink`. Returns false
/// with the assembler's messages sent to `err_sink` instead.
bool plab_assemble(const char *triple, const char *cpu, const char *features, const char *text,
                   size_t len, plab_sink sink, void *user, plab_sink err_sink, void *err_user) {
  plab_init_targets();
  std::string T = tripleOr(triple);
  std::string Err;
  const Target *Tgt = TargetRegistry::lookupTarget(T, Err);
  if (!Tgt) {
    err_sink(err_user, Err.data(), Err.size());
    return false;
  }
  Triple TheTriple(T);
  MCTargetOptions Options;
  std::unique_ptr<MCRegisterInfo> MRI(Tgt->createMCRegInfo(T));
  std::unique_ptr<MCAsmInfo> MAI(Tgt->createMCAsmInfo(*MRI, T, Options));
  std::unique_ptr<MCSubtargetInfo> STI(Tgt->createMCSubtargetInfo(T, cpu, features));
  std::unique_ptr<MCInstrInfo> MCII(Tgt->createMCInstrInfo());
  if (!MRI || !MAI || !STI || !MCII) {
    static const char M[] = "the target has no machine-code layer";
    err_sink(err_user, M, sizeof M - 1);
    return false;
  }
  SourceMgr SrcMgr;
  // A copy: LLVM's assembly lexer reads up to a NUL after the text (it
  // calls strlen on what is left), and the caller's bytes have none. Lexing
  // past their end read whatever memory followed, and could loop forever.
  SrcMgr.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(StringRef(text, len), "assembly"),
                            SMLoc());
  std::string Diags;
  raw_string_ostream DiagOS(Diags);
  SrcMgr.setDiagHandler(
      [](const SMDiagnostic &D, void *Ctx) { D.print(nullptr, *static_cast<raw_ostream *>(Ctx)); },
      &DiagOS);
  MCContext Ctx(TheTriple, MAI.get(), MRI.get(), STI.get(), &SrcMgr, &Options);
  std::unique_ptr<MCObjectFileInfo> MOFI(Tgt->createMCObjectFileInfo(Ctx, /*PIC=*/true));
  Ctx.setObjectFileInfo(MOFI.get());
  SmallString<0> Out;
  raw_svector_ostream OS(Out);
  MCCodeEmitter *CE = Tgt->createMCCodeEmitter(*MCII, Ctx);
  MCAsmBackend *MAB = Tgt->createMCAsmBackend(*STI, *MRI, Options);
  if (!CE || !MAB) {
    static const char M[] = "the target cannot write objects";
    err_sink(err_user, M, sizeof M - 1);
    return false;
  }
  std::unique_ptr<MCStreamer> Str(Tgt->createMCObjectStreamer(
      TheTriple, Ctx, std::unique_ptr<MCAsmBackend>(MAB), MAB->createObjectWriter(OS),
      std::unique_ptr<MCCodeEmitter>(CE), *STI));
  std::unique_ptr<MCAsmParser> Parser(createMCAsmParser(SrcMgr, Ctx, *Str, *MAI));
  std::unique_ptr<MCTargetAsmParser> TAP(Tgt->createMCAsmParser(*STI, *Parser, *MCII, Options));
  if (!TAP) {
    static const char M[] = "the target has no assembly parser";
    err_sink(err_user, M, sizeof M - 1);
    return false;
  }
  Parser->setTargetParser(*TAP);
  bool Failed = Parser->Run(/*NoInitialTextSection=*/false);
  if (Failed || Ctx.hadError()) {
    DiagOS.flush();
    if (Diags.empty())
      Diags = "the assembler failed";
    err_sink(err_user, Diags.data(), Diags.size());
    return false;
  }
  sink(user, Out.data(), Out.size());
  return true;
}

/// The subtarget of `triple` (empty: the host's) with no processor or
/// features chosen: its tables of processors and features; null when LLVM
/// has no such target.
static std::unique_ptr<MCSubtargetInfo> subtargetOf(const char *triple) {
  plab_init_targets();
  std::string T = tripleOr(triple);
  std::string Err;
  const Target *Tgt = TargetRegistry::lookupTarget(T, Err);
  if (!Tgt)
    return nullptr;
  return std::unique_ptr<MCSubtargetInfo>(Tgt->createMCSubtargetInfo(T, "", ""));
}

/// Sends the processor names `triple` (empty: the host's) knows, one per
/// line.
void plab_cpu_names(const char *triple, plab_sink sink, void *user) {
  std::unique_ptr<MCSubtargetInfo> STI = subtargetOf(triple);
  if (!STI)
    return;
  std::string Names;
  for (const SubtargetSubTypeKV &KV : STI->getAllProcessorDescriptions()) {
    Names += KV.Key;
    Names += '\n';
  }
  sink(user, Names.data(), Names.size());
}

/// The processor features LLVM knows for `triple` (null: the host's), one
/// per line, as `-mattr=+NAME` takes them.
void plab_feature_names(const char *triple, plab_sink sink, void *user) {
  std::unique_ptr<MCSubtargetInfo> STI = subtargetOf(triple);
  if (!STI)
    return;
  std::string Names;
  for (const SubtargetFeatureKV &KV : STI->getAllProcessorFeatures()) {
    Names += KV.Key;
    Names += '\n';
  }
  sink(user, Names.data(), Names.size());
}

/// Makes the X86 printer write Intel syntax (`intel`) or AT&T (`att`), as
/// llc's -x86-asm-syntax. A process-wide option: only the forked child that
/// generates code calls it. Returns false when the option is unknown.
bool plab_set_asm_syntax(const char *syntax) {
  StringMap<cl::Option *> &Opts = cl::getRegisteredOptions();
  auto It = Opts.find("x86-asm-syntax");
  if (It == Opts.end())
    return false;
  return !It->second->addOccurrence(0, "x86-asm-syntax", syntax);
}

} // extern "C"

namespace {

/// What the probes saw: the passes in the order the target added them, and
/// one event per probe run.
struct Recorder {
  struct PassName {
    std::string Name, Arg;
    bool Module;
    /// An analysis: it changes no code, so its probe does not look.
    bool Analysis;
  };
  std::vector<PassName> Passes;
  std::chrono::steady_clock::time_point Start = std::chrono::steady_clock::now();
  std::string Events;
  /// Where the events go, a megabyte at a time as they come (a whole
  /// program's texts are hundreds of megabytes: not held here at once).
  plab_sink Flush = nullptr;
  void *FlushUser = nullptr;
  void flush(size_t AtLeast) {
    if (!Events.empty() && Events.size() >= AtLeast) {
      Flush(FlushUser, Events.data(), Events.size());
      Events.clear();
    }
  }
  /// Keep the unit's text after each change; verify what changed.
  bool Texts = false, Verify = false;
  /// Whether anyone needs to know which runs changed the code: when only
  /// the remarks are recorded, the probes only mark each run (no hash of
  /// the function after every pass).
  bool Changes = true;
  /// The last hash seen per function, and whether it was of machine code.
  DenseMap<const Function *, std::pair<uint64_t, bool>> Hashes;
  /// Prints IR as the instruments do (rebuilt when its numbering is stale).
  Printer *IrPrinter = nullptr;
  ~Recorder() {
    if (IrPrinter)
      plab_printer_free(IrPrinter);
  }

  /// Numbers the module's values and metadata once for every machine
  /// function printed (MachineFunction::print numbers the whole module's
  /// metadata again for each print: quadratic over a program).
  std::unique_ptr<ModuleSlotTracker> MST;

  /// MachineFunction::print's text (LLVM 19's MachineFunction.cpp), with
  /// the slot tracker kept.
  std::string printMachine(const MachineFunction &MF) {
    for (int Attempt = 0;; ++Attempt) {
      if (!MST)
        MST = std::make_unique<ModuleSlotTracker>(MF.getFunction().getParent());
      std::string T;
      raw_string_ostream OS(T);
      OS << "# Machine code for function " << MF.getName() << ": ";
      MF.getProperties().print(OS);
      OS << '\n';
      MF.getFrameInfo().print(MF, OS);
      if (const MachineJumpTableInfo *JT = MF.getJumpTableInfo())
        JT->print(OS);
      MF.getConstantPool()->print(OS);
      const TargetRegisterInfo *TRI = MF.getSubtarget().getRegisterInfo();
      const MachineRegisterInfo &MRI = MF.getRegInfo();
      if (!MRI.livein_empty()) {
        OS << "Function Live Ins: ";
        for (auto I = MRI.livein_begin(), E = MRI.livein_end(); I != E; ++I) {
          OS << printReg(I->first, TRI);
          if (I->second)
            OS << " in " << printReg(I->second, TRI);
          if (std::next(I) != E)
            OS << ", ";
        }
        OS << '\n';
      }
      MST->incorporateFunction(MF.getFunction());
      for (const MachineBasicBlock &BB : MF) {
        OS << '\n';
        BB.print(OS, *MST, nullptr, /*IsStandalone=*/true);
      }
      OS << "\n# End machine code for function " << MF.getName() << ".\n\n";
      OS.flush();
      // Metadata made since the numbering prints as an address: number
      // the module again, once.
      if (Attempt > 0 || T.find("<0x") == std::string::npos)
        return T;
      MST.reset();
    }
  }

  std::string printIr(Function &F) {
    std::string T;
    auto Append = [](void *U, const char *D, size_t N) {
      static_cast<std::string *>(U)->append(D, N);
    };
    for (int Attempt = 0; Attempt < 2; ++Attempt) {
      if (!IrPrinter)
        IrPrinter = plab_printer_new(wrap(F.getParent()));
      T.clear();
      if (plab_printer_function(IrPrinter, wrap(&F), Append, &T))
        return T;
      plab_printer_free(IrPrinter);
      IrPrinter = nullptr;
    }
    raw_string_ostream OS(T);
    F.print(OS);
    return T;
  }

  /// An optimization remark (flattened by shim/remarks.cpp), as
  /// `R\tlength\n` and the bytes: it belongs to the execution noted next
  /// (a probe notes a pass after it ran).
  static void remark(void *U, const char *D, size_t N) {
    auto *R = static_cast<Recorder *>(U);
    R->Events += "R\t" + std::to_string(N) + "\n";
    R->Events.append(D, N);
  }

  /// The text of the unit the last noted run changed, as `M\tlength\n`
  /// and the bytes.
  void text(const std::string &T) {
    Events += "M\t" + std::to_string(T.size()) + "\n";
    Events += T;
    flush(1 << 20);
  }

  void note(unsigned Pass, const Function *F, bool Changed) {
    auto Ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - Start)
                  .count();
    Events += std::to_string(Pass);
    Events += '\t';
    Events += F ? F->getName().str() : std::string();
    Events += '\t';
    Events += std::to_string(Ns);
    Events += Changed ? "\t1\n" : "\t0\n";
    flush(1 << 20);
  }
};

/// One step of the probes' hash (FxHash's mix: cheap, and a change that
/// goes unseen would need two different functions to collide in 64 bits).
inline uint64_t mix(uint64_t H, uint64_t X) {
  return ((H << 5 | H >> 59) ^ X) * 0x517cc1b727220a95ULL;
}

/// A hash of what a machine function's text shows of its code: blocks,
/// instructions, operands (as LLVM's hash_value(MachineOperand) sees them,
/// the two commonest kinds, registers and immediates, mixed inline rather
/// than through hash_combine).
uint64_t hashMachineFunction(const MachineFunction &MF) {
  uint64_t H = mix(0, MF.size());
  for (const MachineBasicBlock &MBB : MF) {
    H = mix(mix(H, MBB.getNumber()), MBB.size());
    for (const MachineInstr &MI : MBB) {
      H = mix(mix(H, MI.getOpcode()), MI.getFlags());
      for (const MachineOperand &MO : MI.operands()) {
        switch (MO.getType()) {
        case MachineOperand::MO_Register:
          H = mix(mix(mix(H, MO.getType()), MO.getReg().id()),
                  uint64_t(MO.getSubReg()) << 1 | MO.isDef());
          break;
        case MachineOperand::MO_Immediate:
          H = mix(mix(mix(H, MO.getType()), MO.getTargetFlags()), uint64_t(MO.getImm()));
          break;
        default:
          H = mix(H, hash_value(MO));
        }
      }
    }
  }
  return H;
}

struct FunctionProbe : public FunctionPass {
  static char ID;
  Recorder *R;
  unsigned Pass;
  FunctionProbe(Recorder *R, unsigned Pass) : FunctionPass(ID), R(R), Pass(Pass) {}
  StringRef getPassName() const override { return "passlab probe"; }
  void getAnalysisUsage(AnalysisUsage &AU) const override { AU.setPreservesAll(); }
  bool runOnFunction(Function &F) override {
    if (R->Passes[Pass].Analysis || !R->Changes) {
      R->note(Pass, &F, false);
      return false;
    }
    auto *MMI = getAnalysisIfAvailable<MachineModuleInfoWrapperPass>();
    const MachineFunction *MF = MMI ? MMI->getMMI().getMachineFunction(F) : nullptr;
    uint64_t H = MF ? hashMachineFunction(*MF) : StructuralHash(F, true);
    auto [It, New] = R->Hashes.try_emplace(&F, H, MF != nullptr);
    auto [Before, WasMachine] = It->second;
    // Instruction selection (IR to machine code) changes the code; freeing
    // the machine function at the end does not.
    bool Changed = !New && (WasMachine == (MF != nullptr) ? Before != H : MF != nullptr);
    It->second = {H, MF != nullptr};
    R->note(Pass, &F, Changed);
    // The text after a change, and the first time a function is seen (the
    // text code generation starts from).
    if (R->Texts && (Changed || New)) {
      if (MF) {
        R->text(R->printMachine(*MF));
      } else {
        R->text(R->printIr(F));
      }
    }
    if (!Changed)
      return false;
    if (R->Verify) {
      std::string Banner = "After " + R->Passes[Pass].Name + " (passlab's verifier)";
      bool Bad = MF ? !MF->verify(nullptr, Banner.c_str(), /*AbortOnError=*/false)
                    : verifyFunction(F, &errs());
      if (Bad)
        report_fatal_error(Twine("the machine verifier found errors after ") +
                               R->Passes[Pass].Name + " (" + R->Passes[Pass].Arg +
                               ") on function " + F.getName(),
                           false);
    }
    return false;
  }
};
char FunctionProbe::ID = 0;

struct ModuleProbe : public ModulePass {
  static char ID;
  Recorder *R;
  unsigned Pass;
  ModuleProbe(Recorder *R, unsigned Pass) : ModulePass(ID), R(R), Pass(Pass) {}
  StringRef getPassName() const override { return "passlab probe"; }
  void getAnalysisUsage(AnalysisUsage &AU) const override { AU.setPreservesAll(); }
  bool runOnModule(Module &) override {
    R->note(Pass, nullptr, false);
    return false;
  }
};
char ModuleProbe::ID = 0;

/// The pass manager TargetMachine fills: each pass, then its probe.
class ProbingPassManager : public legacy::PassManagerBase {
public:
  legacy::PassManager Inner;
  Recorder &R;
  explicit ProbingPassManager(Recorder &R) : R(R) {}
  void add(Pass *P) override {
    // Read before adding: the pass manager may delete an analysis it has.
    bool Immutable = P->getAsImmutablePass() != nullptr;
    PassKind Kind = P->getPassKind();
    std::string Name = P->getPassName().str();
    std::string Arg;
    bool Analysis = false;
    if (const PassInfo *PI = PassRegistry::getPassRegistry()->getPassInfo(P->getPassID())) {
      Arg = PI->getPassArgument().str();
      Analysis = PI->isAnalysis();
    }
    Inner.add(P);
    if (Immutable)
      return;
    unsigned I = R.Passes.size();
    R.Passes.push_back({Name, Arg, Kind == PT_Module, Analysis});
    if (Kind == PT_Module)
      Inner.add(new ModuleProbe(&R, I));
    else
      Inner.add(new FunctionProbe(&R, I));
  }
};

} // namespace

namespace {

/// What clang's back end adds before the target's passes
/// (BackendUtil's AddEmitPasses): the target's cost model and the library
/// functions of the module's triple. Without them the legacy pass manager
/// makes default ones: no target costs (so, for one, `sqrt` is never
/// expanded inline with its errno fallback, as PartiallyInlineLibCalls
/// does for clang) and no triple's library.
void addClangAnalyses(legacy::PassManagerBase &PM, TargetMachine *TM, const Module &M) {
  PM.add(createTargetTransformInfoWrapperPass(TM->getTargetIRAnalysis()));
  TargetLibraryInfoImpl TLII(Triple(M.getTargetTriple()));
  PM.add(new TargetLibraryInfoWrapperPass(TLII));
}

/// Fills `PM` as clang's back end does for `M` (see addClangAnalyses), to
/// emit assembly or an object into `OS`; false, with LLVM's message to
/// `err`, when the target cannot emit that kind of file.
bool addEmitPasses(legacy::PassManagerBase &PM, TargetMachine *TM, Module &M, bool assembly,
                   raw_pwrite_stream &OS, plab_sink err, void *err_user) {
  M.setDataLayout(TM->createDataLayout());
  addClangAnalyses(PM, TM, M);
  if (TM->addPassesToEmitFile(PM, OS, nullptr,
                              assembly ? CodeGenFileType::AssemblyFile
                                       : CodeGenFileType::ObjectFile)) {
    static const char Msg[] = "the target cannot emit this kind of file";
    err(err_user, Msg, sizeof Msg - 1);
    return false;
  }
  return true;
}

static void ignoreText(void *, const char *, size_t) {}

} // namespace

extern "C" {

/// The names (pass arguments, `register-coalescer`, `prologepilog`…) of
/// the passes the back end runs for `triple` (null: the host's) at every
/// code generation level, one per line, each once: what the instruments'
/// pass lists may name besides the optimizer's passes. The pipelines are
/// built as :asm builds them (on an empty module) and never run.
void plab_backend_pass_names(const char *triple, plab_sink sink, void *user) {
  plab_init_targets();
  std::string T = tripleOr(triple);
  std::string Err;
  const Target *Tgt = TargetRegistry::lookupTarget(T, Err);
  if (!Tgt)
    return;
  std::set<std::string> Names;
  for (CodeGenOptLevel Level : {CodeGenOptLevel::None, CodeGenOptLevel::Less,
                                CodeGenOptLevel::Default, CodeGenOptLevel::Aggressive}) {
    std::unique_ptr<TargetMachine> TM(Tgt->createTargetMachine(
        T, "", "", TargetOptions(), Reloc::PIC_, CodeModel::Small, Level));
    if (!TM)
      continue;
    LLVMContext Ctx;
    Module M("names", Ctx);
    M.setTargetTriple(T);
    Recorder R;
    ProbingPassManager PM(R);
    SmallString<0> Out;
    raw_svector_ostream OS(Out);
    if (!addEmitPasses(PM, TM.get(), M, true, OS, ignoreText, nullptr))
      continue;
    for (const auto &P : R.Passes)
      if (!P.Arg.empty())
        Names.insert(P.Arg);
  }
  std::string Text;
  for (const auto &N : Names) {
    Text += N;
    Text += '\n';
  }
  sink(user, Text.data(), Text.size());
}

} // extern "C"

extern "C" {

/// Makes `tm` lower the thread-local variables of `m`, if it has any, to
/// emulated TLS (calls of `__emutls_get_address`, libgcc's): for the JIT,
/// whose objects have no platform to give them ELF TLS; clang's own code
/// (what `:asm` and the size measures show) keeps native TLS. A module
/// without them is compiled as before (the lowering is a pass of its own
/// in the back end's pipeline).
void plab_emulate_tls(LLVMModuleRef m, LLVMTargetMachineRef tm) {
  for (const GlobalVariable &G : unwrap(m)->globals())
    if (G.isThreadLocal()) {
      reinterpret_cast<TargetMachine *>(tm)->Options.EmulatedTLS = true;
      return;
    }
}

/// Emits `m` with the target machine `tm` (assembly when `assembly`, else
/// an object) to `sink`, as clang's back end does (see addClangAnalyses).
/// Returns false with LLVM's message to `err` when the target cannot emit
/// that kind of file.
bool plab_emit(LLVMModuleRef m, LLVMTargetMachineRef tm, bool assembly, plab_sink sink,
               void *user, plab_sink err, void *err_user) {
  Module *M = unwrap(m);
  // The C API's target machine is the C++ one (LLVMTargetMachineRef wraps it).
  TargetMachine *TM = reinterpret_cast<TargetMachine *>(tm);
  legacy::PassManager PM;
  SmallString<0> Out;
  raw_svector_ostream OS(Out);
  if (!addEmitPasses(PM, TM, *M, assembly, OS, err, err_user))
    return false;
  PM.run(*M);
  sink(user, Out.data(), Out.size());
  return true;
}

/// Emits `m` with the target machine `tm` (assembly when `assembly`, else
/// an object) to `sink`, every back-end pass probed: to `events` go, in
/// pieces as they come, the passes (`P\tname\targument\tmodule|function`,
/// in the order added), one line per probe run (`pass\tfunction\tnanoseconds\tchanged`),
/// with flag 1 each change followed by the unit's text (`M\tlength\n` and
/// the bytes), and the total (`T\tnanoseconds`); with flag 2 the
/// verifier runs after each change; with flag 4 each optimization remark
/// (`R\tlength\n` and the bytes, as shim/remarks.cpp flattens it) comes
/// before the probe line of the execution that made it; flag 8 adds the
/// `size-info` remarks (costly: see shim/remarks.cpp); flag 16 leaves out
/// finding which runs changed the code (every run says it changed
/// nothing: for the remarks alone).
/// Returns false with LLVM's message to `err` when the target cannot emit
/// that kind of file.
bool plab_emit_probed(LLVMModuleRef m, LLVMTargetMachineRef tm, bool assembly, unsigned flags,
                      plab_sink sink, void *user, plab_sink events, void *events_user,
                      plab_sink err, void *err_user) {
  Module *M = unwrap(m);
  // The C API's target machine is the C++ one (LLVMTargetMachineRef wraps it).
  TargetMachine *TM = reinterpret_cast<TargetMachine *>(tm);
  Recorder R;
  R.Texts = flags & 1;
  R.Verify = flags & 2;
  R.Changes = !(flags & 16);
  ProbingPassManager PM(R);
  SmallString<0> Out;
  raw_svector_ostream OS(Out);
  if (!addEmitPasses(PM, TM, *M, assembly, OS, err, err_user))
    return false;
  R.Flush = events;
  R.FlushUser = events_user;
  for (const auto &P : R.Passes) {
    R.Events += "P\t" + P.Name + "\t" + P.Arg + (P.Module ? "\tmodule\n" : "\tfunction\n");
  }
  R.flush(0);
  // With flag 4 the back end's optimization remarks join the record.
  LLVMContextRef Ctx = wrap(&M->getContext());
  if (flags & 4) {
    plab_remarks_remove(Ctx);
    plab_remarks_install(Ctx, Recorder::remark, &R, (flags & 8) ? 1 : 0);
  }
  R.Start = std::chrono::steady_clock::now();
  PM.Inner.run(*M);
  if (flags & 4)
    plab_remarks_remove(Ctx);
  auto Total = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - R.Start)
                   .count();
  R.Events += "T\t" + std::to_string(Total) + "\n";
  R.flush(0);
  sink(user, Out.data(), Out.size());
  return true;
}

} // extern "C"

namespace {

/// opt-bisect over the back end: runs the first `Limit` optional passes
/// that ask (all when negative) and notes each decision as
/// `B\tindex\tpass\tunit\tran`.
struct Gate : public OptPassGate {
  int64_t Limit = -1, Count = 0;
  std::string Record;
  bool shouldRunPass(const StringRef PassName, StringRef Unit) override {
    ++Count;
    bool Run = Limit < 0 || Count <= Limit;
    Record += "B\t" + std::to_string(Count) + "\t" + PassName.str() + "\t" + Unit.str() +
              (Run ? "\t1\n" : "\t0\n");
    return Run;
  }
  bool isEnabled() const override { return true; }
};

Gate *TheGate = nullptr;

} // namespace

extern "C" {

/// Makes the module's context ask a gate of this process before each
/// optional pass (LLVM's -opt-bisect-limit=limit; every pass when
/// negative). Only the forked child that generates code calls it; the gate
/// lives as long as the child.
void plab_set_pass_gate(LLVMModuleRef m, int64_t limit) {
  if (!TheGate)
    TheGate = new Gate();
  TheGate->Limit = limit;
  TheGate->Count = 0;
  TheGate->Record.clear();
  unwrap(m)->getContext().setOptPassGate(*TheGate);
}

/// The gate's decisions so far (see `plab_set_pass_gate`).
void plab_pass_gate_record(plab_sink sink, void *user) {
  if (TheGate)
    sink(user, TheGate->Record.data(), TheGate->Record.size());
}

} // extern "C"
