"""Hunting compiler bugs (issue 22), measured side by side.

    bash scripts/passlab.sh bench hunt      # PASSLAB_BENCH_ROUNDS rounds (default 3)
    python3 benches/hunt.py                 # the same, once target/release/passlab is built

Absolute times do not hold on this machine (2 shared cores); ratios of
times measured in the same round do. Figures are medians of the rounds.

1. Hunt throughput: programs x pipelines checked per second.
   passlab: `passlab hunt` over Csmith's programs of seeds 1..PROGRAMS
   (csmith --max-funcs 4 --max-block-depth 3, passlab's default), the
   native oracle (clang-19 -O0, run), pipelines O1 and O2, jobs=2, no
   reduction. The reference is a shell script doing the same with
   processes, program by program: csmith, clang-19 -O0 (native build and
   run), clang-19 -O0 -emit-llvm, then for each pipeline opt-19 and lli-19,
   comparing the outputs (../shared/notes/wave3.md: 0.76 s per program for
   two pipelines). Goal: >= 5x the script.
2. Reduction: a miscompile planted by the test plugin (planted-cmp, a
   signed comparison made unsigned) in a Csmith program of about 2,000
   instructions (the first seed from SEED whose program, with the hunt's
   Csmith options, planted-cmp miscompiles and has 1,500 to 3,000
   instructions at -O0: seed 59, 2,829 instructions),
   reduced by `passlab run` (`:reduce differs exec | no-op-module |
   planted-cmp budget=BUDGET`) against llvm-reduce-19 driven by a shell
   interestingness script (opt-19 with the plugin, lli-19 for both
   pipelines, the checksum lines compared), same budget: the size reached,
   each one's whole wall time (passlab's process from start to end, the
   reduction's budget included, not capped), and the time to reach 5% of
   the instructions: passlab's from the reproducer's progress.csv (each
   smaller candidate, with the seconds since the reduction started), the
   shell's from a log its interestingness script appends to for each
   interesting candidate (the time, and the candidate's instructions),
   both counted from when the reducer started. Goal: <= 5% in <= 60 s.
3. A 4-shard hunt as a Slurm job array on the one-node cluster
   (deploy/slurm/local-cluster.sh, deploy/slurm/passlab.sbatch) against one
   process (jobs=1 and jobs=2), the spec of 1 over SLURM_PROGRAMS seeds
   (default 60: on 20, the cluster's own seconds, to start and to notice
   that tasks ended, outweigh the work): the speed-up. The cluster has run
   one trivial job before the clock starts, as a cluster in use has.

The per-round figures go to standard error, the table to standard output.
Smoke mode (PASSLAB_BENCH_SMOKE=1, benches/bench_mode.py): one round, 2
programs, a reduction budget of 5 s on a program found among seeds 13-22
(seed 20, 6,990 instructions), and the Slurm job array over 4
programs (one a task).
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mode import BENCH, PASSLAB, ROOT, SMOKE, require_passlab, rounds, scaled  # noqa: E402

ROUNDS = rounds(3)
PROGRAMS = int(os.environ.get("PASSLAB_BENCH_PROGRAMS", str(scaled(20, 2))))
SLURM_PROGRAMS = int(os.environ.get("PASSLAB_BENCH_SLURM_PROGRAMS", str(scaled(60, 4))))
SEED = int(os.environ.get("PASSLAB_BENCH_SEED", "0"))
BUDGET = int(os.environ.get("PASSLAB_BENCH_BUDGET", str(scaled(60, 5))))
PLUGIN = os.path.join(ROOT, "target", "test-plugin", "bench-planted_bugs.so")
CSMITH_ARGS = ["--max-funcs", "4", "--max-block-depth", "3"]
# The program to reduce: the first of SEEDS seeds from SEED (or from
# FIRST_SEED) that planted-cmp miscompiles, with SIZES instructions. (Smoke
# mode: the ten seeds among which repl/tests/slurm.rs's hunt finds one,
# of any size: the budget bounds the reduction.)
SEEDS = scaled(100, 10)
FIRST_SEED = scaled(1, 13)
SIZES = (1, 100_000) if SMOKE else (1500, 3000)
INCLUDE = "-I/usr/include/csmith"


def run(argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def plugin():
    # (scripts/test-plugin.sh keeps the build in the user's cache)
    run(["sh", os.path.join(ROOT, "scripts", "test-plugin.sh"), "planted_bugs", PLUGIN])
    return PLUGIN


SCRIPT = r"""#!/bin/sh
# One program, as a shell hunt does it: csmith, the native oracle, then
# each pipeline through opt-19 and lli-19, the outputs compared.
seed=$1; shift
d=$(mktemp -d); cd "$d" || exit 2
csmith --seed "$seed" {args} > p.c || exit 2
clang-19 -O0 -w {inc} p.c -o native 2>/dev/null || exit 2
timeout 5 ./native > want.txt 2>&1 || {{ cd /; rm -rf "$d"; exit 0; }}
clang-19 -O0 -Xclang -disable-O0-optnone -w {inc} -emit-llvm -c p.c -o p.bc || exit 2
for pipeline in "$@"; do
  opt-19 -passes="$pipeline" p.bc -o q.bc || echo "$seed $pipeline: opt failed"
  timeout 5 lli-19 q.bc > got.txt 2>&1
  cmp -s want.txt got.txt || echo "$seed $pipeline: different"
done
cd /; rm -rf "$d"
"""


def throughput(rnd):
    spec = os.path.join(BENCH, "hunt-throughput.toml")
    with open(spec, "w") as f:
        f.write(f'name = "throughput"\ncsmith = {{ seeds = [1, {PROGRAMS}] }}\n'
                'pipelines = ["O1", "O2"]\noracle = "native"\nreduce = false\njobs = 2\ntimeout = 5\n')
    out = os.path.join(BENCH, f"hunt-throughput-{rnd}")
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    log = subprocess.run([PASSLAB, "hunt", spec, "--out", out], capture_output=True, text=True)
    ours = time.perf_counter() - t
    if log.returncode != 0:
        sys.exit(log.stderr)
    m = re.search(r"(\d+) checks in", log.stderr)
    checks = int(m.group(1)) if m else 0
    skipped = log.stderr.count("skipped:")
    script = os.path.join(BENCH, "hunt-script.sh")
    with open(script, "w") as f:
        f.write(SCRIPT.format(args=" ".join(CSMITH_ARGS), inc=INCLUDE))
    t = time.perf_counter()
    for seed in range(1, PROGRAMS + 1):
        subprocess.run(["sh", script, str(seed), "default<O1>", "default<O2>"],
                       capture_output=True, text=True)
    theirs = time.perf_counter() - t
    # Both checked the programs whose native run ended in time, two pipelines each.
    script_checks = 2 * (PROGRAMS - skipped)
    return {"ours": checks / ours, "script": script_checks / theirs, "ours_s": ours, "script_s": theirs,
            "checks": checks}


def count_instructions(src):
    """Instructions of a C file compiled as `:load … level=O0` does
    (clang-19 -O0 without optnone)."""
    with tempfile.TemporaryDirectory() as d:
        ll = os.path.join(d, "p.ll")
        run(["clang-19", "-O0", "-Xclang", "-disable-O0-optnone", "-w", INCLUDE, "-emit-llvm", "-S",
             src, "-o", ll])
        return instructions(ll)


def small_program():
    """A Csmith program of about 2,000 instructions that planted-cmp
    miscompiles: the first such seed from SEED on (found once, then kept
    in target/bench)."""
    path = os.path.join(BENCH, "hunt-2000.c")
    note = os.path.join(BENCH, "hunt-2000.seed")
    if os.path.exists(path) and os.path.exists(note):
        return path, int(open(note).read())
    spec = os.path.join(BENCH, "hunt-find.toml")
    first = SEED or FIRST_SEED
    with open(spec, "w") as f:
        f.write(f'name = "find"\ncsmith = {{ seeds = [{first}, {first + SEEDS - 1}], args = {CSMITH_ARGS!r} }}\n'
                .replace("'", '"') +
                f'pipelines = ["planted-cmp"]\noracle = "jit-o0"\nplugins = ["{plugin()}"]\n'
                'reduce = false\njobs = 2\ntimeout = 5\n')
    out = os.path.join(BENCH, "hunt-find")
    shutil.rmtree(out, ignore_errors=True)
    run([PASSLAB, "hunt", spec, "--out", out], capture_output=True)
    import json
    seeds = sorted(r["seed"] for r in map(json.loads, open(os.path.join(out, "hunt-0-of-1.jsonl")))
                   if r.get("kind") == "check" and r.get("verdict") == "miscompile")
    for seed in seeds:
        # (in the bench's folder: csmith writes platform.info where it runs)
        src = subprocess.run(["csmith", "--seed", str(seed)] + CSMITH_ARGS, capture_output=True,
                             text=True, check=True, cwd=BENCH).stdout
        with open(path, "w") as f:
            f.write(src)
        if SIZES[0] <= count_instructions(path) <= SIZES[1]:
            with open(note, "w") as f:
                f.write(str(seed))
            return path, seed
    if os.path.exists(path):
        os.remove(path)
    sys.exit(f"no Csmith program among {SEEDS} that planted-cmp miscompiles has {SIZES[0]}-{SIZES[1]} instructions")


INTERESTING = r"""#!/bin/sh
# llvm-reduce's interestingness test: the program prints another checksum
# after planted-cmp than without it (both runs must end). Each interesting
# candidate's time and instruction count go to {log}.
f=$1
opt-19 -passes=no-op-module "$f" -o "$f.a.bc" 2>/dev/null || exit 1
opt-19 -load-pass-plugin={plugin} -passes=planted-cmp "$f" -o "$f.b.bc" 2>/dev/null || exit 1
a=$(timeout 2 lli-19 "$f.a.bc" 2>/dev/null) || {{ rm -f "$f.a.bc" "$f.b.bc"; exit 1; }}
b=$(timeout 2 lli-19 "$f.b.bc" 2>/dev/null) || {{ rm -f "$f.a.bc" "$f.b.bc"; exit 1; }}
rm -f "$f.a.bc" "$f.b.bc"
case "$a" in "checksum = "*) ;; *) exit 1 ;; esac
case "$b" in "checksum = "*) ;; *) exit 1 ;; esac
[ "$a" != "$b" ] || exit 1
n=$(awk '/^define /{{i=1;next}} /^}}/{{i=0}} i && /^  / && !/^ *;/ {{n++}} END{{print n+0}}' "$f")
echo "$(date +%s.%N) $n" >> {log}
exit 0
"""


def instructions(ll):
    """Instructions of an .ll file (lines of function bodies that define or
    are instructions)."""
    n, inside = 0, False
    for line in open(ll):
        if line.startswith("define "):
            inside = True
        elif line.startswith("}"):
            inside = False
        elif inside and line.startswith("  ") and not line.strip().startswith(";"):
            n += 1
    return n


def reduction(rnd):
    src, seed = small_program()
    work = tempfile.mkdtemp(prefix="passlab-bench-reduce-")
    # The module both start from: clang-19 at -O0 without optnone (what
    # `:load … level=O0` makes).
    ll = os.path.join(work, "input.ll")
    run(["clang-19", "-O0", "-Xclang", "-disable-O0-optnone", "-w", INCLUDE, "-emit-llvm", "-S",
         src, "-o", ll])
    before = instructions(ll)
    # passlab.
    script = os.path.join(work, "reduce.plab")
    with open(script, "w") as f:
        f.write(f":plugin {plugin()}\n:load {ll}\n"
                f":reduce differs exec | no-op-module | planted-cmp budget={BUDGET} --out {work}/ours\n")
    t = time.perf_counter()
    log = subprocess.run([PASSLAB, "run", script], capture_output=True, text=True)
    ours_s = time.perf_counter() - t
    if log.returncode != 0:
        sys.exit(log.stdout + log.stderr)
    m = re.search(r"(\d+) → (\d+) instructions", log.stdout)
    ours_after = int(m.group(2)) if m else before
    # The time to 5%: the first smaller candidate at or under 5% of the
    # instructions, in the reduction's own record of its steps.
    ours_5 = None
    with open(os.path.join(work, "ours", "progress.csv")) as f:
        next(f)
        for row in f:
            seconds, count = row.split(",")[:2]
            if int(count) <= 0.05 * before:
                ours_5 = float(seconds)
                break
    # llvm-reduce with the shell script, stopped at the same budget (as
    # passlab's reduction is).
    progress = os.path.join(work, "theirs-progress.txt")
    test = os.path.join(work, "interesting.sh")
    with open(test, "w") as f:
        f.write(INTERESTING.format(plugin=plugin(), log=progress))
    os.chmod(test, 0o755)
    start = time.time()
    t = time.perf_counter()
    out = os.path.join(work, "theirs.ll")
    try:
        subprocess.run(["llvm-reduce-19", f"--test={test}", "-j", "2", "-o", out, ll],
                       cwd=work, capture_output=True, timeout=BUDGET,
                       # (its temporary files, left when it is stopped,
                       # go with the work folder)
                       env={**os.environ, "TMPDIR": work})
    except subprocess.TimeoutExpired:
        pass
    theirs_s = time.perf_counter() - t
    theirs_after = instructions(out) if os.path.exists(out) else before
    theirs_5 = None
    if os.path.exists(progress):
        for line in open(progress):
            at, count = line.split()
            if int(count) <= 0.05 * before:
                seconds = float(at) - start
                theirs_5 = seconds if theirs_5 is None else min(theirs_5, seconds)
        if theirs_after == before:
            # Stopped before it wrote its output: the smallest it found.
            theirs_after = min((int(l.split()[1]) for l in open(progress)), default=before)
    shutil.rmtree(work, ignore_errors=True)
    return {"seed": seed, "before": before, "ours_after": ours_after, "ours_s": ours_s, "ours_5": ours_5,
            "theirs_after": theirs_after, "theirs_s": theirs_s, "theirs_5": theirs_5}


def seconds(x):
    return "not reached" if x is None else f"{x:.1f} s"


def slurm(rnd):
    spec = os.path.join(BENCH, "hunt-slurm.toml")
    with open(spec, "w") as f:
        f.write(f'name = "throughput"\ncsmith = {{ seeds = [1, {SLURM_PROGRAMS}] }}\n'
                'pipelines = ["O1", "O2"]\noracle = "native"\nreduce = false\njobs = 2\ntimeout = 5\n')
    results = {}
    for jobs in (1, 2):
        one = os.path.join(BENCH, f"hunt-one-{jobs}")
        shutil.rmtree(one, ignore_errors=True)
        text = open(spec).read().replace("jobs = 2", f"jobs = {jobs}")
        s = os.path.join(BENCH, f"hunt-one-{jobs}.toml")
        with open(s, "w") as f:
            f.write(text.replace('name = "throughput"', f'name = "one{jobs}"'))
        t = time.perf_counter()
        run([PASSLAB, "hunt", s, "--out", one], capture_output=True)
        results[f"one-{jobs}"] = time.perf_counter() - t
    cluster = os.path.join(BENCH, "hunt-cluster")
    shutil.rmtree(cluster, ignore_errors=True)
    # Ports of its own (as repl/tests/slurm.rs picks them), so that the
    # test command's Slurm test may run at the same time.
    base = 40000 + os.getpid() % 20000
    ports = dict(os.environ, SLURMCTLD_PORT=str(base), SLURMD_PORT=str(base + 1))
    up = subprocess.run(["bash", os.path.join(ROOT, "deploy", "slurm", "local-cluster.sh"), "up", cluster],
                        capture_output=True, text=True, check=True, env=ports)
    conf = next(l.split("=", 1)[1] for l in up.stdout.splitlines() if l.startswith("SLURM_CONF="))
    env = dict(os.environ, SLURM_CONF=conf)
    try:
        # A cluster in use: its first job's seconds are not the hunt's.
        run(["sbatch", "--wait", "--wrap=true", f"--output={cluster}/warm-up.out"], env=env,
            capture_output=True)
        s = os.path.join(BENCH, "hunt-array.toml")
        with open(s, "w") as f:
            f.write(open(spec).read().replace("jobs = 2", "jobs = 1").replace('"throughput"', '"array"'))
        out = os.path.join(BENCH, "hunt-array")
        shutil.rmtree(out, ignore_errors=True)
        t = time.perf_counter()
        run(["sbatch", "--wait", "--array=0-3", f"--export=ALL,PASSLAB={PASSLAB}",
             f"--output={cluster}/task-%A_%a.out", os.path.join(ROOT, "deploy", "slurm", "passlab.sbatch"),
             "hunt", s, out], env=env, capture_output=True)
        results["array"] = time.perf_counter() - t
        run([PASSLAB, "hunt", "merge", out], capture_output=True)
    finally:
        subprocess.run(["bash", os.path.join(ROOT, "deploy", "slurm", "local-cluster.sh"), "down", cluster],
                       capture_output=True, env=ports)
    return results


def main():
    require_passlab("bash scripts/passlab.sh setup")
    os.makedirs(BENCH, exist_ok=True)
    plugin()
    rounds = []
    for r in range(ROUNDS):
        t = throughput(r)
        red = reduction(r)
        sl = slurm(r)
        rounds.append((t, red, sl))
        print(f"  round {r + 1}: hunt {t['ours']:.1f} checks/s ({t['checks']} in {t['ours_s']:.1f} s), "
              f"script {t['script']:.2f} checks/s ({t['script_s']:.1f} s): {t['ours'] / t['script']:.1f}x; "
              f"reduce csmith-{red['seed']} {red['before']} -> {red['ours_after']} in {red['ours_s']:.1f} s "
              f"(5% after {seconds(red['ours_5'])}), "
              f"llvm-reduce-19 + shell -> {red['theirs_after']} in {red['theirs_s']:.1f} s "
              f"(5% after {seconds(red['theirs_5'])}); "
              f"slurm 4 tasks {sl['array']:.1f} s, one process jobs=1 {sl['one-1']:.1f} s, jobs=2 {sl['one-2']:.1f} s",
              file=sys.stderr)
    med = lambda f: statistics.median(f(r) for r in rounds)
    t_ratio = med(lambda r: r[0]["ours"] / r[0]["script"])
    print(f"hunt (Csmith seeds 1..{PROGRAMS}, pipelines O1 and O2, native oracle), {ROUNDS} rounds, medians")
    print(f"  1. throughput: passlab {med(lambda r: r[0]['ours']):.1f} checks/s, shell script "
          f"{med(lambda r: r[0]['script']):.2f} checks/s ({med(lambda r: 2 / r[0]['script']):.2f} s per program"
          f" for two pipelines): {t_ratio:.1f}x (goal >= 5x)")
    red = rounds[-1][1]

    def median_time(key):
        # A round that never reached 5% counts as never (None sorts last).
        xs = sorted((r[1][key] for r in rounds), key=lambda x: (x is None, x or 0))
        return xs[len(xs) // 2]

    print(f"  2. reduction of csmith-{red['seed']} (planted-cmp, {red['before']} instructions), budget {BUDGET} s: "
          f"passlab {med(lambda r: r[1]['ours_after'])} instructions "
          f"({100 * med(lambda r: r[1]['ours_after']) / red['before']:.1f}%), 5% after {seconds(median_time('ours_5'))}, "
          f"whole run {med(lambda r: r[1]['ours_s']):.1f} s; "
          f"llvm-reduce-19 + shell script {med(lambda r: r[1]['theirs_after'])} instructions "
          f"({100 * med(lambda r: r[1]['theirs_after']) / red['before']:.1f}%), 5% after {seconds(median_time('theirs_5'))}, "
          f"whole run {med(lambda r: r[1]['theirs_s']):.1f} s "
          f"(goal <= 5% in <= 60 s)")
    print(f"  3. Slurm ({SLURM_PROGRAMS} programs): 4 tasks {med(lambda r: r[2]['array']):.1f} s against one process "
          f"{med(lambda r: r[2]['one-1']):.1f} s (jobs=1): {med(lambda r: r[2]['one-1'] / r[2]['array']):.2f}x; "
          f"one process with jobs=2 {med(lambda r: r[2]['one-2']):.1f} s")


if __name__ == "__main__":
    main()
