// passlab's in-process C and C++ front end: clang-19's driver turns the
// command line into a cc1 invocation exactly as the clang-19 executable
// would (same resource directory, target, include paths), and a
// CompilerInstance runs it into a module in the caller's LLVMContext.
// Diagnostics are printed as clang prints them, into a string.
//
// This saves the two process start-ups of running clang (driver and cc1,
// ~40 ms on this machine) and the bitcode round trip.

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Driver/Tool.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm-c/Types.h"

#include "guard.h"

#include <memory>
#include <string>
#include <vector>

using namespace clang;

typedef void (*plab_sink)(void *user, const char *data, size_t len);

namespace {

LLVMModuleRef fail(plab_sink sink, void *user, const std::string &text) {
  sink(user, text.data(), text.size());
  return nullptr;
}

} // namespace

extern "C" {

// The compile itself, below: plab_compile runs it guarded.
static LLVMModuleRef compile(LLVMContextRef ctx, const char *clang_path,
                             const char *const *args, size_t nargs,
                             const char *data, size_t len, plab_sink sink,
                             void *user);

/// Compiles one C or C++ source with the clang command line `args` (without
/// the program name; the last argument is the input file). `clang_path` is
/// where the clang executable would be: the driver finds its resource
/// directory from it. With `data` non-null, the input file's contents are
/// `data` (nothing is read from disk for it). Returns the module, in `ctx`,
/// or null after sending clang's diagnostics to `sink`. Warnings are sent
/// too when the compile succeeds.
///
/// The compile runs guarded: an LLVM fatal error while compiling (clang's
/// `#pragma clang __debug llvm_fatal_error`, a back-end limit) returns null
/// with LLVM's message; what the compile built stays in `ctx`, which the
/// caller must then leak (`plab_take_fatal` says so).
LLVMModuleRef plab_compile(LLVMContextRef ctx, const char *clang_path,
                           const char *const *args, size_t nargs,
                           const char *data, size_t len, plab_sink sink,
                           void *user) {
  // clang's back end looks the target up in LLVM's registry.
  plab_init_targets();
  LLVMModuleRef m = nullptr;
  if (!plab::guarded([&] { m = compile(ctx, clang_path, args, nargs, data, len, sink, user); })) {
    std::string text = "LLVM ERROR: " + plab::fatalMessage();
    sink(user, text.data(), text.size());
    return nullptr;
  }
  return m;
}

static LLVMModuleRef compile(LLVMContextRef ctx, const char *clang_path,
                             const char *const *args, size_t nargs,
                             const char *data, size_t len, plab_sink sink,
                             void *user) {
  std::string text;
  llvm::raw_string_ostream os(text);
  IntrusiveRefCntPtr<DiagnosticOptions> opts = new DiagnosticOptions();
  opts->ShowColors = false;
  TextDiagnosticPrinter *printer = new TextDiagnosticPrinter(os, &*opts);
  IntrusiveRefCntPtr<DiagnosticIDs> ids(new DiagnosticIDs());
  DiagnosticsEngine diags(ids, &*opts, printer);

  std::vector<const char *> argv;
  argv.push_back(clang_path);
  for (size_t i = 0; i < nargs; i++)
    argv.push_back(args[i]);
  driver::Driver drv(clang_path, llvm::sys::getDefaultTargetTriple(), diags);
  drv.setCheckInputsExist(data == nullptr);
  std::unique_ptr<driver::Compilation> comp(drv.BuildCompilation(argv));
  if (!comp || diags.hasErrorOccurred())
    return fail(sink, user, os.str());
  const driver::JobList &jobs = comp->getJobs();
  if (jobs.size() != 1 || !llvm::isa<driver::Command>(*jobs.begin()))
    return fail(sink, user, "clang's driver planned more than one step for this command line");
  const driver::Command &cmd = llvm::cast<driver::Command>(*jobs.begin());
  if (llvm::StringRef(cmd.getCreator().getName()) != "clang")
    return fail(sink, user, "clang's driver did not plan a compile for this command line");

  auto inv = std::make_shared<CompilerInvocation>();
  const llvm::opt::ArgStringList &cc1 = cmd.getArguments();
  if (!CompilerInvocation::CreateFromArgs(*inv, cc1, diags, clang_path))
    return fail(sink, user, os.str());
  // The driver asks cc1 to leak its data at exit; a session lives on.
  inv->getFrontendOpts().DisableFree = false;
  inv->getCodeGenOpts().DisableFree = false;
  if (data != nullptr) {
    const auto &inputs = inv->getFrontendOpts().Inputs;
    if (inputs.size() != 1 || !inputs[0].isFile())
      return fail(sink, user, "expected one input file");
    inv->getPreprocessorOpts().addRemappedFile(
        inputs[0].getFile(),
        llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(data, len), inputs[0].getFile())
            .release());
  }

  CompilerInstance ci;
  ci.setInvocation(inv);
  ci.createDiagnostics(new TextDiagnosticPrinter(os, &ci.getDiagnosticOpts()), true);
  // Not "N errors generated." on the process's standard error: the caller
  // reports the diagnostics (and counts the errors itself).
  ci.setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());
  EmitLLVMOnlyAction action(reinterpret_cast<llvm::LLVMContext *>(ctx));
  bool ok = ci.ExecuteAction(action);
  std::unique_ptr<llvm::Module> m = ok ? action.takeModule() : nullptr;
  os.flush();
  if (!m)
    return fail(sink, user, text);
  if (!text.empty())
    sink(user, text.data(), text.size());
  return reinterpret_cast<LLVMModuleRef>(m.release());
}

} // extern "C"
