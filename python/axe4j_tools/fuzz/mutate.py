"""The fuzzer's self-check: kernels mutated on purpose must be reported ``wrong``.

A mutation swaps one helper the emitters share (``axe4j._emit``: the element expression of a map op, the combine
step of a reduction) for an altered one in every axe4j module that imported it, while a ``with mutated(kind):`` block
runs, and counts the times it changed what an emitter built. Programs that are right without the mutation and whose
kernels it changed must come out ``wrong`` with it: a fuzzer that missed one would miss a real emitter bug of the
same kind.
"""

from __future__ import annotations

import contextlib
import sys

from tvm import tirx


class Touches:
    """How many times the altered helper changed what an emitter built (reset per program)."""

    def __init__(self):
        self.count = 0


def _swapped_operands(original, touches):
    def value(op, dtype, sources, **options):
        if len(sources) == 2:
            touches.count += 1
            sources = [sources[1], sources[0]]
        return original(op, dtype, sources, **options)
    return value


def _sub_as_add(original, touches):
    def value(op, dtype, sources, **options):
        if op == "sub":
            touches.count += 1
            op = "add"
        return original(op, dtype, sources, **options)
    return value


def _exp_as_exp2(original, touches):
    def value(op, dtype, sources, **options):
        if op == "exp":
            touches.count += 1
            op = "exp2"
        return original(op, dtype, sources, **options)
    return value


def _off_by_one(original, touches):
    """Every computed element one unit larger (an emitter that adds a stray term)."""
    def value(op, dtype, sources, **options):
        touches.count += 1
        return original(op, dtype, sources, **options) + tirx.const(1, dtype)
    return value


def _sum_as_max(original, touches):
    def combine(name, a, b):
        if name == "sum":
            touches.count += 1
            name = "max"
        return original(name, a, b)
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
    """Within the block, the helper of ``kind`` is altered in every module holding it; yields its ``Touches``."""
    from axe4j import _emit

    name, alter, _ = MUTATIONS[kind]
    original = getattr(_emit, name)
    touches = Touches()
    replacement = alter(original, touches)
    holders = [m for key, m in list(sys.modules.items())
               if key.startswith("axe4j") and m is not None and getattr(m, name, None) is original]
    try:
        for m in holders:
            setattr(m, name, replacement)
        yield touches
    finally:
        for m in holders:
            setattr(m, name, original)


def self_check(programs_by_kind):
    """{kind: (caught, touched)}: of the programs right without the mutation whose kernels the mutation changed (the
    altered helper changed what an emitter built while compiling them, one program at a time), how many came out
    ``wrong`` with it. A program lowered without the helper (by a rule with its own arithmetic, or by TVM) is not
    counted."""
    from . import execute

    result = {}
    for kind, programs in programs_by_kind.items():
        plain = execute.execute(programs)
        caught = touched = 0
        with mutated(kind) as touches:
            for p, o in zip(programs, plain):
                if o.klass != "right":
                    continue
                touches.count = 0
                outcome = execute.execute([p])[0]
                if touches.count:
                    touched += 1
                    caught += outcome.klass == "wrong"
        result[kind] = (caught, touched)
    return result
