"""Jupyter's own kernel test suite (jupyter_kernel_test) against the
installed `passlab` kernelspec, with every test that applies to the passlab
command language enabled.

Not applicable, so left unset: `code_page_something` (passlab has no pager
payloads) and `code_clear_output` (no command clears output).
"""

import unittest

import jupyter_kernel_test

# The module every cell below works on, defined once before the suite (no
# cell defines another, so it stays the current one). The suite takes a
# cell's first stdout message as its whole output, and the kernel sends
# printed text that has waited 200 ms (ipykernel's flush interval): a cell
# printing a module's summary and then compiling a call gives two messages
# when the compile is slow.
MODULE = """:module io --lang c
#include <stdio.h>
void hello(void) { printf("hello, world\\n"); }
int oops(void) { fprintf(stderr, "oops, on standard error\\n"); return 1; }
int sq(int x) { return x * x; }
"""

HELLO = ":call hello"

# JIT-compiled C writing to standard error: a `stream` named stderr (what
# the program writes, not a compiler warning).
STDERR = ":call oops"

CHART = """:instrument timing
:run O2
:plot timing"""


class PasslabKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "passlab"
    language_name = "passlab"
    file_extension = ".plab"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        reply = cls.kc.execute_interactive(MODULE, timeout=120, output_hook=lambda _: None)
        assert reply["content"]["status"] == "ok", reply["content"]

    code_hello_world = HELLO
    code_stderr = STDERR

    completion_samples = [
        {"text": ":ru", "matches": {":run", ":rust"}},
        {"text": ":run mem2reg,instcombin", "matches": {"instcombine"}},
        {"text": ":plot ti", "matches": {"timing"}},
        {"text": ":with config.jit.time", "matches": {"config.jit.timeout_ms="}},
        {"text": ":with cpu=skylake-a", "matches": {"skylake-avx512"}},
    ]

    complete_code_samples = [
        ":stats",
        ":run O2",
        ":help",
        "# a comment",
        ":module m --lang c\nint f(void) { return 1; }\n.\n:stats",
        CHART,
    ]
    incomplete_code_samples = [":module m --lang c", ":module m --lang c\nint f(void) {"]
    invalid_code_samples = ["int x;", ":nosuchcommand", ":rnu O2"]

    code_generate_error = ":run nosuchpass"

    code_execute_result = [
        {
            "code": ":help undo",
            "result": ":undo\n  put the current module back as it was before the last :run"
            " (refused, saying which, when the last :run was on another module)",
        },
        {"code": ":help end", "result": ":end\n  leave the innermost :with context"},
    ]

    code_display_data = [
        {"code": CHART, "mime": "image/svg+xml"},
        {"code": CHART, "mime": "image/png"},
    ]

    # (a cell the suite runs: code_execute_result's)
    code_history_pattern = ":help u*"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = ":run licm"


class PasslabIopubWelcomeTests(jupyter_kernel_test.IopubWelcomeTests):
    kernel_name = "passlab"
    support_iopub_welcome = True


if __name__ == "__main__":
    unittest.main()
