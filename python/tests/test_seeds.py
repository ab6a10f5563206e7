"""The seeds' Python examples (shared/seeds 001 and 000), with Relay's
names replaced by LLVM's: PassContext with `with` and current(), passes as
callables, module_pass on a function and on a class, Sequential with
disabled passes and PrintIR, instruments with their order and exception
rules, override_instruments on the global context, PassTimingInstrument."""

import pytest

import passlab
from passlab.instrument import PassTimingInstrument, pass_instrument
from passlab.transform import (
    LLVMPass,
    ModulePass,
    PassContext,
    PrintIR,
    Sequential,
    module_pass,
)

ABS = """
define i32 @abs(i32 %x) {
  %neg = sub i32 0, %x
  %lt = icmp slt i32 %x, 0
  %r = select i1 %lt, i32 %neg, i32 %x
  ret i32 %r
}
"""


def test_pass_names_are_checked_where_the_context_is_made():
    # A typo would disable nothing, silently: it is refused with the
    # nearest name, as LLVMPass refuses it.
    with pytest.raises(passlab.UnknownPassError, match=r"unknown pass 'licmm'.*did you mean.*'licm'"):
        PassContext(disabled_pass=["licmm"])
    with pytest.raises(passlab.UnknownPassError, match="nosuchpass"):
        PassContext(required_pass=["nosuchpass"])
    # Pipeline text a Sequential holds as one element, and passes made in
    # Python, are names too.
    PassContext(disabled_pass=["loop-mssa(licm)", "loop-unroll<O3>"])

    @passlab.transform.module_pass(opt_level=1, name="my_checked_pass")
    def my_checked_pass(mod, ctx):
        return mod

    PassContext(disabled_pass=["my_checked_pass"])


def test_pass_context_with_and_current():
    outer = PassContext.current()
    assert outer.opt_level == 2  # the global context, TVM's default level
    with PassContext(opt_level=3, disabled_pass=["licm"]) as ctx:
        assert PassContext.current() is ctx
        assert ctx.opt_level == 3 and ctx.disabled_pass == ["licm"]
        with PassContext(opt_level=1) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is ctx
    assert PassContext.current() is outer


def test_module_pass_on_a_function_adds_abs():
    # Seed 001: "The transform function here adds an abs function to the
    # input module".
    @module_pass(opt_level=2)
    def transform(mod, ctx):
        return passlab.Module.from_ir(str(mod) + ABS, name=mod.name)

    mp = transform
    assert isinstance(mp, ModulePass)
    assert mp.info.opt_level == 2
    assert mp.info.name == "transform"
    mod = passlab.Module.from_ir("", name="empty.ll")
    mod = mp(mod)
    assert mod.functions == ["abs"]


def test_module_pass_on_a_class():
    @module_pass(opt_level=1, name="run-named")
    class RunNamed:
        def __init__(self, pipeline):
            self.pipeline = pipeline

        def transform_module(self, mod, ctx):
            assert ctx is PassContext.current()
            return LLVMPass(self.pipeline)(mod)

    p = RunNamed("mem2reg")
    assert p.info.name == "run-named" and p.info.opt_level == 1
    mod = passlab.Module.from_c("int f(int x) { int y = x; return y + 1; }")
    before = mod.instcount
    mod = p(mod)
    assert mod.instcount < before
    assert "alloca" not in str(mod)


@pass_instrument
class Recorder:
    """Records which passes ran, as the seeds' instruments do."""

    def __init__(self):
        self.events = []

    def enter_pass_ctx(self):
        self.events.append("enter")

    def exit_pass_ctx(self):
        self.events.append("exit")

    def should_run(self, mod, info):
        self.events.append(("should_run", info.name))
        return True

    def run_before_pass(self, mod, info):
        self.events.append(("before", info.name))

    def run_after_pass(self, mod, info):
        self.events.append(("after", info.name))

    def ran(self):
        return [e[1] for e in self.events if isinstance(e, tuple) and e[0] == "before"]


def test_sequential_with_disabled_pass_and_print_ir(capsys, loop_module):
    seq = Sequential(
        [LLVMPass("sroa"), LLVMPass("instcombine"), PrintIR("after instcombine"), LLVMPass("early-cse")]
    )
    rec = Recorder()
    with PassContext(opt_level=3, disabled_pass=["early-cse"], instruments=[rec]):
        mod = seq(loop_module)
    ran = rec.ran()
    assert ran[0] == "sequential"
    assert "sroa" in ran and "instcombine" in ran and "PrintIR" in ran
    assert "early-cse" not in ran
    out = capsys.readouterr().out
    assert out.startswith("; after instcombine\n")
    assert "define dso_local i32 @sum" in out
    assert mod is not loop_module and mod.instcount < loop_module.instcount  # TVM's values


def test_opt_level_gates_a_sequential(loop_module):
    # instcombine is an opt level 1 pass: at opt_level=0 a sequential skips it.
    before = str(loop_module)
    with PassContext(opt_level=0):
        loop_module = Sequential([LLVMPass("instcombine")])(loop_module)
    assert str(loop_module) == before
    with PassContext(opt_level=0, required_pass=["instcombine"]):
        loop_module = Sequential([LLVMPass("instcombine")])(loop_module)
    assert str(loop_module) != before


def test_instrument_order_follows_the_seeds(loop_module):
    rec = Recorder()
    with PassContext(instruments=[rec]):
        loop_module = LLVMPass("instcombine")(loop_module)
    # The pass passlab runs, and inside it the instcombine LLVM runs on the
    # one function: should_run, before, (the pass), after, nested.
    assert rec.events == [
        "enter",
        ("should_run", "instcombine"),
        ("before", "instcombine"),
        ("should_run", "instcombine"),
        ("before", "instcombine"),
        ("after", "instcombine"),
        ("after", "instcombine"),
        "exit",
    ]


def test_instruments_see_the_passes_inside_llvm_pipelines(loop_module):
    @pass_instrument
    class Units:
        def __init__(self):
            self.seen = []

        def run_before_pass(self, mod, info):
            self.seen.append((info.name, info.ir_unit, info.target, info.depth, info.inside_llvm))

    u = Units()
    with PassContext(instruments=[u]):
        loop_module = LLVMPass("default<O2>")(loop_module)
    assert u.seen[0] == ("default<O2>", "module", "sum.c", 0, False)
    inner = u.seen[1:]
    assert len(inner) > 50 and all(s[4] for s in inner)
    units = {s[1] for s in inner}
    assert {"module", "cgscc", "function", "loop"} <= units
    assert ("licm", "loop", "sum:for.cond", 2, True) in inner
    assert any(s[0] == "instcombine" and s[1] == "function" and s[2] == "sum" for s in inner)


def test_should_run_false_skips_a_pass_but_not_a_required_one(loop_module):
    @pass_instrument
    class NoInstcombine:
        def should_run(self, mod, info):
            return info.name != "instcombine"

    before = str(loop_module)
    with PassContext(instruments=[NoInstcombine()]):
        loop_module = LLVMPass("instcombine")(loop_module)
        assert str(loop_module) == before
    with PassContext(instruments=[NoInstcombine()], required_pass=["instcombine"]):
        loop_module = LLVMPass("instcombine")(loop_module)
    assert str(loop_module) != before


def make_named(name, log, fail_in=None):
    @pass_instrument
    class Named:
        def enter_pass_ctx(self):
            if fail_in == "enter":
                raise RuntimeError(f"{name} enter")
            log.append(f"{name} enter")

        def exit_pass_ctx(self):
            if fail_in == "exit":
                raise RuntimeError(f"{name} exit")
            log.append(f"{name} exit")

        def run_before_pass(self, mod, info):
            if fail_in == "before":
                raise ValueError(f"{name} before {info.name}")

    return Named()


def test_an_exception_in_enter_exits_those_entered_and_skips_the_rest():
    # Seed 000: A enters, B raises: C is not entered, A is exited.
    log = []
    a, b, c = make_named("A", log), make_named("B", log, "enter"), make_named("C", log)
    with pytest.raises(RuntimeError, match="B enter"):
        with PassContext(instruments=[a, b, c]):
            pytest.fail("the body must not run")
    assert log == ["A enter", "A exit"]


def test_an_exception_in_exit_stops_the_later_exits():
    log = []
    a, b, c = make_named("A", log), make_named("B", log, "exit"), make_named("C", log)
    with pytest.raises(RuntimeError, match="B exit"):
        with PassContext(instruments=[a, b, c]):
            pass
    assert log == ["A enter", "B enter", "C enter", "A exit"]


def test_an_exception_before_a_pass_stops_it_and_the_context_still_exits(loop_module):
    log = []
    before = str(loop_module)
    with pytest.raises(ValueError, match="A before instcombine"):
        with PassContext(instruments=[make_named("A", log, "before")]):
            loop_module = LLVMPass("instcombine")(loop_module)
    assert str(loop_module) == before
    assert log == ["A enter", "A exit"]


def test_override_instruments_on_the_global_context(loop_module):
    # Seed 000: without a new PassContext, instruments go on the global one.
    log = []
    cur = PassContext.current()
    cur.override_instruments([make_named("A", log)])
    try:
        loop_module = LLVMPass("instcombine")(loop_module)
        cur.override_instruments([make_named("B", log)])
    finally:
        cur.override_instruments([])
    assert log == ["A enter", "A exit", "B enter", "B exit"]


def test_pass_timing_instrument_renders_llvm_inner_passes(loop_module):
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        loop_module = LLVMPass("default<O2>")(loop_module)
        # Read inside the `with`: TVM's instrument is cleared when its
        # context exits.
        text, rows, frame, total = timing.render(), timing.rows(), timing.to_pandas(), timing.total_s
    assert timing.render() == "" and timing.rows() == []
    assert text.startswith("default<O2>: ")
    assert "\n  instcombine" in text
    names = {r["name"] for r in rows}
    assert {"default<O2>", "instcombine", "licm", "loop-vectorize"} <= names
    assert all(r["self_s"] <= r["total_s"] + 1e-9 for r in rows)
    assert list(frame.columns) == ["name", "ir_unit", "count", "self_s", "total_s"]
    assert total > 0


def test_dump_ir_instrument_writes_numbered_files_into_a_folder_it_makes(tmp_path, loop_module):
    from passlab.instrument import DumpIRInstrument

    dump = DumpIRInstrument(tmp_path / "dumps", passes=["instcombine", "sroa"])
    with PassContext(instruments=[dump]):
        loop_module = LLVMPass("default<O2>")(loop_module)
    rows = dump.dumps()
    assert rows[0]["file"] == "0000-input-sum.c.ll" and rows[0]["pass"] == "input"
    assert {r["pass"] for r in rows[1:]} == {"instcombine", "sroa"}
    assert [r["number"] for r in rows] == list(range(len(rows)))
    assert dump.folder == tmp_path / "dumps" and dump.stopped is None
    index = (tmp_path / "dumps" / "index.tsv").read_text().splitlines()
    assert len(index) == len(rows) + 1
    last = (tmp_path / "dumps" / rows[-1]["file"]).read_text()
    assert passlab.Module.from_ir(last).instcount == rows[-1]["instructions"]
    # A folder of the user's is refused, and nothing in it touched.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(passlab.Error, match="did not write"):
        DumpIRInstrument(mine)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_every_python_class_the_instruments_table_names_is_exported():
    import passlab.instrument
    from passlab._passlab import builtin_instruments

    table = builtin_instruments()
    assert "dump-ir" in [name for name, _, _ in table]
    for name, cls, _ in table:
        if cls:
            assert cls in passlab.instrument.__all__, name
            assert isinstance(getattr(passlab.instrument, cls), type), name


def test_print_before_and_after_and_remarks(capsys):
    from passlab.instrument import PrintAfterAll, PrintBeforeAll, PrintIRInstrument, RemarksInstrument

    src = "static int sq(int x) { return x * x; }\nint f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(a[i]); return s; }"
    mod = passlab.Module.from_c(src, name="r.c")
    with PassContext(instruments=[PrintBeforeAll()]):
        LLVMPass("instcombine")(mod.copy())
    out = capsys.readouterr().out
    assert out.startswith("; *** IR Dump Before instcombine on module r.c ***\n"), out[:300]
    assert "; *** IR Dump Before instcombine on function f ***" in out
    with PassContext(instruments=[PrintAfterAll()]):
        LLVMPass("sroa")(mod.copy())
    assert "; *** IR Dump After sroa on function f ***" in capsys.readouterr().out
    kept = PrintIRInstrument(when="after", passes=["instcombine"], keep=True)
    with PassContext(instruments=[kept]):
        LLVMPass("default<O2>")(mod.copy())
    text = kept.output()
    assert "; *** IR Dump After instcombine on function f ***" in text and "After sroa" not in text
    assert capsys.readouterr().out == ""
    remarks = RemarksInstrument(kinds=["passed"], passes=["inline"])
    with PassContext(instruments=[remarks]):
        mod = LLVMPass("default<O2>")(mod)
    rows = remarks.rows()
    assert rows and all(r["kind"] == "passed" and r["pass"] == "inline" for r in rows)
    assert any("'sq' inlined into 'f'" in r["message"] for r in rows)
    assert "inline" in remarks.render()
    with pytest.raises(passlab.Error, match="unknown remark kind 'passes'; valid are: passed, missed"):
        RemarksInstrument(kinds=["passes"])
    with pytest.raises(passlab.Error, match="when is 'before' or 'after'"):
        PrintIRInstrument(when="during")
