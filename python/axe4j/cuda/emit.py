"""CUDA plans (``cuda-affine``, ``cuda-digits``) as PrimFuncs: element-wise work shared by the scope's threads.

Thread t of T takes chunks ``t, t + T, ...`` of the region's loop nest (innermost loop last); a chunk is ``vec``
consecutive elements of the innermost loop, read and written as one vector access (a ramp of ``vec`` lanes,
which TVM's CUDA code generator emits as one 16/8/4-byte load or store). The chunk index c is split into the
loop counters by ``(c * vec / below_l) mod extent_l`` (below_l: the product of the extents inside loop l), and
each operand's address is ``base + sum_l counter_l * stride_l``. The digits plan does the same with one
element per chunk and addresses from the layouts' digits. The reduce plan gives thread t the outputs
``t, t + T, ...`` of the kept loops; each folds the reduced loops into a one-element register buffer, then
stores once (``init``: from the identity, else from the destination's value: ``accum``). The tree-reduce plan
gives output ``t // G`` (``+ T // G`` per round) to a group of G consecutive threads: each folds terms
``t % G, t % G + G, ...``, log2(G) butterfly shuffles (``shfl.sync.bfly``, width G) combine the group, and the
group's first thread stores.
"""

from __future__ import annotations

from tvm import tirx
from tvm.script import tirx as T

from . import register_fence
from .._emit import (_base_last, _combine, _digit_address, _digit_views, _flat_views, _identity, _source_count, _sources,
                     _span, _spans, _store_replicas, _value, guarded, operand_bases)
from .._registry import emits

# Threads of a scope, as a divisor of the CTA's flat thread index threadIdx.x (TIRx launches 1-D CTAs): a warp's
# lane is tx % 32, a warpgroup's thread tx % 128. Read from tx, the index needs no scope-id declaration in the
# kernel header beyond T.thread_id.
_SCOPE_THREADS = {"warp": 32, "warpgroup": 128}


def thread_index(scope: str, sctx, threads: int):
    if threads == 1 or scope == "thread":
        return 0
    tx = sctx.launch_params["threadIdx.x"].var
    width = _SCOPE_THREADS.get(scope)
    return tx if width is None else tirx.floormod(tx, width)


@emits("cuda-affine", "cuda-digits", "cuda-reduce", "cuda-tree-reduce", "cuda-ldstmatrix", "cuda-mma", "cuda-wgmma",
       "cuda-tcgen05")
def emit(request, plan):
    """The PrimFunc of a typed CUDA plan (``axe4j.plan_types``)."""
    if plan.kind == "cuda-affine":
        return _emit_affine(request, plan)
    if plan.kind == "cuda-reduce":
        return _emit_reduce(request, plan)
    if plan.kind == "cuda-tree-reduce":
        return _emit_tree_reduce(request, plan)
    if plan.kind == "cuda-ldstmatrix":
        return _emit_ldstmatrix(request, plan)
    if plan.kind == "cuda-mma":
        return _emit_mma(request, plan)
    if plan.kind == "cuda-wgmma":
        return _emit_wgmma(request, plan)
    if plan.kind == "cuda-tcgen05":
        return _emit_tcgen05(request, plan)
    return _emit_digits(request, plan)


def _counters(flat, loops):
    """Loop counters (outer first) of the flat element index ``flat`` of a row-major walk of ``loops``."""
    out = []
    below = 1
    for loop in reversed(loops):
        extent = loop.extent
        out.append(tirx.floormod(tirx.floordiv(flat, below), extent) if below > 1 else tirx.floormod(flat, extent))
        below *= extent
    return list(reversed(out))


def _swizzle(addr, swizzle):
    """CuTe's Swizzle<B,M,S> of an element address (see org.axe4j.layout.Swizzle)."""
    if swizzle is None:
        return addr
    bits, base, shift = (int(x) for x in swizzle)
    mask = ((1 << bits) - 1) << base
    if shift >= 0:
        return tirx.bitwise_xor(addr, tirx.bitwise_and(tirx.shift_right(addr, shift), mask))
    return tirx.bitwise_xor(addr, tirx.shift_left(tirx.bitwise_and(addr, mask), -shift))


def _swizzled_span(span, swizzle):
    """A swizzle only flips bits below M + max(S, 0) + B: round the view up to that block."""
    if swizzle is None:
        return span
    bits, base, shift = (int(x) for x in swizzle)
    block = 1 << (base + abs(shift) + bits)
    return -(-span // block) * block


def _emit_affine(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    loops = plan.loops
    access = plan.access
    threads, vec, chunks, rounds = plan.threads, plan.vec, plan.chunks, plan.rounds
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))
    scope = request.scope
    inner = loops[-1] if loops else None

    def address(role, counters):
        addr = bases[role].base_expr
        for loop, c in zip(loops, counters):
            stride = loop.strides[role]
            if stride:
                addr = addr + c * stride
        return addr

    def chunk(views, c):
        counters = _counters(c * vec, loops) if loops else []
        # chunk start addresses bound to variables first: a vector access then has a plain ramp base, which TVM's
        # CUDA code generator turns into one 16/8/4-byte load or store (a swizzle expression inside the ramp
        # would be split into element accesses)
        starts = {}
        for kind, what in slots:
            if kind == "tensor" and what not in starts:
                start = _swizzle(address(what, counters), access[what].swizzle)
                if vec > 1 and access[what].swizzle and inner.strides[what] == 1:
                    # the plan keeps swizzled chunks vec-aligned; written as (x // vec) * vec, the alignment is
                    # visible to TVM's code generator, which otherwise splits the load into element loads
                    start = tirx.floordiv(start, vec) * vec
                starts[what] = T.bind(start)
        addr = address("dst", counters)
        swz = access["dst"].swizzle
        targets = [T.bind(_swizzle(addr + r if r else addr, swz)) if (swz or r) else addr
                   for r in _base_last(access["dst"].replicas)]
        with T.vectorized(vec) as j:
            values = []
            for kind, what in slots:
                if kind == "scalar":
                    values.append(what)
                else:
                    step = inner.strides[what] if inner is not None else 0
                    values.append(views[what][starts[what] + j * step])
            value = _value(request.op, str(dst.dtype), values)
            for target in targets:
                T.buffer_store(views["dst"], value, [target + j])

    def whole():
        spans = {role: _swizzled_span(_span(access[role], bases[role].span_base, loops, role), access[role].swizzle)
                 for role in request.buffers}
        views = _flat_views(request, spans)
        tid = thread_index(scope, request.sctx, threads)
        with T.serial(rounds) as f:
            c = f * threads + tid
            if chunks % threads == 0:
                chunk(views, c)
            else:
                with T.If(c < chunks):
                    with T.Then():
                        chunk(views, c)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_digits(request, plan):
    operands = plan.operands
    extents = list(plan.extents)
    threads, rounds = plan.threads, plan.rounds
    elements = 1
    for e in extents:
        elements *= e
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))

    def coordinate(role, flat):
        start, _ = request.regions[role]
        coord = list(start)
        below = 1
        for dim, extent in reversed(list(zip(operands[role].dims, extents))):
            coord[dim] = coord[dim] + tirx.floormod(tirx.floordiv(flat, below), extent)
            below *= extent
        return coord

    def element(views, flat):
        values = [what if kind == "scalar" else views[what][_digit_address(operands[what], coordinate(what, flat))]
                  for kind, what in slots]
        _store_replicas(views["dst"], operands["dst"], _value(request.op, str(dst.dtype), values),
                         _digit_address(operands["dst"], coordinate("dst", flat)))

    def whole():
        views = _digit_views(request, operands)
        tid = thread_index(request.scope, request.sctx, threads)
        with T.serial(rounds) as f:
            flat = f * threads + tid
            if elements % threads == 0:
                element(views, flat)
            else:
                with T.If(flat < elements):
                    with T.Then():
                        element(views, flat)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_reduce(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    kept, folded, access = list(plan.kept), list(plan.folded), plan.access
    threads, outputs, rounds = plan.threads, plan.outputs, plan.rounds
    combine = plan.combine
    dst = request.buffers["dst"]
    dtype = str(dst.dtype)

    def address(role, loops, counters, base):
        addr = base
        for loop, c in zip(loops, counters):
            stride = loop.strides[role]
            if stride:
                addr = addr + c * stride
        return addr

    def output(views, o):
        counters = _counters(o, kept) if kept else []
        d_addr = address("dst", kept, counters, bases["dst"].base_expr)
        s_base = address("src0", kept, counters, bases["src0"].base_expr)
        acc = T.decl_buffer((1,), dtype, scope="local", layout=None)
        start = _identity(combine, dtype) if plan.init else views["dst"][d_addr]
        T.buffer_store(acc, start, [0])

        def fold(loops, counters):
            if loops:
                with T.serial(loops[0].extent) as i:
                    fold(loops[1:], counters + [i])
                return
            value = views["src0"][address("src0", folded, counters, s_base)]
            value = value if str(value.ty) == dtype else tirx.Cast(dtype, value)
            T.buffer_store(acc, _combine(combine, acc[0], value), [0])

        fold(folded, [])
        T.buffer_store(views["dst"], acc[0], [d_addr])

    def whole():
        loops = kept + folded
        views = _flat_views(request, _spans(request, access, bases, loops))
        tid = thread_index(request.scope, request.sctx, threads)
        with T.serial(rounds) as f:
            o = f * threads + tid
            if outputs % threads == 0:
                output(views, o)
            else:
                with T.If(o < outputs):
                    with T.Then():
                        output(views, o)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_tree_reduce(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    kept, folded, access = list(plan.kept), list(plan.folded), plan.access
    threads, outputs, rounds = plan.threads, plan.outputs, plan.rounds
    group, terms = plan.group, plan.terms
    warps_per_group = plan.warps_per_group
    combine = plan.combine
    dtype = str(request.buffers["dst"].dtype)
    per_round, per_thread = threads // group, -(-terms // group)

    def address(role, loops, counters, base):
        addr = base
        for loop, c in zip(loops, counters):
            stride = loop.strides[role]
            if stride:
                addr = addr + c * stride
        return addr

    def both(a, b):
        return b if a is None else a if b is None else tirx.And(a, b)

    def butterfly(acc, width):
        # every lane of the warp reaches the shuffles (lanes without an output carry the identity)
        mask = T.tvm_warp_activemask()
        step = 1
        while step < width:
            T.buffer_store(acc, _combine(combine, acc[0], T.tvm_warp_shuffle_xor(mask, acc[0], step, width, 32)),
                           [0])
            step *= 2

    def whole():
        views = _flat_views(request, _spans(request, access, bases, kept + folded))
        tid = thread_index(request.scope, request.sctx, threads)
        part, slot = tirx.floormod(tid, group), tirx.floordiv(tid, group)
        acc = T.decl_buffer((1,), dtype, scope="local", layout=None)
        scratch = (T.alloc_buffer((threads // 32,), dtype, scope="shared", layout=None)
                   if warps_per_group > 1 else None)
        with T.serial(rounds) as f:
            o = f * per_round + slot
            has_output = None if outputs % per_round == 0 else o < outputs
            counters = _counters(o, kept) if kept else []
            d_addr = address("dst", kept, counters, bases["dst"].base_expr)
            s_base = address("src0", kept, counters, bases["src0"].base_expr)
            T.buffer_store(acc, _identity(combine, dtype), [0])
            with T.serial(per_thread) as i:
                k = i * group + part

                def fold():
                    value = views["src0"][address("src0", folded, _counters(k, folded), s_base)]
                    value = value if str(value.ty) == dtype else tirx.Cast(dtype, value)
                    T.buffer_store(acc, _combine(combine, acc[0], value), [0])

                guarded(both(has_output, None if terms % group == 0 else k < terms), fold)
            butterfly(acc, min(group, 32))
            if warps_per_group > 1:
                # lane 0 of each warp leaves its warp's partial; the group's first warp combines them
                warp, lane = tirx.floordiv(tid, 32), tirx.floormod(tid, 32)
                guarded(lane == 0, lambda: T.buffer_store(scratch, acc[0], [warp]))
                T.evaluate(T.cuda.cta_sync())
                first_warp = tirx.floormod(warp, warps_per_group) == 0
                T.buffer_store(acc, tirx.Select(lane < warps_per_group,
                                                scratch[tirx.Min(warp + lane, threads // 32 - 1)],
                                                _identity(combine, dtype)), [0])
                butterfly(acc, warps_per_group)

                def store_first_warp():
                    value = acc[0] if plan.init else _combine(combine, views["dst"][d_addr], acc[0])
                    T.buffer_store(views["dst"], value, [d_addr])

                guarded(both(both(first_warp, lane == 0), has_output), store_first_warp)
                T.evaluate(T.cuda.cta_sync())  # the scratch is read before the next round writes it
                return

            def store():
                value = acc[0] if plan.init else _combine(combine, views["dst"][d_addr], acc[0])
                T.buffer_store(views["dst"], value, [d_addr])

            guarded(both(part == 0, has_output), store)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_ldstmatrix(request, plan):
    """One ldmatrix/stmatrix per group of blocks: lane l points at row l % 8 of the group's block l // 8 (in warp w of
    a warpgroup, ``w * warp_stride`` further; swizzled: at swz(address)); the registers are the lane's 32-bit words of
    its fragment (two 16-bit elements each)."""
    from tvm.tirx.layout import S, TileLayout

    reg, smem = request.buffers[plan.register], request.buffers[plan.shared]
    num, row_stride, registers = plan.num, plan.row_stride, plan.registers
    groups = plan.groups
    chain = f"{plan.direction}matrix.sync.aligned.m8n8.x{num}.shared.b16"
    span = max(b for g in groups for b in g.bases) + 7 * row_stride + 8 + (plan.warps - 1) * plan.warp_stride

    def block_base(bases, k):
        out = tirx.const(bases[-1], "int32")
        for i in range(len(bases) - 2, -1, -1):
            out = tirx.Select(k == i, tirx.const(bases[i], "int32"), out)
        return out

    from .._emit import run_time_offset, run_time_reach

    starts, extents = request.regions[plan.shared]   # run-time starts (a warp's rows, a stage)
    offset = run_time_offset(plan, starts)
    span = _swizzled_span(span + run_time_reach(plan, [int(n) for n in smem.shape], extents), plan.swizzle)

    def whole():
        view = T.decl_buffer((span,), smem.dtype, data=smem.data, scope=smem.scope(), layout=None)
        lane = tirx.floormod(request.sctx.launch_params["threadIdx.x"].var, 32)
        words = reg.local(registers, layout=TileLayout(S[(registers,)])).view("uint32")
        if plan.warps > 1:   # the warp of the warpgroup: (tx % 128) / 32
            warp = tirx.floordiv(tirx.floormod(request.sctx.launch_params["threadIdx.x"].var, 128), 32)
            offset_of_warp = offset + warp * plan.warp_stride
        else:
            offset_of_warp = offset
        for group in groups:
            k = tirx.floormod(tirx.floordiv(lane, 8), num)
            addr = offset_of_warp + block_base(group.bases, k) + tirx.floormod(lane, 8) * row_stride
            ptr = view.ptr_to([_swizzle(addr, plan.swizzle)])
            regs = [words[w] for w in group.words]
            if plan.direction == "ld":
                T.evaluate(T.ptx[chain](*regs, ptr))
            else:
                T.evaluate(T.ptx[chain](ptr, *regs))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_mma(request, plan):
    """One ``mma.sync`` per (i, j, k) block in plan order, accumulating in place in D's registers (c = d); each
    output block first set from C's registers or zero. A and B reach the instruction as 32-bit words (two 16-bit
    elements each), D and C as f32 registers, all at the slots the plan names."""
    from tvm.tirx.layout import S, TileLayout

    counts = {role: getattr(plan.registers, role) for role in plan.registers.FIELDS}   # D, A, B, C
    same_c = request.buffers["C"].same_as(request.buffers["D"])

    def whole():
        flat = {role: request.buffers[role].local(n, layout=TileLayout(S[(n,)])) for role, n in counts.items()}
        d = flat["D"]
        c = d if same_c else flat["C"]
        a, b = flat["A"].view("uint32"), flat["B"].view("uint32")
        for tile in plan.tiles:
            for ds, cs in zip(tile.d, tile.c):
                if plan.init == "zero":
                    T.buffer_store(d, tirx.const(0.0, "float32"), [ds])
                elif not (same_c and ds == cs):
                    T.buffer_store(d, c[cs], [ds])
            regs = [d[x] for x in tile.d]
            for step in tile.steps:
                T.evaluate(T.ptx[plan.instruction](*regs, *[a[w] for w in step.a],
                                                   *[b[w] for w in step.b], *regs))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_wgmma(request, plan):
    """wgmma.fence; per output block and K step one ``wgmma.mma_async`` reading A and B through shared-memory matrix
    descriptors (encoded from the plan's start, LBO, SBO and swizzle mode); commit the group and wait for it."""
    from tvm.tirx.layout import S, TileLayout

    count = plan.registers
    c_buf = request.buffers["C"]

    def descriptor_views(entry):
        buf = request.buffers[entry.role]
        return T.decl_buffer((1,), buf.dtype, data=buf.data, scope=buf.scope(), layout=None, elem_offset=0)

    def run_time_offset(entry):
        """Elements added by the region's run-time starts (a pipeline stage, a warpgroup's rows)."""
        from .._emit import run_time_offset

        return run_time_offset(entry, request.regions[entry.role][0])

    def whole():
        acc = c_buf.local(count, layout=TileLayout(S[(count,)]))
        views = {"A": descriptor_views(plan.A), "B": descriptor_views(plan.B)}
        offsets = {"A": run_time_offset(plan.A), "B": run_time_offset(plan.B)}
        desc = T.decl_buffer((2,), "uint64", scope="local", layout=None)
        if plan.proxy_fence:
            # wgmma reads shared memory through the async proxy: order the threads' generic stores before it
            T.evaluate(T.ptx.fence.proxy.async_.shared__cta())
        T.evaluate(T.ptx["wgmma.fence.sync.aligned"]())
        for tile in plan.tiles:
            regs = [acc[x] for x in tile.d]
            for kk, step in enumerate(tile.steps):
                for slot, (role, entry, start) in enumerate((("A", plan.A, step.a), ("B", plan.B, step.b))):
                    T.evaluate(T.cuda.wgmma.encode_matrix_descriptor(
                        T.address_of(desc[slot]), views[role].ptr_to([offsets[role] + start]),
                        entry.lbo,
                        entry.sbo,
                        entry.swizzle))
                scale_d = 1 if (plan.accum or kk > 0) else 0
                # scale-a, scale-b 1; the transpose immediates (0: K-major) exist for 16-bit types only
                immediates = (1, 1) if ".e4m3" in plan.instruction or ".e5m2" in plan.instruction else (1, 1, 0, 0)
                T.evaluate(T.ptx[plan.instruction](*regs, desc[0], desc[1], tirx.const(scale_d, "int32") != 0,
                                                   *immediates))
        T.evaluate(T.ptx["wgmma.commit_group.sync.aligned"]())
        T.evaluate(T.ptx["wgmma.wait_group.sync.aligned"](plan.wait))
        if plan.wait == 0:
            # the accumulators are final: keep the compiler from reading them before the wait
            for x in range(count):
                T.evaluate(register_fence.fence(acc[x]))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _shared_views_and_offsets(request, plan):
    """A 1-element view of A's and B's data (pointers for the descriptors) and the elements their regions' run-time
    starts add (a pipeline stage, a warpgroup's rows)."""
    views, offsets = {}, {}
    for role, entry in (("A", plan.A), ("B", plan.B)):
        buf = request.buffers[entry.role]
        views[role] = T.decl_buffer((1,), buf.dtype, data=buf.data, scope=buf.scope(), layout=None, elem_offset=0)
        from .._emit import run_time_offset

        offsets[role] = run_time_offset(entry, request.regions[entry.role][0])
    return views, offsets


def _emit_tcgen05(request, plan):
    """Per N block and K step: encode A's and B's shared-memory descriptors (tcgen05 form) and issue one
    ``tcgen05.mma.cta_group::1.kind::f16`` (``cta_group::2`` over a CTA pair) into tensor memory at the buffer's
    address plus the block's column, with
    the plan's instruction descriptor; at warp scope one elected lane issues. Completion is the caller's
    (``tcgen05.commit`` to an mbarrier)."""
    c_buf = request.buffers["C"]
    if c_buf.allocated_addr is None or len(c_buf.allocated_addr) == 0:
        raise ValueError(f"gemm_async: tensor-memory buffer {c_buf.name} has no allocated address "
                         "(allocate it with TMEMPool or decl_buffer(..., allocated_addr=...))")
    base = c_buf.allocated_addr[0]
    idesc = tirx.const(plan.idesc, "uint32")

    def issue():
        views, offsets = _shared_views_and_offsets(request, plan)
        desc = T.decl_buffer((2,), "uint64", scope="local", layout=None)
        if plan.proxy_fence:
            # tcgen05.mma reads shared memory through the async proxy: order generic stores before it
            T.evaluate(T.ptx.fence.proxy.async_.shared__cta())
        for tile in plan.tiles:
            d_addr = T.cast(base + tile.column, "uint32")
            for kk, step in enumerate(tile.steps):
                for slot, (role, entry, start) in enumerate((("A", plan.A, step.a), ("B", plan.B, step.b))):
                    T.evaluate(T.cuda.tcgen05.encode_matrix_descriptor(
                        T.address_of(desc[slot]), views[role].ptr_to([offsets[role] + start]),
                        entry.lbo, entry.sbo, entry.swizzle))
                accumulate = tirx.const(1 if (plan.accum or kk > 0) else 0, "int32") != 0
                # disable-output-lane: 4 x 32-bit lanes for cta_group::1, 8 for cta_group::2 (PTX ISA)
                lanes = [0] * (4 * plan.cta_group)
                T.evaluate(T.ptx[plan.instruction](d_addr, desc[0], desc[1], idesc, *lanes, accumulate))

    def whole():
        if plan.elect:
            with T.If(T.cuda.elect_sync() != T.uint32(0)):
                with T.Then():
                    issue()
        else:
            issue()

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl
