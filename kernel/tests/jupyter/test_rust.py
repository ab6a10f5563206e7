"""Passes written in Rust, through the kernel (jupyter_client): a cell
defines a pass, another registers it, pipelines run it; completion knows
it; a compile error is an error reply with the cell's own line numbers; a
panic, a segfault and an endless loop (interrupted) each give an error
reply, and afterwards the kernel, its modules and the pass still work; what
a Rust cell ends with is shown through evcxr's display protocol (passlab's
tables as HTML, its charts as images).

The Rust worker (passlab-evcxr) is built and evcxr's build folder warmed by
scripts/passlab.sh before this runs.
"""

import time
import unittest

from test_protocol import KernelCase, TIMEOUT

RUST_TIMEOUT = 180

MODULE = """:module m --lang c
int f(int x) { return x * 8 + x * 3; }
int g(int x) { return x * 16; }
."""

PASSES = """:rust
use passlab::prelude::*;

/// Replaces `x * 2^k` by `x << k`.
fn strength_reduce(f: FunctionValue<'_>, _ctx: &PassContext) -> Result<()> {
    for inst in instructions(f) {
        if inst.get_opcode() != InstructionOpcode::Mul {
            continue;
        }
        let (Some(x), Some(c)) = (int_operand(inst, 0), int_operand(inst, 1)) else {
            continue;
        };
        let Some(k) = int_constant(c).filter(|c| c.is_power_of_two()).map(u64::trailing_zeros) else {
            continue;
        };
        let shl = builder_before(inst).build_left_shift(x, x.get_type().const_int(k.into(), false), "")?;
        replace_int(inst, shl);
    }
    Ok(())
}
fn boom(_f: FunctionValue<'_>, _ctx: &PassContext) -> Result<()> {
    panic!("boom")
}
fn segv(_f: FunctionValue<'_>, _ctx: &PassContext) -> Result<()> {
    unsafe { std::ptr::null_mut::<u32>().write_volatile(1) };
    Ok(())
}
fn spin(_f: FunctionValue<'_>, _ctx: &PassContext) -> Result<()> {
    loop {
        std::hint::spin_loop();
    }
}
"""


class RustCellTests(KernelCase):
    def ok(self, code, timeout=RUST_TIMEOUT):
        reply, outputs = self.run_cell(code, timeout=timeout)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        return outputs

    def error(self, code, timeout=RUST_TIMEOUT):
        reply, outputs = self.run_cell(code, timeout=timeout, stop_on_error=False)
        self.assertEqual(reply["content"]["status"], "error", self.text_of(outputs))
        errors = [m for m in outputs if m["msg_type"] == "error"]
        self.assertEqual(len(errors), 1)
        return reply["content"]

    def test_rust_passes_in_cells(self):
        self.ok(MODULE)
        start = time.monotonic()
        self.ok(PASSES)
        first = time.monotonic() - start
        print(f"\nfirst :rust cell: {first:.1f} s")
        for name in ["strength_reduce", "boom", "segv", "spin"]:
            pass_name = name.replace("_", "-")
            self.ok(f":register function_pass {pass_name} = {name} opt_level=2")

        # The pass is in the registry: completion and :passes know it.
        msg_id = self.kc.complete(":run mem2reg,strength-r", 22)
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertIn("strength-reduce", reply["content"]["matches"])
        text = self.text_of(self.ok(":passes strength"))
        self.assertIn("yours (:register)", text)
        self.assertIn("Replaces `x * 2^k` by `x << k`.", text)

        # Gated by the context, run like any pass.
        text = self.text_of(self.ok(":with opt_level=1\n:explain mem2reg,strength-reduce\n:end"))
        self.assertIn("skipped", text)
        text = self.text_of(self.ok(":run mem2reg,strength-reduce\n:show g\n:undo"))
        self.assertIn("shl i32 %x, 4", text)

        # A compile error: rustc's diagnostic, at the line of this cell.
        content = self.error(":rust\nfn broken(x: u32) -> bool {\n    x + \"one\"\n}")
        self.assertEqual(content["ename"], "CompileError")
        self.assertIn("cell:3:7", content["evalue"])
        self.assertIn("cannot add `&str` to `u32`", content["evalue"])

        # A panic, a segfault, an endless loop: errors; nothing is lost.
        content = self.error(":run boom")
        self.assertIn("panicked: boom", content["evalue"])
        content = self.error(":run segv")
        self.assertIn("segmentation fault", content["evalue"])
        reply = self.interrupted(":run spin")
        self.assertEqual(reply["content"]["status"], "error")
        self.assertEqual(reply["content"]["ename"], "InterruptedError")
        text = self.text_of(self.ok(":modules\n:run mem2reg,strength-reduce\n:show f"))
        self.assertIn("m ", text)
        self.assertIn("shl i32 %x, 3", text)

        # What a cell ends with goes through evcxr's display protocol.
        outputs = self.ok(
            ":rust\npasslab::Module::from_c(\"int sq(int x) { return x * x; }\", \"sq.c\").unwrap().stats().table()"
        )
        html = [m["content"]["data"].get("text/html", "") for m in outputs
                if m["msg_type"] in ("display_data", "execute_result")]
        self.assertTrue(any("<table" in h and "sq" in h for h in html), outputs)
        outputs = self.ok(
            ":rust\npasslab::chart::Chart::bars(\"sizes\", \"instructions\", "
            "vec![(\"f\".to_string(), 4.0), (\"g\".to_string(), 2.0)])"
        )
        images = [m["content"]["data"] for m in outputs
                  if m["msg_type"] in ("display_data", "execute_result")]
        self.assertTrue(any("image/png" in d and "image/svg+xml" in d for d in images), outputs)
        svg = next(d["image/svg+xml"] for d in images if "image/svg+xml" in d)
        self.assertIn("<svg", svg)


if __name__ == "__main__":
    unittest.main()
