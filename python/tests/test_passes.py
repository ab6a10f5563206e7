"""Passes by name, their errors, Python passes' transactions, and modules
lent to Python code only for the length of a call."""

import os

import pytest

import passlab
from passlab.instrument import pass_instrument
from passlab.transform import LLVMPass, PassContext, Sequential, list_passes, module_pass, parse_pipeline


def test_passes_by_name_with_parameters(loop_module):
    p = LLVMPass("loop-unroll<O3>")
    assert p.info.name == "loop-unroll<O3>"
    seq = parse_pipeline("mem2reg,instcombine")
    assert [q.info.name for q in seq.passes] == ["mem2reg", "instcombine"]
    assert isinstance(seq, passlab.transform.Pass)
    loop_module = LLVMPass("function(loop-mssa(licm))")(loop_module)
    names = {p["name"] for p in list_passes()}
    assert {"instcombine", "licm", "strip-dead-internals"} <= names


def test_unknown_passes_and_bad_pipelines():
    with pytest.raises(passlab.UnknownPassError, match="did you mean 'instcombine'"):
        LLVMPass("instcombin")
    with pytest.raises(passlab.PipelineError):
        LLVMPass("loop-unroll<O7>")
    with pytest.raises(passlab.Error, match="aborts the process on purpose"):
        LLVMPass("trigger-crash-module")


def test_passes_that_write_files_or_start_programs_are_refused(tmp_path):
    # view-cfg writes a .dot file and starts a viewer (xdg-open); dot-cfg
    # writes a file per function into the working folder; gcov writes where
    # the module's metadata says: refused before anything runs.
    with pytest.raises(passlab.PipelineError, match="starts a viewer program"):
        LLVMPass("view-cfg")
    with pytest.raises(passlab.PipelineError, match="passlab does not run it"):
        LLVMPass("function(dot-cfg)")
    with pytest.raises(passlab.PipelineError, match="passlab does not run it"):
        parse_pipeline("mem2reg,insert-gcov-profiling")
    # A profile must be a regular file: a device or a FIFO would be read
    # without end, or block.
    with pytest.raises(passlab.PipelineError, match="character device"):
        LLVMPass("memprof-use<profile-filename=/dev/zero>")
    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    with pytest.raises(passlab.PipelineError, match="a FIFO"):
        LLVMPass(f"memprof-use<profile-filename={fifo}>")


def test_a_python_pass_that_raises_leaves_the_module(loop_module):
    @module_pass(opt_level=0)
    def half_done(mod, ctx):
        mod = LLVMPass("default<O2>")(mod)
        raise KeyError("on purpose")

    before = str(loop_module)
    with pytest.raises(KeyError, match="on purpose"):
        half_done(loop_module)
    assert str(loop_module) == before


def test_a_python_pass_must_return_a_module_or_none(loop_module):
    @module_pass(opt_level=0)
    def wrong(mod, ctx):
        return 42

    with pytest.raises(TypeError, match="returned int; a module pass returns a passlab.Module or None"):
        wrong(loop_module)


def test_a_lent_module_ends_with_its_call(loop_module):
    kept = []

    @module_pass(opt_level=0)
    def keep(mod, ctx):
        kept.append(mod)
        kept.append(mod.copy())

    keep(loop_module)
    with pytest.raises(RuntimeError, match="lent to a hook or a pass"):
        kept[0].instcount
    assert kept[1].instcount == loop_module.instcount
    assert "ended" in repr(kept[0])


def test_an_instrument_cannot_change_the_module(loop_module):
    @pass_instrument
    class Meddler:
        def run_before_pass(self, mod, info):
            LLVMPass("instcombine")(mod)

    with pytest.raises(RuntimeError, match="an instrument cannot change it"):
        with PassContext(instruments=[Meddler()]):
            loop_module = LLVMPass("mem2reg")(loop_module)


def test_instruments_are_checked():
    class NotMarked:
        def run_before_pass(self, mod, info):
            pass

    with pytest.raises(TypeError, match="pass_instrument"):
        PassContext(instruments=[NotMarked()])
    with pytest.raises(TypeError, match="pass an instance"):
        PassContext(instruments=[pass_instrument(NotMarked)])
    with pytest.raises(TypeError, match="defines none of the hooks"):
        pass_instrument(type("Empty", (), {}))
    with pytest.raises(TypeError, match="opt_level"):
        module_pass(lambda m, c: None)


def test_a_module_in_use_cannot_be_passed_again(loop_module):
    @module_pass(opt_level=0)
    def reenter(mod, ctx):
        LLVMPass("instcombine")(loop_module, inplace=True)  # the outer module, not the lent one

    with pytest.raises(TypeError, match="being transformed by a pass already"):
        reenter(loop_module, inplace=True)


def test_sequential_of_python_and_llvm_passes(loop_module):
    seen = []

    @module_pass(opt_level=1, name="note-size")
    def note(mod, ctx):
        seen.append(mod.instcount)

    seq = Sequential([note, LLVMPass("sroa"), note, LLVMPass("instcombine"), note], opt_level=1, name="mine")
    assert seq.info.name == "mine"
    loop_module = seq(loop_module)
    assert seen[0] > seen[1] >= seen[2] == loop_module.instcount
