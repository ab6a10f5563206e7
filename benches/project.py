"""Whole programs at scale, same run, medians: passlab against clang-19 on
real projects as their CMake builds describe them (cmark-gfm, C, 35 units;
double-conversion with its tests, C++, 22 units), both using both cores.

1. Loading a project: `:load compile_commands.json link=lto` (each unit
   compiled with -flto and its own flags, lto-pre-link<O2>, the LTO link)
   against clang-19 building the same units with their own commands and
   `-O2 -flto -c` (front end and pre-link pipeline, bitcode out), two at a
   time; and, for scale, against `-O2 -c` (a plain build: object code).
   passlab's figure is its process's wall time less an empty script's.
2. The link-time pipeline: `:run lto<O2>` on the linked module (the time
   passlab reports for the command) against clang-19's link step on the
   `-flto` objects through lld with `--lto-emit-llvm` (reading and linking
   the objects, the same pipeline, its output written as bitcode instead
   of compiled; passlab's link is in its load), and, for scale, the whole
   link step (the pipeline and code generation, one thread).
3. End to end, from the sources to the optimized program's IR: passlab's
   load and pipeline against clang's compiles and lld's --lto-emit-llvm
   link (sums of the medians).

    python3 benches/project.py [ROUNDS]     # from the repository, after
                                            # `bash scripts/passlab.sh setup`

PASSLAB_BIN names another passlab binary. Smoke mode (PASSLAB_BENCH_SMOKE=1,
benches/bench_mode.py): one round over a few units of each project's
library (SMOKE_UNITS), which both tools link as a shared library (no unit
defines main: passlab's `link=lto` makes a library then, lld is given
-shared), every step above once.
"""
import json, os, re, shlex, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mode import PASSLAB, ROOT, SMOKE, require_passlab  # noqa: E402

require_passlab("bash scripts/passlab.sh setup")
ROUNDS = 1 if SMOKE else int(sys.argv[1]) if len(sys.argv) > 1 else 3
WORK = tempfile.mkdtemp(prefix="passlab-bench-project-")


def crate_dir(manifest, name):
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--locked", "--format-version", "1", "--manifest-path", manifest],
        check=True, capture_output=True, text=True).stdout)
    return next(os.path.dirname(p["manifest_path"]) for p in meta["packages"] if p["name"] == name)


# Smoke mode's units, a few of each library's: the whole projects took 2.5
# minutes in one round (double-conversion's tests hold 18 MB of tables).
SMOKE_UNITS = {
    "cmark-gfm": ("src/buffer.c", "src/utf8.c", "src/houdini_html_e.c", "src/references.c"),
    "double-conversion": ("double-conversion/bignum.cc", "double-conversion/bignum-dtoa.cc",
                          "double-conversion/fast-dtoa.cc"),
}


def keep_units(build, units):
    """Leaves in the build's compile_commands.json only the entries of
    `units` (files whose paths end so)."""
    db = os.path.join(build, "compile_commands.json")
    entries = [e for e in json.load(open(db)) if e["file"].endswith(units)]
    if len(entries) != len(units):
        sys.exit(f"{db}: expected units {units}, found {[e['file'] for e in entries]}")
    with open(db, "w") as f:
        json.dump(entries, f)


def configure(name, source, options):
    build = os.path.join(WORK, name)
    subprocess.run(["cmake", "-S", source, "-B", build, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
                    "-DCMAKE_C_COMPILER=clang-19", "-DCMAKE_CXX_COMPILER=clang++-19",
                    "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS_RELEASE=-DNDEBUG",
                    "-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG", "-DCMAKE_C_FLAGS=-O2",
                    "-DCMAKE_CXX_FLAGS=-O2"] + options, check=True, capture_output=True)
    return build


def clang_build(build, flags, out):
    """The units' own commands, objects into `out`, two at a time: wall s."""
    os.makedirs(out, exist_ok=True)
    entries = json.load(open(os.path.join(build, "compile_commands.json")))
    cmds = []
    for i, e in enumerate(entries):
        w = shlex.split(e["command"])
        o = w.index("-o")
        w[o + 1] = os.path.join(out, f"{i}.o")
        cmds.append((e["directory"], w + flags))
    t = time.perf_counter()
    running = []

    def finish(p, w):
        if p.wait():
            sys.exit(f"a unit did not build: {shlex.join(w)}")

    for d, w in cmds:
        if len(running) == 2:
            finish(*running.pop(0))
        running.append((subprocess.Popen(w, cwd=d, stderr=subprocess.DEVNULL), w))
    for p, w in running:
        finish(p, w)
    return time.perf_counter() - t, [os.path.join(out, f"{i}.o") for i in range(len(cmds))]


def passlab(script):
    f = os.path.join(WORK, "s.plab")
    open(f, "w").write(script)
    t = time.perf_counter()
    p = subprocess.run([PASSLAB, "run", f], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode:
        sys.exit(p.stdout + p.stderr)
    return dt, p.stdout


def link(driver, objs, extra):
    out = os.path.join(WORK, "linked")
    t = time.perf_counter()
    shared = ["-shared"] if SMOKE else []
    subprocess.run([driver, "-flto", "-O2", "-fuse-ld=lld", *shared, "-o", out] + extra + objs,
                   check=True, capture_output=True)
    return time.perf_counter() - t


projects = [
    ("cmark-gfm", "clang-19",
     configure("cmark", os.path.join(crate_dir(os.path.join(ROOT, "tests/inputs/Cargo.toml"), "cmark-gfm-sys"), "cmark-gfm"),
               ["-DCMARK_TESTS=OFF", "-DCMARK_SHARED=OFF"])),
    ("double-conversion", "clang++-19",
     configure("dc", os.path.join(crate_dir(os.path.join(ROOT, "tests/inputs/projects/Cargo.toml"), "double-conversion-sys"), "double-conversion"),
               ["-DBUILD_TESTING=ON"])),
]
if SMOKE:
    for name, _, build in projects:
        keep_units(build, SMOKE_UNITS[name])
print(f"{ROUNDS} rounds, medians, wall seconds; {os.cpu_count()} cores, both tools two at a time")
for name, driver, build in projects:
    db = os.path.join(build, "compile_commands.json")
    units = len(json.load(open(db)))
    t = {k: [] for k in ["empty", "load", "flto", "plain", "pipeline", "emit-llvm", "link"]}
    for r in range(ROUNDS):
        t["empty"].append(passlab("")[0])
        dt, out = passlab(f":load {db} link=lto\n:run lto<O2>\n")
        t["load"].append(dt)
        ms = float(re.search(r"ran lto<O2> on .*\[([\d.]+) ms\]", out).group(1))
        t["pipeline"].append(ms / 1e3)
        dt, objs = clang_build(build, ["-O2", "-flto", "-c"], os.path.join(WORK, "flto"))
        t["flto"].append(dt)
        t["plain"].append(clang_build(build, ["-O2", "-c"], os.path.join(WORK, "plain"))[0])
        t["emit-llvm"].append(link(driver, objs, ["-Wl,--lto-emit-llvm"]))
        t["link"].append(link(driver, objs, []))
    m = {k: statistics.median(v) for k, v in t.items()}
    load = m["load"] - m["empty"] - m["pipeline"]
    print(f"\n{name}: {units} units")
    print(f"  load, link=lto (passlab)                  {load:7.2f}")
    print(f"  clang-19 -O2 -flto -c, every unit         {m['flto']:7.2f}   passlab/clang {load / m['flto']:.2f}x")
    print(f"  clang-19 -O2 -c (object code), every unit {m['plain']:7.2f}   passlab/clang {load / m['plain']:.2f}x")
    print(f"  :run lto<O2> (passlab)                    {m['pipeline']:7.2f}")
    print(f"  lld's LTO, --lto-emit-llvm                {m['emit-llvm']:7.2f}   passlab/lld {m['pipeline'] / m['emit-llvm']:.2f}x")
    print(f"  lld's LTO with code generation            {m['link']:7.2f}")
    ours, theirs = load + m["pipeline"], m["flto"] + m["emit-llvm"]
    print(f"  to the optimized program's IR: passlab {ours:.2f}, clang + lld {theirs:.2f}"
          f"   passlab/clang {ours / theirs:.2f}x (sums of the medians)")
shutil.rmtree(WORK)
