"""Modules from C, C++, IR and bitcode; what they print and count; errors
as passlab's exceptions with the REPL's messages."""

import pathlib
import pickle
import subprocess

import pytest

import passlab
from passlab.transform import LLVMPass, PassContext


def test_from_c_text_and_path(examples):
    m = passlab.Module.from_c("int one(void) { return 1; }")
    assert m.name == "input.c" and m.functions == ["one"]
    g = passlab.Module.from_c(str(examples / "gemm.c"))
    h = passlab.Module.from_c(examples / "gemm.c")
    assert g.name == h.name == str(examples / "gemm.c")  # as clang names it
    assert str(g) == str(h)
    assert g.triple == "x86_64-pc-linux-gnu"


def test_from_c_o2_then_default_o2_is_clang_o2(zlib, tmp_path):
    # The hand-over at O2 and LLVM's default<O2> make what clang-19 -O2 makes.
    src = zlib / "adler32.c"
    mod = passlab.Module.from_c(src, args=[f"-I{zlib}"])
    mod = LLVMPass("default<O2>")(mod)
    out = tmp_path / "adler32.ll"
    subprocess.run(
        ["clang-19", "-O2", "-S", "-emit-llvm", f"-I{zlib}", str(src), "-o", str(out)],
        check=True,
    )
    clang = passlab.Module.from_file(out)
    assert mod.instcount == clang.instcount
    assert mod.stats()["opcodes"] == clang.stats()["opcodes"]


def test_levels_and_languages():
    src = "int f(int x) { return x + 1; }"
    # O0 as -disable-O0-optnone hands it over (noinline, no TBAA); O1 with
    # TBAA and functions left inlinable.
    o0 = passlab.Module.from_c(src, level="O0")
    assert "noinline" in str(o0) and "tbaa" not in str(o0)
    o1 = passlab.Module.from_c(src, level="O1")
    assert "noinline" not in str(o1) and "tbaa" in str(o1)
    cpp = passlab.Module.from_c("int f(int x) { return x; }", lang="cpp")
    assert cpp.functions == ["_Z1fi"]
    with pytest.raises(passlab.Error, match="O9"):
        passlab.Module.from_c(src, level="O9")


def test_compile_errors_name_the_line():
    with pytest.raises(passlab.CompileError) as e:
        passlab.Module.from_c("int f(void) {\n  return y;\n}\n", name="bad.c")
    assert "bad.c:2:10: error: use of undeclared identifier 'y'" in str(e.value)


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(passlab.IoError, match="no such file"):
        passlab.Module.from_c(tmp_path / "missing.c")


def test_ir_errors():
    with pytest.raises(passlab.ParseError, match=r"^bad.ll:2:11: use of undefined value '%z'"):
        passlab.Module.from_ir("define i32 @f() {\n  ret i32 %z\n}\n", name="bad.ll")
    text = "define i32 @f(i32 %x) {\n  %y = add i32 %z, 1\n  %z = add i32 %x, 1\n  ret i32 %y\n}\n"
    with pytest.raises(passlab.VerifyError, match="Instruction does not dominate all uses"):
        passlab.Module.from_ir(text, name="bad.ll")
    with pytest.raises(passlab.ParseError):
        passlab.Module.from_bitcode(b"BC\xc0\xdenot really")


def test_text_stats_save_and_round_trips(loop_module, tmp_path):
    assert loop_module.text("sum").startswith("; Function Attrs")
    with pytest.raises(passlab.NotFoundError, match="nosuch"):
        loop_module.text("nosuch")
    stats = loop_module.stats()
    assert stats["instructions"] == loop_module.instcount
    assert sum(stats["opcodes"].values()) == stats["instructions"]
    loop_module.save(tmp_path / "sum.ll")
    loop_module.save(tmp_path / "sum.bc")
    assert passlab.Module.from_file(tmp_path / "sum.ll").instcount == loop_module.instcount
    back = passlab.Module.from_bitcode((tmp_path / "sum.bc").read_bytes())
    assert str(back).split("\n", 1)[1] == str(loop_module).split("\n", 1)[1]
    again = pickle.loads(pickle.dumps(loop_module))
    assert again.instcount == loop_module.instcount and again.name == "sum.c"


def test_copy_is_independent(loop_module):
    keep = loop_module.copy()
    loop_module = LLVMPass("default<O2>")(loop_module)
    assert keep.instcount != loop_module.instcount


def test_a_fatal_error_in_llvm_fails_the_pass_and_keeps_the_module(zlib):
    # LLVM 19's instcombine gives up with report_fatal_error after this
    # ordering (tests/fatal_error.rs); Python goes on, the module as it was.
    ordering = (
        "globaldce,ipsccp,instcombine,memcpyopt,indvars,inline,ipsccp,loop-rotate,jump-threading,"
        "instcombine,function-attrs,indvars,mem2reg,sroa,gvn,jump-threading,bdce,globalopt,memcpyopt,"
        "dse,jump-threading,function-attrs,adce,instsimplify,loop-rotate,simplifycfg"
    )
    mod = passlab.Module.from_c(zlib / "trees.c", args=[f"-I{zlib}"])
    before = mod.instcount
    with pytest.raises(passlab.PassFailedError, match="did not reach a fixpoint"):
        mod = passlab.transform.parse_pipeline(ordering)(mod)
    assert mod.instcount == before
    mod.verify()
    mod = LLVMPass("default<O2>")(mod)
    assert mod.instcount < before


def test_config_is_checked_and_applied(loop_module):
    with pytest.raises(passlab.ConfigError, match="valid options are: .*llvm.loop_vectorization"):
        PassContext(config={"llvm.loop_vectorisation": False})
    with pytest.raises(passlab.ConfigError):
        PassContext(config={"llvm.loop_vectorization": "no"})
    with pytest.raises(TypeError, match="bool, int, float or str"):
        PassContext(config={"llvm.loop_vectorization": [1]})
    with pytest.raises(passlab.InvalidError, match="opt_level must be 0, 1, 2 or 3; got 7"):
        PassContext(opt_level=7)
    plain = loop_module.copy()
    with PassContext(config={"llvm.loop_vectorization": False}) as ctx:
        assert ctx.config == {"llvm.loop_vectorization": False}
        plain = LLVMPass("default<O2>")(plain)
    loop_module = LLVMPass("default<O2>")(loop_module)
    assert "vector.body" in str(loop_module)
    assert "vector.body" not in str(plain)


def test_corrupt_bitcode_is_an_error_and_python_goes_on(zlib):
    # 400 copies of adler32.c's bitcode with 1-8 bytes changed (seeded):
    # LLVM's reader crashes on some (it once gave "Fatal Python error:
    # Segmentation fault"); each is a module or a passlab.Error now.
    import random

    good = passlab.Module.from_c(zlib / "adler32.c").bitcode()
    rng = random.Random(7)
    loaded = refused = 0
    for _ in range(400):
        b = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(4, len(b))] = rng.randrange(256)
        try:
            passlab.Module.from_bitcode(bytes(b), "m.bc")
            loaded += 1
        except passlab.Error as e:
            assert str(e)
            refused += 1
    assert loaded + refused == 400 and refused > 0
    with pytest.raises(passlab.Error, match="not LLVM bitcode"):
        passlab.Module.from_bitcode(b"", "empty.bc")
