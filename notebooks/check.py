"""Executes notebooks headlessly through the installed `passlab` kernel
(or the kernel a notebook names: `python3` for lesson 12)
(nbclient) and compares each cell's outputs with the stored ones, nbval
style: text (streams, text/plain, errors) must match exactly after masking
what varies from run to run, value by value (times, percentages, runtimes,
rates; the rows of a table ranked by time); images must be there with the
same MIME types. A cell tagged `nbval-ignore-output` (code for the host's
processor, which differs from machine to machine) is compared by the kinds
of its outputs only. `PASSLAB_BLESS=1` stores the new outputs.

    python notebooks/check.py notebooks/*.ipynb

The test command compares the outputs of the lessons as JupyterLab runs them
in the browser test (`browser.py` uses `compare`), so that each lesson is
executed once; this script is the way to bless new outputs, or to check
without a browser.

Each notebook runs in its own folder, as Jupyter starts a kernel there;
`:load zlib/deflate.c` finds passlab's sample inputs wherever that is (see
`:path`).
"""

import copy
import difflib
import os
import re
import sys

import nbformat
from nbclient import NotebookClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A number with a decimal point in a line that reports time, a percentage or
# a runtime; and runs of spaces next to them (table padding).
TIMED = re.compile(r"(\d s\b| ms\b| us\b|\(us\b|µs|\bms\)|%|\d\.\d+x|compile|runtime|self time|GFLOP)")
DECIMAL = re.compile(r"\d+\.\d+")
UNIT = re.compile(r"\d+(\.\d+)?(?=\s?(ms|us|µs|ns|s)\b)")


def mask(text):
    out = []
    # A table ranked by measured time (`:report timing`): which pass is on
    # which row varies from run to run, so its rows are masked whole.
    ranked = 0
    for line in text.splitlines():
        if line and set(line) <= set("+-="):
            if ranked == 1 and "=" in line:
                ranked = 2
            elif ranked == 2:
                ranked = 0
            out.append("+=+" if "=" in line else "+-+")
            continue
        if line.endswith("by self time)"):
            ranked = 1
        if ranked == 2 and line.startswith("|"):
            out.append("| (a row ranked by measured time) |")
            continue
        # Code for this machine's processor (cpu=host): its name, and the
        # sizes of the code made for it, depend on the machine.
        if "cpu host (" in line:
            line = re.sub(r"cpu host \([^)]*\)", "cpu host (#)", line)
            line = re.sub(r"(?<![\w.])\d+(?![\w.])", "#", line)
        if TIMED.search(line):
            line = UNIT.sub("#", line)
            line = DECIMAL.sub("#", line)
            line = re.sub(r" {2,}", " ", line)
        out.append(line)
    return "\n".join(out)


def summary(outputs, kinds_only=False):
    """The comparable form of a cell's outputs."""
    if kinds_only:
        return "\n".join(f"[{o['output_type']} {','.join(sorted(o.get('data', {})))}]"
                         for o in outputs)
    parts = []
    last_stream = None
    for o in outputs:
        kind = o["output_type"]
        if kind == "stream":
            # Consecutive stream messages read as one (as front ends show
            # them); how text is split into messages depends on timing.
            if last_stream == o["name"]:
                parts[-1] += "\n" + mask(o["text"])
            else:
                parts.append(f"[{o['name']}]\n{mask(o['text'])}")
            last_stream = o["name"]
            continue
        last_stream = None
        if kind in ("execute_result", "display_data"):
            data = o.get("data", {})
            mimes = ",".join(sorted(data))
            text = data.get("text/plain", "")
            if isinstance(text, list):
                text = "".join(text)
            parts.append(f"[{kind} {mimes}]\n{mask(text)}")
        elif kind == "error":
            parts.append(f"[error {o['ename']}]\n{mask(o['evalue'])}")
    return "\n".join(parts)


def compare(path, stored, executed):
    """Whether the executed notebook's outputs match the stored ones, cell
    by cell; each difference is printed as a diff."""
    ok = True
    for i, (old, new) in enumerate(zip(stored.cells, executed.cells)):
        if old.cell_type != "code":
            continue
        # nbval's tag: outputs whose text varies (a table sorted by time)
        # are compared by kind and MIME type only.
        kinds_only = "nbval-ignore-output" in old.metadata.get("tags", [])
        a, b = summary(old.outputs, kinds_only), summary(new.outputs, kinds_only)
        if a != b:
            ok = False
            diff = "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(),
                                                  "stored", "executed", lineterm=""))
            print(f"{path}: cell {i} differs (PASSLAB_BLESS=1 python notebooks/check.py "
                  f"{os.path.relpath(path, ROOT)} stores the new outputs):\n{diff}")
    if len(stored.cells) != len(executed.cells):
        ok = False
        print(f"{path}: {len(executed.cells)} cells executed, {len(stored.cells)} stored")
    if ok:
        cells = sum(c.cell_type == "code" for c in executed.cells)
        print(f"{path}: {cells} code cells, outputs match")
    return ok


def check(path, bless):
    stored = nbformat.read(path, as_version=4)
    nb = copy.deepcopy(stored)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    folder = os.path.dirname(os.path.abspath(path))
    # The lessons' own kernel, or the one a notebook names (lesson 12 runs
    # in ipykernel).
    kernel = nb.metadata.get("kernelspec", {}).get("name", "passlab")
    NotebookClient(nb, kernel_name=kernel, timeout=600,
                   resources={"metadata": {"path": folder}}).execute()
    if bless:
        nbformat.write(nb, path)
        print(f"{path}: outputs stored")
        return True
    return compare(path, stored, nb)


def main(paths):
    bless = os.environ.get("PASSLAB_BLESS", "") not in ("", "0")
    results = [check(p, bless) for p in paths]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
