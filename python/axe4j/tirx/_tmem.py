"""A tensor-memory tile at an allocated address, for a kernel of the new TIRx lane.

tvm_tirx 0.1.0a4's ``T.tmem(...)`` reserves a local array rather than tensor memory, so a kernel allocates tensor
memory itself (``tcgen05.alloc`` into a shared word, ``tcgen05.relinquish_alloc_permit``, a CTA sync, and at the end
``tcgen05.dealloc``) and declares its tile at the address the allocation wrote:
``C_tmem = Ax.tmem_tensor(slot[0], (128, n), "float32", layout)``. The declaration is tvm_tirx's own
``tirx.cuda.decl_tmem`` (the tensor's data pointer holds the 32-bit address: lane << 16 | column), which its
``tcgen05`` patterns read back.
"""

from __future__ import annotations


def tmem_tensor(address, shape, dtype: str, layout):
    """The tmem tensor of ``shape`` and ``dtype`` whose element (0, ...) is at tensor-memory ``address`` (a uint32
    expression), with ``layout`` (TLane/TCol axes)."""
    import tvm_tirx
    import tvm_tirx.tirx.script.ir_builder as builder
    from tvm_tirx.tirx.script.ir_builder.parser_protocol import bind_

    if str(getattr(address, "dtype", getattr(getattr(address, "ty", None), "dtype", ""))) not in ("uint32", "int32"):
        raise TypeError(f"tmem_tensor: the address {address} must be a 32-bit integer (tcgen05.alloc's word)")
    ty = builder.Tensor(tuple(shape), dtype, scope="tmem", layout=layout)
    return bind_(tvm_tirx.ir.Call("tirx.cuda.decl_tmem", [address], ty_args=[ty]))
