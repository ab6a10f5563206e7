"""Inputs that must not take the kernel down, as cells: computed goto,
inline assembly that does not assemble, an undefined external, signatures
calls cannot carry, 200 MB of output, exit(), a stack overflow, C that
crashes clang itself, cells of 50 MB. Each cell
gets its reply (an error where it should), and after each one a sentinel
call in the same session still answers; the kernel process is the same
one throughout. JIT'd code's standard output and standard error arrive as
separate streams.
"""

import unittest

from test_protocol import KernelCase

SENTINEL = ":use sentinel\n:call add 2 40"

CASES = [
    # (cell, expected status, text the reply or output must contain)
    (""":module interp --lang c
static int interp(const int *code, int x) {
  static void *dispatch[] = { &&mul, &&jnz, &&halt };
  int acc = 1, pc = 0, n = x;
  goto *dispatch[code[pc++]];
mul: acc *= n; goto *dispatch[code[pc++]];
jnz: if (--n > 0) pc = code[pc]; else pc++; goto *dispatch[code[pc++]];
halt: return acc;
}
int factorial(int x) { static const int code[] = { 0, 1, 0, 2 }; return interp(code, x); }
.
:call factorial 5
:run O3
:call factorial 6""", "ok", "factorial(6) = 720"),
    (""":module asm --lang c
int f(int x) { __asm__("frobnicate %eax"); return x; }
.
:call f 1""", "error", "invalid instruction mnemonic 'frobnicate'"),
    (""":module ext --lang c
extern int helper(int);
int uses(int x) { return helper(x) + 1; }
.
:call uses 1""", "error", "undefined: helper"),
    (""":module sig --lang c
long ld(long double x) { return (long) x; }
.
:call ld 1""", "error", "x86_fp80"),
    (""":module loud --lang c
#include <stdio.h>
long loud(long n) { for (long i = 0; i < n; i++) printf("line %09ld of 200 MB of output\\n", i); return n; }
.
:with config.jit.max_output=4096 config.jit.timeout_ms=120000
:call loud 6250000
:end""", "ok", "bytes of standard output left out"),
    (""":module quit --lang c
#include <stdlib.h>
int bye(int x) { exit(x); }
.
:call bye 3""", "error", "exited (status 3)"),
    (""":module deep --lang c
int deep(int x) { volatile char pad[4096]; pad[0] = x; return deep(x + 1) + pad[0]; }
.
:call deep 1""", "error", "SIGSEGV"),
    # clang itself crashes: the front end runs in a child of the kernel.
    (""":module boom --lang c
#pragma clang __debug crash
int f(void) { return 1; }""", "error", "clang-19 itself crashed with SIGILL"),
]

# Cells of 50 MB that fail: the error quotes a slice of them, never the
# whole (the request's own echo, execute_input, is the protocol's).
HUGE = 50 * 1024 * 1024
HUGE_CELLS = [
    (":" + "x" * HUGE, "unknown command"),
    (":module m --lang llvm\ndefine void @f() { " + "x" * HUGE + " }", "expected instruction opcode"),
]


def crashing_plugin():
    """tests/plugin/crashing_plugin.cpp built with clang++-19: passes that
    crash on a function named boom (tests/plugin.rs builds it too;
    scripts/test-plugin.sh keeps the build in the user's cache)."""
    import os
    import subprocess
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    out = os.path.join(root, "target", "test-plugin", "kernel-crashing_plugin.so")
    subprocess.run(["sh", os.path.join(root, "scripts", "test-plugin.sh"), "crashing_plugin", out, "-O1"],
                   check=True)
    return out


class BadInputTests(KernelCase):
    def test_a_crashing_plugin_pass_leaves_the_kernel_and_its_modules(self):
        plugin = crashing_plugin()
        reply, _ = self.run_cell(f":plugin {plugin}\n:module m --lang c\n"
                                 "int boom(int x) { return x * 3; }\nint fine(int x) { return x + 1; }")
        self.assertEqual(reply["content"]["status"], "ok")
        pid = self.km.provisioner.process.pid
        _, before = self.run_cell(":use m\n:show")
        for pass_, signal in [("crash-segv", "SIGSEGV"), ("crash-abort", "SIGABRT"), ("crash-overflow", "SIGSEGV")]:
            reply, outputs = self.run_cell(f":use m\n:run mem2reg,{pass_}", timeout=120)
            self.assertEqual(reply["content"]["status"], "error")
            said = reply["content"]["evalue"] + self.text_of(outputs)
            self.assertIn(f"the pass '{pass_}' crashed on function 'boom'", said)
            self.assertIn(signal, said)
            _, after = self.run_cell(":use m\n:show")
            self.assertEqual(self.text_of(after), self.text_of(before))
        reply, outputs = self.run_cell(":use m\n:run O2\n:call boom 14")
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertIn("boom(14) = 42", self.text_of(outputs))
        self.assertEqual(self.km.provisioner.process.pid, pid)

    def test_no_input_ends_the_kernel(self):
        reply, _ = self.run_cell(":module sentinel --lang c\nint add(int a, int b) { return a + b; }")
        self.assertEqual(reply["content"]["status"], "ok")
        pid = self.km.provisioner.process.pid
        for cell, status, expect in CASES:
            reply, outputs = self.run_cell(cell, timeout=120)
            content = reply["content"]
            text = self.text_of(outputs)
            self.assertEqual(content["status"], status, f"{cell}\n{text}")
            self.assertIn(expect, text + content.get("evalue", ""), cell)
            # A capped output stays small on the wire.
            self.assertLess(sum(len(m["content"].get("text", "")) for m in outputs), 64 * 1024)
            reply, outputs = self.run_cell(SENTINEL)
            self.assertEqual(reply["content"]["status"], "ok", cell)
            self.assertIn("add(2, 40) = 42", self.text_of(outputs))
        self.assertTrue(self.km.is_alive())
        self.assertEqual(self.km.provisioner.process.pid, pid)

    def test_a_huge_failing_cell_gets_a_small_reply(self):
        import json
        for cell, expect in HUGE_CELLS:
            reply, outputs = self.run_cell(cell, timeout=300)
            self.assertEqual(reply["content"]["status"], "error")
            size = len(json.dumps(reply["content"])) + sum(
                len(json.dumps(m["content"])) for m in outputs if m["msg_type"] != "execute_input")
            self.assertLess(size, 64 * 1024, cell[:80])
            self.assertIn(expect, reply["content"]["evalue"])
        reply, _ = self.run_cell(":modules")
        self.assertEqual(reply["content"]["status"], "ok")

    def test_stdout_and_stderr_are_separate_streams(self):
        reply, outputs = self.run_cell(""":module both --lang c
#include <stdio.h>
int both(void) { printf("out 1\\n"); fprintf(stderr, "err 1\\n"); printf("out 2\\n"); fprintf(stderr, "err 2\\n"); return 0; }
.
:call both""")
        self.assertEqual(reply["content"]["status"], "ok")
        streams = {}
        for m in outputs:
            if m["msg_type"] == "stream":
                streams[m["content"]["name"]] = streams.get(m["content"]["name"], "") + m["content"]["text"]
        self.assertIn("out 1\nout 2\n", streams.get("stdout", ""))
        self.assertEqual(streams.get("stderr"), "err 1\nerr 2\n")


if __name__ == "__main__":
    unittest.main()
