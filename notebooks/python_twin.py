"""Writes the script twin of a Python lesson (lesson 12): its code cells in
order, its Markdown as comments, so that the lesson runs as a script too
(`python notebooks/12-python.py`, from `notebooks/`).

    python notebooks/python_twin.py notebooks/12-python.ipynb   # writes 12-python.py
    python notebooks/python_twin.py --check notebooks/12-python.ipynb

IPython's own syntax has no place in the twin: a lesson whose code is not
plain Python is refused.
"""

import os
import sys

import nbformat


def twin(path):
    nb = nbformat.read(path, as_version=4)
    name = os.path.basename(path)
    out = [f"# The script twin of {name}: notebooks/python_twin.py writes it from the notebook.\n"]
    for cell in nb.cells:
        source = cell.source.rstrip("\n")
        if cell.cell_type == "markdown":
            out.append("\n".join(("# " + line).rstrip() for line in source.splitlines()) + "\n")
        elif cell.cell_type == "code":
            if any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
                raise SystemExit(f"{path}: a cell uses IPython's syntax; the twin must be plain Python")
            # A cell's last expression is shown in a notebook; a script
            # drops it, so the twin prints it.
            lines = source.splitlines()
            last = lines[-1] if lines else ""
            if last and not last.startswith((" ", "#")) and last.isidentifier():
                lines[-1] = f"print(repr({last}))"
            out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def unprinted(path, printed, mask):
    """The first stored output of the notebook at `path` that `printed` (what
    its twin printed) does not show after what came before, as
    ``"cell N: TEXT"``; None when every one is there, in order. `mask` is
    check.py's, applied to both sides."""
    printed = mask(printed)
    at = 0
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream" and out["name"] == "stdout":
                text = mask(out["text"]).strip("\n")
            elif out["output_type"] == "execute_result":
                text = mask(out["data"]["text/plain"]).strip("\n")
            else:
                continue
            found = printed.find(text, at)
            if found < 0:
                return f"cell {i}: {text}"
            at = found + len(text)
    return None


def main(args):
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    status = 0
    for path in paths:
        script = os.path.splitext(path)[0] + ".py"
        text = twin(path)
        if check:
            if not os.path.exists(script) or open(script).read() != text:
                print(f"{script} is not the twin of {path}: python notebooks/python_twin.py {path}")
                status = 1
        else:
            with open(script, "w") as f:
                f.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
