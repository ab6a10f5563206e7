import pathlib

import pytest

import passlab

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def loop_module():
    """A small C function with a loop, as clang hands it to -O2."""
    return passlab.Module.from_c(
        "int sum(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }",
        name="sum.c",
    )


@pytest.fixture
def examples():
    return ROOT / "examples"


@pytest.fixture
def zlib():
    """zlib's sources, as the set-up links them (target/inputs/zlib)."""
    path = ROOT / "target" / "inputs" / "zlib"
    assert (path / "trees.c").exists(), "run the set-up (scripts/passlab.sh) to link target/inputs"
    return path
