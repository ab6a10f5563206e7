"""Each passlab.Error subclass is also the built-in class Python code (and
TVM, CompilerGym) raises for such a failure, so that code written against
the peers' exceptions catches passlab's (issue 59)."""

import builtins

import pytest

import passlab
import passlab.gym

# The table of docs/src/python.md's "Errors".
BOTH = {
    "ParseError": ValueError,
    "CompileError": OSError,
    "LinkError": ValueError,
    "CodegenError": RuntimeError,
    "IoError": OSError,
    "MissingFileError": FileNotFoundError,
    "UnknownPassError": LookupError,
    "PipelineError": ValueError,
    "DependencyCycleError": ValueError,
    "ConfigError": AttributeError,
    "PassFailedError": RuntimeError,
    "VerifyError": ValueError,
    "FunctionSetChangedError": RuntimeError,
    "NotFoundError": KeyError,
    "InstrumentError": RuntimeError,
    "CommandError": ValueError,
    "ChartError": RuntimeError,
    "ToolError": OSError,
    "InterruptedError": RuntimeError,
    "InvalidError": ValueError,
    "InternalError": RuntimeError,
    "ThreadError": RuntimeError,
}


@pytest.mark.parametrize("name", sorted(BOTH))
def test_every_class_is_both(name):
    cls = getattr(passlab, name)
    assert issubclass(cls, passlab.Error) and issubclass(cls, BOTH[name])
    assert cls.__module__ == "passlab"
    assert str(cls("a message")) == "a message"   # not KeyError's quoted repr


def test_the_documented_table_lists_every_class():
    from conftest import ROOT

    doc = (ROOT / "docs" / "src" / "python.md").read_text()
    for name, base in BOTH.items():
        assert f"| `{name}` | `{base.__name__}` |" in doc, name


def test_the_peers_exceptions_catch_passlabs(tmp_path, zlib):
    with pytest.raises(LookupError, match="did you mean 'instcombine'"):
        passlab.transform.LLVMPass("instcombin")
    with pytest.raises(FileNotFoundError):
        passlab.Module.from_file(tmp_path / "nope.ll")
    with pytest.raises(FileNotFoundError):
        passlab.Module.from_c(str(tmp_path / "nope.c"))
    with pytest.raises(FileNotFoundError):
        passlab.gym.LlvmEnv(benchmark=tmp_path / "nope.c")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(ValueError, match="cannot tell the language"):
        passlab.Module.from_file(tmp_path / "notes.txt")
    with pytest.raises(ValueError, match="not a benchmark"):
        passlab.gym.LlvmEnv(benchmark=tmp_path / "notes.txt")
    with pytest.raises(AttributeError, match="invalid config option 'llvm.nope'"):
        passlab.transform.PassContext(config={"llvm.nope": 1})
    with pytest.raises(KeyError, match="no function named 'g'"):
        passlab.Module.from_c("int f(void) { return 0; }")["g"]
    with pytest.raises(OSError, match="clang-19 failed"):
        passlab.Module.from_c("int f( {")
    env = passlab.gym.LlvmEnv(benchmark=zlib / "adler32.c")
    env.reset()
    with pytest.raises(ValueError, match="not in Discrete"):
        env.step(10_000)
    with pytest.raises(ValueError):
        passlab.Module.from_ir("define i32 @f( {")


def test_version():
    assert isinstance(passlab.__version__, str) and passlab.__version__.count(".") == 2
    assert passlab.__version__ in repr(builtins.__import__("importlib.metadata").metadata.version("passlab"))
