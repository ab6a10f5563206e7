"""Module.cfg: a function's control-flow graph, drawn by Graphviz."""

import shutil

import pytest

import passlab

DIAMOND = """
define i32 @diamond(i32 %x) {
entry:
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %then, label %else
then:
  %a = add i32 %x, 1
  br label %end
else:
  %b = sub i32 %x, 1
  br label %end
end:
  %r = phi i32 [ %a, %then ], [ %b, %else ]
  ret i32 %r
}

declare void @ext()
"""


def test_graph_text_dot_and_svg():
    mod = passlab.Module.from_ir(DIAMOND)
    g = mod.cfg("diamond")
    assert isinstance(g, passlab.Graph)
    assert g.title == "cfg: diamond"
    assert "entry (2 instructions) -> then [true], else [false]" in g.text
    assert g.dot.startswith("digraph cfg {")
    assert "4 blocks" in repr(g)
    if shutil.which("dot"):
        svg = g._repr_svg_()
        assert svg.startswith("<svg") and "then:" in svg
        assert g.png().startswith(b"\x89PNG")


def test_after_a_pipeline_on_a_copy():
    mod = passlab.Module.from_ir(DIAMOND)
    before = mod.fingerprint
    g = mod.cfg("diamond", after="simplifycfg")
    assert g.title == "cfg: diamond after simplifycfg"
    assert "1 block, 0 edges" in g.text
    assert mod.fingerprint == before
    assert "4 blocks" in mod.cfg("diamond").text


def test_errors_are_passlab_errors(tmp_path):
    mod = passlab.Module.from_ir(DIAMOND)
    with pytest.raises(passlab.NotFoundError, match="diamond"):
        mod.cfg("diamnd")
    with pytest.raises(passlab.InvalidError, match="only declared"):
        mod.cfg("ext")
    with pytest.raises(passlab.UnknownPassError):
        mod.cfg("diamond", after="simplifycgf")
    mine = tmp_path / "mine.dot"
    mine.write_text("mine")
    with pytest.raises(passlab.Error):
        mod.cfg("diamond").save(mine)
    assert mine.read_text() == "mine"
    out = tmp_path / "g.dot"
    mod.cfg("diamond").save(out)
    assert out.read_text().startswith("digraph cfg {")
