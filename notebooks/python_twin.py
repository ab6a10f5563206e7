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
