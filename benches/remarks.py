"""Optimization remarks (issue 21) over all of sqlite3, as same-run ratios.

    bash scripts/passlab.sh bench remarks      # PASSLAB_BENCH_ROUNDS rounds (default 3)
    python benches/remarks.py                  # the same, once target/release/passlab is built

Absolute times do not hold on the machine the project is developed on (2
shared cores); ratios of times measured in the same round do. Each round
runs every process below once, one after the other; the table gives the
medians of the rounds. Every passlab process is the release binary running
a script (`target/release/passlab run SCRIPT.plab`, its output to a file
under target/bench), timed from its start to its end (wall clock).

The input: sqlite3's amalgamation as `clang-19 -g -O0 -Xclang
-disable-O0-optnone` bitcode (target/bench/sqlite3-g.bc; with -g every
remark has its source line, as the annotated source needs).

1. Recording remarks: `:load sqlite3-g.bc`, `:instrument remarks`, `:run
   default<O2>` against the same script without `:instrument remarks`,
   both less the load-only script (`:load` alone). Goal: ratio <= 1.15.
   Reference, same round: `opt-19 -passes='default<O2>'` with and without
   `-pass-remarks-output=r.yaml` (LLVM's own cost of writing them).
2. `:report remarks` after that run: the script with `:report remarks`
   added 10 times, less the script without it, over 10 (one run of the
   pipeline varies by a second or more here; ten reports spread that
   over ten). Goal: <= 1 s.
3. The annotated source of all of sqlite3: `:report remarks source --out
   remarks.html` (the time it adds, as 2.), the page's size, and the time
   headless Chromium (Debian's, driven by Playwright) takes from opening the
   file to the page saying it is ready (its script has decompressed the
   remarks and the source and shown the hottest lines and the first
   screen of source). Goal: <= 25 MB, opens in <= 3 s. The reference,
   run in the same round: LLVM's opt-viewer
   (/usr/lib/llvm-19/share/opt-viewer/opt-viewer.py, with PyYAML and
   Pygments from the venv, `-j 2`: this machine's cores) on the remarks
   opt-19 wrote in 1. (the same pipeline over the same bitcode), with the
   sources beside: its wall time and the size of the HTML it writes.

The per-round figures go to standard error, the table to standard output.
Smoke mode (PASSLAB_BENCH_SMOKE=1, benches/bench_mode.py): one round, zlib's
adler32.c in sqlite3's place, one `:report remarks`.
"""

import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mode import BENCH, PASSLAB, large_input, require_passlab, rounds, scaled  # noqa: E402
from machine_code import timed  # noqa: E402

ROUNDS = rounds(3)
REPORTS = scaled(10, 1)
# The input's name and C file (sqlite3; a small file in smoke mode), and
# the name of its files.
NAME, SOURCE = large_input()
STEM = os.path.splitext(os.path.basename(SOURCE))[0]
PAGE = os.path.join(BENCH, f"remarks-{STEM}.html")


def bitcode():
    """sqlite3 with debug info, as -O0 bitcode passes may still change."""
    bc = os.path.join(BENCH, f"{STEM}-g.bc")
    if not os.path.exists(bc):
        subprocess.run(["clang-19", "-g", "-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm",
                        "-c", SOURCE, "-o", bc], check=True)
    return bc


def passlab(name, lines):
    script = os.path.join(BENCH, f"remarks-{name}.plab")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    return timed([PASSLAB, "run", script], os.path.join(BENCH, f"remarks-{name}.out"))[0]


def open_page(path):
    """Seconds from opening `path` in headless Chromium to its data-ready."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        start = time.perf_counter()
        page.goto("file://" + path)
        page.wait_for_selector(".plab-remarks[data-ready='1']", timeout=120_000)
        took = time.perf_counter() - start
        lines = page.locator(".plab-r-item").count()
        browser.close()
    if not lines:
        sys.exit(f"{path}: the page shows no line with remarks")
    return took


OPT_VIEWER = "/usr/lib/llvm-19/share/opt-viewer/opt-viewer.py"


def opt_viewer(yaml):
    """LLVM's opt-viewer over `yaml`: (wall seconds, bytes of HTML written)."""
    out = os.path.join(BENCH, "remarks-opt-viewer")
    shutil.rmtree(out, ignore_errors=True)
    source = os.path.dirname(SOURCE)
    took = timed([sys.executable, OPT_VIEWER, "--output-dir", out, "--source-dir", source,
                  "--jobs", "2", "--no-progress-indicator", yaml],
                 os.path.join(BENCH, "remarks-opt-viewer.out"))[0]
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    if not os.path.exists(os.path.join(out, "index.html")):
        sys.exit(f"opt-viewer wrote no index.html into {out}")
    return took, size


def one_round(bc):
    load = f":load {bc}"
    run = [load, ":instrument remarks", ":run default<O2>"]
    # The bench's own page: passlab replaces only files it wrote.
    if os.path.exists(PAGE):
        os.remove(PAGE)
    yaml = os.path.join(BENCH, "remarks-opt.yaml")
    t = {
        "opt": timed(["opt-19", "-passes=default<O2>", bc, "-o", "/dev/null"],
                     os.path.join(BENCH, "remarks-opt.out"))[0],
        "opt-remarks": timed(["opt-19", "-passes=default<O2>", f"-pass-remarks-output={yaml}",
                              bc, "-o", "/dev/null"], os.path.join(BENCH, "remarks-opt.out"))[0],
        "load": passlab("load", [load]),
        "plain": passlab("plain", [load, ":run default<O2>"]),
        "recorded": passlab("recorded", run),
        "report": passlab("report", run + [":report remarks"] * REPORTS),
        "page": passlab("page", run + [f":report remarks source --out {PAGE}"]),
    }
    t["viewer"], t["viewer_bytes"] = opt_viewer(yaml)
    t["open"] = open_page(PAGE)
    t["bytes"] = os.path.getsize(PAGE)
    return t


def main():
    require_passlab("cargo build --release --locked -p passlab-repl")
    os.makedirs(BENCH, exist_ok=True)
    bc = bitcode()
    rounds = []
    for r in range(ROUNDS):
        t = one_round(bc)
        f = {
            "plain": t["plain"] - t["load"],
            "recorded": t["recorded"] - t["load"],
            "opt": t["opt"],
            "opt-remarks": t["opt-remarks"],
            "report": (t["report"] - t["recorded"]) / REPORTS,
            "page": t["page"] - t["recorded"],
            "open": t["open"],
            "bytes": t["bytes"],
            "viewer": t["viewer"],
            "viewer_bytes": t["viewer_bytes"],
        }
        rounds.append(f)
        print(f"  round {r + 1}: :run default<O2> {f['plain']:.2f} s, with remarks "
              f"{f['recorded']:.2f} s ({f['recorded'] / f['plain']:.2f}x); opt-19 {f['opt']:.2f} s, "
              f"with remarks {f['opt-remarks']:.2f} s ({f['opt-remarks'] / f['opt']:.2f}x); "
              f":report remarks {f['report']:.2f} s; page {f['page']:.2f} s, "
              f"{f['bytes'] / 1e6:.1f} MB, opens in {f['open']:.2f} s; opt-viewer {f['viewer']:.1f} s, "
              f"{f['viewer_bytes'] / 1e6:.1f} MB", file=sys.stderr)
    out = open(os.path.join(BENCH, "remarks-report.out")).read()
    count = next((line.split(" — ")[0] for line in out.splitlines() if line.startswith("remarks: ")), "")
    med = lambda k: statistics.median(f[k] for f in rounds)
    ratio = lambda a, b: statistics.median(f[a] / f[b] for f in rounds)
    rows = [
        ("figure", "passlab", "reference", "ratio", "goal"),
        ("1. :run default<O2> recording remarks, vs plain", f"{med('recorded'):.2f} s",
         f"{med('plain'):.2f} s", f"{ratio('recorded', 'plain'):.2f}x", "<= 1.15x"),
        ("   opt-19 -pass-remarks-output, vs plain opt-19", f"{med('opt-remarks'):.2f} s",
         f"{med('opt'):.2f} s", f"{ratio('opt-remarks', 'opt'):.2f}x", "(LLVM's own)"),
        ("2. :report remarks after the run", f"{med('report'):.2f} s", "", "", "<= 1 s"),
        ("3. :report remarks source --out (writing the page), vs opt-viewer", f"{med('page'):.2f} s",
         f"{med('viewer'):.1f} s", f"{ratio('page', 'viewer'):.3f}x", ""),
        ("   the page's size, vs opt-viewer's HTML", f"{med('bytes') / 1e6:.1f} MB",
         f"{med('viewer_bytes') / 1e6:.1f} MB", f"{ratio('bytes', 'viewer_bytes'):.3f}x", "<= 25 MB"),
        ("   open in headless Chromium until ready", f"{med('open'):.2f} s", "", "", "<= 3 s"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"{NAME} ({count.strip()}), {ROUNDS} rounds, medians")
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()
