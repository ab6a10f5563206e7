"""The pipeline explorer over a whole program: sqlite3 at default<O2>.

    bash scripts/passlab.sh bench explore      # PASSLAB_BENCH_ROUNDS rounds (default 3)

Per round, as a user runs it (the release build, one process):

    :load target/bench/sqlite3.bc      # clang-19 -O0 -Xclang -disable-O0-optnone
    :explore run=default<O2> --out target/bench/sqlite3-explore.html

and prints the process's wall time and peak memory (its maximum resident
set, from the kernel's rusage of the child), the page's size, how many of
the changed functions' histories it holds (the line `:explore --out`
prints), and the time until the page is ready in Debian's headless
Chromium (loaded, its script run: the explorer's `data-ready`), then a
selection: the function listed first (the one changed most) clicked, and
its largest pass, each timed until its view is drawn. Medians of the
rounds. The README's explorer figures come from this command.
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from playwright.sync_api import sync_playwright

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "target", "bench")
PASSLAB = os.path.join(ROOT, "target", "release", "passlab")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def bitcode():
    """sqlite3's amalgamation as -O0 bitcode that passes may still change."""
    bc = os.path.join(BENCH, "sqlite3.bc")
    if not os.path.exists(bc):
        src = os.path.join(ROOT, "target", "inputs", "sqlite3", "sqlite3.c")
        subprocess.run(["clang-19", "-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm",
                        "-c", src, "-o", bc], check=True)
    return bc


def record(bc, page):
    """One `passlab run` writing the page: (seconds, peak MiB, its line).
    The peak is this process's own maximum resident set (wait4's rusage)."""
    script = os.path.join(BENCH, "explore-sqlite3.plab")
    with open(script, "w") as f:
        f.write(f":load {bc}\n:explore run=default<O2> --out {page}\n")
    log = os.path.join(BENCH, "explore-sqlite3.out")
    t = time.perf_counter()
    with open(log, "w") as out:
        child = subprocess.Popen([PASSLAB, "run", script], stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t
    text = open(log).read()
    if status != 0:
        sys.exit(f"passlab run failed (status {status}):\n{text}")
    line = next((l for l in text.splitlines() if l.startswith("wrote ")), text.strip())
    return seconds, usage.ru_maxrss / 1024, line


def open_page(browser, page_path):
    """Seconds until the explorer is ready, then to select the function
    listed first and its largest pass."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    t = time.perf_counter()
    page.goto("file://" + page_path, wait_until="commit")
    page.wait_for_selector(".plab-explore[data-ready='1']", timeout=120_000)
    ready = time.perf_counter() - t
    root = page.locator(".plab-explore").first
    # From the whole module to the function listed first (changed most).
    root.locator(".plab-x-fns .plab-x-row").first.click()
    root.locator(".plab-x-fns .plab-x-row.plab-x-sel").first.wait_for(timeout=60_000)
    t = time.perf_counter()
    root.locator(".plab-x-fns .plab-x-row[data-function]").first.click()
    root.locator(".plab-x-pass.plab-x-sel").first.wait_for(timeout=60_000)
    root.locator("table.plab-x-diffrows tr").first.wait_for(timeout=60_000)
    select_fn = time.perf_counter() - t
    marked = root.locator(".plab-x-pass.plab-x-changed:has(.plab-x-num)")

    def growth(text):
        parts = text.replace("→", " ").split()
        return abs(int(parts[-1]) - int(parts[0])) if len(parts) >= 2 and all(
            p.isdigit() for p in (parts[0], parts[-1])) else 0
    sizes = [growth(x) for x in marked.locator(".plab-x-num").all_inner_texts()]
    target = marked.nth(max(range(len(sizes)), key=lambda j: sizes[j])) if sizes else marked.first
    number = target.get_attribute("data-pass")
    t = time.perf_counter()
    target.click()
    root.locator(f".plab-x-pass.plab-x-sel[data-pass='{number}']").first.wait_for(timeout=60_000)
    root.locator("table.plab-x-diffrows tr").first.wait_for(timeout=60_000)
    select_pass = time.perf_counter() - t
    shot = os.path.join(BENCH, "sqlite3-explore.png")
    page.screenshot(path=shot)
    page.close()
    return ready, select_fn, select_pass


def main():
    os.makedirs(BENCH, exist_ok=True)
    rounds = int(os.environ.get("PASSLAB_BENCH_ROUNDS", "3"))
    bc = bitcode()
    page_path = os.path.join(BENCH, "sqlite3-explore.html")
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for r in range(rounds):
            seconds, peak, line = record(bc, page_path)
            size = os.path.getsize(page_path)
            ready, select_fn, select_pass = open_page(browser, page_path)
            held = re.search(r"the diffs of (\d+ of the \d+)", line)
            rows.append((seconds, peak, size, ready, select_fn, select_pass,
                         held.group(1) if held else "?"))
            print(f"  round {r + 1}: passlab run {seconds:.1f} s, peak {peak:.0f} MiB; {line}; "
                  f"Chromium: ready {ready:.2f} s, function {select_fn * 1000:.0f} ms, "
                  f"pass {select_pass * 1000:.0f} ms", file=sys.stderr)
        browser.close()
    med = [statistics.median(c) for c in list(zip(*rows))[:6]]
    held = sorted({h for *_, h in rows})
    print(f"explorer over sqlite3 at default<O2> ({rounds} rounds, medians): "
          f"`passlab run` {med[0]:.1f} s, peak memory {med[1]:.0f} MiB, page {med[2] / 1e6:.1f} MB "
          f"holding the diffs of {'–'.join(map(str, held))} of the changed functions, "
          f"ready in Chromium {med[3]:.2f} s, a function selected in {med[4] * 1000:.0f} ms, "
          f"its largest pass in {med[5] * 1000:.0f} ms")

if __name__ == "__main__":
    main()
