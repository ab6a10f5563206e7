"""The C front end's cost, same run: a passlab binary from before clang ran
in a child (commit cc195a9: clang in the session's process, its -O0
hand-over) against a binary of this tree (clang in a forked child, the
module back as bitcode) at the same -O0 hand-over (`level=O0`) and at its
default, clang's -O2 hand-over. Process wall time less an empty script's,
the binaries in alternating order, medians.

    python3 benches/front_end.py BEFORE/passlab AFTER/passlab [ROUNDS]

(build BEFORE with `git worktree add ../base cc195a9` and `cargo build
--release -p passlab-repl` there; the sample inputs are target/inputs.)

Smoke mode (PASSLAB_BENCH_SMOKE=1, benches/bench_mode.py; no arguments):
PASSLAB_BIN as both BEFORE and AFTER, one round, sqlite3 left out (the
same `:load` as the other files, minutes long in the test profile's build).
"""
import os, shutil, subprocess, sys, statistics, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mode import INPUTS as Z, PASSLAB, SMOKE, require_passlab  # noqa: E402
if SMOKE:
    # No build from before cc195a9 here: the same binary in both columns.
    require_passlab("cargo build --release --locked -p passlab-repl")
    BEFORE = AFTER = PASSLAB
elif len(sys.argv) < 3:
    sys.exit(__doc__)
else:
    BEFORE, AFTER = sys.argv[1], sys.argv[2]
RUNS = {
    "before (in process, O0)": (BEFORE, ""),
    "after (child, level=O0)": (AFTER, " level=O0"),
    "after (child, default O2)": (AFTER, ""),
}
WORK = tempfile.mkdtemp(prefix="passlab-front-end-")
def scripts(lv):
    s = {
        "empty": "",
        "load adler32.c": f":load {Z}/zlib/adler32.c{lv}\n",
        "load deflate.c": f":load {Z}/zlib/deflate.c{lv}\n",
        "load lparser.c": f":load {Z}/lua/lparser.c{lv}\n",
        "load sqlite3.c": f":load {Z}/sqlite3/sqlite3.c{lv}\n",
        "C->JIT adler32.c": f":load {Z}/zlib/adler32.c{lv}\n:run O2\n:buffer b i8[65536] = range\n:call adler32_z 1 b 65536\n",
        "C->JIT crc32.c": f":load {Z}/zlib/crc32.c{lv}\n:run O2\n:buffer b i8[65536] = range\n:call crc32_z 0 b 65536\n",
    }
    if SMOKE:
        del s["load sqlite3.c"]
    return s
names = list(scripts("").keys())
files = {}
for i, (run, (binary, lv)) in enumerate(RUNS.items()):
    for n, text in scripts(lv).items():
        f = f"{WORK}/s{i}_{n.replace(' ', '_').replace('>', '')}.plab"
        open(f, "w").write(text)
        files[(run, n)] = f
rounds = 1 if SMOKE else int(sys.argv[3]) if len(sys.argv) > 3 else 5
times = {k: [] for k in files}
order = list(RUNS)
for r in range(rounds):
    for n in names:
        for run in (order if r % 2 == 0 else order[::-1]):
            t = time.perf_counter()
            p = subprocess.run([RUNS[run][0], "run", files[(run, n)]], capture_output=True, text=True)
            dt = time.perf_counter() - t
            if p.returncode != 0:
                sys.exit(f"{run} {n}: {p.stderr}")
            times[(run, n)].append(dt)
med = {k: statistics.median(x) for k, x in times.items()}
print(f"{rounds} rounds, alternating, medians (process wall time less the empty script's), ms:")
print(f"  {'':20s}" + "".join(f"{r:>28s}" for r in order) + "   child/in-process (O0)")
for n in names[1:]:
    v = [(med[(r, n)] - med[(r, 'empty')]) * 1e3 for r in order]
    print(f"  {n:20s}" + "".join(f"{x:28.1f}" for x in v) + f"   {v[1]/v[0]:.2f}x")
print("  process start: " + ", ".join(f"{r} {med[(r, 'empty')]*1e3:.1f}" for r in order))
shutil.rmtree(WORK)
