"""The JIT from Python: call a module's functions, time them, read their
machine code.

::

    import numpy as np, passlab
    mod = passlab.Module.from_c("long dot(const int *a, const int *b, int n) { ... }")
    mod = passlab.transform.LLVMPass("default<O2>")(mod)
    jit = passlab.JIT(mod)                        # code generator level 2, the module's processor
    a = passlab.Buffer("i32", 1000, fill="range")  # shared memory; np.asarray(a) is a view
    jit.call("dot", a, a, 1000)
    jit.call("dot", np.arange(1000, dtype=np.int32), a, 1000)   # numpy arrays: copied in and back
    jit.time("dot", a, a, 1000, number=100, repeat=5)            # TVM's time evaluator
    mod.asm("dot")                                 # displayed side by side with the source in a notebook

Calls run in an isolated child process: a crash, a hang (``timeout_s``) or
a fatal error in the called code is a :class:`passlab.Error`, and the
interpreter goes on. A :class:`passlab.Buffer` lives in memory that child
shares, so ``numpy.asarray(buf)`` sees what the call wrote without a copy;
a numpy array given instead is copied into such a buffer before the call
and back after it.
"""

from ._passlab import JIT as _JIT
from ._passlab import Assembly, Buffer

__all__ = ["JIT", "Buffer", "Assembly", "TimeResult"]

_NUMPY_TYPES = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float32": "f32", "float64": "f64"}


def _buffers(arguments):
    """The call's arguments with numpy arrays swapped for buffers holding
    their contents; and the (array, buffer) pairs to copy back."""
    out, back = [], []
    for a in arguments:
        dtype = getattr(a, "dtype", None)
        if dtype is not None and hasattr(a, "__array_interface__") and not isinstance(a, Buffer):
            import numpy as np

            name = _NUMPY_TYPES.get(str(dtype))
            if name is None or a.ndim != 1:
                raise TypeError(
                    f"a numpy argument is one-dimensional with an element type among "
                    f"{', '.join(_NUMPY_TYPES)}; got {a.ndim} dimension(s) of {dtype}"
                )
            buf = Buffer(name, len(a))
            np.asarray(buf)[:] = a
            out.append(buf)
            if a.flags.writeable:
                back.append((a, buf))
        else:
            out.append(a)
    return out, back


def _copy_back(back):
    if back:
        import numpy as np

        for array, buf in back:
            array[:] = np.asarray(buf)


class TimeResult(dict):
    """What the time evaluator measured: a dict (``mean_s``, ``median_s``,
    ``stdev_s``, ``min_s``, ``max_s``, ``per_call_s``, ``number``,
    ``value``) that prints as its summary."""

    def __repr__(self):
        return self["summary"]

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self["summary"]}


class JIT(_JIT):
    """``JIT(module, opt_level=2, timeout_s=None, allow_host=False)``:
    ``module`` compiled by LLVM's code generator (at ``opt_level``, for the
    module's processor). A call reaching symbols the module does not define
    that this process's libraries would supply beyond the C/C++ runtime
    (libz's ``adler32``) raises passlab.Error naming them, unless
    ``allow_host=True``."""

    def call(self, function, *arguments):
        """Calls ``function``; returns its value (None for void)."""
        args, back = _buffers(arguments)
        try:
            return self._call(function, *args)
        finally:
            _copy_back(back)

    __call__ = call

    def time(self, function, *arguments, number=10, repeat=5, min_repeat_ms=0):
        """TVM's time evaluator: one warm-up call, then ``repeat`` repeats of
        ``number`` calls (more until a repeat lasts ``min_repeat_ms``)."""
        args, back = _buffers(arguments)
        try:
            return TimeResult(
                self._time(function, *args, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms)
            )
        finally:
            _copy_back(back)
