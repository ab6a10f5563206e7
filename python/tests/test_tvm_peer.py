"""TVM's semantics where users moving from TVM expect them (issue 59):
passes return new modules, decorated classes keep their instances,
PassTimingInstrument is cleared when its context exits,
override_instruments(None), PassInfo's constructor. Tests ported from TVM
keep the names of TVM's tests (the file is named in each docstring)."""

import warnings

import pytest

import passlab
from passlab.instrument import PassTimingInstrument, pass_instrument
from passlab.transform import LLVMPass, PassContext, PassInfo, Sequential, function_pass, module_pass

SOURCE = "int f(int x) { int y = x; return y * 8 + 0; }"


def fresh():
    return passlab.Module.from_c(SOURCE, name="f.c")


def test_a_pass_returns_a_new_module_and_leaves_its_input():
    mod = fresh()
    text, count = mod.text(), mod.instcount
    for p in (LLVMPass("mem2reg"), Sequential([LLVMPass("sroa"), LLVMPass("instcombine")])):
        new = p(mod)
        assert new is not mod and new.instcount < count
        assert mod.text() == text  # TVM's modules are values
    with PassContext(opt_level=3):
        m1 = Sequential([LLVMPass("default<O2>")])(mod)
    assert mod.text() == text and m1.instcount < count


def test_inplace_and_apply_change_the_module_itself():
    mod = fresh()
    count = mod.instcount
    assert LLVMPass("mem2reg")(mod, inplace=True) is mod and mod.instcount < count
    after = mod.instcount
    assert mod.apply(LLVMPass("instcombine")) is mod and mod.instcount < after
    # A failing pass leaves the module as it was, in place or not.
    @module_pass(opt_level=0)
    def boom(m, ctx):
        raise KeyError("no")

    text = mod.text()
    for call in (lambda: boom(mod), lambda: boom(mod, inplace=True), lambda: mod.apply(boom)):
        with pytest.raises(KeyError):
            call()
        assert mod.text() == text


def test_python_passes_and_instruments_receive_the_module():
    seen = []

    @pass_instrument
    class Sizes:
        def run_after_pass(self, mod, info):
            if info.name in ("mine", "o2"):
                seen.append((info.name, mod.instcount))

    @module_pass(opt_level=0, name="o2")
    def o2(mod, ctx):
        return LLVMPass("default<O2>")(mod)  # TVM's idiom: the new module is returned

    @module_pass(opt_level=0, name="mine")
    def mine(mod, ctx):
        LLVMPass("mem2reg")(mod, inplace=True)  # or changed in place

    mod = fresh()
    with PassContext(instruments=[Sizes()]):
        a = o2(mod)
        b = mine(mod)
    assert a.instcount < b.instcount < mod.instcount
    assert seen == [("o2", a.instcount), ("mine", b.instcount)]


def test_a_module_pass_dropping_a_passes_result_warns():
    @module_pass(opt_level=0, name="drops")
    def drops(mod, ctx):
        LLVMPass("mem2reg")(mod)  # the new module is lost

    mod = fresh()
    with pytest.warns(UserWarning, match="returned None: a pass returns a new module"):
        out = drops(mod)
    assert out.instcount == mod.instcount

    @module_pass(opt_level=0, name="keeps")
    def keeps(mod, ctx):
        return LLVMPass("mem2reg")(mod)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert keeps(mod).instcount < mod.instcount


def test_module_class_pass():
    """TVM: tests/python/relay/test_pass_manager.py::test_module_class_pass."""

    @module_pass(opt_level=1)
    class TestPipeline:
        def __init__(self, new_mod, replace):
            self.new_mod = new_mod
            self.replace = replace

        def transform_module(self, mod, ctx):
            if self.replace:
                return self.new_mod
            return mod

    m1 = passlab.Module.from_c("int f(int x) { return x; }")
    m2 = passlab.Module.from_c("int f(int x) { return x * x; }")
    fpass = TestPipeline(m2, replace=True)
    assert fpass.info.name == "TestPipeline"
    assert fpass.replace is True and fpass.new_mod is m2  # the instance's attributes
    assert fpass(m1).text() == m2.text()
    assert TestPipeline(m2, replace=False)(m1).text() == m1.text()


def test_function_class_pass_keeps_its_instance():
    """TVM: tests/python/relay/test_pass_manager.py::test_function_class_pass
    (the class's instance is reached through the pass)."""

    @function_pass(opt_level=1)
    class CountMuls:
        def __init__(self):
            self.n = 0

        def transform_function(self, func, mod, ctx):
            self.n += sum(1 for i in func.instructions if i.opcode == "mul")

    cm = CountMuls()
    assert isinstance(cm, passlab.transform.FunctionPass) and cm.info.name == "CountMuls"
    cm(passlab.Module.from_c("int f(int x) { return x * x * 3; }", level="O1"))
    assert cm.n == 2
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        cm.missing
    with pytest.raises(AttributeError):
        LLVMPass("mem2reg").n


def test_pass_timing_instrument():
    """TVM: tests/python/relay/test_pass_instrument.py::test_pass_timing_instrument."""
    timing_inst = PassTimingInstrument()
    PassContext.current().override_instruments([timing_inst])
    mod = fresh()
    mod = LLVMPass("sroa")(mod)
    mod = LLVMPass("instcombine")(mod)
    mod = LLVMPass("simplifycfg")(mod)
    profiles = timing_inst.render()
    assert "sroa" in profiles and "instcombine" in profiles and "simplifycfg" in profiles

    # Reset the current PassContext's instruments to None.
    PassContext.current().override_instruments(None)
    mod = LLVMPass("sroa")(fresh())
    assert timing_inst.render() == ""
    assert PassContext.current().instruments == []


def test_print():
    """TVM: the pass-instrument how-to's timing: read inside the context,
    cleared when it exits."""
    timing_inst = PassTimingInstrument()
    with PassContext(opt_level=3, instruments=[timing_inst]):
        mod = LLVMPass("default<O2>")(fresh())
        profiles = timing_inst.render()
    assert profiles.startswith("default<O2>: ") and mod.instcount > 0
    assert timing_inst.render() == "" and timing_inst.rows() == []
    # And again in a second context.
    with PassContext(instruments=[timing_inst]):
        LLVMPass("instcombine")(fresh())
        assert timing_inst.render().startswith("instcombine: ")
    assert timing_inst.render() == ""


def test_pass_info():
    """TVM: tests/python/relay/test_pass_manager.py::test_pass_info
    (PassInfo(opt_level=1, name="x") as TVM constructs it)."""
    info = PassInfo(opt_level=1, name="xyz")
    assert info.opt_level == 1 and info.name == "xyz" and info.required == []
    info = PassInfo(2, "abc", required=["mem2reg"])
    assert (info.opt_level, info.name, info.required) == (2, "abc", ["mem2reg"])
    assert repr(info) == 'PassInfo(name="abc", opt_level=2, required=["mem2reg"])'
