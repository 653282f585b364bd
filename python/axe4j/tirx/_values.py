"""The scalar function of each element-wise op, as a tvm_tirx ``LambdaExpr`` for ``T.cuda.tile.ewise``: the same
formulas as the 0.27 lane's ``axe4j._emit._value`` (each source taken in the destination dtype; the maps of
``WIDENED_MAPS`` computed in float32 for a 16-bit float destination and rounded once)."""

from __future__ import annotations

from tvm_tirx.ir import LambdaExpr, PrimType
from tvm_tirx.script import tirx as T

from ._describe import BINARY

WIDENED_MAPS = frozenset({"exp", "exp2", "log2", "sqrt", "reciprocal", "silu", "fdiv", "fma"})
NARROW_FLOATS = frozenset({"float16", "bfloat16"})


def sources(op: str, scalars: dict) -> list[tuple[str, object]]:
    """Source slots in order: ('tensor', role) or ('scalar', expression)."""
    count = 2 if op in BINARY else 1
    return [("scalar", scalars[i]) if i in scalars else ("tensor", f"src{i}") for i in range(count)]


def _computed(op, dtype, x):
    unary = {"exp": T.exp, "exp2": T.exp2, "log2": T.log2, "sqrt": T.sqrt,
             "reciprocal": lambda v: T.cast(1, dtype) / v, "silu": lambda v: v * T.sigmoid(v)}
    if op in unary:
        return unary[op](x[0])
    binary = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "fdiv": lambda a, b: a / b, "maximum": T.max, "minimum": T.min}
    return binary[op](x[0], x[1])


def function(op: str, dtype: str, input_dtypes: list[str]) -> LambdaExpr:
    """dst = op(inputs) per element, ``dtype`` the destination's."""

    def expression(*inputs):
        if op == "cast":
            return T.cast(inputs[0], dtype)
        x = [v if d == dtype else T.cast(v, dtype) for v, d in zip(inputs, input_dtypes)]
        if op in ("copy", "fill"):
            return x[0]
        wide = "float32" if op in WIDENED_MAPS and dtype in NARROW_FLOATS else dtype
        if wide != dtype:
            x = [T.cast(v, wide) for v in x]
        value = _computed(op, wide, x)
        return value if wide == dtype else T.cast(value, dtype)

    return LambdaExpr([PrimType(d) for d in input_dtypes], expression, ret_type=PrimType(dtype))
