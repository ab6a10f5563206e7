"""What the Python benches in benches/ share: where passlab, the inputs and
the results are, and smoke mode.

Smoke mode (PASSLAB_BENCH_SMOKE=1, which `bash scripts/passlab.sh bench
smoke` sets): every measurement and its reference tool run once, on small
inputs, so that a bench that no longer runs fails; the figures it prints
mean nothing. Its files go to target/bench/smoke, not over a real run's.

PASSLAB_BIN names the passlab binary to run (default target/release/passlab;
the smoke run names the test profile's, target/debug/passlab).
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.environ.get("PASSLAB_BENCH_SMOKE") == "1"
PASSLAB = os.path.abspath(os.environ.get("PASSLAB_BIN") or os.path.join(ROOT, "target", "release", "passlab"))
BENCH = os.path.join(ROOT, "target", "bench", "smoke") if SMOKE else os.path.join(ROOT, "target", "bench")
INPUTS = os.path.join(ROOT, "target", "inputs")


def rounds(default):
    """PASSLAB_BENCH_ROUNDS, `default` when unset; one in smoke mode."""
    return 1 if SMOKE else int(os.environ.get("PASSLAB_BENCH_ROUNDS", str(default)))


def scaled(full, small):
    """`full` outside smoke mode, `small` in it (calls, programs, seconds)."""
    return small if SMOKE else full


def large_input():
    """The whole-program input, sqlite3's amalgamation: (its name, the C
    file). In smoke mode zlib's adler32.c in its place: sqlite3 takes
    minutes through the test profile's build, adler32.c a moment."""
    if SMOKE:
        return "zlib's adler32.c", os.path.join(INPUTS, "zlib", "adler32.c")
    return "sqlite3", os.path.join(INPUTS, "sqlite3", "sqlite3.c")


def require_passlab(build):
    """Stops with what to do when PASSLAB is missing; `build` says how to
    make the release binary."""
    if not os.path.exists(PASSLAB):
        sys.exit(f"{PASSLAB} is missing: {build} (or name another binary in PASSLAB_BIN)")
