"""bfloat16 stores on the CPU, written as their uint16 bits.

On ``llvm`` TVM keeps bfloat16 in uint16 storage: ``BF16ComputeLegalize`` turns bfloat16 arithmetic into float32,
and ``BF16StorageLegalize`` retypes bfloat16 buffers to uint16. The second pass retypes loads, stores and
``reinterpret`` calls but not a ``Broadcast``: a vectorized loop that stores one value to every lane (a fill, a
stride-0 source, a reduction's initial value) becomes ``Broadcast(bfloat16 value)`` stored into a uint16 buffer,
which TVM rejects (``dtype mismatch on BufferStore``). The CPU emitters therefore store a bfloat16 destination
through a uint16 alias of its memory, with the value's bits: a loaded element's bits as they are, any other value
as float32 rounded once to the nearest bfloat16 (ties to even). The broadcast is then of uint16, and no bfloat16
expression reaches a store. (``reinterpret("uint16", x)`` of a bfloat16 expression cannot be used for a computed
value: ``BF16ComputeLegalize`` widens ``x`` to float32 inside the reinterpret and never rounds it back.)
"""

from __future__ import annotations

from tvm import tirx
from tvm.ir.expr import TensorLoad
from tvm.script import tirx as T

BITS = "uint16"


def is_bf16(dtype) -> bool:
    return str(dtype) == "bfloat16"


def bits_alias(view):
    """A uint16 buffer over ``view``'s memory, for the stores of a bfloat16 ``view`` (None for other dtypes)."""
    if not is_bf16(view.dtype):
        return None
    return T.decl_buffer(tuple(view.shape), BITS, data=view.data, scope=view.scope(), layout=None)


def rounded_bits(f32):
    """The bfloat16 nearest to float32 ``f32`` (ties to even) as uint16 bits: with u the float32 bits,
    ``(u + 0x7FFF + ((u >> 16) & 1)) >> 16``; a NaN keeps its sign and top mantissa bits and is made quiet."""
    u = tirx.reinterpret("uint32", f32)
    rounded = (u + tirx.const(0x7FFF, "uint32") + ((u >> tirx.const(16, "uint32")) & tirx.const(1, "uint32"))) \
        >> tirx.const(16, "uint32")
    quiet_nan = (u >> tirx.const(16, "uint32")) | tirx.const(0x40, "uint32")
    return tirx.Cast(BITS, tirx.Select(tirx.isnan(f32), quiet_nan, rounded))


def bits_of(value):
    """uint16 bits of bfloat16 ``value``: a load's bits unchanged; anything else through float32, rounded once (a
    ``Cast`` to bfloat16 from float32 rounds its float32 operand directly)."""
    if isinstance(value, TensorLoad) and is_bf16(value.ty):
        return tirx.reinterpret(BITS, value)
    if isinstance(value, tirx.Cast) and str(value.value.ty) == "float32":
        return rounded_bits(value.value)
    if isinstance(value, tirx.FloatImm):
        return rounded_bits(tirx.const(float(value.value), "float32"))
    return rounded_bits(tirx.Cast("float32", value))


def store(view, alias, value, indices):
    """``view[indices] = value``, through ``alias`` (``bits_alias(view)``) with ``bits_of(value)`` for bfloat16."""
    if alias is None:
        T.buffer_store(view, value, indices)
    else:
        T.buffer_store(alias, bits_of(value), indices)
