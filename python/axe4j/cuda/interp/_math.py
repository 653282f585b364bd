"""The CUDA math functions device code calls: every ``call_pure_extern`` name TVM's CUDA intrinsic rules emit for
float16, bfloat16, float32 and float64 (``h``-prefixed 16-bit functions, ``...f`` float32, plain float64), the
fast-math float32 intrinsics (``__expf``, ``__fdividef``, ...) and the integer ones (``__clz``).

Rounding follows the hardware's functions: a 16-bit function (``cuda_fp16.hpp``/``cuda_bf16.hpp``, and TVM's
header for the ones CUDA lacks) widens its argument to float32, computes in float32 and rounds once to the 16-bit
type (round to nearest even); here the float32 value is numpy's (at most 1 ulp of float32 from the exact one), the
GPU's an approximate instruction's (``ex2.approx``/``lg2.approx``: a few ulp of float32, with fix-ups at inputs
where that changed the 16-bit result). Both round the same float32 neighbourhood, so they differ by at most 1 ulp of
the 16-bit type, and only where the exact value lies within a few float32 ulp of a 16-bit rounding midpoint. float32
functions compute in float32 (CUDA's documented bounds: 0 ulp for ``sqrtf``, 1 for ``log2f``/``logf``, 2 for
``expf``/``exp2f``); ``erf`` and ``exp10``, which numpy has no float32 ufunc for, compute in float64 and round once.
"""

from __future__ import annotations

import math

import numpy as np

from . import _values as V
from ._errors import NotModelled


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


def _exp10(x):
    return np.power(10.0, np.asarray(x, np.float64))


def _clz(width):
    def count(x):
        bits = np.asarray(x).astype({32: np.uint32, 64: np.uint64}[width])
        return np.vectorize(lambda v: width - int(v).bit_length(), otypes=[np.int32])(bits)
    return count


# C name -> function of numpy arrays (16-bit arguments arrive widened to float32)
_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "exp10": _exp10, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "erf": _erf,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "nearbyint": np.rint, "rint": np.rint,
    "fabs": np.abs,
}
_BINARY = {
    "pow": np.power, "fmod": np.fmod, "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign,
    "nextafter": np.nextafter, "fmax": np.fmax, "fmin": np.fmin,
    "ldexp": lambda x, e: np.ldexp(x, np.asarray(e).astype(np.int32)),
}
# the 16-bit functions cuda_fp16.h / cuda_bf16.h (or TVM's CUDA header: hpow, htan, hatan, herf) define
_HALF = ("exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "atan",
         "erf", "floor", "ceil", "trunc", "rint", "pow")
# CUDA's fast-math float32 intrinsics (the same functions, with looser documented bounds on a GPU)
_FAST = ("exp", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "pow")

EXTERNS: dict[str, object] = {}
for _name, _fn in {**_UNARY, **_BINARY}.items():
    EXTERNS[_name] = _fn            # float64
    EXTERNS[_name + "f"] = _fn      # float32
for _name in _HALF:
    EXTERNS["h" + _name] = {**_UNARY, **_BINARY}[_name]
for _name in _FAST:
    EXTERNS["__" + _name + "f"] = {**_UNARY, **_BINARY}[_name]
EXTERNS.update({
    "hrcp": lambda x: 1 / x, "__habs": np.abs, "__hmax": np.maximum, "__hmin": np.minimum,
    "__fdividef": np.divide, "max": np.maximum, "min": np.minimum,
    "__clz": _clz(32), "__clzll": _clz(64),
})

# names TVM's CUDA rules emit for 16-bit types that no CUDA header defines: nvcc rejects such a kernel, so the
# interpreter refuses it too rather than run what no GPU can
UNDEFINED = {
    "hcosh": "cosh", "hsinh": "sinh", "hnearbyint": "nearbyint (round)", "hfmod": "fmod",
}

_WIDE = {np.dtype(np.float16), np.dtype(V.numpy_dtype("bfloat16"))}


def call(name, values, result_dtype):
    """The value of extern function ``name`` on ``values`` (numpy arrays), as ``result_dtype``."""
    if name in UNDEFINED:
        raise NotModelled(f"extern function {name}: TVM emits it for a 16-bit {UNDEFINED[name]}, but neither "
                          f"cuda_fp16.h, cuda_bf16.h nor TVM's CUDA header defines it (nvcc rejects the kernel); "
                          f"compute in float32")
    fn = EXTERNS.get(name)
    if fn is None:
        raise NotModelled(f"extern function {name}")
    args = [np.asarray(v).astype(np.float32) if np.asarray(v).dtype in _WIDE else np.asarray(v) for v in values]
    with np.errstate(all="ignore"):   # inf, nan and division by zero are values here, as on the GPU
        out = np.asarray(fn(*args))
    target = V.numpy_dtype(result_dtype)
    if out.dtype == np.float64 and target in _WIDE:
        out = out.astype(np.float32)   # 16-bit functions compute in float32, then round once
    return V.convert(out, result_dtype)
