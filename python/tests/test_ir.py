"""The IR API for Python passes: the guide's strength reduction in
Python, and every way a handle can go stale or an edit can be wrong ending
in an error, never in freed memory or a broken module."""

import pytest

import passlab
from passlab.instrument import pass_instrument
from passlab.ir import Builder
from passlab.transform import LLVMPass, PassContext, Sequential, function_pass, module_pass


@function_pass(opt_level=2, name="strength-reduce", required=["mem2reg"])
def strength_reduce(func, mod, ctx):
    for inst in func.instructions:
        if inst.opcode != "mul":
            continue
        x, c = inst.operands
        k = c.int_value
        if not k or k < 0 or k & (k - 1):
            continue
        shl = Builder(before=inst).shl(x, x.const_int(k.bit_length() - 1))
        inst.replace_all_uses_with(shl)
        inst.erase()


def test_the_readmes_strength_reduction_in_python():
    mod = passlab.Module.from_c("int scale(int x) { return x * 8; }\nint keep(int x) { return x * 6; }")
    assert isinstance(strength_reduce, passlab.transform.FunctionPass)
    with PassContext(opt_level=2):
        mod = Sequential([strength_reduce, LLVMPass("instcombine")])(mod)
    scale = mod.text("scale")
    assert "shl i32 %x, 3" in scale and "mul" not in scale
    assert "mul nsw i32 %x, 6" in mod.text("keep")
    # Gated as any pass: at opt_level=1 the sequential skips it.
    again = passlab.Module.from_c("int scale(int x) { return x * 8; }")
    with PassContext(opt_level=1):
        again = Sequential([strength_reduce])(again)
    assert "shl" not in str(again)


def test_reading_ir():
    mod = passlab.Module.from_c("int f(int a, int b) { return a < b ? a : b; }", level="O1")
    mod = passlab.transform.parse_pipeline("sroa,simplifycfg")(mod)
    f = mod["f"]
    assert f.kind == "function" and f.name == "f" and f.type == "ptr"
    assert [a.name for a in f.arguments] == ["a", "b"]
    assert [b.kind for b in f.blocks] == ["block"]
    ops = [i.opcode for i in f.instructions]
    assert ops == ["icmp", "select", "ret"]
    cmp = f.instructions[0]
    assert cmp.operands == f.arguments
    assert cmp.users == [f.instructions[1]]
    assert cmp.parent == f.blocks[0] and f.blocks[0].parent == f
    assert str(cmp).strip() == "%cmp = icmp slt i32 %a, %b"
    assert [fn.name for fn in mod.ir_functions()] == ["f"]
    with pytest.raises(passlab.NotFoundError, match="'g'"):
        mod["g"]


def test_a_handle_is_refused_after_the_module_changed():
    mod = passlab.Module.from_c("int f(int x) { return x * 2; }")
    inst = mod["f"].instructions[0]
    new = LLVMPass("mem2reg")(mod)  # a new module: mod, and its handles, as they were
    assert inst.opcode == "alloca" and new.instcount < mod.instcount
    mod.apply(LLVMPass("mem2reg"))  # in place
    with pytest.raises(passlab.InvalidError, match="out of date"):
        inst.opcode
    other = passlab.Module.from_c("int f(int x) { return x; }")
    f = other["f"]
    with pytest.raises(passlab.InvalidError, match="out of date"):

        @module_pass(opt_level=0)
        def use_foreign(m, ctx):
            m["f"].instructions[0].replace_all_uses_with(f.instructions[0])

        use_foreign(mod)


def test_edits_outside_a_pass_are_refused():
    mod = passlab.Module.from_c("int f(int x) { return x * 2; }")
    inst = mod["f"].instructions[-1]
    with pytest.raises(RuntimeError, match="inside a pass"):
        inst.erase()
    with pytest.raises(RuntimeError, match="inside a pass"):
        mod.const_int("i32", 1)


def test_erase_rules_and_erased_handles():
    mod = passlab.Module.from_c("int f(int x) { return x * 2 + 1; }", level="O1")
    mod = LLVMPass("sroa")(mod)
    seen = {}

    @module_pass(opt_level=0)
    def edits(m, ctx):
        mul, add, ret = m["f"].instructions
        with pytest.raises(passlab.InvalidError, match="still used by 1"):
            mul.erase()
        add.replace_all_uses_with(mul)
        add.erase()
        with pytest.raises(passlab.InvalidError, match="was erased"):
            add.opcode
        seen["ops"] = [i.opcode for i in m["f"].instructions]
        assert mul.opcode == "mul"  # the others stay valid

    mod = edits(mod)
    assert seen["ops"] == ["mul", "ret"]
    assert "add" not in mod.text("f")


def test_type_and_operation_errors_leave_the_module():
    mod = passlab.Module.from_c("long f(int x, long y) { return x * 2 + y; }", level="O1")
    mod = LLVMPass("sroa")(mod)
    before = str(mod)

    def run(body):
        @module_pass(opt_level=0)
        def p(m, ctx):
            body(m)

        p(mod)

    def wrong_rauw(m):
        x, y = m["f"].arguments
        x.replace_all_uses_with(y)

    with pytest.raises(passlab.InvalidError, match=r"types differ \(i32 and i64\)"):
        run(wrong_rauw)

    def wrong_build(m):
        x, y = m["f"].arguments
        Builder(before=m["f"].instructions[0]).add(x, y)

    with pytest.raises(passlab.InvalidError, match="add takes two integers of one type"):
        run(wrong_build)

    def unknown_op(m):
        x, _ = m["f"].arguments
        m["f"].instructions[0].build_before("fma", [x])

    with pytest.raises(passlab.InvalidError, match="unknown operation 'fma'; valid are: add, sub"):
        run(unknown_op)

    def bad_cast(m):
        x, _ = m["f"].arguments
        Builder(before=m["f"].instructions[0]).trunc(x, "i64")

    with pytest.raises(passlab.InvalidError, match="trunc from i32 to i64"):
        run(bad_cast)
    assert str(mod) == before


def test_a_pass_that_breaks_the_ir_is_caught_by_the_verifier():
    mod = passlab.Module.from_c("int f(int x) { return (x + 1) * 3; }", level="O1")
    mod = LLVMPass("sroa")(mod)
    before = str(mod)

    @function_pass(opt_level=0)
    def use_before_def(func, m, ctx):
        add, mul, ret = func.instructions
        add.set_operand(0, mul)  # %add uses %mul, defined after it

    with pytest.raises(passlab.VerifyError, match="(?s)after pass use_before_def.*Instruction does not dominate all uses"):
        use_before_def(mod)
    assert str(mod) == before


def test_function_pass_on_a_class_skips_optnone_and_checks_its_result():
    seen = []

    @function_pass(opt_level=0, name="names")
    class Names:
        def __init__(self, prefix):
            self.prefix = prefix

        def transform_function(self, func, mod, ctx):
            seen.append(self.prefix + func.name)

    mod = passlab.Module.from_c(
        "__attribute__((optnone, noinline)) int a(void) { return 1; }\nint b(void) { return 2; }\nint c(void);"
    )
    mod = Names("fn:")(mod)
    assert seen == ["fn:b"]

    @function_pass(opt_level=0)
    def returns(func, mod, ctx):
        return 3

    with pytest.raises(TypeError, match="returned int; a function pass edits the function in place"):
        returns(mod)


def test_instruments_read_the_ir_of_the_module_a_pass_made():
    @pass_instrument
    class Muls:
        def __init__(self):
            self.after = []

        def run_after_pass(self, mod, info):
            if info.depth == 0:
                self.after.append(sum(i.opcode == "mul" for f in mod.ir_functions() for i in f.instructions))

    m = Muls()
    mod = passlab.Module.from_c("int scale(int x) { return x * 8; }")
    with PassContext(instruments=[m]):
        mod = LLVMPass("mem2reg")(mod)
        strength_reduce(mod)
    assert m.after == [1, 0]
