"""passlab-kernel side by side with ipykernel, in one run, through
jupyter_client: start -> first kernel_info_reply, and the round trip of a
trivial command (execute_request sent -> status idle received). Medians of
PASSLAB_BENCH_ROUNDS rounds (default 200) each, the kernels alternating
round by round so that both see the same machine. Prints the ratios
(target <= 0.25 on both).

    bash scripts/passlab.sh bench kernel
"""

import os
import statistics
import subprocess
import sys
import time

from jupyter_client.manager import KernelManager

ROUNDS = int(os.environ.get("PASSLAB_BENCH_ROUNDS", "200"))
KERNELS = {"passlab": ":instruments", "python3": "pass"}


def start(name):
    """Starts a kernel; returns (manager, client, seconds to kernel_info_reply)."""
    km = KernelManager(kernel_name=name)
    t0 = time.perf_counter()
    km.start_kernel(stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    while True:
        msg_id = kc.kernel_info()
        try:
            while True:
                reply = kc.get_shell_msg(timeout=0.05)
                if reply["parent_header"].get("msg_id") == msg_id:
                    elapsed = time.perf_counter() - t0
                    return km, kc, elapsed
        except Exception:
            if not km.is_alive():
                raise RuntimeError(f"{name} died while starting")


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


def stop(km, kc):
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def main():
    starts = {k: [] for k in KERNELS}
    trips = {k: [] for k in KERNELS}
    for i in range(ROUNDS):
        for name in (KERNELS if i % 2 == 0 else reversed(list(KERNELS))):
            km, kc, t = start(name)
            starts[name].append(t)
            stop(km, kc)
    running = {name: start(name)[:2] for name in KERNELS}
    for name, (km, kc) in running.items():
        for _ in range(20):  # warm-up
            round_trip(kc, KERNELS[name])
    for i in range(ROUNDS):
        for name in KERNELS:
            trips[name].append(round_trip(running[name][1], KERNELS[name]))
    for km, kc in running.values():
        stop(km, kc)

    def ms(v):
        return f"{statistics.median(v) * 1e3:.2f} ms"

    print(f"passlab-kernel vs ipykernel, medians of {ROUNDS} rounds each, alternating:")
    for what, data in (("start -> kernel_info_reply", starts), ("trivial command round trip", trips)):
        p, i = statistics.median(data["passlab"]), statistics.median(data["python3"])
        print(f"  {what}: passlab {ms(data['passlab'])}, ipykernel {ms(data['python3'])}, "
              f"ratio {p / i:.3f} (target <= 0.25)")


if __name__ == "__main__":
    sys.exit(main())
