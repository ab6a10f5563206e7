"""What a notebook shows for IR: `:show` and `:diff` carry syntax-highlighted
HTML (a `<pre>` of coloured spans) beside the text, and the text is exactly
what the REPL prints."""

import base64
import gzip
import json
import os
import re
import subprocess
import unittest

from test_protocol import KernelCase, ROOT

MODULE = ":module m --lang c\nint f(int x) {\n  return x * 2 + 0;\n}\n.\n"


class DisplayTests(KernelCase):
    def bundles(self, outputs):
        return [m["content"]["data"] for m in outputs if m["msg_type"] in ("execute_result", "display_data")]

    def test_show_and_diff_are_highlighted_and_their_text_is_the_repls(self):
        cell = MODULE + ":copy before\n:use m\n:run mem2reg,instcombine\n:show f\n:diff before m f"
        reply, outputs = self.run_cell(cell)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        show, diff = self.bundles(outputs)[-2:]
        for data in (show, diff):
            html = data["text/html"]
            self.assertTrue(html.startswith("<pre"), html[:200])
            self.assertGreaterEqual(len(set(part.split(";")[0] for part in html.split("color:")[1:])), 3, html)
        self.assertIn("shl nsw i32 %x, 1", show["text/plain"])
        self.assertIn("+++ m/f", diff["text/plain"])

        passlab = os.path.join(ROOT, "target", "debug", "passlab")
        repl = subprocess.run([passlab, "run", "-"], input=cell + "\n", capture_output=True, text=True,
                              check=True).stdout
        self.assertIn(show["text/plain"], repl)
        self.assertIn(diff["text/plain"], repl)

    def test_asm_links_source_and_code_by_colour(self):
        cell = (":module loop --lang c cflags=-g\nint sum(const int *a, int n) {\n  int s = 0;\n"
                "  for (int i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n.\n:run O2\n:asm sum")
        reply, outputs = self.run_cell(cell)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        data = self.bundles(outputs)[-1]
        html = data["text/html"]
        # Two panes: the source with line numbers, the code; a source line
        # and its instructions share a key and a colour class, and hovering
        # one marks the other (a CSS :has rule per line).
        self.assertIn('class="plab-asm"', html)
        self.assertIn('data-s="0-5"', html)
        self.assertIn(':has([data-s="0-5"]:hover)', html)
        self.assertGreaterEqual(html.count('data-s="0-5"'), 2, html[:2000])
        self.assertIn("s += a[i];", html)
        self.assertIn("sum:", data["text/plain"])
        self.assertIn("bytes)", data["text/plain"])

        reply, outputs = self.run_cell(":asm summ")
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("no function 'summ'", reply["content"]["evalue"])
        self.assertIn("did you mean 'sum'", reply["content"]["evalue"])

    def test_asm_side_by_side_is_two_panes_with_differences_marked(self):
        cell = (":module g --lang c cflags=-g\nfloat dot(float *a, float *b, int n) {\n"
                "  float s = 0;\n  for (int i = 0; i < n; i++) s += a[i] * b[i];\n  return s;\n}\n.\n"
                ":copy o0\n:use g\n:run O2\n:asm dot modules=o0,g")
        reply, outputs = self.run_cell(cell)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        data = self.bundles(outputs)[-1]
        text, html = data["text/plain"], data["text/html"]
        self.assertIn("'dot' side by side", text)
        # Both compilations named, rows of both, marks between them.
        self.assertIn("o0 · codegen O2", text)
        self.assertIn("g · codegen O2", text)
        self.assertTrue(re.search(r"\S\s+[|<>]\s+\S", text), text[:2000])
        # Two panes: a column per compilation; changed rows tinted.
        self.assertIn('class="plab-sbs"', html)
        self.assertIn('<td class="a', html)
        self.assertIn('<td class="b', html)
        self.assertTrue('<tr class="c">' in html or '<tr class="l">' in html, html[:2000])

    def test_mca_compares_processors_with_tables_and_a_chart(self):
        cell = (":module loop2 --lang c\nint sum(const int *a, int n) {\n  int s = 0;\n"
                "  for (int i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n.\n:run O2\n"
                ":mca sum cpu=x86-64,skylake")
        reply, outputs = self.run_cell(cell)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        bundles = self.bundles(outputs)
        tables = [b for b in bundles if "<table" in b.get("text/html", "")]
        self.assertGreaterEqual(len(tables), 2, self.text_of(outputs))
        self.assertIn("cycles/iteration", tables[0]["text/html"])
        self.assertIn("cpu skylake", tables[0]["text/plain"])
        self.assertIn("SKLPort0", tables[1]["text/plain"])
        charts = [b for b in bundles if "image/png" in b]
        self.assertEqual(len(charts), 1, self.text_of(outputs))
        self.assertIn("cycles per iteration", charts[0]["text/plain"])

        reply, outputs = self.run_cell(":mca sum cpu=skylak")
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("nearest: skylake", reply["content"]["evalue"])
        reply, outputs = self.run_cell(":mca sum .LBB9_9")
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("its blocks: .LBB0_", reply["content"]["evalue"])

    def test_explorer_shows_machine_passes_after_the_ir_passes(self):
        cell = (":module loop3 --lang c\nint total(const int *a, int n) {\n  int s = 0;\n"
                "  for (int i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n.\n"
                ":instrument explore print-changed=virtregrewriter functions=total\n:run O2\n:asm total\n"
                ":explore total")
        reply, outputs = self.run_cell(cell)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        text = self.text_of(outputs)
        # print-changed diffed the machine code after the register rewriter.
        self.assertIn("*** IR Dump After virtregrewriter on function total ***", text)
        self.assertIn("recorded for explore, print-changed", text)
        pages = [b["text/html"] for b in self.bundles(outputs) if "plab-x" in b.get("text/html", "")]
        self.assertEqual(len(pages), 1, text)
        # The back end's passes follow the middle end's in the explorer's
        # data (gzip-compressed, in a JSON script element).
        data = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', pages[0], re.S)
        meta = json.loads(gzip.decompress(base64.b64decode(json.loads(data.group(1))["meta"])))
        passes = [meta["names"][i] for i in meta["pn"]]
        self.assertIn("codegen (codegen O2)", passes)
        self.assertLess(passes.index("loop-vectorize"), passes.index("x86-isel"))
        # The allocator's rewriter changed the function: a version of it.
        changed = {meta["names"][meta["pn"][p]] for p, fs in enumerate(meta["cb"]) if fs}
        self.assertIn("virtregrewriter", changed)
        reply, outputs = self.run_cell(":instrument clear")
        self.assertEqual(reply["content"]["status"], "ok")


if __name__ == "__main__":
    unittest.main()
