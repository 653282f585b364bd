"""TVM dtypes as numpy dtypes, and the value conversions of PTX (``cvt``) the interpreter needs."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ._errors import NotModelled

_SCALARS = {
    "bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64, "bfloat16": ml_dtypes.bfloat16,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
}


def split(dtype) -> tuple[str, int]:
    """'float16x4' -> ('float16', 4); 'int32' -> ('int32', 1)."""
    text = str(dtype)
    if text == "handle" or text.startswith("handle"):
        return "handle", 1
    if "x" in text:
        base, _, lanes = text.rpartition("x")
        if lanes.isdigit() and base in _SCALARS:
            return base, int(lanes)
    return text, 1


def numpy_dtype(dtype) -> np.dtype:
    base, _ = split(dtype)
    if base not in _SCALARS:
        raise NotModelled(f"dtype {dtype} is not modelled")
    return np.dtype(_SCALARS[base])


def lanes(dtype) -> int:
    return split(dtype)[1]


def convert(values, dtype):
    """A value cast (TIR ``Cast``, C conversion): floats round to nearest even, float to int truncates toward zero."""
    target = numpy_dtype(dtype)
    values = np.asarray(values)
    if target == values.dtype:
        return values
    if np.issubdtype(target, np.integer) and not np.issubdtype(values.dtype, np.integer) and values.dtype != np.bool_:
        return np.trunc(values.astype(np.float64)).astype(target)
    if values.dtype in (np.dtype(ml_dtypes.bfloat16),) or target in (np.dtype(ml_dtypes.bfloat16),):
        return values.astype(np.float32).astype(target)
    return values.astype(target)


def bits(values, nbytes_dtype):
    """Reinterpret the bytes of each value as an unsigned integer of the same width."""
    values = np.ascontiguousarray(values)
    width = values.dtype.itemsize
    return values.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width])
