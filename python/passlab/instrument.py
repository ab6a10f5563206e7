"""Instruments: code called around every pass, LLVM's inner passes included.

Decorate a class with :func:`pass_instrument` and give instances to
``PassContext(instruments=[...])``. Any of the five hooks may be defined:

* ``enter_pass_ctx(self)`` and ``exit_pass_ctx(self)``: when the context is
  entered and left;
* ``should_run(self, mod, info)``: whether an optional pass runs (not asked
  for required passes);
* ``run_before_pass(self, mod, info)`` and ``run_after_pass(self, mod, info)``.

``mod`` is the module the pass runs on, lent for the call (read it, or keep
``mod.copy()``); ``info`` is a :class:`passlab.transform.PassInfo` that also
names the IR unit (``info.ir_unit``: module, cgscc, function, loop), its name
(``info.target``), the nesting depth and whether LLVM runs the pass inside
one of its pipelines. An exception in a hook stops the pass (the module is
as it was) and is raised to whoever ran it, as in TVM.
"""

from ._passlab import (  # noqa: F401
    DumpIRInstrument,
    IRSizeInstrument,
    PassCountsInstrument,
    PassTimingInstrument,
    PrintIRInstrument,
    RemarksInstrument,
)

__all__ = [
    "pass_instrument",
    "PassInstrument",
    "PassTimingInstrument",
    "IRSizeInstrument",
    "PassCountsInstrument",
    "PrintIRInstrument",
    "PrintBeforeAll",
    "PrintAfterAll",
    "RemarksInstrument",
    "DumpIRInstrument",
]


def PrintBeforeAll():  # noqa: N802 (TVM's name)
    """Prints the IR before every pass, to ``sys.stdout`` (TVM's)."""
    return PrintIRInstrument(when="before")


def PrintAfterAll():  # noqa: N802 (TVM's name)
    """Prints the IR after every pass, to ``sys.stdout`` (TVM's)."""
    return PrintIRInstrument(when="after")

_HOOKS = ("enter_pass_ctx", "exit_pass_ctx", "should_run", "run_before_pass", "run_after_pass")


def pass_instrument(cls):
    """Marks a class as an instrument (TVM's ``@pass_instrument``)."""
    if not isinstance(cls, type):
        raise TypeError("pass_instrument decorates a class")
    if not any(hasattr(cls, hook) for hook in _HOOKS):
        raise TypeError(f"{cls.__name__} defines none of the hooks: {', '.join(_HOOKS)}")
    cls.__passlab_instrument__ = True
    return cls


class PassInstrument:
    """A base class for instruments, for those who prefer inheriting to the
    decorator; every hook does nothing until overridden."""

    __passlab_instrument__ = True

    def enter_pass_ctx(self):
        pass

    def exit_pass_ctx(self):
        pass

    def should_run(self, mod, info):
        return True

    def run_before_pass(self, mod, info):
        pass

    def run_after_pass(self, mod, info):
        pass
