"""Passes and the contexts they run in: TVM's ``tvm.transform`` over LLVM.

A pass is called on a module, ``new = pass_(mod)``, and returns a new
module, ``mod`` left as it was (TVM's value semantics).
``pass_(mod, inplace=True)``, or ``mod.apply(pass_)``, changes ``mod``
itself and returns it, without the copy. If the pass fails — an error, a
Python exception in a Python pass or an instrument, IR that no longer
verifies — the error is raised and ``mod`` is as it was.
"""

import functools
import inspect

from ._passlab import (  # noqa: F401
    FunctionPass,
    LLVMPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PrintIR,
    Sequential,
    config_options,
    list_passes,
    make_function_pass,
    make_module_pass,
    parse_pipeline,
)

__all__ = [
    "PassContext",
    "Pass",
    "PassInfo",
    "ModulePass",
    "FunctionPass",
    "LLVMPass",
    "Sequential",
    "PrintIR",
    "module_pass",
    "function_pass",
    "parse_pipeline",
    "list_passes",
    "config_options",
]


def _decorator(kind, method, signature, make, pass_func, opt_level, name, required):
    """TVM's pass decorators, on a function or a class: ``kind`` is
    ``module_pass`` or ``function_pass``, ``method`` the class's method
    (``transform_module``), ``make`` the extension's constructor."""
    if opt_level is None:
        raise TypeError(f"{kind} needs opt_level, as TVM's does: {kind}(opt_level=1)")
    if required is not None and not isinstance(required, (list, tuple)):
        raise TypeError("required is a list of pass names")
    required = list(required or [])

    def create(fn):
        pass_name = name if name else fn.__name__
        if inspect.isclass(fn):
            if not hasattr(fn, method):
                raise TypeError(f"class {fn.__name__} has no {method}({signature}) method")

            @functools.wraps(fn, updated=())
            def instantiate(*args, **kwargs):
                instance = fn(*args, **kwargs)
                # The pass forwards attribute access to the instance (TVM's):
                # cm = CountMuls(); mod = cm(mod); cm.n
                return make(getattr(instance, method), pass_name, opt_level, required, instance)

            return instantiate
        if not callable(fn):
            raise TypeError(f"{kind} decorates a function or a class")
        return make(fn, pass_name, opt_level, required)

    if pass_func is not None:
        return create(pass_func)
    return create


def module_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Makes a module pass from a Python function or class (TVM's decorator).

    Decorating a function ``transform(mod, ctx)`` gives the pass; decorating
    a class with ``transform_module(self, mod, ctx)`` gives a class whose
    instances are passes (forwarding attribute access to the class's
    instance, as TVM's). The function returns the module that takes
    ``mod``'s place — a pass called on ``mod`` makes a new one — or changes
    ``mod`` in place (through :mod:`passlab.ir`, or
    ``pass_(mod, inplace=True)``) and returns ``None`` or ``mod``::

        @module_pass(opt_level=1, name="o3-inside")
        def o3_inside(mod, ctx):
            return LLVMPass("default<O3>")(mod)
    """
    return _decorator(
        "module_pass", "transform_module", "self, mod, ctx", make_module_pass, pass_func, opt_level, name, required
    )


def function_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Makes a function pass from a Python function or class (TVM's
    decorator): ``transform(func, mod, ctx)``, or a class with
    ``transform_function(self, func, mod, ctx)``, called for each function
    with a body (not those marked optnone). ``func`` is the function as a
    :class:`passlab.ir.Value`, changed in place through :mod:`passlab.ir`;
    the body returns None. Adding or removing functions is an error; the
    module is verified after the pass and put back if it fails.
    """
    return _decorator(
        "function_pass",
        "transform_function",
        "self, func, mod, ctx",
        make_function_pass,
        pass_func,
        opt_level,
        name,
        required,
    )
