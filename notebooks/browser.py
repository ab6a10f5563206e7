"""Opens every lesson in JupyterLab in a real browser (Debian's headless
Chromium, driven by Playwright) and runs it as a person would: JupyterLab
serves the notebook's own folder, the notebook is opened there, and Run >
Run All Cells runs it. Then, in the page as rendered:

* no cell shows an error, except cells tagged `raises-exception`;
* the charts are there (an `svg` or `img` in the output), the HTML
  tables (`table`) and the syntax-highlighted IR and diffs (a `pre` of
  coloured spans), as many as the stored outputs have;
* each assembly view (`:asm`'s HTML: source and machine code side by
  side, linked by colour) links them both ways: hovering a source line
  outlines that line and its instructions, hovering an instruction
  outlines its source line and that line's other instructions, and
  nothing else;
* each pipeline explorer shows a pass's diff when the pass is clicked,
  and, when remarks were recorded, a pass's remarks beside its diff and
  only the missed ones with one click;
* each annotated source (`:report remarks source`) lists the lines with
  remarks, shows the clicked one with its remarks under it, and hides the
  missed ones when *missed* is unticked;
* each two-pane assembly view (`:asm F modules=M,N`) has both columns and
  its differing rows tinted; each timing tree is indented;
* the kernel is still alive;
* Run All on a notebook whose second cell fails stops there: the cells
  after it do not run (`stop_on_error`, as ipykernel honours it);
* the outputs, as JupyterLab saves them, match the stored ones (compared
  as `check.py` compares them: timings masked). The notebook is saved
  with Ctrl+S for that and put back as it was at once.

JupyterLab's launcher must show passlab with its logo.

Screenshots of the launcher and of each notebook (its top, its end, each chart, the first
highlighted IR and each assembly view with a source line hovered) go to
target/browser/. Autosave is off.

    python notebooks/browser.py notebooks/*.ipynb
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import nbformat
from playwright.sync_api import sync_playwright

import check  # notebooks/check.py: how outputs are compared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "browser")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As a headless Chromium must run here: as root, on a machine whose network
# is closed (no background connections, no updates).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RUN_TIMEOUT = 600


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expected(path):
    """Per code cell: its tags, and how many charts and tables its stored
    outputs have."""
    nb = json.load(open(path))
    cells = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        charts = tables = code = 0
        stderr = []
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                text = o["text"] if isinstance(o["text"], str) else "".join(o["text"])
                stderr.append(" ".join(text.split()))
            data = o.get("data", {})
            if "image/svg+xml" in data or "image/png" in data:
                charts += 1
            html = data.get("text/html", "")
            if isinstance(html, list):
                html = "".join(html)
            tables += html.count("<table")
            code += html.startswith("<pre")
        source = c["source"] if isinstance(c["source"], str) else "".join(c["source"])
        cells.append({"tags": c.get("metadata", {}).get("tags", []), "charts": charts, "tables": tables,
                      "code": code, "stderr": " ".join(stderr), "source": source})
    return cells


class Lab:
    """A JupyterLab server on the folder of the notebooks, with settings of
    its own: autosave off, no news or update checks."""

    def __init__(self, folder):
        self.tmp = tempfile.mkdtemp(prefix="passlab-lab-")
        settings = os.path.join(self.tmp, "settings")
        for plugin, values in [
            ("@jupyterlab/docmanager-extension/plugin", {"autosave": False}),
            ("@jupyterlab/apputils-extension/notification", {"fetchNews": "false", "checkForUpdates": False}),
            # Every cell in the page, so that each can be checked (JupyterLab
            # 4 otherwise renders only the cells near the view).
            ("@jupyterlab/notebook-extension/tracker", {"windowingMode": "none"}),
        ]:
            path = os.path.join(settings, plugin + ".jupyterlab-settings")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            json.dump(values, open(path, "w"))
        self.port = free_port()
        self.token = "passlab-browser-test"
        env = dict(os.environ, JUPYTER_CONFIG_DIR=os.path.join(self.tmp, "config"))
        self.log = open(os.path.join(OUT, "jupyterlab.log"), "a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={folder}", f"--LabApp.user_settings_dir={settings}",
             f"--LabApp.workspaces_dir={os.path.join(self.tmp, 'workspaces')}",
             # Checkpoints go here, not beside the notebooks.
             f"--FileCheckpoints.checkpoint_dir={os.path.join(self.tmp, 'checkpoints')}",
             # Saved in place, without a backup beside the notebook: with
             # one, `saved`'s read of a notebook mid-write made the server
             # move the half-written file aside as NAME.ipynb.invalid (left
             # in the lessons' folder: 05's once, 07's once) and put the
             # backup in its place; now such a read is a 400, read again.
             "--FileContentsManager.use_atomic_writing=False"],
            cwd=folder, env=env, stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while True:
            try:
                self.api("status")
                break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("JupyterLab did not start (see target/browser/jupyterlab.log)")
                time.sleep(0.3)

    def url(self, path):
        joint = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path}{joint}token={self.token}"

    def api(self, path, method="GET"):
        req = urllib.request.Request(self.url(f"api/{path}"), method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return json.loads(body) if body else None

    def close(self):
        for k in self.api("kernels"):
            self.api(f"kernels/{k['id']}", method="DELETE")
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def saved(page, lab, path):
    """The open notebook as JupyterLab saves it (File > Save, Ctrl+S): its
    outputs as the page received them. The file is put back as it was at
    once; the checkpoint goes to the server's temporary folder."""
    name = os.path.basename(path)
    with open(path, "rb") as f:
        original = f.read()
    before = lab.api(f"contents/{name}?content=0")["last_modified"]
    try:
        page.locator(".jp-NotebookPanel .jp-Notebook").first.focus()
        page.keyboard.press("Control+s")
        deadline = time.time() + 60
        while lab.api(f"contents/{name}?content=0")["last_modified"] == before:
            if time.time() > deadline:
                raise AssertionError(f"{name}: JupyterLab did not save the notebook within 60 s")
            time.sleep(0.2)
        # The save is complete when the file parses.
        while True:
            try:
                return nbformat.reads(json.dumps(lab.api(f"contents/{name}")["content"]), as_version=4)
            except (ValueError, KeyError, TypeError, urllib.error.HTTPError) as e:
                # jupyter_server writes a notebook in place (its backup
                # beside it): read mid-write, it answers 400 "Unreadable
                # Notebook".
                if isinstance(e, urllib.error.HTTPError) and e.code != 400 or time.time() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        with open(path, "wb") as f:
            f.write(original)


def run_notebook(page, lab, path):
    name = os.path.basename(path)
    stem = os.path.splitext(name)[0]
    want = expected(path)
    # A workspace of its own, fresh: only this notebook is open.
    page.goto(lab.url(f"lab/workspaces/{stem}/tree/{name}") + "&reset")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    # The kernel has started when the execution indicator says idle.
    indicator = page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status='idle']")
    indicator.first.wait_for(timeout=60_000)
    # The status bar says when the kernel is connected and idle (passlab's,
    # or the one the notebook names: ipykernel for lesson 12).
    kernel = json.load(open(path))["metadata"].get("kernelspec", {}).get("display_name", "passlab")
    page.get_by_text(f"{kernel} | Idle").first.wait_for(timeout=60_000)
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt")

    def run_all():
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()

    def started():
        return any(t.strip() not in ("[ ]:", "") for t in prompts.all_inner_texts())

    run_all()
    for _ in range(100):
        if started():
            break
        time.sleep(0.1)
    else:
        # A kernel that had only just connected can miss the first request.
        run_all()
    deadline = time.time() + RUN_TIMEOUT
    while True:
        texts = prompts.all_inner_texts()
        done = all(t.strip().startswith("[") and t.strip() not in ("[*]:", "[ ]:") for t in texts)
        if done and indicator.count():
            break
        if time.time() > deadline:
            raise AssertionError(f"{name}: cells still running after {RUN_TIMEOUT} s: {texts}")
        time.sleep(0.5)
    problems = []
    # The outputs as JupyterLab holds them, saved and compared with the
    # stored ones as check.py compares nbclient's.
    if not check.compare(path, nbformat.read(path, as_version=4), saved(page, lab, path)):
        problems.append("outputs differ from the stored ones (the diff is above)")
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    if cells.count() != len(want):
        problems.append(f"{cells.count()} code cells on the page, {len(want)} in the file")
    charts = tables = code = 0
    chart_cells = []
    code_cells = []
    for i, w in enumerate(want):
        cell = cells.nth(i)
        outputs = cell.locator(".jp-OutputArea-output")
        # An error renders as standard error does; in a cell not expected to
        # fail, standard error must be what the stored notebook has there.
        stderr = cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        errors = [t for t in stderr.all_inner_texts()
                  if " ".join(t.split()) not in w["stderr"] or "raises-exception" in w["tags"]]
        if errors and "raises-exception" not in w["tags"]:
            problems.append(f"cell {i + 1}: an error: {errors[0][:300]}")
        if not errors and "raises-exception" in w["tags"]:
            problems.append(f"cell {i + 1}: tagged raises-exception, but showed no error")
        n_charts = cell.locator(".jp-OutputArea-output[data-mime-type^='image/']").count()
        n_tables = outputs.locator("table").count()
        # IR and diffs, syntax-highlighted: coloured spans in a <pre>.
        n_code = cell.locator(".jp-OutputArea-output[data-mime-type='text/html'] pre:has(span[style*='color'])").count()
        charts += n_charts
        tables += n_tables
        code += n_code
        if n_code < w["code"]:
            problems.append(f"cell {i + 1}: {n_code} highlighted IR blocks rendered, {w['code']} expected")
        if n_code:
            code_cells.append(i)
        if n_charts < w["charts"]:
            problems.append(f"cell {i + 1}: {n_charts} charts rendered, {w['charts']} expected")
        if n_tables < w["tables"]:
            problems.append(f"cell {i + 1}: {n_tables} tables rendered, {w['tables']} expected")
        if n_charts:
            chart_cells.append(i)
    explorers = explore(page, cells, stem, problems)
    views = asm_views(page, stem, problems)
    remarks = remark_views(page, stem, problems)
    compared = remark_comparisons(cells, want, stem, problems)
    panes = side_by_side_views(page, stem, problems)
    shots_extra = ([s for s, _ in explorers] + [s for s, _ in views] + [s for s, _ in remarks]
                   + [s for s, _ in compared] + [s for s, _ in panes])
    kernels = lab.api("kernels")
    if not kernels or any(k["execution_state"] == "dead" for k in kernels):
        problems.append(f"the kernel is not alive: {kernels}")
    shots = [os.path.join(OUT, f"{stem}-end.png"), os.path.join(OUT, f"{stem}.png")]
    page.screenshot(path=shots[0])
    # JupyterLab 4 scrolls the notebook in its windowed panel.
    page.evaluate("document.querySelectorAll('.jp-WindowedPanel-outer').forEach(e => e.scrollTop = 0)")
    time.sleep(0.3)
    page.screenshot(path=shots[1])
    for j, i in enumerate(chart_cells[:6]):
        cell = cells.nth(i)
        cell.scroll_into_view_if_needed()
        shot = os.path.join(OUT, f"{stem}-chart{j + 1}.png")
        cell.locator(".jp-OutputArea").screenshot(path=shot)
        shots.append(shot)
    if code_cells:
        # The page as a reader sees it there (a long listing is taller
        # than the window).
        cells.nth(code_cells[0]).scroll_into_view_if_needed()
        time.sleep(0.3)
        shot = os.path.join(OUT, f"{stem}-ir.png")
        page.screenshot(path=shot)
        shots.append(shot)
    shots += shots_extra
    what = f"{charts} charts, {tables} tables and {code} highlighted IR blocks rendered"
    if explorers:
        what += "; explorers: " + "; ".join(w for _, w in explorers)
    if views:
        what += "; assembly views: " + "; ".join(w for _, w in views)
    if remarks:
        what += "; annotated sources: " + "; ".join(w for _, w in remarks)
    if panes:
        what += "; " + "; ".join(w for _, w in panes)
    if compared:
        what += "; remark comparisons: " + "; ".join(w for _, w in compared)
    return problems, what, shots


def ready_view(page, within, cls, k, what, problems):
    """The k-th view of class `cls` on the page, scrolled into view, once
    its script says it is ready (`data-ready`); None (and a problem) if it
    never does."""
    root = page.locator(f"{within} {cls}").nth(k)
    root.scroll_into_view_if_needed()
    try:
        page.wait_for_selector(f":nth-match({within} {cls}, {k + 1})[data-ready='1']", timeout=30_000)
    except Exception:
        problems.append(f"{what}: did not start (no data-ready): {root.inner_text()[:200]!r}")
        return None
    return root


def explore(page, cells, stem, problems, within=".jp-OutputArea-output", tag=""):
    """Each pipeline explorer on the page (`:explore`) is used as a reader
    would: it must have started (its script ran), then a pass that changed
    the selected function is clicked and its diff must appear, then the
    side-by-side toggle. Returns (screenshot, what was seen) per explorer."""
    out = []
    roots = page.locator(f"{within} .plab-explore")
    for k in range(roots.count()):
        root = ready_view(page, within, ".plab-explore", k, f"explorer {k + 1}", problems)
        if root is None:
            continue
        # A pass marked with a size change (it changed the function), once
        # the pass list is drawn whole (long lists are drawn in steps).
        try:
            root.locator(".plab-x-list[data-complete='1']:has(.plab-x-pass)").first.wait_for(timeout=10_000)
        except Exception:
            problems.append(f"explorer {k + 1}: the pass list is not drawn whole after 10 s")
        marked = root.locator(".plab-x-pass.plab-x-changed:has(.plab-x-num)")
        if marked.count() == 0:
            problems.append(f"explorer {k + 1}: no pass is marked as changing the selected function")
            continue
        # The one that changed its size most (loop-vectorize in lesson 6).
        def growth(text):
            parts = text.replace("→", " ").split()
            return abs(int(parts[-1]) - int(parts[0])) if len(parts) >= 2 and all(
                p.isdigit() for p in (parts[0], parts[-1])) else 0
        # textContent: rows out of view are not rendered, so their
        # innerText is empty.
        sizes = [growth(t) for t in marked.locator(".plab-x-num").all_text_contents()]
        target = marked.nth(max(range(len(sizes)), key=lambda j: sizes[j]))
        number = target.get_attribute("data-pass")
        name = target.locator(".plab-x-name").inner_text()
        target.click()
        changed = root.locator("table.plab-x-diffrows tr.plab-x-del, table.plab-x-diffrows tr.plab-x-ins")
        try:
            changed.first.wait_for(timeout=10_000)
        except Exception:
            problems.append(f"explorer {k + 1}: clicking pass {number} ({name}) showed no diff: "
                            f"{root.locator('.plab-x-summary').all_inner_texts()}")
            continue
        selected = root.locator(f".plab-x-pass.plab-x-sel[data-pass='{number}']").count()
        if not selected:
            problems.append(f"explorer {k + 1}: pass {number} is not shown selected after the click")
        lines = changed.count()
        highlighted = root.locator("table.plab-x-diffrows td.plab-x-line span[class^='hljs-']").count()
        if not highlighted:
            problems.append(f"explorer {k + 1}: the diff of pass {number} is not syntax-highlighted")
        shot = os.path.join(OUT, f"{stem}-{tag}explorer{k + 1}.png")
        root.screenshot(path=shot)
        root.locator("label", has_text="side by side").locator("input").check()
        sbs = root.locator("table.plab-x-diffrows.plab-x-sbs td.plab-x-delcell, "
                           "table.plab-x-diffrows.plab-x-sbs td.plab-x-inscell")
        try:
            sbs.first.wait_for(timeout=10_000)
        except Exception:
            problems.append(f"explorer {k + 1}: side by side shows no changed lines")
        seen = f"pass {number} ({name}) clicked, {lines} changed lines shown"
        # The last pass that changed it: the page replays the function's
        # whole history and checks it ends as passlab recorded.
        marked.last.click()
        root.locator(f".plab-x-pass.plab-x-sel[data-pass='{marked.last.get_attribute('data-pass')}']"
                     ).first.wait_for(timeout=10_000)
        if root.get_attribute("data-mismatch") is not None:
            problems.append(f"explorer {k + 1}: the history of {root.get_attribute('data-mismatch')} "
                            "replayed in the page does not end as passlab recorded it")
        target.click()
        # A pass that made missed remarks on the function: its remarks
        # beside its diff, and only the missed ones with one click.
        badged = root.locator(".plab-x-pass:has(.plab-x-rk.plab-x-rk1)")
        if badged.count():
            badged.first.click()
            rows = root.locator(".plab-x-remarks .plab-x-rrow")
            try:
                rows.first.wait_for(timeout=10_000)
            except Exception:
                problems.append(f"explorer {k + 1}: a pass with remarks shows none when clicked")
            else:
                shown = rows.count()
                root.locator("label", has_text="only missed remarks").locator("input").check()
                time.sleep(0.3)
                kinds = root.locator(".plab-x-remarks .plab-x-rrow").evaluate_all(
                    "rows => rows.map(r => r.className)")
                if not kinds or any("plab-x-rb1" not in c for c in kinds):
                    problems.append(f"explorer {k + 1}: only missed remarks shows {kinds}")
                shot = os.path.join(OUT, f"{stem}-{tag}explorer{k + 1}-remarks.png")
                root.screenshot(path=shot)
                seen += f"; {shown} remarks beside a pass's diff, {len(kinds)} missed"
        out.append((shot, seen))
    return out


def remark_comparisons(cells, want, stem, problems):
    """Each `:report remarks compare` is read as a table: its columns name
    the place, the pass, the change and the remark before and after, and
    every row says what changed (appeared, disappeared, changed, same) with
    the remark on the side it exists on. Returns (screenshot, what was
    seen) per comparison."""
    out = []
    for i, w in enumerate(want):
        if ":report remarks compare" not in w["source"] or "raises-exception" in w["tags"]:
            continue
        cell = cells.nth(i)
        table = cell.locator(".jp-OutputArea-output table").first
        if not table.count():
            problems.append(f"cell {i + 1}: the remark comparison shows no table")
            continue
        heads = [" ".join(t.split()) for t in table.locator("th").all_inner_texts()]
        for col in ["where", "pass", "change", "before", "after"]:
            if col not in heads:
                problems.append(f"cell {i + 1}: the remark comparison has no column '{col}' ({heads})")
        if any(col not in heads for col in ["change", "before", "after"]):
            continue
        rows = table.locator("tbody tr")
        seen = {}
        for r in range(rows.count()):
            cols = [" ".join(t.split()) for t in rows.nth(r).locator("td").all_inner_texts()]
            row = dict(zip(heads, cols))
            change = row.get("change", "")
            if change not in ("appeared", "disappeared", "changed", "same"):
                problems.append(f"cell {i + 1}: comparison row {r + 1} says '{change}'")
                continue
            seen[change] = seen.get(change, 0) + 1
            before, after = row.get("before", ""), row.get("after", "")
            if (change != "appeared") != bool(before) or (change != "disappeared") != bool(after):
                problems.append(f"cell {i + 1}: comparison row {r + 1} ({change}): before '{before}', after '{after}'")
            if change == "changed" and before == after:
                problems.append(f"cell {i + 1}: comparison row {r + 1} is 'changed' but says the same on both sides")
        if not seen:
            problems.append(f"cell {i + 1}: the remark comparison has no rows")
        cell.scroll_into_view_if_needed()
        shot = os.path.join(OUT, f"{stem}-compare{len(out) + 1}.png")
        cell.locator(".jp-OutputArea").screenshot(path=shot)
        out.append((shot, f"cell {i + 1}: " + ", ".join(f"{n} {c}" for c, n in sorted(seen.items()))))
    return out


def remark_views(page, stem, problems, within=".jp-OutputArea-output"):
    """Each annotated source (`:report remarks source`) is used as a reader
    would: it must have started, listing the lines with remarks; clicking
    the first shows that line in the source, outlined, with its remarks
    under it; unticking *missed* hides the missed remarks. Returns
    (screenshot, what was seen) per view."""
    out = []
    roots = page.locator(f"{within} .plab-remarks")
    for k in range(roots.count()):
        root = ready_view(page, within, ".plab-remarks", k, f"annotated source {k + 1}", problems)
        if root is None:
            continue
        items = root.locator(".plab-r-item[data-line]")
        if not items.count():
            problems.append(f"annotated source {k + 1}: no line with remarks listed")
            continue
        # `top=N` in the cell: at most N of the most remarked lines listed.
        cell = root.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' jp-CodeCell ')]").first
        typed = re.search(r"remarks source.*\btop=(\d+)", cell.locator(".jp-InputArea-editor").inner_text())
        if typed and items.count() > int(typed.group(1)):
            problems.append(f"annotated source {k + 1}: {items.count()} lines listed, top={typed.group(1)}")
        line = items.first.get_attribute("data-line")
        items.first.click()
        target = root.locator(f".plab-r-ln.plab-r-flash[data-line='{line}']")
        try:
            target.wait_for(timeout=10_000)
        except Exception:
            problems.append(f"annotated source {k + 1}: clicking line {line} did not show it")
            continue
        under = target.evaluate("e => { let n = 0; for (let x = e.nextElementSibling; "
                                "x && x.classList.contains('plab-r-rm'); x = x.nextElementSibling) n++; "
                                "return n; }")
        if not under:
            problems.append(f"annotated source {k + 1}: line {line} shows no remark under it")
        shot = os.path.join(OUT, f"{stem}-remarks{k + 1}.png")
        root.screenshot(path=shot)
        missed = root.locator(".plab-r-rm.plab-r-b1").count()
        box = root.locator("input[data-kind='missed']")
        box.uncheck()
        time.sleep(0.3)
        left = root.locator(".plab-r-rm.plab-r-b1").count()
        if left:
            problems.append(f"annotated source {k + 1}: {left} missed remarks shown with missed unticked")
        box.check()
        out.append((shot, f"line {line} clicked, {under} remark rows under it, "
                          f"{missed} missed rows hidden by the kind filter"))
    return out


# Per line of an assembly view: its source key, and whether it is outlined
# (the view's CSS outlines the lines of the hovered source line).
ASM_LINES = """root => [...root.querySelectorAll(':scope > div')].map((pane, p) =>
    [...pane.querySelectorAll('[data-s]')].map(e => ({
        pane: p, key: e.dataset.s, text: e.innerText.trim(),
        outlined: getComputedStyle(e).outlineStyle !== 'none',
        colour: getComputedStyle(e).backgroundColor}))).flat()"""


def asm_views(page, stem, problems, within=".jp-OutputArea-output", tag=""):
    """Each assembly view on the page (`:asm` of a module with debug info:
    the source lines in the left pane, the machine code in the right, each
    line carrying `data-s`, its source line's key, and that line's colour)
    is used as a reader would: hovering the source line with the most
    instructions must outline exactly it and its instructions; hovering an
    instruction of another source line must outline exactly that source
    line and its instructions; moving the mouse away clears the outlines.
    A source line and its instructions must share a colour. Returns
    (screenshot, what was seen) per view."""
    out = []
    roots = page.locator(f"{within} .plab-asm")
    for k in range(roots.count()):
        root = roots.nth(k)
        name = f"assembly view {k + 1}"
        panes = root.locator(":scope > div")
        if panes.count() == 1:
            # No debug info: the code alone, nothing to link.
            if not panes.first.locator(".l").count():
                problems.append(f"{name}: shows no code")
            continue
        lines = root.evaluate(ASM_LINES)
        source = {l["key"]: l for l in lines if l["pane"] == 0}
        code = [l for l in lines if l["pane"] == 1]
        if panes.count() != 2 or not source or not code:
            problems.append(f"{name}: not a source pane and a code pane with linked lines "
                            f"({panes.count()} panes, {len(source)} source lines, {len(code)} instructions)")
            continue
        unlinked = sorted({l["key"] for l in code} - set(source))
        if unlinked:
            problems.append(f"{name}: instructions of source lines the source pane lacks: {unlinked}")
        for l in code:
            if l["key"] in source and l["colour"] != source[l["key"]]["colour"]:
                problems.append(f"{name}: {l['text']!r} is coloured {l['colour']}, its source line "
                                f"{l['key']} {source[l['key']]['colour']}")
                break
        counts = {}
        for l in code:
            counts[l["key"]] = counts.get(l["key"], 0) + 1

        def marked():
            return sorted((l["pane"], l["key"]) for l in root.evaluate(ASM_LINES) if l["outlined"])

        def expect(key, hovered):
            want = sorted([(0, key)] + [(1, key)] * counts.get(key, 0))
            got = marked()
            if got != want:
                problems.append(f"{name}: hovering {hovered} outlined {len(got)} lines "
                                f"({sorted(set(got))[:6]}), expected source line {key} and its "
                                f"{counts.get(key, 0)} instructions")
                return False
            return True

        root.scroll_into_view_if_needed()
        # The source line with the most instructions (the loop body).
        busiest = max(counts, key=lambda key: (counts[key], key in source))
        panes.nth(0).locator(f"[data-s='{busiest}']").first.hover()
        ok = expect(busiest, f"source line {busiest}")
        shot = os.path.join(OUT, f"{stem}-{tag}asm{k + 1}.png")
        page.screenshot(path=shot)
        # The last instruction of another source line (the code pane
        # scrolls to it).
        other = [i for i, l in enumerate(code) if l["key"] != busiest]
        if other:
            i = other[-1]
            key = code[i]["key"]
            panes.nth(1).locator("[data-s]").nth(i).hover()
            ok &= expect(key, f"instruction {code[i]['text']!r}")
        page.mouse.move(0, 0)
        if marked():
            ok = False
            problems.append(f"{name}: lines stay outlined with the mouse away: {marked()[:6]}")
        if ok:
            line = busiest.rsplit("-", 1)[-1]
            out.append((shot, f"{name}: source line {line} and its {counts[busiest]} instructions "
                              f"outlined together, and from an instruction back"))
    return out


def side_by_side_views(page, stem, problems, within=".jp-OutputArea-output"):
    """Each two-pane assembly view (`:asm F cpu=A,B` or `modules=M,N`) has
    two columns of code with rows on both sides and its differing rows
    tinted; each timing tree (`:report timing-tree`) shows its nesting as
    indentation. Returns (screenshot, what was seen) per view."""
    out = []
    views = page.locator(f"{within} .plab-sbs")
    for k in range(views.count()):
        root = views.nth(k)
        root.evaluate("e => e.scrollIntoView({block: 'start'})")
        time.sleep(0.3)
        left = root.locator("td.a").count()
        right = root.locator("td.b").count()
        tinted = root.locator("tr.c, tr.l, tr.r").count()
        heads = root.locator("th").all_inner_texts()
        if not left or left != right or not tinted:
            problems.append(f"side by side {k + 1}: {left} left and {right} right cells, {tinted} tinted rows")
        shot = os.path.join(OUT, f"{stem}-side-by-side{k + 1}.png")
        page.screenshot(path=shot)
        out.append((shot, f"side by side {k + 1}: {' | '.join(h for h in heads if h)}, {left} rows, "
                          f"{tinted} differ"))
    trees = page.locator(f"{within} table:has(caption:has-text('pass timing (tree'))")
    for k in range(trees.count()):
        root = trees.nth(k)
        root.scroll_into_view_if_needed()
        nested = root.locator("td[style*='padding-left']").count()
        if not nested:
            problems.append(f"timing tree {k + 1}: no row is indented (the tree is flat)")
        shot = os.path.join(OUT, f"{stem}-timing-tree{k + 1}.png")
        # Its top as a reader sees it (the whole table is thousands of
        # pixels tall).
        root.evaluate("e => e.scrollIntoView({block: 'start'})")
        time.sleep(0.3)
        page.screenshot(path=shot)
        out.append((shot, f"timing tree {k + 1}: {nested} nested rows indented"))
    return out


def exported(page, path):
    """The notebook as nbconvert exports it to HTML (its stored outputs, no
    kernel), opened as a file: each explorer in it must start and show a
    diff when a pass is clicked, and each assembly view must link source
    and code when hovered (its CSS needs no kernel)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    html = os.path.join(OUT, f"{stem}.html")
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output", html, path],
                   check=True, capture_output=True)
    page.goto("file://" + html)
    problems = []
    seen = explore(page, None, stem, problems, within="body", tag="nbconvert-")
    seen += asm_views(page, stem, problems, within="body", tag="nbconvert-")
    return problems, seen, html


def launcher(page, lab):
    """JupyterLab's launcher shows passlab with its logo (the kernelspec's
    logo-svg.svg); its screenshot goes to target/browser/launcher.png."""
    page.goto(lab.url("lab/workspaces/launcher"))
    card = page.locator(".jp-LauncherCard", has_text="passlab").first
    card.wait_for(timeout=60_000)
    img = card.locator("img")
    problems = []
    if img.count() == 0:
        problems.append("the launcher shows passlab without a logo")
    elif "logo-svg" not in (img.first.get_attribute("src") or ""):
        problems.append(f"the launcher's passlab logo is {img.first.get_attribute('src')}, not logo-svg.svg")
    shot = os.path.join(OUT, "launcher.png")
    page.screenshot(path=shot)
    return problems, shot


def stop_on_error(browser):
    """Run All on a notebook whose second cell fails stops there, as with
    ipykernel: the cells after it are not run (no output, no execution
    count), the ones before are. The notebook is made in a folder of its
    own, served by a JupyterLab of its own; its screenshot goes to
    target/browser/stop-on-error.png."""
    folder = tempfile.mkdtemp(prefix="passlab-stop-")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "passlab", "display_name": "passlab", "language": "passlab"}
    sources = [":help run", ":nosuch", ":module after --lang c\nint f(void) { return 1; }",
               ":modules", ":help with"]
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    path = os.path.join(folder, "stop.ipynb")
    nbformat.write(nb, path)
    lab = Lab(folder)
    problems = []
    shot = os.path.join(OUT, "stop-on-error.png")
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        page.goto(lab.url("lab/workspaces/stop/tree/stop.ipynb") + "&reset")
        page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
        page.get_by_text("passlab | Idle").first.wait_for(timeout=60_000)
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        deadline = time.time() + 60
        while True:
            texts = [t.strip() for t in prompts.all_inner_texts()]
            if texts and "[*]:" not in texts and texts[1] not in ("[ ]:", ""):
                break
            if time.time() > deadline:
                raise AssertionError(f"Run All did not finish: {texts}")
            time.sleep(0.3)
        # Let anything wrongly let through run too before looking.
        time.sleep(2)
        texts = [t.strip() for t in prompts.all_inner_texts()]
        cells = page.locator(".jp-Notebook .jp-CodeCell")
        outputs = [cells.nth(i).locator(".jp-OutputArea-output").count() for i in range(len(sources))]
        if texts[0] in ("[ ]:", "") or not outputs[0]:
            problems.append(f"the first cell did not run: {texts}")
        if not cells.nth(1).locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count():
            problems.append("the failing cell shows no error")
        for i in range(2, len(sources)):
            if outputs[i] or texts[i] not in ("[ ]:", ""):
                problems.append(f"cell {i + 1}, after the failing one, ran: prompt {texts[i]}, "
                                f"{outputs[i]} outputs")
        page.screenshot(path=shot)
        page.close()
    finally:
        lab.close()
        shutil.rmtree(folder, ignore_errors=True)
    return problems, shot


def main(paths):
    os.makedirs(OUT, exist_ok=True)
    folders = sorted({os.path.dirname(os.path.abspath(p)) for p in paths})
    failed = False
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            problems, shot = stop_on_error(browser)
        except Exception as e:  # a timeout, a missing element
            problems, shot = [f"{type(e).__name__}: {e}"], "nothing"
        print(f"stop on error: {'ok' if not problems else 'FAILED'}: Run All stops at the failing "
              f"cell; screenshot: {os.path.relpath(shot, ROOT) if shot != 'nothing' else shot}")
        for problem in problems:
            print(f"  {problem}")
        failed |= bool(problems)
        for folder in folders:
            lab = Lab(folder)
            try:
                page = browser.new_page(viewport={"width": 1200, "height": 700})
                problems, shot = launcher(page, lab)
                page.close()
                print(f"launcher: {'ok' if not problems else 'FAILED'}: passlab shown with its logo; "
                      f"screenshot: {os.path.relpath(shot, ROOT)}")
                for problem in problems:
                    print(f"  {problem}")
                failed |= bool(problems)
                for path in sorted(x for x in paths if os.path.dirname(os.path.abspath(x)) == folder):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    start = time.time()
                    try:
                        problems, seen, shots = run_notebook(page, lab, path)
                    except Exception as e:  # a timeout, a missing element
                        problems, seen, shots = [f"{type(e).__name__}: {e}"], "nothing", []
                        page.screenshot(path=os.path.join(OUT, os.path.basename(path) + "-failed.png"))
                    page.close()
                    for s in lab.api("sessions"):
                        lab.api(f"sessions/{s['id']}", method="DELETE")
                    status = "ok" if not problems else "FAILED"
                    print(f"{path}: {status} in JupyterLab ({time.time() - start:.0f} s): "
                          f"{seen}; screenshots: "
                          f"{', '.join(os.path.relpath(s, ROOT) for s in shots)}")
                    for problem in problems:
                        print(f"  {problem}")
                    failed |= bool(problems)
                    with open(path) as f:
                        text = f.read()
                    if "plab-explore" in text or "plab-asm" in text:
                        page = browser.new_page(viewport={"width": 1400, "height": 1000})
                        try:
                            problems, seen, html = exported(page, path)
                        except Exception as e:
                            problems, seen, html = [f"{type(e).__name__}: {e}"], [], "nothing"
                        page.close()
                        print(f"{path}: {'ok' if not problems else 'FAILED'} as nbconvert's HTML "
                              f"({os.path.relpath(html, ROOT)}): {len(seen)} explorers and assembly views: "
                              + "; ".join(w for _, w in seen))
                        for problem in problems:
                            print(f"  {problem}")
                        failed |= bool(problems)
            finally:
                lab.close()
        browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
