"""A passlab object belongs to the thread that made it: used on another
thread it raises passlab.ThreadError — a passlab.Error and a RuntimeError,
which `except Exception` catches — and goes on working on its own thread;
freed on another thread it is leaked with a ResourceWarning, and the
interpreter goes on. No input, number or misuse reaches Python as pyo3's
PanicException (a BaseException)."""

import math
import pickle
import subprocess
import sys
import threading
import warnings

import pytest

import passlab
from passlab.instrument import (
    DumpIRInstrument,
    IRSizeInstrument,
    PassCountsInstrument,
    PassTimingInstrument,
    PrintIRInstrument,
    RemarksInstrument,
)
from passlab.search import tune
from passlab.transform import LLVMPass, PassContext, Sequential, module_pass

IR = """define i32 @f(i32 %x) {
  %y = mul i32 %x, 8
  ret i32 %y
}
define void @g(ptr %p) {
  store i32 7, ptr %p
  ret void
}
"""


def on_thread(fn, *args):
    """Runs ``fn(*args)`` on a new thread named 'other'; returns what it
    raised (any BaseException: pyo3's PanicException is one) and what it
    returned."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 (the point: whatever it raised)
            box["error"] = e

    thread = threading.Thread(target=run, name="other")
    thread.start()
    thread.join()
    return box.get("error"), box.get("value")


def assert_thread_error(error, name):
    assert error is not None, "no error on another thread"
    # First: `except Exception` catches it (a PanicException is not one).
    assert isinstance(error, Exception), f"{type(error).__module__}.{type(error).__name__}: {error}"
    assert isinstance(error, passlab.ThreadError), f"{type(error).__name__}: {error}"
    assert isinstance(error, passlab.Error) and isinstance(error, RuntimeError)
    message = str(error)
    assert name in message, message
    assert "thread 'MainThread'" in message and "thread 'other'" in message, message
    assert "make one per thread" in message, message


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    """One object of every class the package exports that holds state,
    made on this (the main) thread."""
    mod = passlab.Module.from_ir(IR, name="t.ll")
    timing, size, counts = PassTimingInstrument(), IRSizeInstrument(), PassCountsInstrument()
    printer, remarks = PrintIRInstrument(keep=True), RemarksInstrument()
    run = passlab.Module.from_ir(IR, name="run.ll")
    with PassContext(opt_level=2, instruments=[timing, size, counts, printer, remarks]):
        run = LLVMPass("instcombine")(run)
    jit = passlab.JIT(mod, timeout_s=10)
    return {
        "module": mod,
        "scratch": passlab.Module.from_ir(IR, name="scratch.ll"),  # a pass changes it
        "value": mod["f"],
        "context": PassContext(opt_level=1),
        "jit": jit,
        "buffer": passlab.Buffer("i32", 4, fill="range"),
        "assembly": mod.asm("f"),
        "timing": timing,
        "size": size,
        "counts": counts,
        "printer": printer,
        "remarks": remarks,
        "dump": DumpIRInstrument(tmp_path_factory.mktemp("t") / "dumps"),
        "chart": timing.chart(),
        "session": passlab.Session(),
    }


def enter(ctx):
    with ctx:
        pass


# (object, its class's name in the message, a use of it)
USES = [
    ("module", "passlab.Module", lambda m: m.functions),
    ("module", "passlab.Module", lambda m: m.text("f")),
    ("module", "passlab.Module", lambda m: m.copy()),
    ("module", "passlab.Module", lambda m: m.bitcode()),
    ("module", "passlab.Module", lambda m: pickle.dumps(m)),
    ("module", "passlab.Module", lambda m: m["f"]),
    ("module", "passlab.Module", lambda m: m.ir_functions()),
    ("module", "passlab.Module", lambda m: m.asm("f")),
    ("scratch", "passlab.Module", lambda m: LLVMPass("instcombine")(m)),
    ("module", "passlab.Module", lambda m: passlab.JIT(m)),
    ("module", "passlab.Module", lambda m: tune(m, trials=1)),
    ("value", "passlab.ir.Value", lambda v: v.name),
    ("value", "passlab.ir.Value", lambda v: v.kind),
    ("value", "passlab.ir.Value", lambda v: v.instructions),
    ("value", "passlab.ir.Value", lambda v: hash(v)),
    ("value", "passlab.ir.Value", lambda v: v == v),
    ("context", "passlab.transform.PassContext", lambda c: c.opt_level),
    ("context", "passlab.transform.PassContext", enter),
    ("jit", "passlab.JIT", lambda j: j.call("f", 3)),
    ("jit", "passlab.JIT", lambda j: j.functions()),
    ("buffer", "passlab.Buffer", lambda b: len(b)),
    ("buffer", "passlab.Buffer", lambda b: b.tobytes()),
    ("buffer", "passlab.Buffer", lambda b: b.__array_interface__),
    ("assembly", "passlab.Assembly", lambda a: a.text),
    ("assembly", "passlab.Assembly", lambda a: a.functions),
    ("timing", "PassTimingInstrument", lambda t: t.render()),
    ("timing", "PassTimingInstrument", lambda t: t.chart()),
    ("timing", "PassTimingInstrument", lambda t: PassContext(instruments=[t])),
    ("size", "IRSizeInstrument", lambda s: s.rows()),
    ("counts", "PassCountsInstrument", lambda c: c.rows()),
    ("printer", "PrintIRInstrument", lambda p: p.output()),
    ("remarks", "RemarksInstrument", lambda r: r.rows()),
    ("dump", "DumpIRInstrument", lambda d: d.dumps()),
    ("dump", "DumpIRInstrument", lambda d: PassContext(instruments=[d])),
    ("chart", "passlab.Chart", lambda c: c.title),
    ("chart", "passlab.Chart", lambda c: c.svg()),
    ("session", "passlab.Session", lambda s: s.complete(":ru", 3)),
    ("session", "passlab.Session", lambda s: s.execute_each(":help", lambda items, last: None)),
]


@pytest.mark.parametrize("key,name,use", USES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(USES)])
def test_another_thread_gets_thread_error_and_the_owner_goes_on(objects, key, name, use):
    obj = objects[key]
    error, _ = on_thread(use, obj)
    assert_thread_error(error, name)
    # The object is as it was, and works on its own thread.
    use(obj)


def test_except_exception_catches_it():
    mod = passlab.Module.from_ir(IR)
    caught = []

    def use():
        try:
            mod.functions
        except Exception as e:  # what user code writes
            caught.append(e)

    error, _ = on_thread(use)
    assert error is None, f"{type(error).__name__} escaped `except Exception`: {error}"
    assert len(caught) == 1 and isinstance(caught[0], passlab.ThreadError)
    assert passlab.ThreadError.__module__ == "passlab"
    assert passlab.ThreadError.__mro__[1:3] == (passlab.Error, RuntimeError)


def test_repr_names_the_owner_instead_of_raising(objects):
    for key in ("module", "value", "buffer", "chart", "context"):
        error, text = on_thread(repr, objects[key])
        assert error is None, error
        assert "made on thread 'MainThread'" in text, text


def test_one_per_thread_as_the_message_says():
    """The message's way: bitcode taken on the owner, a module made from
    it on the other thread (pickling too), used there with its own
    contexts and instruments."""
    mod = passlab.Module.from_ir(IR)
    data, pickled = mod.bitcode(), pickle.dumps(mod)

    def work():
        mine = passlab.Module.from_bitcode(data)
        timing = PassTimingInstrument()
        with PassContext(opt_level=2, instruments=[timing]):
            mine = Sequential([LLVMPass("instcombine")])(mine)
            rendered = timing.render()
        again = pickle.loads(pickled)
        return mine.instcount, again.functions, len(rendered) > 0

    error, value = on_thread(work)
    assert error is None, error
    assert value == (mod.instcount, ["f", "g"], True)


DROP = """
import gc, threading, warnings
import passlab
from passlab.instrument import PassTimingInstrument
from passlab.transform import PassContext

IR = {ir!r}
mod = passlab.Module.from_ir(IR)
timing = PassTimingInstrument()
box = [mod, mod["f"], passlab.JIT(mod), passlab.Buffer("i8", 8), mod.asm("f"), timing, timing.chart(),
       PassContext(opt_level=1), passlab.Session()]
del mod, timing
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    t = threading.Thread(target=box.clear, name="other")   # the last references go there
    t.start(); t.join()
    gc.collect()
leaked = sorted(str(w.message).split(" made on")[0] for w in seen if issubclass(w.category, ResourceWarning))
print(leaked)
# The interpreter goes on, and objects made since work.
print(passlab.Module.from_ir(IR).functions)
"""


def test_objects_freed_on_another_thread_are_leaked_and_python_goes_on():
    out = subprocess.run([sys.executable, "-c", DROP.format(ir=IR)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Panic" not in out.stderr and "panicked" not in out.stderr, out.stderr
    leaked, functions = out.stdout.strip().splitlines()[-2:]
    assert functions == "['f', 'g']"
    # Each object that holds something to free says so (a Value holds only
    # a handle; its module is freed with the module).
    for name in ("passlab.Module", "passlab.JIT", "passlab.Buffer", "passlab.Assembly",
                 "PassTimingInstrument", "passlab.Chart", "PassContext", "passlab.Session"):
        assert name in leaked, leaked
    assert "passlab.ir.Value" not in leaked, leaked


def test_a_module_a_pass_is_transforming_is_an_error_not_a_panic():
    """The module a pass runs on in place, reached inside that pass other
    than as the pass's argument (a closure's): RuntimeError, not a panic."""
    mod = passlab.Module.from_ir(IR)
    uses = [
        lambda: mod["f"],
        lambda: mod.ir_functions(),
        lambda: mod.asm("f"),
        lambda: passlab.JIT(mod),
        lambda: pickle.dumps(mod),
        lambda: mod.const_int("i32", 1),
        lambda: mod,  # returned as the pass's result
    ]
    for use in uses:

        @module_pass(opt_level=0, name="peek")
        def peek(m, ctx):
            out = use()
            return out if out is mod else None

        with pytest.raises(RuntimeError, match="being transformed by a pass"):
            peek(mod, inplace=True)
        assert mod.functions == ["f", "g"]


def fails_cleanly(call):
    """Runs ``call``; what it raised must be an Exception of the classes a
    CPython peer raises for a bad number, or a passlab.Error."""
    try:
        call()
    except (passlab.Error, ValueError, OverflowError, TypeError):
        return
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"{type(e).__name__}: {e}")


HUGE = [2**64 - 1, 2**63, 2**32, -1, -(2**63) - 1, 10**30]
FLOATS = [1e300, -1e300, math.inf, -math.inf, math.nan, -1.0, 0.0]


def test_out_of_range_numbers_are_errors_not_panics(objects):
    mod = passlab.Module.from_ir(IR)
    jit, timing, session = objects["jit"], objects["timing"], objects["session"]
    for n in HUGE:
        if n != 2**32:  # (4 GiB fit: a long allocation, not an error)
            fails_cleanly(lambda: passlab.Buffer("i8", n))
        fails_cleanly(lambda: passlab.Buffer("i8", 4, fill="random", seed=n))
        fails_cleanly(lambda: passlab.JIT(mod, opt_level=n))
        fails_cleanly(lambda: mod.asm("f", opt_level=n))
        fails_cleanly(lambda: jit.time("f", 3, number=1, repeat=n))
        if n <= 0:  # (a large number of calls is a long run, not an error)
            fails_cleanly(lambda: jit.time("f", 3, number=n, repeat=1))
            fails_cleanly(lambda: jit.time("f", 3, number=n + 1, repeat=1))
        fails_cleanly(lambda: jit.call("f", n))
        fails_cleanly(lambda: PassContext(opt_level=n))
        fails_cleanly(lambda: PassContext(config={"jit.timeout_ms": n}))
        fails_cleanly(lambda: PassContext(config={"llvm.inliner_threshold": n}))
        fails_cleanly(lambda: Sequential([], opt_level=n))
        fails_cleanly(lambda: timing.chart(top=n))
        fails_cleanly(lambda: session.complete(":run", n))
        fails_cleanly(lambda: tune(mod, trials=n))
        fails_cleanly(lambda: module_pass(lambda m, c: None, opt_level=n, name="n"))
    for x in FLOATS:
        fails_cleanly(lambda: passlab.JIT(mod, timeout_s=x))
        fails_cleanly(lambda: tune(mod, seconds=x))
        fails_cleanly(lambda: jit.call("f", x))
        fails_cleanly(lambda: PassContext(config={"jit.timeout_ms": x}))

    @module_pass(opt_level=0, name="numbers")
    def numbers(m, ctx):
        f = m["f"]
        mul = f.instructions[0]
        for n in HUGE:
            fails_cleanly(lambda: mul.set_operand(n, mul.operands[0]))
            fails_cleanly(lambda: m.const_int("i8", n))
            fails_cleanly(lambda: mul.const_int(n))

    numbers(mod)
    assert mod.functions == ["f", "g"]


def test_no_warning_on_the_owner_thread():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        mod = passlab.Module.from_ir(IR)
        del mod
        PassTimingInstrument().chart()
        passlab.Buffer("i8", 2)
