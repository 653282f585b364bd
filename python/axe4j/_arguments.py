"""Arguments of a compiled kernel: errors a caller can act on, and numpy arrays made safe to pass.

TVM's compiled CPU kernels use aligned vector loads on tensor data and do not check the alignment (TVM's allocator
gives 64 bytes); numpy guarantees 16, so a numpy array passed as it is can make the kernel fault and kill the
process. ``ShapeCheckedExecutable`` passes a C-contiguous numpy array whose data is not 64-byte aligned as an aligned
copy and copies it back after the call (the kernel may have written it).

TVM's generated host code checks a tensor argument's strides against the expected compact shape before it checks
the shape, so a tensor of the wrong shape is reported as ``Mismatched A.strides ... expected to be compact array``.
``ShapeCheckedExecutable`` (what ``axe4j.compile`` returns) re-raises such an error, and TVM's other argument errors,
with the expected and the given shape and dtype of the argument it names.
"""

from __future__ import annotations

import re

import numpy as np
from tvm.runtime import Executable

ALIGNMENT = 64   # bytes: what TVM's allocator gives and its kernels assume

_ARGUMENT = re.compile(r"on argument #(\d+) when calling:\s*`\w+\((.*)\)`", re.S)
_PARAM = re.compile(r"(\w+): Tensor\(\[([^\]]*)\], (\w+)\)")


def _shape_and_dtype(value) -> tuple[tuple[int, ...], str] | None:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return None
    return tuple(int(d) for d in shape), str(dtype)


def explain_argument_error(error: Exception, args) -> Exception | None:
    """A clearer error for TVM's error about argument ``#i`` when that argument's shape or dtype is not the one the
    kernel declares (``TypeError`` for a dtype, as TVM raises, else ``ValueError``); None for anything else."""
    found = _ARGUMENT.search(str(error))
    if not found:
        return None
    index = int(found.group(1))
    params = _PARAM.findall(found.group(2))
    if index >= len(params) or index >= len(args):
        return None
    name, shape_text, dtype = params[index]
    expected = tuple(int(d) for d in shape_text.split(",") if d.strip())
    given = _shape_and_dtype(args[index])
    if given is None:
        return None
    if given == (expected, dtype):
        if "strides" not in str(error):
            return None
        return ValueError(f"argument #{index} ({name}): shape {list(expected)} and dtype {dtype} match, but the array "
                          f"is not compact row-major (C-contiguous); pass a contiguous copy "
                          f"(numpy.ascontiguousarray)\nTVM's check: {error}")
    kind = TypeError if given[1] != dtype else ValueError
    return kind(f"argument #{index} ({name}): expected shape {list(expected)} {dtype}, given "
                f"{list(given[0])} {given[1]}\nTVM's check: {error}")


def aligned(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` whose data starts at a multiple of ``ALIGNMENT`` bytes."""
    raw = np.empty(array.nbytes + ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    copy = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


class ShapeCheckedExecutable(Executable):
    """TVM's ``Executable``; a call whose tensor argument has the wrong shape or dtype raises an error naming the
    argument with the expected and given shape and dtype, and misaligned numpy arrays go through aligned copies."""

    def __call__(self, *args, **kwargs):
        args = list(args)
        moved = []
        for i, value in enumerate(args):
            if (isinstance(value, np.ndarray) and value.flags.c_contiguous and value.size
                    and value.ctypes.data % ALIGNMENT):
                moved.append((i, value))
                args[i] = aligned(value)
        try:
            result = super().__call__(*args, **kwargs)
        except (ValueError, TypeError) as error:
            clearer = explain_argument_error(error, args)
            if clearer is None:
                raise
            raise clearer from error
        for i, original in moved:
            if original.flags.writeable:
                original[...] = args[i]
        return result
