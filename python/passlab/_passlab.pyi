# Type stubs for passlab._passlab, the compiled extension (python/src/*.rs).
#
# Kept in step with the Rust signatures: a `#[pyo3(signature = ...)]`
# default is the default here, `Option<T>` is `Optional[T]`, `Vec<T>` taken
# as an argument is a `Sequence[T]` (pyo3 takes any sequence but a str),
# `PathBuf` is `str | os.PathLike[str]`, `&[u8]` is `bytes`. The dicts the
# extension builds are TypedDicts with the keys the Rust code sets.
# `python -m mypy.stubtest passlab._passlab` compares this file with the
# built module (python/mypy-allowlist.txt says what it cannot check).

import os
import pathlib
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Literal,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    TypeVar,
    Union,
    final,
)

from typing_extensions import Self, TypeAlias, disjoint_base

__all__ = [
    "Error",
    "ParseError",
    "CompileError",
    "LinkError",
    "CodegenError",
    "IoError",
    "UnknownPassError",
    "PipelineError",
    "DependencyCycleError",
    "ConfigError",
    "PassFailedError",
    "VerifyError",
    "FunctionSetChangedError",
    "NotFoundError",
    "InstrumentError",
    "CommandError",
    "ChartError",
    "ToolError",
    "InterruptedError",
    "InvalidError",
    "InternalError",
    "MissingFileError",
    "ThreadError",
    "Module",
    "PassInfo",
    "Pass",
    "LLVMPass",
    "Sequential",
    "PrintIR",
    "ModulePass",
    "PassContext",
    "Session",
    "Value",
    "Buffer",
    "JIT",
    "Assembly",
    "Graph",
    "FunctionPass",
    "PassTimingInstrument",
    "IRSizeInstrument",
    "PassCountsInstrument",
    "PrintIRInstrument",
    "RemarksInstrument",
    "DumpIRInstrument",
    "Chart",
    "parse_pipeline",
    "make_module_pass",
    "make_function_pass",
    "list_passes",
    "builtin_instruments",
    "config_options",
    "feature_names",
    "observation_spaces",
    "pools",
    "tune_instructions",
    "oz_ordering",
    "opt_spelling",
    "opt_pipeline",
    "sample_corpus",
    "LLVM_VERSION",
    "__version__",
]

LLVM_VERSION: str
__version__: str

# --- aliases (stub-only) ---------------------------------------------------

_StrPath: TypeAlias = Union[str, os.PathLike[str]]
# A config value: `PassContext(config={...})` takes these four types only;
# its dict is a dict (pyo3 takes no other mapping), and a TypeVar lets a
# `dict[str, bool]` through, which `dict[str, _ConfigValue]` (invariant)
# would refuse.
_ConfigValue: TypeAlias = Union[bool, int, float, str]
_ConfigValueT = TypeVar("_ConfigValueT", bound=_ConfigValue)
# What a notebook's `_repr_mimebundle_` gets: MIME type to data.
_MimeBundle: TypeAlias = Dict[str, str]
# An IR unit as passlab names it (`passes::unit_name`).
_IrUnit: TypeAlias = Literal["module", "cgscc", "function", "loop", "other"]
# A `passlab.ir.Value`'s kind (`ValueKind::name`).
_ValueKind: TypeAlias = Literal[
    "function", "block", "instruction", "argument", "constant_int", "constant", "global", "other"
]
# A JIT call's value: None for void, a bool for i1, an int (integers and
# pointers) or a float.
_JitValue: TypeAlias = Union[bool, int, float, None]
# A JIT call's argument (passlab.jit.JIT.call also takes numpy arrays,
# which it turns into Buffers before it calls the extension).
_JitArgument: TypeAlias = Union[bool, int, float, Buffer]
# One item of a Session command's output.
_SessionItem: TypeAlias = Union[
    Tuple[Literal["stream"], str],
    Tuple[Literal["stderr"], str],
    Tuple[Literal["display"], Dict[str, str]],
]

class _ModuleStats(TypedDict):
    functions: int
    blocks: int
    instructions: int
    opcodes: Dict[str, int]

class _ObservationSpace(TypedDict):
    name: str
    dtype: str  # NumPy's name: "int64", "float32" or "str" (text)
    len: Optional[int]
    low: float
    high: Optional[float]
    summary: str

class _PassEntry(TypedDict):
    name: str
    kind: Literal["rust", "module", "cgscc", "function", "loop", "other"]
    params: Optional[str]
    opt_level: int
    description: str

class _ConfigOption(TypedDict):
    key: str
    type: str
    default: str
    description: str

class _Trial(TypedDict):
    phase: str
    index: int
    ordering: List[str]
    instructions: Optional[int]
    verdict: Literal["same", "unchecked", "different", "failed"]
    why: Optional[str]
    compile_s: float

class _TuneResult(TypedDict):
    trials: List[_Trial]
    best: Optional[_Trial]
    baselines: Dict[str, Optional[int]]
    seed: int
    elapsed_s: float

class _TimeDict(TypedDict):
    value: _JitValue
    number: int
    per_call_s: List[float]
    mean_s: float
    median_s: float
    stdev_s: float
    min_s: float
    max_s: float
    summary: str

class _TimingRow(TypedDict):
    name: str
    ir_unit: _IrUnit
    count: int
    self_s: float
    total_s: float

_IRSizeRow = TypedDict(
    "_IRSizeRow",
    {
        "pass": str,
        "ir_unit": _IrUnit,
        "target": str,
        "depth": int,
        "instructions": int,
        "blocks": int,
        "functions": int,
        "delta": int,
    },
)

class _CountsRow(TypedDict):
    name: str
    ran: int
    changed: int
    skipped: int

_DumpRow = TypedDict(
    "_DumpRow",
    {
        "number": int,
        "pass": str,
        "unit": str,
        "target": str,
        "file": str,
        "instructions": int,
    },
)

_RemarkRow = TypedDict(
    "_RemarkRow",
    {
        "kind": Literal["passed", "missed", "analysis", "failure"],
        "pass": str,
        "name": str,
        "function": str,
        "file": str,
        "line": int,
        "column": int,
        "message": str,
        "args": Dict[str, str],
    },
)

# --- errors (errors.rs) ----------------------------------------------------

class Error(Exception):
    """Every error passlab raises."""

class ParseError(Error, ValueError): ...
class CompileError(Error, OSError): ...
class LinkError(Error, ValueError): ...
class CodegenError(Error, RuntimeError): ...
class IoError(Error, OSError): ...
class UnknownPassError(Error, LookupError): ...
class PipelineError(Error, ValueError): ...
class DependencyCycleError(Error, ValueError): ...
class ConfigError(Error, AttributeError): ...
class PassFailedError(Error, RuntimeError): ...
class VerifyError(Error, ValueError): ...
class FunctionSetChangedError(Error, RuntimeError): ...
class NotFoundError(Error, KeyError): ...
class InstrumentError(Error, RuntimeError): ...
class CommandError(Error, ValueError): ...
class ChartError(Error, RuntimeError): ...
class ToolError(Error, OSError): ...
class InterruptedError(Error, RuntimeError): ...  # passlab's, not the builtin
class InvalidError(Error, ValueError): ...
class InternalError(Error, RuntimeError): ...
class MissingFileError(IoError, FileNotFoundError): ...
class ThreadError(Error, RuntimeError): ...

# --- modules (module.rs) ---------------------------------------------------

@final
class Module:
    """An LLVM IR module: from C or C++ (clang-19), IR text, bitcode or a file."""

    @staticmethod
    def from_c(
        source: _StrPath,
        name: Optional[str] = None,
        level: str = "O2",
        args: Optional[Sequence[str]] = None,
        lang: Optional[str] = None,
    ) -> Module: ...
    @staticmethod
    def from_ir(text: str, name: str = "module.ll") -> Module: ...
    @staticmethod
    def from_bitcode(data: bytes, name: str = "module.bc") -> Module: ...
    @staticmethod
    def from_file(path: _StrPath) -> Module: ...
    def __getitem__(self, key: str, /) -> Value: ...
    def ir_functions(self) -> List[Value]: ...
    def const_int(self, ty: str, value: int) -> Value: ...
    def asm(
        self,
        function: Optional[str] = None,
        opt_level: int = 2,
        syntax: str = "att",
        all: bool = False,
    ) -> Assembly: ...
    # `lines` defaults to passlab::graph::MAX_LINES (12).
    def cfg(self, function: str, after: Optional[str] = None, lines: int = ...) -> Graph: ...
    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> _MimeBundle: ...
    @property
    def name(self) -> str: ...
    @property
    def triple(self) -> str: ...
    @property
    def instcount(self) -> int: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def functions(self) -> List[str]: ...
    def stats(self) -> _ModuleStats: ...
    # A list of ints or floats for a vector space, a str for a text one.
    def features(self, space: str = "InstCount") -> Union[List[int], List[float], str]: ...
    def text(self, function: Optional[str] = None) -> str: ...
    def bitcode(self) -> bytes: ...
    def save(self, path: _StrPath) -> None: ...
    def verify(self) -> None: ...
    def apply(self, pass_: Pass) -> Module: ...
    def copy(self) -> Module: ...
    def __copy__(self) -> Module: ...
    def __deepcopy__(self, _memo: object) -> Module: ...
    def __reduce__(self) -> Tuple[Callable[[bytes, str], Module], Tuple[bytes, str]]: ...

def feature_names(space: str) -> List[str]: ...
def observation_spaces() -> List[_ObservationSpace]: ...

# --- passes (passes.rs) ----------------------------------------------------

@final
class PassInfo:
    """A pass's name, opt level, required passes and description; in an
    instrument's hooks also the IR unit, its name (`target`), the nesting
    depth, whether LLVM runs it inside a pipeline and (after it) whether it
    may have changed anything."""

    def __new__(
        cls,
        opt_level: int,
        name: str,
        required: Optional[Sequence[str]] = None,
        traceable: bool = False,
    ) -> PassInfo: ...
    @property
    def name(self) -> str: ...
    @property
    def opt_level(self) -> int: ...
    @property
    def required(self) -> List[str]: ...
    @property
    def description(self) -> str: ...
    @property
    def ir_unit(self) -> Optional[_IrUnit]: ...
    @property
    def target(self) -> Optional[str]: ...
    @property
    def depth(self) -> Optional[int]: ...
    @property
    def inside_llvm(self) -> Optional[bool]: ...
    @property
    def may_have_changed(self) -> Optional[bool]: ...

@disjoint_base
class Pass:
    """A pass: `pass_(mod)` returns a changed copy; `pass_(mod, inplace=True)`
    changes `mod` and returns it. Not made directly: see its subclasses."""

    def __call__(self, module: Module, inplace: bool = False) -> Module: ...
    # passlab.gym's step (not a public API): (changed, fingerprint after).
    def _step(self, module: Module, before: int, start: Module, done: Sequence[Pass]) -> Tuple[bool, int]: ...
    @property
    def info(self) -> PassInfo: ...
    @property
    def passes(self) -> List[Pass]: ...

@final
class LLVMPass(Pass):
    def __new__(cls, name: str) -> LLVMPass: ...

@final
class Sequential(Pass):
    def __new__(
        cls,
        passes: Optional[Sequence[Pass]] = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Optional[Sequence[str]] = None,
    ) -> Sequential: ...

@final
class PrintIR(Pass):
    def __new__(cls, header: str = "") -> PrintIR: ...

# Python passes (`make_module_pass`, `make_function_pass`): one made with
# `instance` (a class decorated with `module_pass`/`function_pass`) forwards
# other attributes to it, as TVM's do (`cm = CountMuls(); cm(mod); cm.n`).
# At runtime `Pass.__getattr__` does it for every pass; any other pass
# raises AttributeError, so only these two declare it.

@final
class ModulePass(Pass):
    def __getattr__(self, name: str) -> Any: ...

@final
class FunctionPass(Pass):
    def __getattr__(self, name: str) -> Any: ...

def parse_pipeline(text: str) -> Pass: ...
def make_module_pass(
    transform: Callable[[Module, PassContext], Optional[Module]],
    name: str,
    opt_level: int,
    required: Optional[Sequence[str]] = None,
    instance: Optional[object] = None,
) -> ModulePass: ...
def make_function_pass(
    transform: Callable[[Value, Module, PassContext], Optional[Value]],
    name: str,
    opt_level: int,
    required: Optional[Sequence[str]] = None,
    instance: Optional[object] = None,
) -> FunctionPass: ...
def list_passes() -> List[_PassEntry]: ...
def pools() -> List[Tuple[str, List[str]]]: ...
def sample_corpus() -> List[str]: ...
def opt_spelling(element: str) -> Tuple[List[str], str]: ...
def opt_pipeline(text: str) -> Optional[Tuple[str, List[str]]]: ...
def oz_ordering() -> List[str]: ...

# --- contexts (context.rs) -------------------------------------------------

@final
class PassContext:
    """Settings for the passes run inside `with PassContext(...):`."""

    # `instruments`: objects of `@pass_instrument` classes (or subclasses of
    # passlab.instrument.PassInstrument) and the built-in instruments.
    def __new__(
        cls,
        opt_level: int = 2,
        required_pass: Optional[Sequence[str]] = None,
        disabled_pass: Optional[Sequence[str]] = None,
        instruments: Optional[Sequence[object]] = None,
        config: Optional[Dict[str, _ConfigValueT]] = None,
    ) -> PassContext: ...
    def __enter__(self) -> PassContext: ...
    # Never swallows the exception.
    def __exit__(self, *_exc: object) -> Literal[False]: ...
    @staticmethod
    def current() -> PassContext: ...
    def override_instruments(self, instruments: Optional[Sequence[object]]) -> None: ...
    @property
    def opt_level(self) -> int: ...
    @property
    def required_pass(self) -> List[str]: ...
    @property
    def disabled_pass(self) -> List[str]: ...
    @property
    def instruments(self) -> List[Any]: ...
    @property
    def config(self) -> Dict[str, _ConfigValue]: ...

def config_options() -> List[_ConfigOption]: ...

# --- the command language (session.rs) -------------------------------------

@final
class Session:
    """A session of the command language (`%%passlab`)."""

    def __new__(cls) -> Session: ...
    # `each(items, last)` is called after each command.
    def execute_each(self, code: str, each: Callable[[List[_SessionItem], bool], object]) -> None: ...
    def complete(self, line: str, pos: int) -> Tuple[int, List[str]]: ...

# --- IR (ir.rs) -------------------------------------------------------------

@final
class Value:
    """A value of a module's IR (`passlab.ir.Value`)."""

    @property
    def kind(self) -> _ValueKind: ...
    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def blocks(self) -> List[Value]: ...
    @property
    def instructions(self) -> List[Value]: ...
    @property
    def arguments(self) -> List[Value]: ...
    @property
    def parent(self) -> Optional[Value]: ...
    @property
    def opcode(self) -> str: ...
    @property
    def operands(self) -> List[Value]: ...
    @property
    def users(self) -> List[Value]: ...
    @property
    def int_value(self) -> Optional[int]: ...
    @property
    def unsigned_value(self) -> Optional[int]: ...
    @property
    def bits(self) -> Optional[int]: ...
    def replace_all_uses_with(self, value: Value) -> None: ...
    def set_operand(self, index: int, value: Value) -> None: ...
    def erase(self) -> None: ...
    def build_before(
        self,
        op: str,
        operands: Sequence[Value],
        to: Optional[str] = None,
        name: str = "",
    ) -> Value: ...
    def const_int(self, value: int) -> Value: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

# --- JIT and machine code (jit.rs) ------------------------------------------

@final
class Buffer:
    """`Buffer(type, length, fill="zeros", seed=0)`: a typed array in shared
    memory; `type` is i8, i16, i32, i64, f32 or f64; `fill` is zeros, ones,
    range or random."""

    def __new__(cls, type: str, length: int, fill: str = "zeros", seed: int = 0) -> Buffer: ...
    @property
    def type(self) -> str: ...
    def __len__(self) -> int: ...
    @property
    def __array_interface__(self) -> Dict[str, Any]: ...
    def tobytes(self) -> bytes: ...
    def load(self, data: bytes) -> None: ...

@disjoint_base
class JIT:
    """A module compiled by LLVM's code generator, its functions called in
    an isolated child process (passlab.jit.JIT adds `call` and `time`)."""

    def __new__(
        cls,
        module: Module,
        opt_level: int = 2,
        timeout_s: Optional[float] = None,
        allow_host: bool = False,
    ) -> Self: ...
    def _call(self, function: str, *arguments: _JitArgument) -> _JitValue: ...
    def _time(
        self,
        function: str,
        *arguments: _JitArgument,
        number: int = 10,
        repeat: int = 5,
        min_repeat_ms: int = 0,
    ) -> _TimeDict: ...
    def functions(self) -> List[Tuple[str, str]]: ...
    def code_bytes(self, function: str) -> Optional[int]: ...

@final
class Assembly:
    """The assembly LLVM's code generator makes for a module (`Module.asm`)."""

    @property
    def text(self) -> str: ...
    @property
    def raw(self) -> str: ...
    @property
    def functions(self) -> List[Tuple[str, Optional[int]]]: ...
    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> _MimeBundle: ...

# --- graphs (graph.rs) ------------------------------------------------------

@final
class Graph:
    """A function's control-flow graph (`Module.cfg`)."""

    @property
    def title(self) -> str: ...
    @property
    def dot(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def svg(self) -> str: ...
    def png(self) -> bytes: ...
    def save(self, path: _StrPath) -> None: ...
    def _repr_svg_(self) -> str: ...

# --- instruments (instruments.rs) --------------------------------------------
# `to_pandas()` returns a pandas.DataFrame; pandas is an optional dependency
# (the `pandas` extra), so the stubs do not import it.

@final
class PassTimingInstrument:
    def __new__(cls) -> PassTimingInstrument: ...
    def render(self) -> str: ...
    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> _MimeBundle: ...
    def rows(self) -> List[_TimingRow]: ...
    def to_pandas(self) -> Any: ...
    def chart(self, top: int = 12) -> Chart: ...
    @property
    def total_s(self) -> float: ...
    def clear(self) -> None: ...

@final
class IRSizeInstrument:
    def __new__(cls) -> IRSizeInstrument: ...
    def rows(self, changes_only: bool = False) -> List[_IRSizeRow]: ...
    def chart(self) -> Chart: ...
    def to_pandas(self, changes_only: bool = False) -> Any: ...
    def render(self) -> str: ...
    def clear(self) -> None: ...

@final
class PassCountsInstrument:
    def __new__(cls) -> PassCountsInstrument: ...
    def rows(self) -> List[_CountsRow]: ...
    def to_pandas(self) -> Any: ...
    def render(self) -> str: ...
    def clear(self) -> None: ...

@final
class DumpIRInstrument:
    def __new__(
        cls,
        out: _StrPath,
        passes: Optional[Sequence[str]] = None,
        functions: Optional[Sequence[str]] = None,
        replace: bool = False,
    ) -> DumpIRInstrument: ...
    @property
    def folder(self) -> pathlib.Path: ...
    def dumps(self) -> List[_DumpRow]: ...
    @property
    def stopped(self) -> Optional[str]: ...

@final
class PrintIRInstrument:
    # `when` is "before" or "after".
    def __new__(
        cls,
        when: str = "after",
        passes: Optional[Sequence[str]] = None,
        functions: Optional[Sequence[str]] = None,
        keep: bool = False,
    ) -> PrintIRInstrument: ...
    def output(self) -> str: ...

@final
class RemarksInstrument:
    # `kinds` among "passed", "missed", "analysis", "failure".
    def __new__(
        cls,
        kinds: Optional[Sequence[str]] = None,
        passes: Optional[Sequence[str]] = None,
        functions: Optional[Sequence[str]] = None,
    ) -> RemarksInstrument: ...
    def rows(self) -> List[_RemarkRow]: ...
    def to_pandas(self) -> Any: ...
    def render(self) -> str: ...

@final
class Chart:
    """A chart as passlab's kernel shows it (SVG, PNG)."""

    @property
    def title(self) -> str: ...
    def svg(self) -> str: ...
    def png(self) -> bytes: ...
    def save(self, path: str) -> None: ...
    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> _MimeBundle: ...

# (name, class in passlab.instrument or "", summary)
def builtin_instruments() -> List[Tuple[str, str, str]]: ...

# --- the search (search.rs) --------------------------------------------------

def tune_instructions(
    module: Module,
    trials: Optional[int] = None,
    seconds: Optional[float] = None,
    strategy: Optional[Sequence[str]] = None,
    pool: Optional[Sequence[str]] = None,
    seed: int = 0,
    levels: bool = True,
    coreset: Optional[str] = None,
    warm: Optional[str] = None,
) -> _TuneResult: ...
