"""The JIT from Python: calls with buffers the child shares (numpy views,
no copy) and with numpy arrays (copied in and back), the time evaluator,
machine code, and calls that crash or hang ending in errors."""

import numpy as np
import pytest

import passlab
from passlab.transform import LLVMPass

SOURCE = """
long dot(const int *a, const int *b, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) s += (long)a[i] * b[i];
  return s;
}
void scale(float *x, int n, float k) { for (int i = 0; i < n; i++) x[i] *= k; }
int crash(int *p) { return *(volatile int *)0; }
int spin(int n) { volatile int x = 0; for (;;) x += n; return x; }
int hello(void) { __builtin_printf("hello from C\\n"); return 7; }
"""


@pytest.fixture(scope="module")
def jit():
    mod = passlab.Module.from_c(SOURCE, name="jit.c")
    mod = LLVMPass("default<O2>")(mod)
    return passlab.JIT(mod, timeout_s=2)


def test_calls_with_shared_buffers(jit):
    a = passlab.Buffer("i32", 1000, fill="range")
    assert len(a) == 1000 and a.type == "i32"
    view = np.asarray(a)
    assert view.dtype == np.int32 and view.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    assert jit.call("dot", a, a, 1000) == int((np.arange(1000, dtype=np.int64) ** 2).sum())
    x = passlab.Buffer("f32", 8, fill="ones")
    assert jit.call("scale", x, 8, 2.5) is None
    assert np.asarray(x).tolist() == [2.5] * 8  # written by the child, seen here without a copy
    assert dict(jit.functions())["dot"] == "i64 (ptr, ptr, i32)"


def test_numpy_arrays_are_copied_in_and_back(jit):
    x = np.linspace(0, 1, 5, dtype=np.float32)
    jit.call("scale", x, 5, 4.0)
    assert np.allclose(x, np.linspace(0, 4, 5))
    b = np.arange(10, dtype=np.int32)
    assert jit("dot", b, b, 10) == 285
    with pytest.raises(TypeError, match="one-dimensional with an element type"):
        jit.call("scale", np.zeros((2, 2), dtype=np.float32), 4, 1.0)
    with pytest.raises(TypeError, match="ints, floats and passlab.Buffer"):
        jit.call("dot", "text", b, 10)


def test_output_goes_to_sys_stdout(jit, capsys):
    assert jit.call("hello") == 7
    assert capsys.readouterr().out == "hello from C\n"


def test_a_crash_or_a_hang_is_an_error_and_python_goes_on(jit):
    with pytest.raises(passlab.Error, match="SIGSEGV"):
        jit.call("crash", passlab.Buffer("i32", 1))
    with pytest.raises(passlab.Error, match="'spin' did not finish within 2.0 s and was stopped"):
        jit.call("spin", 1)
    with pytest.raises(passlab.Error, match="takes 3 argument"):
        jit.call("dot", 1)
    with pytest.raises(passlab.Error, match="nosuch"):
        jit.call("nosuch")
    assert jit.call("hello") == 7


def test_the_time_evaluator(jit):
    a = passlab.Buffer("i32", 4096, fill="random", seed=1)
    t = jit.time("dot", a, a, 4096, number=20, repeat=3)
    assert t["number"] >= 20 and len(t["per_call_s"]) == 3
    assert 0 < t["min_s"] <= t["median_s"] <= t["max_s"]
    assert t["value"] == jit.call("dot", a, a, 4096)
    assert repr(t).startswith("mean ")
    with pytest.raises(passlab.Error, match="repeat must be"):
        jit.time("dot", a, a, 1, repeat=0)


def test_machine_code():
    mod = passlab.Module.from_c("int twice(int x) { return x * 2; }")
    mod = LLVMPass("default<O2>")(mod)
    asm = mod.asm("twice")
    assert "twice:" in asm.text and "ret" in asm.text
    assert ".cfi_startproc" not in asm.text and ".cfi_startproc" in asm.raw
    bundle = asm._repr_mimebundle_()
    assert "text/html" in bundle and "twice" in bundle["text/plain"]
    intel = mod.asm("twice", syntax="intel")
    assert "lea" in intel.text and "[" in intel.text
    assert dict(mod.asm().functions)["twice"] > 0
    with pytest.raises(passlab.Error, match="no function 'thrice'.*twice"):
        mod.asm("thrice")
    with pytest.raises(passlab.Error, match="expects att or intel"):
        mod.asm("twice", syntax="arm")


def test_rich_display_of_modules_and_timing():
    mod = passlab.Module.from_c("int sq(int x) { return x * x; }")
    bundle = mod._repr_mimebundle_()
    assert bundle["text/plain"].startswith("<passlab.Module 'input.c'")
    assert "<span" in bundle["text/html"] and "sq" in bundle["text/html"]
    timing = passlab.instrument.PassTimingInstrument()
    with passlab.transform.PassContext(instruments=[timing]):
        mod = LLVMPass("default<O2>")(mod)
        t = timing._repr_mimebundle_()  # inside: TVM's timing is cleared on exit
    assert "<table" in t["text/html"] and "default&lt;O2&gt;" in t["text/html"]


def test_charts_display_as_the_kernel_shows_them(tmp_path):
    mod = passlab.Module.from_c(SOURCE, name="jit.c")
    timing = passlab.instrument.PassTimingInstrument()
    size = passlab.instrument.IRSizeInstrument()
    with passlab.transform.PassContext(instruments=[timing, size]):
        mod = LLVMPass("default<O2>")(mod)
        charts = (timing.chart(top=8), size.chart())
    for chart in charts:
        bundle = chart._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "image/svg+xml", "image/png"}
        assert bundle["text/plain"] == f"chart: {chart.title}"
        assert chart.png().startswith(b"\x89PNG")
    size.chart().save(str(tmp_path / "size.png"))
    assert (tmp_path / "size.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("timeout", [1e300, float("inf"), float("nan"), 0.0, -1.0])
def test_a_timeout_out_of_range_is_an_error_not_a_panic(timeout):
    mod = passlab.Module.from_c("int f(void) { return 1; }", name="t.c")
    # (pyo3's PanicException derives from BaseException: `except Exception`
    # would not catch it; passlab.Error does)
    with pytest.raises(passlab.Error, match="timeout_s"):
        passlab.JIT(mod, timeout_s=timeout)
