"""The fuzzer's self-check: kernels mutated on purpose must be reported ``wrong``.

A mutation swaps one helper the emitters share (``axe4j._emit``: the element expression of a map op, the combine
step of a reduction) for an altered one in every axe4j module that imported it, while a ``with mutated(kind):`` block
runs. Programs that are right without the mutation, and whose op the mutation changes, must come out ``wrong`` with
it: a fuzzer that missed one would miss a real emitter bug of the same kind.
"""

from __future__ import annotations

import contextlib
import sys

from tvm import tirx


def _swapped_operands(original):
    def value(op, dtype, sources):
        if len(sources) == 2:
            sources = [sources[1], sources[0]]
        return original(op, dtype, sources)
    return value


def _sub_as_add(original):
    def value(op, dtype, sources):
        return original("add" if op == "sub" else op, dtype, sources)
    return value


def _exp_as_exp2(original):
    def value(op, dtype, sources):
        return original("exp2" if op == "exp" else op, dtype, sources)
    return value


def _off_by_one(original):
    """Every computed element one unit larger (an emitter that adds a stray term)."""
    def value(op, dtype, sources):
        v = original(op, dtype, sources)
        return v + tirx.const(1, dtype)
    return value


def _sum_as_max(original):
    def combine(name, a, b):
        return original("max" if name == "sum" else name, a, b)
    return combine


# kind: (helper of axe4j._emit, how it is altered, ops whose programs the alteration changes)
MUTATIONS = {
    "swapped-operands": ("_value", _swapped_operands, ("sub", "fdiv")),
    "sub-as-add": ("_value", _sub_as_add, ("sub",)),
    "exp-as-exp2": ("_value", _exp_as_exp2, ("exp",)),
    "off-by-one": ("_value", _off_by_one, ("add", "mul", "copy", "sqrt")),
    "sum-as-max": ("_combine", _sum_as_max, ("sum",)),
}


@contextlib.contextmanager
def mutated(kind: str):
    from axe4j import _emit

    name, alter, _ = MUTATIONS[kind]
    original = getattr(_emit, name)
    replacement = alter(original)
    holders = [m for key, m in list(sys.modules.items())
               if key.startswith("axe4j") and m is not None and getattr(m, name, None) is original]
    try:
        for m in holders:
            setattr(m, name, replacement)
        yield
    finally:
        for m in holders:
            setattr(m, name, original)


def self_check(programs_by_kind):
    """{kind: (caught, of)}: programs right without the mutation, and how many of them came out ``wrong`` with it."""
    from . import execute

    result = {}
    for kind, programs in programs_by_kind.items():
        plain = execute.execute(programs)
        right = [p for p, o in zip(programs, plain) if o.klass == "right"]
        with mutated(kind):
            bad = execute.execute(right)
        result[kind] = (sum(o.klass == "wrong" for o in bad), len(right))
    return result
