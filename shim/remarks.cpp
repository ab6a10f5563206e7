// Optimization remarks: a diagnostic handler that asks LLVM's passes for
// every remark (passed, missed, analysis) and hands each one, flattened, to
// a sink, while it is installed on a context. LLVM's passes only build a
// remark when the context's handler says remarks are enabled
// (OptimizationRemarkEmitter::enabled), so nothing is spent on them
// otherwise. Other diagnostics go to the handler that was there before.
//
// A remark is sent as fields separated by 0x1f: kind, pass, remark name,
// function, file, line, column, message, then key/value pairs of its
// arguments (LLVM's "Callee", "Cost", "Threshold", "VectorizationFactor"
// …). Separators inside values are replaced by spaces.
//
// One analysis remark is asked for only when wanted: `size-info`. With it
// enabled, LLVM's legacy pass manager (the back end's) counts the whole
// module's instructions before and after every pass on every function
// (Module::shouldEmitInstrCountChangedRemark): on sqlite3, :asm went from
// 7 s to 140 s for 25,000 remarks nobody had asked for.

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/Casting.h"
#include "llvm-c/Types.h"

#include <memory>
#include <string>

using namespace llvm;

typedef void (*plab_sink)(void *user, const char *data, size_t len);

namespace {

struct RemarkHandler : public DiagnosticHandler {
  std::unique_ptr<DiagnosticHandler> Prev;
  plab_sink Sink;
  void *User;
  bool SizeInfo;

  RemarkHandler(std::unique_ptr<DiagnosticHandler> Prev, plab_sink Sink, void *User,
                bool SizeInfo)
      : Prev(std::move(Prev)), Sink(Sink), User(User), SizeInfo(SizeInfo) {}

  bool isAnalysisRemarkEnabled(StringRef Pass) const override {
    return SizeInfo || Pass != "size-info";
  }
  bool isMissedOptRemarkEnabled(StringRef) const override { return true; }
  bool isPassedOptRemarkEnabled(StringRef) const override { return true; }
  bool isAnyRemarkEnabled() const override { return true; }

  static void field(std::string &Out, StringRef S) {
    for (char C : S)
      Out += (C == '\x1f' || C == '\x1e') ? ' ' : C;
  }

  static const char *kind(int K) {
    switch (K) {
    case DK_OptimizationRemark:
    case DK_MachineOptimizationRemark:
      return "passed";
    case DK_OptimizationRemarkMissed:
    case DK_MachineOptimizationRemarkMissed:
      return "missed";
    case DK_OptimizationFailure:
      return "failure";
    default:
      return "analysis";
    }
  }

  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    const auto *R = dyn_cast<DiagnosticInfoOptimizationBase>(&DI);
    if (!R)
      return Prev ? Prev->handleDiagnostics(DI) : false;
    std::string Out;
    Out += kind(DI.getKind());
    Out += '\x1f';
    field(Out, R->getPassName());
    Out += '\x1f';
    field(Out, R->getRemarkName());
    Out += '\x1f';
    field(Out, R->getFunction().getName());
    Out += '\x1f';
    if (R->isLocationAvailable()) {
      DiagnosticLocation L = R->getLocation();
      field(Out, L.getAbsolutePath());
      Out += '\x1f' + std::to_string(L.getLine()) + '\x1f' + std::to_string(L.getColumn());
    } else {
      Out += "\x1f" "0" "\x1f" "0";
    }
    Out += '\x1f';
    field(Out, R->getMsg());
    for (const auto &A : R->getArgs()) {
      Out += '\x1f';
      field(Out, A.Key);
      Out += '\x1f';
      field(Out, A.Val);
    }
    Sink(User, Out.data(), Out.size());
    return true;
  }
};

} // namespace

extern "C" {

/// Installs the remark handler on `ctx` (each remark to `sink`; the
/// `size-info` analysis remarks too when `options` has bit 1); nothing when
/// one of ours is there already.
void plab_remarks_install(LLVMContextRef ctx, plab_sink sink, void *user, unsigned options) {
  LLVMContext &C = *reinterpret_cast<LLVMContext *>(ctx);
  // LLVM is built with RTTI here (llvm-config --has-rtti).
  if (dynamic_cast<const RemarkHandler *>(C.getDiagHandlerPtr()))
    return;
  C.setDiagnosticHandler(std::make_unique<RemarkHandler>(C.getDiagnosticHandler(), sink, user,
                                                         (options & 1) != 0));
}

/// Puts back the handler that was there before ours; nothing when ours is
/// not installed.
void plab_remarks_remove(LLVMContextRef ctx) {
  LLVMContext &C = *reinterpret_cast<LLVMContext *>(ctx);
  const auto *Ours = dynamic_cast<const RemarkHandler *>(C.getDiagHandlerPtr());
  if (!Ours)
    return;
  std::unique_ptr<DiagnosticHandler> Cur = C.getDiagnosticHandler();
  auto *R = static_cast<RemarkHandler *>(Cur.get());
  std::unique_ptr<DiagnosticHandler> Prev = std::move(R->Prev);
  C.setDiagnosticHandler(Prev ? std::move(Prev) : std::make_unique<DiagnosticHandler>());
}

} // extern "C"
