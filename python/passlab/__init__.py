"""passlab from Python.

The same core as passlab's REPL and Jupyter kernel, with the Python API of
TVM's pass infrastructure (the seeds)::

    import passlab
    from passlab.transform import PassContext, LLVMPass, Sequential

    mod = passlab.Module.from_c("int sq(int x) { return x * x; }")
    seq = Sequential([LLVMPass("mem2reg"), LLVMPass("instcombine")])
    with PassContext(opt_level=2):
        mod = seq(mod)          # a new module; seq(mod, inplace=True) changes mod
    print(mod.instcount)

* :class:`Module`: LLVM IR from C or C++ (clang-19), IR text, bitcode.
* :class:`Graph`: a function's control-flow graph (``mod.cfg("f")``),
  laid out by Graphviz, shown as a picture in a notebook.
* :mod:`passlab.transform`: ``PassContext``, passes, ``module_pass``.
* :mod:`passlab.instrument`: ``pass_instrument`` and the built-in
  instruments.
* :class:`Error` and one subclass per kind of error, each also the
  built-in class Python code raises for such a failure
  (``UnknownPassError`` is a ``LookupError``, ``MissingFileError`` a
  ``FileNotFoundError``, ...); :class:`ThreadError` (also a
  ``RuntimeError``) for an object used on a thread other than the one that
  made it.
* :mod:`passlab.data`: the sample programs (zlib, Lua).
"""

from ._passlab import (  # noqa: F401
    LLVM_VERSION,
    __version__,
    ChartError,
    CodegenError,
    CommandError,
    CompileError,
    ConfigError,
    DependencyCycleError,
    Error,
    FunctionSetChangedError,
    Graph,
    InstrumentError,
    InternalError,
    InterruptedError,
    InvalidError,
    IoError,
    LinkError,
    MissingFileError,
    Module,
    NotFoundError,
    Session,
    ParseError,
    PassFailedError,
    PipelineError,
    ThreadError,
    ToolError,
    UnknownPassError,
    VerifyError,
)
from . import data, instrument, ir, transform  # noqa: F401
from .jit import JIT, Assembly, Buffer  # noqa: F401



def load_ipython_extension(ipython):
    """``%load_ext passlab``: the ``%%passlab`` and ``%passlab`` magics."""
    from .magic import load_ipython_extension as load

    load(ipython)


__all__ = [
    "__version__",
    "Module",
    "JIT",
    "Buffer",
    "Error",
    "transform",
    "instrument",
    "ir",
    "data",
]
