"""The IR of a module as Python objects, for passes written in Python.

``mod["f"]`` is the function ``f`` as a :class:`Value`; ``mod.ir_functions()``
all of them. A value's ``kind`` is ``function``, ``block``, ``instruction``,
``argument``, ``constant_int``, ``constant``, ``global`` or ``other``, and
it has what its kind has: a function's ``blocks``, ``instructions`` and
``arguments``; an instruction's ``opcode`` (as LLVM prints it: ``mul``),
``operands``, ``users`` and ``parent`` block; a constant's ``int_value``;
everyone's ``name``, ``type`` and text (``str(v)``).

Inside a ``module_pass`` or ``function_pass`` the IR can be changed:
``replace_all_uses_with``, ``set_operand``, ``erase`` (an instruction
nothing uses) and a :class:`Builder` for new instructions. Types are
checked; the pass's result is verified, and a pass that fails or raises
leaves the module as it was. A value taken before the module changed by
other means (a pass ran on it) raises when used, rather than reach IR that
may be gone.

The guide's strength reduction ("Writing passes"), in Python::

    @function_pass(opt_level=2, name="strength-reduce", required=["mem2reg"])
    def strength_reduce(func, mod, ctx):
        for inst in func.instructions:
            if inst.opcode != "mul":
                continue
            x, c = inst.operands
            k = c.int_value
            if not k or k < 0 or k & (k - 1):
                continue
            shl = Builder(before=inst).shl(x, x.const_int(k.bit_length() - 1))
            inst.replace_all_uses_with(shl)
            inst.erase()
"""

from ._passlab import Value

__all__ = ["Value", "Builder"]


class Builder:
    """Builds instructions before ``before`` (an instruction); each method
    returns the new instruction (or the constant LLVM folded it to)."""

    def __init__(self, before):
        if not isinstance(before, Value) or before.kind != "instruction":
            raise TypeError("Builder(before=...) takes an instruction")
        self.before = before

    def _build(self, op, operands, to=None, name=""):
        return self.before.build_before(op, list(operands), to=to, name=name)

    def icmp(self, predicate, a, b, name=""):
        """``icmp PREDICATE a, b`` (eq, ne, ugt, uge, ult, ule, sgt, sge, slt, sle)."""
        return self._build(f"icmp {predicate}", (a, b), name=name)

    def select(self, condition, a, b, name=""):
        return self._build("select", (condition, a, b), name=name)

    def zext(self, value, to, name=""):
        return self._build("zext", (value,), to=to, name=name)

    def sext(self, value, to, name=""):
        return self._build("sext", (value,), to=to, name=name)

    def trunc(self, value, to, name=""):
        return self._build("trunc", (value,), to=to, name=name)


def _binary(op):
    def build(self, a, b, name=""):
        return self._build(op, (a, b), name=name)

    build.__name__ = op
    build.__doc__ = f"``{op} a, b`` (two integers of one type)."
    return build


for _op in ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor"):
    setattr(Builder, _op if _op not in ("and", "or") else f"{_op}_", _binary(_op))
