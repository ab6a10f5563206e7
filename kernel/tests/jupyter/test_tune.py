"""`:tune` in the kernel: the same seed gives the same table; a candidate
that changes the function's result is flagged and never the best; the
search shows its progress as one display updated in place; an interrupt
stops it, keeps the best found so far and the session's modules; the
convergence chart is an image.
"""

import time
import unittest

from test_protocol import KernelCase, TIMEOUT

SETUP = ":load zlib/adler32.c\n:buffer data i8[4096] = random(1)"
TUNE = ":tune adler32 1 data 4096 trials=20 seed=4 strategy=random,hill top=3"


class TuneTests(KernelCase):
    def table(self, outputs):
        tables = [
            m["content"]["data"]
            for m in outputs
            if m["msg_type"] in ("display_data", "execute_result")
            and "text/html" in m["content"]["data"]
            and "<table" in m["content"]["data"]["text/html"]
        ]
        self.assertTrue(tables, [m["msg_type"] for m in outputs])
        return tables[-1]

    def test_the_same_seed_gives_the_same_table(self):
        reply, _ = self.run_cell(SETUP)
        self.assertEqual(reply["content"]["status"], "ok")
        reply, first = self.run_cell(TUNE, timeout=120)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(first))
        reply, second = self.run_cell(TUNE, timeout=120)
        self.assertEqual(reply["content"]["status"], "ok")
        a, b = self.table(first), self.table(second)
        self.assertIn("best orderings for instructions (40 trials, seed 4)", a["text/plain"])
        # Times are not in the table: the two are the same text.
        self.assertEqual(a["text/plain"], b["text/plain"])
        # The progress: one display, then updates of it (transient ids).
        shown = [m for m in first if m["msg_type"] == "display_data" and "display_id" in m["content"].get("transient", {})]
        updates = [m for m in first if m["msg_type"] == "update_display_data"]
        self.assertEqual(len(shown), 1)
        self.assertGreater(len(updates), 5)
        self.assertIn("<progress", updates[0]["content"]["data"]["text/html"])
        self.assertEqual(updates[-1]["content"]["transient"]["display_id"], shown[0]["content"]["transient"]["display_id"])
        # The chart and the best applied.
        reply, outputs = self.run_cell(":plot tune")
        self.assertEqual(reply["content"]["status"], "ok")
        data = [m["content"]["data"] for m in outputs if m["msg_type"] == "display_data"]
        self.assertTrue(any("image/png" in d and "image/svg+xml" in d for d in data))
        reply, outputs = self.run_cell(":tune apply\n:undo")
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        self.assertIn("659 -> ", self.text_of(outputs))

    def test_a_miscompile_is_flagged_and_never_the_best(self):
        self.run_cell(":module ub --lang c\nint f(int x) { return x + 1 > x; }")
        reply, outputs = self.run_cell(":tune f 2147483647 trials=12 seed=3 length=1..3 pool=instcombine,simplifycfg,sroa,dce")
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        text = self.table(outputs)["text/plain"]
        self.assertIn("possible miscompiles:", text)
        best = [l for l in text.splitlines() if l.startswith("|") and "random #" in l]
        self.assertTrue(best)
        self.assertTrue(all(l.rstrip(" |").endswith("same") for l in best), best)
        self.assertIn("DIFFERENT (1, input module 0): possible miscompile", text)

    def test_an_interrupt_keeps_the_best_found_so_far(self):
        self.run_cell(SETUP)
        msg_id = self.kc.execute(":tune adler32 1 data 4096 seconds=120 seed=1")
        # The interrupt follows the first progress update that shows a
        # valid best from the search (not a baseline's): from then on there
        # is a best to keep, however fast or slow the trials are.
        outputs = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            outputs.append(msg)
            if msg["msg_type"] in ("display_data", "update_display_data"):
                text = msg["content"]["data"].get("text/plain", "")
                if ": best " in text and "none valid yet" not in text:
                    break
        start = time.monotonic()
        self.km.interrupt_kernel()
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual(reply["content"]["status"], "ok")
        while True:
            msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            outputs.append(msg)
        text = self.table(outputs)["text/plain"]
        self.assertIn("interrupted after", text)
        self.assertIn("best: ", text)
        # The session goes on, its module as it was.
        reply, outputs = self.run_cell(":stats")
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertIn("659 instructions", self.text_of(outputs))
        reply, outputs = self.run_cell(":tune apply")
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))


if __name__ == "__main__":
    unittest.main()
