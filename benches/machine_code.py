"""Machine code (issue 20): `:asm` against llc-19, under instruments, and on
one small function, as same-run ratios.

    bash scripts/passlab.sh bench machine      # PASSLAB_BENCH_ROUNDS rounds (default 3)
    python3 benches/machine_code.py            # the same, once target/release/passlab is built

Absolute times do not hold on the machine the project is developed on (2
shared cores); ratios of times measured in the same round do. Each round
runs every process below once, one after the other; the table gives the
medians of the rounds (times) and the median of the rounds' ratios (the
ratio of the medians beside it). Every passlab process is the release
binary running a script (`target/release/passlab run SCRIPT.plab`, its
standard output to a file under target/bench), timed from its start to its
end (wall), and by the processor time the kernel counts for it and the
children it waited for (cpu: user + system, from wait4; `:asm` generates
code in a forked child, which this includes).

The input: sqlite3's amalgamation as `clang-19 -O0 -Xclang
-disable-O0-optnone` bitcode (target/bench/sqlite3.bc, as
benches/explore_page.py makes it), run through `opt-19
-passes='default<O2>'` once (target/bench/sqlite3-O2.bc, made again when
older than sqlite3.bc). Both code generators start from that file.

1. All of sqlite3's machine code. passlab: `:load sqlite3-O2.bc` then
   `:asm --out passlab.s` (the whole module: code generation in the forked
   child, the MC layer assembling the text for each function's size, the
   listing printed, the file written), less the same round's load-only
   script (`:load sqlite3-O2.bc` alone: process start, reading and
   verifying the bitcode), so that loading is not counted against `:asm`.
   Reference: one `llc-19` process on the same file, loading included:

       llc-19 -O2 -relocation-model=pic -code-model=small -asm-verbose=false \\
           sqlite3-O2.bc -o llc.s

   which mirrors the target machine passlab's code generator makes
   (src/jit/codegen.rs: LLVMCreateTargetMachine with the module's triple,
   code generation level Default = -O2, position-independent code, the
   small code model, no processor or features given, so that each
   function's own "target-cpu"/"target-features" attributes decide, as llc
   without -mcpu does; the C API's target options print no verbose-asm
   comments, hence -asm-verbose=false). Every round checks that the two
   .s files are byte for byte the same and the table says so. llc also
   verifies the module it read (passlab's `:load` does too, and that is
   subtracted); no other llc option is set. Goal: ratio <= 1.10.
2. The same `:asm --out` with `:instrument timing explore` active (after
   the load), less the load-only script, against plain `:asm` (1.'s
   passlab figure) in the same round: whatever recording the back end's
   passes costs (timing probes every pass in the child; explore adds what
   it records when it records machine passes). Goal: ratio <= 3.
3. `:asm gemm` (examples/gemm.c's textbook triple loop; the file, two
   functions, loaded with `:load` and run through `:run default<O2>`) in
   a warm session, per call, in two ways. Each script starts with a warm-up: `:load gemm.c as
   g0`, `:run default<O2>`, `:asm gemm`.
   a. cached: the warm-up then N more `:asm gemm` (the code is kept per
      module fingerprint, code generator settings and syntax, so only the
      listing is rendered and printed): (that time - the warm-up alone)/N;
   b. fresh: the warm-up then K modules `:load gemm.c as gI`, `:run
      default<O2>`, `:asm gemm` (a new module name has no kept code: a full
      code generation, fork included), against the same script without the
      K `:asm gemm` lines: (difference)/K.
   Goal: <= 50 ms each.
4. `:asm --out` of all of sqlite3 with `:instrument remarks` active (after
   the load), less the load-only script, against plain `:asm` (1.'s
   passlab figure) in the same round: what recording the back end's
   optimization remarks costs. LLVM's legacy pass manager counts the whole
   module's instructions after every machine pass when the `size-info`
   analysis remark is enabled; passlab asks for it only when the filter
   names it (`:instrument remarks=size-info`). Goal: ratio <= 1.2.

    python3 benches/machine_code.py remarks    # only 1. and 4. (and the load)

PASSLAB_BIN names another passlab binary to measure (a build from before a
change, for a before/after figure in the same conditions). Smoke mode
(PASSLAB_BENCH_SMOKE=1, benches/bench_mode.py): one round, zlib's adler32.c
in sqlite3's place, 2 calls in 3a and 2 modules in 3b.

The per-round figures go to standard error, the table to standard output.
"""

import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mode import BENCH, PASSLAB, ROOT, large_input, require_passlab, scaled  # noqa: E402
from bench_mode import rounds as rounds_of  # noqa: E402

GEMM = os.path.join(ROOT, "examples", "gemm.c")
LLC = "llc-19"
# What passlab's code generator is (src/jit/codegen.rs), in llc's words.
LLC_ARGS = ["-O2", "-relocation-model=pic", "-code-model=small", "-asm-verbose=false"]
CACHED_CALLS = scaled(50, 2)  # 3a: N
FRESH_MODULES = scaled(20, 2)  # 3b: K
# The input's name and C file (sqlite3; a small file in smoke mode), and
# the name of its bitcode files.
NAME, SOURCE = large_input()
STEM = os.path.splitext(os.path.basename(SOURCE))[0]


def bitcode():
    """sqlite3's amalgamation as -O0 bitcode that passes may still change
    (as benches/explore_page.py makes it)."""
    bc = os.path.join(BENCH, f"{STEM}.bc")
    if not os.path.exists(bc):
        subprocess.run(["clang-19", "-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm",
                        "-c", SOURCE, "-o", bc], check=True)
    return bc


def o2_bitcode():
    """That bitcode after opt-19's default<O2>, made once."""
    bc = bitcode()
    o2 = os.path.join(BENCH, f"{STEM}-O2.bc")
    if not os.path.exists(o2) or os.path.getmtime(o2) < os.path.getmtime(bc):
        subprocess.run(["opt-19", "-passes=default<O2>", bc, "-o", o2], check=True)
    return o2


def timed(argv, log):
    """Runs argv with its output to `log`: (wall seconds, cpu seconds of
    the process and the children it waited for)."""
    t = time.perf_counter()
    with open(log, "w") as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"{' '.join(argv)} failed (status {status}):\n{open(log).read()[-4000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def passlab(name, lines):
    """`passlab run` of a script of `lines` (target/bench/machine-NAME.plab,
    its output in machine-NAME.out): (wall, cpu)."""
    script = os.path.join(BENCH, f"machine-{name}.plab")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    return timed([PASSLAB, "run", script], os.path.join(BENCH, f"machine-{name}.out"))


def same(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def one_round(o2, only_remarks):
    """Every process once: a dict of (wall, cpu) per measurement, and
    whether the .s files agree."""
    s = lambda name: os.path.join(BENCH, f"machine-{name}.s")
    load = f":load {o2}"
    t = {}
    t["llc"] = timed([LLC, *LLC_ARGS, o2, "-o", s("llc")], os.path.join(BENCH, "machine-llc.out"))
    t["load"] = passlab("load", [load])
    t["asm"] = passlab("asm", [load, f":asm --out {s('passlab')}"])
    t["remarks"] = passlab("remarks", [load, ":instrument remarks",
                                       f":asm --out {s('remarks')}"])
    if only_remarks:
        return t, (same(s("passlab"), s("llc")), same(s("remarks"), s("passlab")))
    t["instrumented"] = passlab("instrumented", [load, ":instrument timing explore",
                                                 f":asm --out {s('instrumented')}"])
    warm = [f":load {GEMM} as g0", ":run default<O2>", ":asm gemm"]
    t["warm"] = passlab("warm", warm)
    t["cached"] = passlab("cached", warm + [":asm gemm"] * CACHED_CALLS)
    modules = lambda asm: [line for i in range(1, FRESH_MODULES + 1)
                           for line in [f":load {GEMM} as g{i}", ":run default<O2>"]
                           + ([":asm gemm"] if asm else [])]
    t["loads"] = passlab("loads", warm + modules(False))
    t["fresh"] = passlab("fresh", warm + modules(True))
    checks = (same(s("passlab"), s("llc")), same(s("instrumented"), s("passlab"))
              and same(s("remarks"), s("passlab")))
    return t, checks


def figures(t):
    """The round's figures: {name: (wall, cpu)}."""
    minus = lambda a, b, n=1: tuple((x - y) / n for x, y in zip(t[a], t[b]))
    f = {
        "llc": t["llc"],
        "load": t["load"],
        "asm": minus("asm", "load"),
        "remarks": minus("remarks", "load"),
    }
    if "instrumented" not in t:
        return f
    return f | {
        "instrumented": minus("instrumented", "load"),
        "cached": minus("cached", "warm", CACHED_CALLS),
        "fresh": minus("fresh", "loads", FRESH_MODULES),
    }


def main():
    require_passlab("cargo build --release --locked -p passlab-repl")
    os.makedirs(BENCH, exist_ok=True)
    rounds = rounds_of(3)
    only_remarks = sys.argv[1:] == ["remarks"]
    if sys.argv[1:] and not only_remarks:
        sys.exit(f"usage: {sys.argv[0]} [remarks]")
    o2 = o2_bitcode()
    per_round, checks = [], []
    for r in range(rounds):
        t, c = one_round(o2, only_remarks)
        f = figures(t)
        per_round.append(f)
        checks.append(c)
        remarks = (f", remarks {f['remarks'][0]:.2f} s "
                   f"({f['remarks'][0] / f['asm'][0]:.2f}x)")
        if only_remarks:
            print(f"  round {r + 1}: llc-19 {f['llc'][0]:.2f} s, load {f['load'][0]:.2f} s, "
                  f":asm {f['asm'][0]:.2f} s{remarks}"
                  f"{'' if c[1] else '; remarks.s differs from passlab.s'}", file=sys.stderr)
            continue
        print(f"  round {r + 1}: llc-19 {f['llc'][0]:.2f} s, load {f['load'][0]:.2f} s, "
              f":asm {f['asm'][0]:.2f} s ({f['asm'][0] / f['llc'][0]:.2f}x), "
              f"instrumented {f['instrumented'][0]:.2f} s "
              f"({f['instrumented'][0] / f['asm'][0]:.2f}x), :asm gemm cached "
              f"{f['cached'][0] * 1e3:.1f} ms, fresh {f['fresh'][0] * 1e3:.1f} ms{remarks}"
              f"{'' if c[0] else '; passlab.s differs from llc.s'}"
              f"{'' if c[1] else '; instrumented.s differs from passlab.s'}",
              file=sys.stderr)

    def med(name, i=0):
        return statistics.median(f[name][i] for f in per_round)

    def ratio(a, b, i=0):
        """median of the rounds' ratios, ratio of the medians"""
        return (statistics.median(f[a][i] / f[b][i] for f in per_round), med(a, i) / med(b, i))

    def cell(a, b):
        (w, wm), (c, _) = ratio(a, b, 0), ratio(a, b, 1)
        return f"{w:.2f}x ({wm:.2f}x)", f"{c:.2f}x"

    rows = [("figure", "passlab", "reference", "ratio, wall", "ratio, cpu", "goal")]
    w1, c1 = cell("asm", "llc")
    rows.append((f"1. :asm --out, all of {NAME} at O2", f"{med('asm'):.2f} s",
                 f"llc-19 {med('llc'):.2f} s", w1, c1, "<= 1.10x"))
    w4, c4 = cell("remarks", "asm")
    row4 = ("4. :instrument remarks, then 1.", f"{med('remarks'):.2f} s",
            f":asm {med('asm'):.2f} s", w4, c4, "<= 1.2x")
    if only_remarks:
        rows.append(row4)
        print_rows(rows, rounds, checks)
        return
    w2, c2 = cell("instrumented", "asm")
    rows.append(("2. :instrument timing explore, then 1.", f"{med('instrumented'):.2f} s",
                 f":asm {med('asm'):.2f} s", w2, c2, "<= 3x"))
    rows.append((f"3a. :asm gemm, kept (per call of {CACHED_CALLS})",
                 f"{med('cached') * 1e3:.1f} ms", "", "", f"cpu {med('cached', 1) * 1e3:.1f} ms",
                 "<= 50 ms"))
    rows.append((f"3b. :asm gemm, new module (per call of {FRESH_MODULES})",
                 f"{med('fresh') * 1e3:.1f} ms", "", "", f"cpu {med('fresh', 1) * 1e3:.1f} ms",
                 "<= 50 ms"))
    rows.append(row4)
    print_rows(rows, rounds, checks)
    print(f"llc-19 {' '.join(LLC_ARGS)}; passlab's load of {STEM}-O2.bc (subtracted in 1., 2. "
          f"and 4.) {med('load'):.2f} s")


def print_rows(rows, rounds, checks):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"machine code (issue 20): {rounds} rounds, medians; a ratio is the median of the "
          f"rounds' ratios (the ratio of the medians in brackets)")
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    identical = sum(c[0] for c in checks)
    probed = sum(c[1] for c in checks)
    print(f"passlab's .s byte-identical to llc's in {identical} of {rounds} rounds, the "
          f"instrumented ones to the plain one in {probed} of {rounds}")


if __name__ == "__main__":
    main()
