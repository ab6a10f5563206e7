"""passlab-kernel side by side with ipykernel, in one run, through
jupyter_client: start (the kernel process launched from its kernelspec ->
the first kernel_info_reply) and the round trip of a trivial command
(execute_request sent -> status idle received). Medians of
PASSLAB_BENCH_ROUNDS rounds (default 200) each, the kernels alternating
round by round so that both see the same machine. Prints the ratios
(targets: start <= 0.25, round trip <= 0.15).

The kernels are launched here with the argv of their kernelspecs, not
through KernelManager, so that jupyter_client's own start-up work (finding
the kernelspec, choosing ports, ~95 ms on this machine, the same for both)
is not counted as the kernel's; and the client's sockets retry connecting
every 5 ms instead of libzmq's default 100 ms, so that the time counted is
the kernel's and not the client's back-off. Both apply to both kernels.

    bash scripts/passlab.sh bench kernel

Smoke mode (PASSLAB_BENCH_SMOKE=1, set by `bash scripts/passlab.sh bench
smoke`): one start and one round trip of each kernel after one warm-up, so
that a bench that no longer runs fails; its figures mean nothing. The
kernels are the kernelspecs named passlab and python3, whichever build
those name (the smoke run installs the test profile's passlab-kernel).
"""

import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import zmq
from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file
from jupyter_client.kernelspec import KernelSpecManager

SMOKE = os.environ.get("PASSLAB_BENCH_SMOKE") == "1"
ROUNDS = 1 if SMOKE else int(os.environ.get("PASSLAB_BENCH_ROUNDS", "200"))
WARM_UP = 1 if SMOKE else 20
# A trivial command for each, with the same messages: busy, execute_input,
# an execute_result of one short line, idle, and the reply.
KERNELS = {"passlab": ":instruments", "python3": "1"}

CONTEXT = zmq.Context()
CONTEXT.setsockopt(zmq.RECONNECT_IVL, 5)
SPECS = {name: KernelSpecManager().get_kernel_spec(name) for name in KERNELS}
TMP = tempfile.mkdtemp(prefix="passlab-bench-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)


def start(name):
    """Launches a kernel; returns (process, client, seconds to kernel_info_reply)."""
    # Signed, as Jupyter launches kernels (passlab-kernel refuses an empty
    # key unless the file turns signing off).
    fname, info = write_connection_file(os.path.join(TMP, f"{name}.json"), kernel_name=name,
                                        key=uuid.uuid4().hex.encode())
    argv = [a.replace("{connection_file}", fname) for a in SPECS[name].argv]
    env = dict(os.environ, **SPECS[name].env)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kc = BlockingKernelClient(context=CONTEXT)
    kc.load_connection_info(info)
    kc.start_channels()
    while True:
        msg_id = kc.kernel_info()
        try:
            while True:
                reply = kc.get_shell_msg(timeout=0.02)
                if reply["parent_header"].get("msg_id") == msg_id:
                    return proc, kc, time.perf_counter() - t0
        except Exception:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited while starting")


def round_trip(kc, code):
    t0 = time.perf_counter()
    msg_id = kc.execute(code, store_history=False)
    while True:
        msg = kc.get_iopub_msg(timeout=10)
        if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"):
            elapsed = time.perf_counter() - t0
            kc.get_shell_msg(timeout=10)
            return elapsed


def stop(proc, kc):
    kc.stop_channels()
    proc.kill()
    proc.wait()


def main():
    starts = {k: [] for k in KERNELS}
    trips = {k: [] for k in KERNELS}
    for i in range(ROUNDS):
        for name in (KERNELS if i % 2 == 0 else reversed(list(KERNELS))):
            proc, kc, t = start(name)
            starts[name].append(t)
            stop(proc, kc)
    running = {name: start(name)[:2] for name in KERNELS}
    for name, (proc, kc) in running.items():
        for _ in range(WARM_UP):
            round_trip(kc, KERNELS[name])
    for i in range(ROUNDS):
        for name in KERNELS:
            trips[name].append(round_trip(running[name][1], KERNELS[name]))
    for proc, kc in running.values():
        stop(proc, kc)

    def ms(v):
        return f"{statistics.median(v) * 1e3:.2f} ms"

    print(f"passlab-kernel vs ipykernel, medians of {ROUNDS} rounds each, alternating:")
    for what, data, target in (("start -> kernel_info_reply", starts, 0.25),
                               ("trivial command round trip", trips, 0.15)):
        p, i = statistics.median(data["passlab"]), statistics.median(data["python3"])
        per_round = statistics.median(a / b for a, b in zip(data["passlab"], data["python3"]))
        print(f"  {what}: passlab {ms(data['passlab'])}, ipykernel {ms(data['python3'])}, "
              f"ratio {p / i:.3f} (median of per-round ratios {per_round:.3f}; target <= {target})")


if __name__ == "__main__":
    sys.exit(main())
