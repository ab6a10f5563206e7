"""Optimization remarks in a notebook: `:instrument remarks` records them,
`:report remarks` is a table (HTML beside the text), `:report remarks
source` the annotated source (an interactive page whose data holds every
remark with its line, beside the text the REPL prints), `:report remarks
compare` what changed between two runs, `:plot remarks` a chart, and the
explorer carries each pass's remarks. Filters, a missed vectorization, an
inlining decision with its cost and threshold, a user pass's remark and a
module without debug info are each checked."""

import base64
import gzip
import json
import re
import unittest

from test_protocol import KernelCase

# Compiled for optimization with LLVM's passes left to passlab, with lines.
CFLAGS = "cflags=-g,-O2,-Xclang,-disable-llvm-passes"
LOOPS = (f":module loops --lang c {CFLAGS}\n"
         "float sum(const float *a, int n) {\n  float s = 0;\n  // here\n"
         "  for (int i = 0; i < n; i++)\n    s += a[i];\n  return s;\n}\n"
         "static int sq(int x) { return x * x; }\n"
         "int big(int x) {\n  int s = 0;\n"
         + "".join(f"  for (int i = 0; i < x; i++) s += (s >> {k}) ^ (i * {k + 2}) ^ (s << {k}) ^ (i % {k + 4}) ^ (s / {k + 2});\n"
                   for k in range(1, 6))
         + "  return s;\n}\n"
         "int f(int y) { return sq(y) + big(y) + big(y + 1); }\n.\n")
FIXED = LOOPS.replace(":module loops", ":module fixed").replace(
    "  // here\n", "#pragma clang loop vectorize(enable)\n")


def page_data(html):
    """The annotated source page's embedded data (gzip'd JSON)."""
    data = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)
    return json.loads(gzip.decompress(base64.b64decode(json.loads(data.group(1))["data"])))


class RemarksTests(KernelCase):
    def bundles(self, outputs):
        return [m["content"]["data"] for m in outputs if m["msg_type"] in ("execute_result", "display_data")]

    def ok(self, cell):
        reply, outputs = self.run_cell(cell)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        return outputs

    def error(self, cell):
        reply, _ = self.run_cell(cell, stop_on_error=False)
        self.assertEqual(reply["content"]["status"], "error", cell)
        return reply["content"]["evalue"]

    def test_remarks_table_source_compare_and_chart(self):
        self.ok(LOOPS + ":instrument remarks explore\n:run default<O2>")
        # The table: a missed vectorization with its reason, filters.
        table = self.bundles(self.ok(":report remarks passes=loop-vectorize functions=sum"))[-1]
        self.assertIn("<table", table["text/html"])
        self.assertIn("cannot prove it is safe to reorder floating-point operations", table["text/plain"])
        self.assertNotIn("inline", table["text/plain"])
        # The inliner's decisions with cost and threshold.
        inline = self.bundles(self.ok(":report remarks passes=inline"))[-1]["text/plain"]
        self.assertIn("'big' not inlined into 'f' because too costly to inline (cost=", inline)
        self.assertIn("threshold=", inline)
        self.assertIn("'sq' inlined into 'f'", inline)
        # The annotated source: text as the REPL prints it, and a page whose
        # data has every remark, with the source line's text.
        source = self.bundles(self.ok(":report remarks source kinds=missed,analysis"))[-1]
        self.assertIn("loops.c:5:     s += a[i];", source["text/plain"])
        self.assertIn('class="plab-remarks"', source["text/html"])
        data = page_data(source["text/html"])
        kinds = {data["k"][i] for i in range(len(data["k"]))}
        self.assertEqual(kinds, {1, 2}, "kinds=missed,analysis keeps those two kinds")
        self.assertEqual(data["files"], ["loops.c"])
        self.assertIn(5, data["l"])

        # The same source with the pragma: the missed remark turns into
        # "vectorized", line by line.
        self.ok(FIXED + ":run default<O2>")
        runs = self.bundles(self.ok(":report remarks runs"))[-1]["text/plain"]
        self.assertIn("default<O2> on loops", runs)
        self.assertIn("default<O2> on fixed", runs)
        compare = self.bundles(self.ok(":report remarks compare passes=loop-vectorize"))[-1]
        text = compare["text/plain"]
        self.assertIn("<table", compare["text/html"])
        self.assertIn("changed", text)
        self.assertIn("missed: loop not vectorized", text)
        self.assertIn("passed: vectorized loop (vectorization width:", text)
        self.assertIn("loops.c and fixed.c compared line by line as one file", text)

        # The chart of remarks by pass and kind.
        chart = self.bundles(self.ok(":plot remarks top=5"))[-1]
        self.assertIn("image/png", chart)
        self.assertIn("remarks by pass", chart["text/plain"])

        # Mistakes say what would be valid.
        self.assertIn("did you mean 'missed'", self.error(":report remarks kinds=mised"))
        self.assertIn("'7' is not a run: 2 recorded", self.error(":report remarks compare 1 7"))
        self.assertIn("--out expects a file name", self.error(":report remarks source --out"))
        self.assertIn("--out writes the annotated source", self.error(":report remarks runs --out x.html"))

    def test_the_explorer_carries_each_pass_remarks(self):
        self.ok(LOOPS.replace("loops", "loops2") + ":instrument remarks explore\n:run default<O2>")
        outputs = self.ok(":explore sum")
        page = [b["text/html"] for b in self.bundles(outputs) if "plab-x" in b.get("text/html", "")][0]
        data = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
        meta = json.loads(gzip.decompress(base64.b64decode(json.loads(data.group(1))["meta"])))
        r = meta["remarks"]
        passes = [meta["names"][i] for i in meta["pn"]]
        # Each remark names its pass execution: loop-vectorize's missed
        # remark on sum sits on a loop-vectorize execution.
        sum_ix = [f[0] for f in meta["functions"]].index("sum")
        missed = [i for i in range(len(r["x"])) if r["k"][i] == 1 and r["f"][i] == sum_ix
                  and r["s"][r["p"][i]] == "loop-vectorize"]
        self.assertTrue(missed, r)
        self.assertEqual(passes[r["x"][missed[0]]], "loop-vectorize")
        # :asm adds the back end's remarks as a run of their own, and the
        # explorer shows them on its machine passes.
        self.ok(":asm f")
        runs = self.bundles(self.ok(":report remarks runs"))[-1]["text/plain"]
        self.assertIn("codegen (codegen O2) on loops2", runs)
        table = self.bundles(self.ok(":report remarks passes=asm-printer,prologepilog"))[-1]["text/plain"]
        self.assertIn("instructions in function", table)
        self.assertIn("stack bytes in function", table)
        page = [b["text/html"] for b in self.bundles(self.ok(":explore f")) if "plab-x" in b.get("text/html", "")][0]
        data = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
        meta2 = json.loads(gzip.decompress(base64.b64decode(json.loads(data.group(1))["meta"])))
        names2 = [meta2["names"][i] for i in meta2["pn"]]
        printed = [meta2["remarks"]["x"][i] for i in range(len(meta2["remarks"]["x"]))
                   if "instructions in function" in meta2["remarks"]["s"][meta2["remarks"]["m"][i]]]
        self.assertTrue(printed and all("Assembly Printer" in names2[x] for x in printed), printed)
        # The text form marks the passes with remarks.
        self.assertRegex(self.text_of(outputs) + str(self.bundles(outputs)[-1]["text/plain"]),
                         r"loop-vectorize .*\(\d+ remarks?\)")

    def test_user_passes_and_modules_without_debug_info(self):
        self.ok(":module plain --lang c\nfloat t(const float *a, int n) { float s = 0; "
                "for (int i = 0; i < n; i++) s += a[i]; return s; }\n.\n"
                ":instrument remarks\n:run default<O2>")
        text = self.bundles(self.ok(":report remarks source"))[-1]["text/plain"]
        self.assertEqual(text.count("the module has no debug info"), 1, text)
        # passlab's own pass emits a remark through the prelude's remark().
        self.ok(":module dead\ndefine internal i32 @unused(i32 %x) {\n  ret i32 %x\n}\n"
                "define i32 @main() {\n  ret i32 0\n}\n.\n:run strip-dead-internals")
        table = self.bundles(self.ok(":report remarks"))[-1]["text/plain"]
        self.assertIn("strip-dead-internals", table)
        self.assertIn("removed: internal, and nothing refers to it", table)


if __name__ == "__main__":
    unittest.main()
