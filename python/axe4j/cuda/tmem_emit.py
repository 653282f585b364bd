"""``cuda-tcgen05-ldst`` plans as PrimFuncs: tensor memory <-> a warpgroup's registers with ``tcgen05.ld`` /
``tcgen05.st`` (``.32x32b``).

Every thread of the warpgroup issues the plan's ``count`` instructions; instruction i moves ``num`` 32-bit columns
starting at tensor-memory column ``column + i * num`` of the thread's lane (warp w reaches lanes 32w..32w+31) to the
thread's registers ``slot + i * num ..`` (or back). The tensor-memory address is the buffer's allocated address with
the column added (``T.cuda.get_tmem_addr``: lane << 16 | column; the lane part stays 0, the warp selects its lanes).
Completion (``tcgen05.wait::ld`` / ``::st``) is the kernel's.
"""

from __future__ import annotations

from tvm.script import tirx as T

from .._registry import emits


@emits("cuda-tcgen05-ldst")
def emit(request, plan):
    """The PrimFunc of a typed ``cuda-tcgen05-ldst`` plan (``axe4j.plan_types``)."""
    from tvm.tirx.layout import S, TileLayout

    reg, tmem = request.buffers[plan.register], request.buffers[plan.tmem]
    chain = f"tcgen05.{plan.direction}.sync.aligned.32x32b.x{plan.num}.b32"

    def whole():
        slots = reg.local(plan.registers, layout=TileLayout(S[(plan.registers,)]))
        base = T.uint32(tmem.allocated_addr[0])
        for i in range(plan.count):
            column = plan.column + i * plan.num
            addr = base if column == 0 else T.cuda.get_tmem_addr(base, 0, column)
            regs = [slots[plan.slot + i * plan.num + j] for j in range(plan.num)]
            if plan.direction == "ld":
                T.evaluate(T.ptx[chain](*regs, addr))
            else:
                T.evaluate(T.ptx[chain](addr, *regs))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl
