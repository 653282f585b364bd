"""Inputs and numpy's answer for a ``Program``, and the comparison with a dtype-appropriate tolerance.

Values are drawn from ranges where each op is defined and exact in the dtype (multiples of 1/8), the reference is
computed in float64 from the rounded inputs and rounded once to the output dtype (numpy's float16, ml_dtypes'
bfloat16: round to nearest even), so an op computed exactly and rounded once matches bit for bit; transcendental
maps get a few ulps, sums a bound proportional to the terms' magnitudes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .generate import BINARY, REDUCE, UNARY
from .spec import Program

NUMPY = {"float32": np.dtype("float32"), "float16": np.dtype("float16"), "int32": np.dtype("int32"),
         "bfloat16": np.dtype(ml_dtypes.bfloat16)}
EPS = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "int32": 0.0}
# relative error the CUDA approximations (ex2.approx, lg2.approx, rcp.approx, ...) may add to a float32 map
APPROX_F32 = 2.0 ** -19


def _ranges(op, position):
    if op in ("log2", "sqrt", "reciprocal"):
        return 0.0, 8.0        # 0 now and then: -inf, 0, inf
    if op == "fdiv" and position == 1:
        return 0.5, 4.0
    if op == "exp":
        return -12.0, 12.0     # past float16's largest finite exp (x > 11.09): inf in both
    if op == "exp2":
        return -17.0, 17.0
    if op == "silu":
        return -16.0, 8.0
    return -4.0, 4.0


def values(rng, shape, dtype, op, position):
    if dtype == "int32":
        if op == "cast" and rng.random() < 0.5:   # past 2048 (float16's exact integers) and its largest finite
            return rng.integers(-70000, 70001, size=shape).astype(np.int32)
        return rng.integers(-50, 51, size=shape).astype(np.int32)
    lo, hi = _ranges(op, position)
    v = np.round(rng.uniform(lo, hi, size=shape) * 8) / 8
    if op == "fdiv" and position == 1:
        v = v * rng.choice([-1, 1], size=shape)
    return v.astype(NUMPY[dtype])


def _map(op, x):
    with np.errstate(all="ignore"):
        return {"exp": np.exp, "exp2": np.exp2, "log2": np.log2, "sqrt": np.sqrt,
                "reciprocal": lambda v: 1.0 / v, "silu": lambda v: v / (1.0 + np.exp(-v))}[op](x)


def compute(p: Program, logical_srcs, dst_before):
    """float64 results of the op on the logical source regions (and the destination region's values before)."""
    xs = [np.asarray(s, np.float64) for s in logical_srcs]
    op = p.op
    if op in ("copy", "cast"):
        out = xs[0]
        if p.dst.dtype == "int32" and p.dtype != "int32":
            out = np.trunc(out)
        return out, np.abs(out)
    if op == "fill":
        out = np.full(dst_before.shape, float(p.scalar))
        return out, np.abs(out)
    if op in UNARY:
        out = _map(op, xs[0])
        return out, np.abs(out)
    if op in BINARY:
        a = xs[0]
        b = xs[1] if p.scalar is None else np.float64(p.scalar)
        with np.errstate(all="ignore"):
            out = {"add": a + b, "sub": a - b, "mul": a * b, "fdiv": a / b, "maximum": np.maximum(a, b),
                   "minimum": np.minimum(a, b)}[op]
        scale = np.abs(a) + np.abs(b) if op in ("add", "sub") else np.abs(out)
        return out, np.broadcast_to(scale, out.shape)
    if op == "fma":
        a = xs[0]
        s = xs[1] if p.scalar is None else np.float64(p.scalar)
        b = xs[-1]
        out = a * s + b
        return out, np.abs(a * s) + np.abs(b)
    if op in REDUCE:
        axes = tuple(p.axes)
        fn = {"sum": np.sum, "max": np.max, "min": np.min}[op]
        out = fn(xs[0], axis=axes).reshape(dst_before.shape)
        scale = np.sum(np.abs(xs[0]), axis=axes).reshape(dst_before.shape)
        if p.accum:
            before = np.asarray(dst_before, np.float64)
            out = {"sum": out + before, "max": np.maximum(out, before), "min": np.minimum(out, before)}[op]
            scale = scale + np.abs(before)
        return out, scale
    raise ValueError(op)


def rounded(out, dtype):
    if dtype == "int32":
        return np.asarray(out).astype(np.int64).astype(np.int32)
    return np.asarray(out).astype(NUMPY[dtype])


def tolerance(p: Program):
    """(relative to the result, relative to the terms' scale) in units of the output dtype's epsilon."""
    eps = EPS[p.dst.dtype]
    if p.dst.dtype == "int32":
        return 0.0, 0.0
    if p.op in UNARY or p.op == "fdiv":
        approx = APPROX_F32 if p.cuda or p.op in ("exp", "exp2", "log2", "silu") else 0.0
        rel = max(4 * eps, approx) if p.dst.dtype == "float32" else 4 * eps
        return rel, (4 * eps if p.op == "log2" else 0.0)
    if p.op == "sum":
        n = int(np.prod([p.extent[a] for a in p.axes])) + 1
        return eps, (n + 1) * max(eps, EPS[p.dtype])
    return eps, 2 * eps if p.op in ("add", "sub", "fma", "mul") else 0.0


def mismatches(p: Program, got, expected64, scale):
    """Boolean mask of elements of ``got`` that differ from the float64 reference beyond the tolerance."""
    want = rounded(expected64, p.dst.dtype)
    if p.dst.dtype == "int32":
        return np.asarray(got) != want
    g = np.asarray(got, np.float64)
    w = np.asarray(want, np.float64)
    rel, abs_scale = tolerance(p)
    bound = rel * np.abs(w) + abs_scale * np.asarray(scale, np.float64)
    with np.errstate(all="ignore"):
        close = (np.abs(g - w) <= bound) | (g == w) | (np.isnan(g) & np.isnan(w))
    return ~close
