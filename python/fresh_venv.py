"""The package as a user installs it, tested (the test command's phase
"python: the wheel in a fresh venv"). The wheel ``maturin build`` makes
(after ``python python/ship_samples.py``, so that it carries the sample
programs) is installed with every extra into a new venv, made as the
guide's "Installing" says (``python3 -m venv``, then ``pip install
'WHEEL[gym,ray,pandas,notebook]'``). Then, from a scratch folder outside
the checkout, with nothing of the checkout on Python's path and no
``PASSLAB_SOURCE``:

1. ``import passlab`` must come from that venv, at the wheel's version;
2. every ``python`` block of docs/src/python.md runs, as the readme test
   runs them with the project's venv (a block whose first line is ``# not
   run by the tests: WHY`` is not run there either);
3. lesson 12's script twin runs and prints what the notebook stores.

    python python/fresh_venv.py WHEEL [VENV]    # VENV: target/fresh-venv

The venv is made again on every run; it is left there for a look.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "notebooks"))

import check  # noqa: E402
import python_twin  # noqa: E402

NOT_RUN = "# not run by the tests:"
LESSON = ROOT / "notebooks" / "12-python.ipynb"


def python_blocks(path):
    """The ``python`` blocks of a Markdown file, as (line, text)."""
    blocks, current, start = [], None, 0
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if current is None and line.strip() == "```python":
            current, start = [], n
        elif current is not None and line.strip() == "```":
            blocks.append((start, "\n".join(current) + "\n"))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def clean_environment(venv):
    """The environment of a user's shell with only `venv` activated: no
    project venv on PATH, nothing of the checkout on Python's path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PASSLAB_SOURCE", "PYTHONPATH", "VIRTUAL_ENV")}
    ours = str(ROOT / "target" / "venv" / "bin")
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = str(venv)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def make_venv(wheel, venv, env):
    """`python3 -m venv`, with the python3 a user's PATH gives (not the
    project venv's), then the wheel with every extra."""
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True, env=env)
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, f"{wheel}[gym,ray,pandas,notebook]"], check=True)


def run(python, args, scratch, env, what):
    done = subprocess.run([str(python), *args], cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{what}: exit status {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def main(args):
    if not args:
        raise SystemExit(__doc__)
    wheel = pathlib.Path(args[0]).resolve()
    venv = pathlib.Path(args[1] if len(args) > 1 else ROOT / "target" / "fresh-venv").resolve()
    env = clean_environment(venv)
    make_venv(wheel, venv, env)
    python = venv / "bin" / "python"
    version = wheel.name.split("-")[1]
    with tempfile.TemporaryDirectory(prefix="passlab-fresh-venv-") as scratch:
        where = run(python, ["-c", "import passlab; print(passlab.__file__); print(passlab.__version__)"],
                    scratch, env, "import passlab").split()
        if not where[0].startswith(str(venv)) or where[1] != version:
            raise SystemExit(f"import passlab found {where[0]} at version {where[1]}, not the wheel's {version} in {venv}")
        doc = ROOT / "docs" / "src" / "python.md"
        ran = 0
        for line, text in python_blocks(doc):
            if text.startswith(NOT_RUN):
                continue
            script = pathlib.Path(scratch) / f"block-{line}.py"
            script.write_text(text)
            run(python, [script.name], scratch, env, f"{doc.relative_to(ROOT)}:{line}")
            ran += 1
        twin = pathlib.Path(scratch) / "12-python.py"
        shutil.copyfile(LESSON.with_suffix(".py"), twin)
        printed = run(python, [twin.name], scratch, env, "lesson 12's twin")
        missing = python_twin.unprinted(str(LESSON), printed, check.mask)
        if missing is not None:
            raise SystemExit(f"lesson 12's twin in the fresh venv did not print, after what came before: {missing}")
    print(f"passlab {version} from {wheel.name} in a fresh venv: {ran} blocks of {doc.name} and lesson 12 ran")


if __name__ == "__main__":
    main(sys.argv[1:])
