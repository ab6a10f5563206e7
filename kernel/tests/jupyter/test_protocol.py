"""Protocol tests of our own, through jupyter_client (the reference client):
a message with a wrong signature is dropped and the next valid request is
answered; an interrupt during a long JIT call gives an error and keeps the
session's modules; shutdown is clean; and a soak of many executes loses no
reply and does not grow the kernel's memory.
"""

import datetime
import os
import queue
import shutil
import tempfile
import time
import unittest

from jupyter_client.manager import KernelManager
from jupyter_client.session import Session

TIMEOUT = 30
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SOAK = int(os.environ.get("PASSLAB_SOAK", "5000"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class KernelCase(unittest.TestCase):
    # Variables added to the kernel's environment.
    extra_env = {}

    def setUp(self):
        self.km = KernelManager(kernel_name="passlab")
        self.km.start_kernel(env=dict(os.environ, **self.extra_env))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=TIMEOUT)

    def tearDown(self):
        self.kc.stop_channels()
        if self.km.is_alive():
            self.km.shutdown_kernel(now=True)

    def run_cell(self, code, timeout=TIMEOUT, stop_on_error=True):
        """Executes code; returns the reply and the iopub messages up to idle.
        A cell expected to fail is sent with stop_on_error=False, as nbclient
        sends a cell tagged raises-exception: its error aborts nothing."""
        msg_id = self.kc.execute(code, stop_on_error=stop_on_error)
        reply = self.kc.get_shell_msg(timeout=timeout)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        outputs = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return reply, outputs
            outputs.append(msg)

    def interrupted(self, code, started=lambda: True):
        """Executes code, which must not end by itself, interrupts it once
        the kernel has started it and `started()` says that what is to be
        interrupted runs, and returns its reply, which must come
        within 15 s of the first interrupt (a bound on a hang, not a speed:
        an interrupted Rust pass's reply follows the worker's restart, which
        took 5.2 s with the test command's four streams on two cores).

        The session forgets an interrupt that comes before its command
        starts, and a JIT call's child gets only one that comes once it
        runs; so the interrupt is sent again until the reply comes. What
        decides the outcome is that the code runs until interrupted, not
        how soon it gets going."""
        msg_id = self.kc.execute(code)
        while True:
            msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "busy"):
                break
        waited = time.monotonic()
        while not started():
            self.assertLess(time.monotonic() - waited, TIMEOUT, "it did not start")
            time.sleep(0.02)
        start = time.monotonic()
        sent = 0
        while True:
            self.km.interrupt_kernel()
            sent += 1
            try:
                reply = self.kc.get_shell_msg(timeout=0.25)
                break
            except queue.Empty:
                self.assertLess(time.monotonic() - start, 15, "no reply to the interrupts")
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertLess(time.monotonic() - start, 15)
        # Every interrupt sent has been handled (its idle status is out)
        # before the next cell, which none of them may reach.
        handled = 0
        while handled < sent:
            msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if (msg["parent_header"].get("msg_type") == "interrupt_request" and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle"):
                handled += 1
        # The next cell comes as a person's would, not within the 50 ms
        # after an error reply in which requests are aborted (stop_on_error).
        time.sleep(0.1)
        return reply

    def text_of(self, outputs):
        parts = []
        for m in outputs:
            c = m["content"]
            if m["msg_type"] == "stream":
                parts.append(c["text"])
            elif m["msg_type"] in ("execute_result", "display_data"):
                parts.append(c["data"].get("text/plain", ""))
            elif m["msg_type"] == "error":
                parts.append(c["evalue"])
        return "\n".join(parts)


class ProtocolTests(KernelCase):
    def test_a_bad_signature_is_dropped_and_the_kernel_keeps_serving(self):
        forged = Session(key=b"not-the-key", username="mallory")
        msg = forged.msg(
            "execute_request",
            {"code": ":module forged --lang llvm\ndefine void @f() {\n  ret void\n}",
             "silent": False, "store_history": True, "user_expressions": {},
             "allow_stdin": False, "stop_on_error": True},
        )
        forged.send(self.kc.shell_channel.socket, msg)
        unsigned = Session(key=b"", username="mallory")
        unsigned.send(self.kc.shell_channel.socket, unsigned.msg("kernel_info_request", {}))
        # Neither was answered: the next reply is for the valid request.
        reply, outputs = self.run_cell(":modules")
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertNotIn("forged", self.text_of(outputs))
        reply, _ = self.run_cell(":help run")
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertEqual(reply["content"]["execution_count"], 2)

    def test_an_interrupt_stops_a_jit_call_and_keeps_the_session(self):
        # The call makes a file before it spins: the interrupt follows that,
        # not code generation (whose interrupt gives another error).
        folder = tempfile.mkdtemp(prefix="passlab-forever-")
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        marker = os.path.join(folder, "started")
        reply, _ = self.run_cell(
            ":module spin --lang c\n"
            "int creat(const char *path, unsigned mode);\n"
            f'int forever(int x) {{ creat("{marker}", 420); volatile int y = x; while (y >= 0) y = (y + 1) & 7; return y; }}\n'
            "int add(int a, int b) { return a + b; }\n"
            ".\n"
            ":with config.jit.timeout_ms=60000"
        )
        self.assertEqual(reply["content"]["status"], "ok")
        reply = self.interrupted(":call forever 1", started=lambda: os.path.exists(marker))
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("was interrupted", reply["content"]["evalue"])
        # Modules, contexts and the JIT are as they were.
        reply, outputs = self.run_cell(":modules\n:context\n:call add 2 40")
        self.assertEqual(reply["content"]["status"], "ok")
        text = self.text_of(outputs)
        self.assertIn("spin", text)
        self.assertIn("jit.timeout_ms=60000", text)
        self.assertIn("add(2, 40) = 42", text)

    def test_an_interrupt_stops_a_pipeline_and_rolls_it_back(self):
        sqlite = os.path.join(ROOT, "target/inputs/sqlite3/sqlite3.c")
        reply, outputs = self.run_cell(f":load {sqlite} as sqlite", timeout=120)
        self.assertEqual(reply["content"]["status"], "ok", self.text_of(outputs))
        loaded = self.text_of(outputs)
        # default<O2> over sqlite3 takes seconds; two hundred of them do not
        # end before the interrupt however fast the machine.
        reply = self.interrupted(":run " + ",".join(["default<O2>"] * 200))
        self.assertEqual(reply["content"]["ename"], "InterruptedError")
        self.assertIn("the module is as it was before", reply["content"]["evalue"])
        reply, outputs = self.run_cell(":modules")
        count = loaded.split("blocks, ")[1].split(" ")[0]
        self.assertIn(count, self.text_of(outputs), reply)

    def test_a_failed_cell_aborts_the_cells_queued_behind_it(self):
        self.run_cell(":module spin --lang c\n"
                      "int forever(int x) { volatile int y = x; while (y >= 0) y = (y + 1) & 7; return y; }")
        # "Run all": three cells sent at once; the first fails after 0.3 s.
        first = self.kc.execute(":with config.jit.timeout_ms=300\n:call forever 1")
        second = self.kc.execute(":module after --lang c\nint f(void) { return 1; }")
        third = self.kc.execute(":help run", stop_on_error=False)
        replies = {}
        for _ in range(3):
            r = self.kc.get_shell_msg(timeout=TIMEOUT)
            replies[r["parent_header"]["msg_id"]] = r["content"]
        self.assertEqual(replies[first]["status"], "error")
        self.assertEqual(replies[second]["status"], "aborted")
        self.assertEqual(replies[third]["status"], "aborted")
        # Nothing after the failed cell ran; the kernel goes on.
        reply, outputs = self.run_cell(":modules")
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertNotIn("after", self.text_of(outputs))
        # stop_on_error=False: a failure aborts nothing.
        first = self.kc.execute(":nosuch", stop_on_error=False)
        second = self.kc.execute(":help run")
        statuses = [self.kc.get_shell_msg(timeout=TIMEOUT)["content"]["status"] for _ in range(2)]
        self.assertEqual(statuses, ["error", "ok"])

    def aborted_after_error(self, spacing):
        """A failing request, then four more made `spacing` seconds apart
        (as "Run All" reaches a kernel through a browser and a server):
        how many of the four are answered "aborted". Each request's date
        (which the kernel compares) is the first one's plus its spacing,
        and each is sent that long after the one before: a sleep that
        overshoots on a loaded machine delays the arrivals, which the
        kernel must take, but does not change what the client made."""
        content = dict(silent=False, store_history=True, user_expressions={},
                       allow_stdin=False, stop_on_error=True)
        made = [self.kc.session.msg("execute_request", dict(content, code=":nosuch"))]
        for i in range(1, 5):
            msg = self.kc.session.msg("execute_request", dict(content, code=":help run"))
            msg["header"]["date"] = made[0]["header"]["date"] + datetime.timedelta(seconds=spacing * i)
            made.append(msg)
        for i, msg in enumerate(made):
            if i and spacing:
                time.sleep(spacing)
            self.kc.shell_channel.send(msg)
        first = made[0]["header"]["msg_id"]
        rest = [m["header"]["msg_id"] for m in made[1:]]
        replies = {}
        for _ in range(5):
            r = self.kc.get_shell_msg(timeout=TIMEOUT)
            replies[r["parent_header"]["msg_id"]] = r["content"]["status"]
        self.assertEqual(replies[first], "error")
        statuses = [replies[m] for m in rest]
        # Aborted ones come first: once one runs, the rest run too.
        self.assertEqual(statuses, sorted(statuses), statuses)
        return statuses.count("aborted")

    def test_stop_on_error_aborts_what_arrives_just_after_the_error(self):
        # Back to back, 2 ms apart, 20 ms apart: all four (made within
        # 40 ms of each other, they are one batch, as Run All's are).
        # Measured here, three tries each: passlab before 4, 0 and 0;
        # ipykernel 7.4 4, 4 and 0 to 1.
        counts = {}
        for spacing in (0, 0.002, 0.02):
            counts[spacing] = self.aborted_after_error(spacing)
            # The kernel goes on: a request after the window runs.
            time.sleep(0.2)
            reply, _ = self.run_cell(":help run")
            self.assertEqual(reply["content"]["status"], "ok")
        print(f"aborted of 4 after an error, by spacing: {counts}")
        self.assertEqual(counts, {0: 4, 0.002: 4, 0.02: 4})

    def test_a_batch_passed_on_late_is_aborted_whenever_it_arrives(self):
        # Run All's requests made 2 ms apart by the client but passed on
        # by a loaded server after the error window (seen in CI: the last
        # cell of a Run All ran): their dates make them one batch.
        session = self.kc.session
        content = dict(silent=False, store_history=True, user_expressions={},
                       allow_stdin=False, stop_on_error=True)
        made = []
        for code in [":nosuch", ":help run", ":help with", ":modules"]:
            made.append(session.msg("execute_request", dict(content, code=code)))
            time.sleep(0.002)
        self.kc.shell_channel.send(made[0])
        first = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(first["content"]["status"], "error")
        time.sleep(0.3)
        for msg in made[1:]:
            self.kc.shell_channel.send(msg)
        statuses = [self.kc.get_shell_msg(timeout=TIMEOUT)["content"]["status"] for _ in made[1:]]
        self.assertEqual(statuses, ["aborted"] * 3)
        # The batch ends with the first request made later.
        time.sleep(0.1)
        reply, _ = self.run_cell(":help run")
        self.assertEqual(reply["content"]["status"], "ok")

    def complete(self, code, cursor=None):
        cursor = len(code) if cursor is None else cursor
        self.kc.complete(code, cursor)
        return self.kc.get_shell_msg(timeout=TIMEOUT)["content"]

    def test_completion_offers_each_argument_its_own_kind(self):
        self.run_cell(":module m --lang c\nint sum(int x) { return x; }\nint sum_sq(int x) { return x * x; }\n.")
        # Processors after cpu=, from LLVM's table; the range is the word.
        c = self.complete(":with cpu=skyl")
        self.assertIn("skylake", c["matches"])
        self.assertTrue(all(m.startswith("skyl") for m in c["matches"]), c["matches"])
        self.assertEqual((c["cursor_start"], c["cursor_end"]), (10, 14))
        # Setting keys, strategies, syntax values, modules, functions.
        self.assertEqual(self.complete(":with opt")["matches"], ["opt_level="])
        self.assertEqual(self.complete(":tune strategy=l")["matches"], ["local"])
        c = self.complete(":tune strategy=random,g")
        self.assertEqual((c["matches"], c["cursor_start"]), (["greedy"], 22))
        self.assertEqual(self.complete(":asm sum syn")["matches"], ["syntax="])
        self.assertEqual(self.complete(":use m")["matches"], ["m"])
        self.assertEqual(self.complete(":asm su")["matches"], ["sum", "sum_sq"])
        # Passes only where passes go; paths for :load (passlab's inputs).
        self.assertEqual(self.complete(":with disabled=lic")["matches"], ["licm"])
        self.assertIn("zlib/adler32.c", self.complete(":load zlib/ad")["matches"])
        # A cursor inside the line: what is before it is completed.
        c = self.complete(":with cpu=znver4 opt_level=3", 13)
        self.assertIn("znver4", c["matches"])
        self.assertEqual((c["cursor_start"], c["cursor_end"]), (10, 13))

    def test_inspect_shows_the_help_of_the_command_under_the_cursor(self):
        self.kc.inspect(":tune strategy=local trials=5", 9)
        content = self.kc.get_shell_msg(timeout=TIMEOUT)["content"]
        self.assertTrue(content["found"], content)
        text = content["data"]["text/plain"]
        self.assertTrue(text.startswith(":tune "), text)
        self.assertIn("the default pool", text)

    def test_shutdown_is_clean(self):
        self.run_cell(":module m --lang c\nint f(void) { return 1; }")
        proc = self.km.provisioner.process
        msg_id = self.kc.shutdown()
        reply = self.kc.get_control_msg(timeout=TIMEOUT)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertEqual(reply["msg_type"], "shutdown_reply")
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertEqual(proc.wait(timeout=10), 0)

    def test_soak(self):
        """SOAK executes in a row: every reply arrives, in order, and the
        resident memory after them is within 10% of that after a warm-up."""
        self.run_cell(":module s --lang c\nint sq(int x) { return x * x; }")
        pid = self.km.provisioner.process.pid

        def cell(i):
            # Text, a table, and a JIT call every tenth cell (a fork each).
            return ":call sq 7" if i % 10 == 0 else ":stats" if i % 2 else ":instruments"

        # The warm-up runs the same cells: the first JIT call initialises
        # LLVM's code generator once (about 12 MB), which is not growth.
        warmup = 200
        for i in range(warmup):
            self.run_cell(cell(i))
        before = rss_kib(pid)
        start = time.monotonic()
        for i in range(SOAK):
            reply, outputs = self.run_cell(cell(i))
            self.assertEqual(reply["content"]["status"], "ok", i)
            self.assertEqual(reply["content"]["execution_count"], warmup + 2 + i)
        elapsed = time.monotonic() - start
        after = rss_kib(pid)
        growth = (after - before) / before
        print(f"\nsoak: {SOAK} executes in {elapsed:.1f} s ({SOAK / elapsed:.0f}/s), "
              f"resident {before} KiB -> {after} KiB ({growth:+.1%})")
        self.assertLess(growth, 0.10)


class PanicTests(KernelCase):
    """A panic (forced by the debug build's PASSLAB_PANIC_AT) in a command,
    or anywhere in handling a request, is an error reply; the kernel keeps
    serving and the session is as it was before the cell."""

    extra_env = {"PASSLAB_PANIC_AT": "after::module,kernel::inspect_request", "RUST_BACKTRACE": "0"}

    def test_a_panic_is_an_error_and_the_kernel_keeps_serving(self):
        reply, _ = self.run_cell(":buffer keep i32[4] = range")
        self.assertEqual(reply["content"]["status"], "ok")
        reply, _ = self.run_cell(":module m --lang llvm\ndefine i32 @one() {\n  ret i32 1\n}")
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("internal error in :module: injected panic at after::module",
                      reply["content"]["evalue"])
        # Outside a command: the request's handling.
        msg_id = self.kc.inspect(":run", 2)
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("internal error in inspect_request", reply["content"]["evalue"])
        # The kernel serves; the module was not made; the buffer is there.
        reply, outputs = self.run_cell(":modules\n:buffers")
        self.assertEqual(reply["content"]["status"], "ok")
        text = self.text_of(outputs)
        self.assertNotIn("*   m ", text)
        self.assertIn("keep", text)
        self.assertEqual(self.km.provisioner.process.poll(), None)


if __name__ == "__main__":
    unittest.main()
