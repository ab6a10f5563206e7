"""Lesson 12's script twin: written from the notebook (python_twin.py), it
runs as a script and prints what the notebook stores, cell after cell (the
notebook itself runs in JupyterLab in the browser test)."""

import os
import subprocess
import sys


from conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(NOTEBOOKS))

import check  # noqa: E402
import python_twin  # noqa: E402

LESSON = NOTEBOOKS / "12-python.ipynb"


def test_the_twin_is_written_from_the_notebook():
    assert (NOTEBOOKS / "12-python.py").read_text() == python_twin.twin(str(LESSON)), (
        "python notebooks/python_twin.py notebooks/12-python.ipynb writes it again"
    )


def test_the_twin_runs_and_prints_what_the_notebook_stores():
    run = subprocess.run(
        [sys.executable, "12-python.py"], cwd=NOTEBOOKS, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    missing = python_twin.unprinted(str(LESSON), run.stdout, check.mask)
    assert missing is None, f"the twin did not print, after what came before: {missing}"
