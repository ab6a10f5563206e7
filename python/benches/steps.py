"""passlab from Python, measured (``bash scripts/passlab.sh bench python``):

1. gym steps per second — one action (a pass over the whole module) and the
   InstCount observation — on a small and a large program, against an
   ``opt-19`` process per step running the same actions on the same
   bitcode (reading and writing bitcode, no observation: a lower bound on
   what a process-per-step environment costs); CompilerGym's published
   figure for its LLVM environment is about 1,760 steps/s on small
   programs. On the large program, the last column is the ceiling of that
   ratio: opt-19's time against the time its passes and its verifier take
   (its ``-time-passes`` report, less the bitcode writer): what a process
   per step spends on reading and writing bitcode is all an environment
   that runs the same passes in process and verifies their result, as
   opt-19 does, can save. (On small programs opt-19's timers
   cost more than its passes, so there is no such column.);
2. a Python instrument's overhead: ``default<O2>`` over sqlite3 with an
   instrument whose ``run_before_pass`` and ``run_after_pass`` are Python
   (called for every pass LLVM runs inside the pipeline), against no
   instrument;
3. what TVM's value semantics cost on sqlite3: ``mod.copy()``, and
   ``simplifycfg`` called as a value (``new = pass_(mod)``, a copy then
   the pass) against in place (``pass_(mod, inplace=True)``).

Medians of several rounds; the ratios are of the same run. ``--smoke``
(run by the test command): one round of a few steps on the small programs
and the instrument on adler32.c, so that a bench that no longer runs fails
the tests; its figures mean nothing.
"""

import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import passlab
import passlab.gym
from passlab import _passlab
from passlab.instrument import pass_instrument
from passlab.transform import LLVMPass, PassContext

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "target" / "inputs"


def opt_command(action, at, out):
    """opt-19's command line for one gym action from bitcode `at` to `out`
    (an action with options, such as the inliner unit at other
    thresholds, spelled as the gym's command lines spell it: the options
    first)."""
    options, passes = _passlab.opt_spelling(action)
    return ["opt-19", "--relocation-model=pic", *options, f"-passes={passes}", at, "-o", out]


def passes_alone(report):
    """Seconds (wall) of the passes and the verifier in opt-19's
    ``-time-passes`` report, without the bitcode writer."""
    block = report.split("Analysis execution timing report")[0]
    total = 0.0
    for line in block.splitlines():
        figures, _, name = line.rpartition("%)")
        name = name.strip()
        walls = re.findall(r"([0-9.]+) \(", figures)
        if walls and name not in ("", "Total", "BitcodeWriterPass"):
            total += float(walls[-1])
    return total


def gym_rate(path, steps, rounds, ceiling, seed=0):
    """passlab's steps/s, opt-19's, and if `ceiling` that of their ratio
    (opt-19's time against its passes' and verifier's), for the same
    `steps` random actions."""
    env = passlab.gym.LlvmEnv(benchmark=path)
    rng = np.random.default_rng(seed)
    actions = [int(a) for a in rng.integers(env.action_space.n, size=steps)]
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(prefix="passlab-bench-") as tmp:
        env.reset(seed=seed)
        start = os.path.join(tmp, "start.bc")
        env.module.save(start)
        for _ in range(rounds):
            env.reset(seed=seed)
            t = time.perf_counter()
            for a in actions:
                env.step(a)
            ours.append(steps / (time.perf_counter() - t))
            at = start
            t = time.perf_counter()
            for i, a in enumerate(actions):
                out = os.path.join(tmp, f"s{i % 2}.bc")
                subprocess.run(opt_command(env.action_names[a], at, out), check=True)
                at = out
            theirs.append(steps / (time.perf_counter() - t))
        # Once more, untimed, with opt-19's own timers.
        at, alone = start, 0.0
        for i, a in enumerate(actions if ceiling else []):
            out = os.path.join(tmp, f"s{i % 2}.bc")
            command = opt_command(env.action_names[a], at, out) + ["-time-passes"]
            alone += passes_alone(subprocess.run(command, check=True, capture_output=True, text=True).stderr)
            at = out
    theirs = statistics.median(theirs)
    return env._initial, statistics.median(ours), theirs, steps / theirs / alone if ceiling else None


@pass_instrument
class CountPasses:
    def __init__(self):
        self.before = 0
        self.after = 0

    def run_before_pass(self, mod, info):
        self.before += 1

    def run_after_pass(self, mod, info):
        self.after += 1


def instrument_overhead(path, rounds):
    base = passlab.Module.from_c(path)
    o2 = LLVMPass("default<O2>")

    def run(instruments):
        m = base.copy()
        t = time.perf_counter()
        with PassContext(instruments=instruments):
            o2(m)
        return time.perf_counter() - t, m.instcount

    plain, with_python = [], []
    counter = None
    for _ in range(rounds):
        t, n_plain = run([])
        plain.append(t)
        counter = CountPasses()
        t, n_instr = run([counter])
        with_python.append(t)
        assert n_plain == n_instr
    return base.instcount, statistics.median(plain), statistics.median(with_python), counter.before


def value_cost(path, rounds):
    """Seconds (medians): a copy of the module, a pass in place, the same
    pass as a value (copy included)."""
    base = passlab.Module.from_c(path)
    simplify = LLVMPass("simplifycfg")
    copies, in_place, as_value = [], [], []
    for _ in range(rounds):
        t = time.perf_counter()
        m = base.copy()
        copies.append(time.perf_counter() - t)
        t = time.perf_counter()
        simplify(m, inplace=True)
        in_place.append(time.perf_counter() - t)
        t = time.perf_counter()
        new = simplify(base)
        as_value.append(time.perf_counter() - t)
        assert new.instcount == m.instcount
    return base.instcount, statistics.median(copies), statistics.median(in_place), statistics.median(as_value)


def main():
    args = sys.argv[1:]
    smoke = "--smoke" in args
    which = [a for a in args if a != "--smoke"] or ["steps", "instrument", "copy"]
    programs = [
        ("compress.c", INPUTS / "zlib" / "compress.c", 300, 5, False),
        ("adler32.c", INPUTS / "zlib" / "adler32.c", 300, 5, False),
        ("sqlite3.c", INPUTS / "sqlite3" / "sqlite3.c", 12, 3, True),
    ]
    if smoke:
        # (adler32.c standing for the large program)
        programs = [(name, path, 20, 1, large) for (name, path, _, _, _), large in zip(programs, [False, True])]
    if "steps" in which:
        print("gym steps per second: random actions from the size pool, InstCount observations")
        print(f"{'program':<14}{'instructions':>13}{'passlab':>10}{'opt-19':>9}{'ratio':>8}{'ceiling':>9}")
        for name, path, steps, rounds, large in programs:
            n, ours, theirs, ceiling = gym_rate(path, steps, rounds, large)
            ceiling = f"{ceiling:>8.1f}x" if large else f"{'-':>9}"
            print(f"{name:<14}{n:>13}{ours:>10.1f}{theirs:>9.1f}{ours / theirs:>7.1f}x{ceiling}")
        print("(CompilerGym's published figure: about 1,760 steps/s on small programs)")
    # The large program (a small one in the smoke run).
    name = "adler32.c" if smoke else "sqlite3.c"
    path = INPUTS / "zlib" / name if smoke else INPUTS / "sqlite3" / name
    if "instrument" in which:
        n, plain, python, passes = instrument_overhead(path, 1 if smoke else 3)
        print(
            f"default<O2> over {name} ({n} instructions): {plain:.2f} s without instruments, "
            f"{python:.2f} s with a Python instrument called before and after each of {passes} passes: "
            f"{python / plain:.3f}x"
        )
    if "copy" in which:
        n, copy, in_place, as_value = value_cost(path, 1 if smoke else 5)
        print(
            f"value semantics over {name} ({n} instructions): mod.copy() {copy:.2f} s; "
            f"simplifycfg in place {in_place:.2f} s, as a value {as_value:.2f} s: {as_value / in_place:.2f}x"
        )


if __name__ == "__main__":
    main()
