// passlab's C++ shim over LLVM 19's machine-code layer (MC): what the C
// API lacks for showing machine code.
//
// * assembling the text the code generator printed into an object file,
//   as `llvm-mc -filetype=obj` does, so that each function's size in bytes
//   is read from the same code the reader sees (one code generation, not
//   two: assembling costs a tenth of generating);
// * the processor names a target knows, for suggestions when a name is
//   mistyped;
// * the assembly syntax (AT&T or Intel) the X86 printer uses.
//
// These run in the forked child that generates code (src/jit/asm.rs), or
// only read LLVM's tables. Nothing here may throw or unwind.

#include "llvm/ADT/SmallString.h"
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

#include <memory>
#include <string>

using namespace llvm;

extern "C" {

typedef void (*plab_sink)(void *user, const char *data, size_t len);
void plab_init_targets();

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
  SrcMgr.AddNewSourceBuffer(MemoryBuffer::getMemBuffer(StringRef(text, len), "assembly", false),
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

/// Sends the processor names `triple` (empty: the host's) knows, one per
/// line.
void plab_cpu_names(const char *triple, plab_sink sink, void *user) {
  plab_init_targets();
  std::string T = tripleOr(triple);
  std::string Err;
  const Target *Tgt = TargetRegistry::lookupTarget(T, Err);
  if (!Tgt)
    return;
  std::unique_ptr<MCSubtargetInfo> STI(Tgt->createMCSubtargetInfo(T, "", ""));
  if (!STI)
    return;
  std::string Names;
  for (const SubtargetSubTypeKV &KV : STI->getAllProcessorDescriptions()) {
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
