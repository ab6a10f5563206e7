"""`:export` from a notebook cell: the commands that succeeded in the
kernel's session, written as a script, rebuild the same module (the same IR,
byte for byte) and the same context stack when a fresh kernel runs the
script as a cell, and when `passlab run` runs it.
"""

import os
import subprocess
import tempfile
import unittest

from test_protocol import KernelCase, ROOT

CELLS = [
    ":module m --lang c\nint f(int x) {\n  int y = x * 2;\n  return y + 0;\n}",
    ":with opt_level=3 disabled=licm\n:pass cleanup = mem2reg,instcombine",
    ":run no-such-pass",
    ":run cleanup\n:with config.llvm.loop_unrolling=false",
    ":call f 21",
]


class ExportTests(KernelCase):
    def test_an_exported_cell_session_replays(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "session.plab")
            for cell in CELLS:
                self.run_cell(cell)
            reply, outputs = self.run_cell(f":export {script}")
            self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
            self.assertIn("passlab run", self.text_of(outputs))
            with open(script) as f:
                text = f.read()
            self.assertNotIn("no-such-pass", text)
            # A module's source that ran to the end of its cell is ended
            # with '.' in the script.
            self.assertIn("  return y + 0;\n}\n.\n", text)

            first = os.path.join(tmp, "first.ll")
            reply, outputs = self.run_cell(f":save {first}\n:context")
            self.assertEqual(reply["content"]["status"], "ok")
            first_context = self.text_of(outputs).split("\n", 1)[1]
            self.assertIn("opt_level=3 disabled=licm config.llvm.loop_unrolling=false", first_context)

            # A fresh kernel given the script as one cell.
            self.km.restart_kernel(now=True)
            self.kc.wait_for_ready(timeout=30)
            second = os.path.join(tmp, "second.ll")
            reply, outputs = self.run_cell(text + f":save {second}\n:context")
            self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
            self.assertIn("f(21) = 42", self.text_of(outputs))
            self.assertTrue(self.text_of(outputs).endswith(first_context))
            with open(first) as a, open(second) as b:
                self.assertEqual(a.read(), b.read())

            # And passlab run, as the export's message says.
            passlab = os.path.join(ROOT, "target", "debug", "passlab")
            self.assertTrue(os.path.exists(passlab), "the test command builds target/debug/passlab")
            third = os.path.join(tmp, "third.ll")
            with open(script, "a") as f:
                f.write(f":save {third}\n")
            subprocess.run([passlab, "run", script], check=True, cwd=tmp, capture_output=True)
            with open(first) as a, open(third) as c:
                self.assertEqual(a.read(), c.read())


if __name__ == "__main__":
    unittest.main()
