// Link-time optimization as clang -flto and lld do it, up to the pipeline:
// a unit's bitcode as clang -flto -c writes it (with its module summary),
// and the link of such units by LLVM's own LTO (llvm::lto::LTO) with the
// symbol resolutions lld gives when it links an executable, stopped after
// the combined module is internalized: what lld hands `lto<On>`. passlab
// then runs that pipeline itself, under its instruments.

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/ModuleSummaryAnalysis.h"
#include "llvm/Analysis/ProfileSummaryInfo.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Module.h"
#include "llvm/LTO/Config.h"
#include "llvm/LTO/LTO.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm-c/Types.h"

#include "guard.h"

#include <string>
#include <vector>

using namespace llvm;

extern "C" {
typedef void (*plab_sink)(void *user, const char *data, size_t len);
}

namespace {
void sendTo(plab_sink sink, void *user, StringRef s) {
  if (sink)
    sink(user, s.data(), s.size());
}
} // namespace

extern "C" {

/// Writes `M` as clang -flto -c (full LTO) writes a unit after its
/// pre-link pipeline: the module flags clang adds ("EnableSplitLTOUnit",
/// "ThinLTO" 0), its module summary (from which the linker learns what is
/// live), and its use-list order. Returns false, with LLVM's message sent
/// to `err`, if LLVM gave up.
bool plab_write_lto_bitcode(LLVMModuleRef M, plab_sink out, plab_sink err, void *user) {
  Module &Mod = *reinterpret_cast<Module *>(M);
  SmallVector<char, 0> Buf;
  raw_svector_ostream OS(Buf);
  bool Ok = plab::guarded([&] {
    if (!Mod.getModuleFlag("EnableSplitLTOUnit"))
      Mod.addModuleFlag(Module::Error, "EnableSplitLTOUnit", uint32_t(1));
    if (!Mod.getModuleFlag("ThinLTO"))
      Mod.addModuleFlag(Module::Error, "ThinLTO", uint32_t(0));
    ProfileSummaryInfo PSI(Mod);
    ModuleSummaryIndex Index = buildModuleSummaryIndex(Mod, nullptr, &PSI);
    WriteBitcodeToFile(Mod, OS, /*ShouldPreserveUseListOrder=*/true, &Index);
  });
  if (!Ok) {
    sendTo(err, user, "LLVM gave up writing the unit's bitcode");
    return false;
  }
  sendTo(out, user, StringRef(Buf.data(), Buf.size()));
  return true;
}

/// Links `n` units (bitcode from plab_write_lto_bitcode, each `lens[i]`
/// bytes, named `names[i]`) with LLVM's LTO, resolving symbols as lld does
/// (without --export-dynamic): the first definition of a name prevails,
/// and every symbol defined in some unit is final in the program. When a
/// unit defines `main`, the program is an executable: only `main` and what
/// `llvm.used` names are seen from outside (the C runtime calls main);
/// otherwise a shared library: every symbol of default visibility. Stops
/// once the combined module is internalized and sends its bitcode to
/// `out`. Value names are kept (lld drops them: names change no pass's
/// result, and passlab shows IR to be read). Returns false with the
/// linker's message sent to `err`.
bool plab_lto_link(const char *const *data, const size_t *lens, const char *const *names,
                   size_t n, plab_sink out, plab_sink err, void *user) {
  std::string Message;
  bool Sent = false;
  bool Ok = plab::guarded([&] {
    std::vector<std::unique_ptr<lto::InputFile>> Inputs;
    for (size_t i = 0; i < n; ++i) {
      auto In = lto::InputFile::create(
          MemoryBufferRef(StringRef(data[i], lens[i]), StringRef(names[i])));
      if (!In) {
        Message = std::string(names[i]) + ": " + toString(In.takeError());
        return;
      }
      Inputs.push_back(std::move(*In));
    }
    // Which names some unit defines, and which definition prevails.
    StringSet<> Defined;
    for (auto &In : Inputs)
      for (const auto &Sym : In->symbols())
        if (!Sym.isUndefined())
          Defined.insert(Sym.getName());
    bool executable = Defined.contains("main");
    lto::Config Conf;
    Conf.ShouldDiscardValueNames = false;
    // The combined module is written as lld's --save-temps writes it
    // (`.0.2.internalize.bc`): without its use-list order. Kept, the order
    // made lto<O2> differ from lld's own run by one instruction in one
    // function of cmark-gfm; read as lld's file reads, it gives lld's
    // result function for function (tests/projects.rs).
    Conf.PostInternalizeModuleHook = [&](unsigned, const Module &M) {
      SmallVector<char, 0> Buf;
      raw_svector_ostream OS(Buf);
      WriteBitcodeToFile(M, OS, /*ShouldPreserveUseListOrder=*/false);
      sendTo(out, user, StringRef(Buf.data(), Buf.size()));
      Sent = true;
      return false;
    };
    lto::LTO L(std::move(Conf), {}, 1);
    StringSet<> Prevailing;
    for (auto &In : Inputs) {
      std::vector<lto::SymbolResolution> Res;
      for (const auto &Sym : In->symbols()) {
        lto::SymbolResolution R;
        StringRef Name = Sym.getName();
        bool Defines = !Sym.isUndefined();
        R.Prevailing = Defines && Prevailing.insert(Name).second;
        R.FinalDefinitionInLinkageUnit = Defined.contains(Name);
        bool Exported = !executable && Sym.getVisibility() == GlobalValue::DefaultVisibility;
        R.VisibleToRegularObj = Name == "main" || Sym.isUsed() || Exported;
        R.ExportDynamic = Exported;
        R.LinkerRedefined = false;
        Res.push_back(R);
      }
      if (Error E = L.add(std::move(In), Res)) {
        Message = toString(std::move(E));
        return;
      }
    }
    auto AddStream = [&](size_t, const Twine &) -> Expected<std::unique_ptr<CachedFileStream>> {
      return createStringError(inconvertibleErrorCode(), "no code is generated here");
    };
    if (Error E = L.run(AddStream)) {
      Message = toString(std::move(E));
      return;
    }
    if (!Sent)
      Message = "the link made no module (no unit has code for link-time optimization)";
  });
  if (!Ok) {
    sendTo(err, user, "LLVM gave up linking the units");
    return false;
  }
  if (!Message.empty()) {
    sendTo(err, user, Message);
    return false;
  }
  return true;
}

} // extern "C"
