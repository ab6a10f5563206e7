"""The sample programs as package data (issue 59): python/ship_samples.py
copies the corpus into the package, and passlab.data.sample_inputs()
finds a package's own copy before a checkout's."""

import importlib.util

import passlab
import passlab.data
from conftest import ROOT


def load_ship():
    spec = importlib.util.spec_from_file_location("ship_samples", ROOT / "python" / "ship_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_shipped_and_found_in_the_package(tmp_path, monkeypatch):
    package = tmp_path / "site" / "passlab"
    count = load_ship().ship(ROOT / "target" / "inputs", into=package / "samples")
    assert count > 28 and (package / "samples" / "zlib" / "LICENSE").is_file()
    monkeypatch.delenv("PASSLAB_SOURCE", raising=False)
    monkeypatch.setattr(passlab.data, "__file__", str(package / "data.py"))
    assert passlab.data.sample_inputs() == package / "samples"
    corpus = passlab.data.sample_corpus()
    assert len(corpus) == 28 and all(p.is_file() for p in corpus)
    # Each compiles from the copy alone (its headers beside it).
    for name in ("zlib/inflate.c", "lua/lvm.c"):
        path = package / "samples" / name
        assert passlab.Module.from_c(path, level="O1", args=[f"-I{path.parent}"]).instcount > 1000
    # PASSLAB_SOURCE names a checkout, which wins.
    monkeypatch.setenv("PASSLAB_SOURCE", str(ROOT))
    assert passlab.data.sample_inputs() == ROOT / "target" / "inputs"


def test_no_samples_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("PASSLAB_SOURCE", raising=False)
    monkeypatch.setattr(passlab.data, "__file__", str(tmp_path / "a" / "b" / "passlab" / "data.py"))
    try:
        passlab.data.sample_inputs()
    except FileNotFoundError as e:
        assert "ship_samples.py" in str(e) and isinstance(e, passlab.Error)
    else:
        raise AssertionError("no error")
