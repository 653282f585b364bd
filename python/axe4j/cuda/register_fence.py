"""A compiler fence on accumulator registers after ``wgmma.wait_group``.

wgmma writes its accumulator registers asynchronously; they hold the result only after the ``wgmma.wait_group``
that retires the group. The inline-asm form of the wait names no registers, so nothing ties a later read of an
accumulator to it, and ptxas (CUDA 13.0) was seen to move one such read above the wait: the persistent Hopper GEMM
with 128x256 tiles converted its last accumulator pair (``F2FP ... R151, R150``) before ``WARPGROUP.DEPBAR.LE gsb0,
0x0`` and stored that pair without its last K tile (523,252 wrong outputs of 33,554,432 on an H200). An empty asm
that reads and writes each register (``"+f"``, by reference) after the wait gives every later read a definition
that the wait precedes. ``HELPER`` and ``SOURCE`` serve both lanes (this module imports no TVM until a function
builds a call).
"""

from __future__ import annotations

HELPER = "axe4j_fence_register_f32"
SOURCE = f"""
__forceinline__ __device__ void {HELPER}(float& reg) {{
  asm volatile("" : "+f"(reg) :: "memory");
}}
"""


def fence(register):
    """The fence of one float32 register (a load of a thread-local buffer element)."""
    from tvm.backend.cuda.op import cuda_func_call

    return cuda_func_call(HELPER, register, source_code=SOURCE)


def fence_registers(buffer, count: int) -> None:
    """Statements fencing the first ``count`` registers of the thread-local float32 ``buffer`` (its storage, in
    register order); call inside TVMScript construction, after the wait."""
    from tvm.script import tirx as T
    from tvm.tirx.layout import S, TileLayout

    flat = buffer.local(count, layout=TileLayout(S[(count,)]))
    for i in range(count):
        T.evaluate(fence(flat[i]))
