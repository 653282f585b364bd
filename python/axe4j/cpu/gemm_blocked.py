"""The ``gemm-blocked`` plan as a PrimFunc: a packed, cache-blocked GEMM around a register micro-kernel.

Names follow the plan: ``v`` is the accumulator's stride-1 dim (the vector dim), ``u`` the other one; the
operand that moves along v (B when v = n, A when v = m) is ``V``, the other ``U``. With ``mu x nv`` the
register tile and ``kc``/``mc`` the K and u block sizes::

    for each K block k0 (kc deep):
        pack V[k0 : k0+kc, all v] into panels Vp[p][k][nv]           (parallel over panels)
        for each u block (mc rows):                                     (parallel when parallel_over = u)
            pack U[block, k0 : k0+kc] into panels Up[q][k][mu]         (zero past the edge)
            for each v panel p, each u tile q:                          (p parallel when parallel_over = v)
                acc[mu][nv] = sum_k Up[q][k][i] * Vp[p][k][j]       (registers: unrolled i, vector j)
                D[u, v] = alpha * acc + (first block ? beta * C : D)

A V already stored as packed panels for this plan's ``kc`` and ``nv`` (``plan.packed_v``, its layout: logical
(k, v) with k = kb*kc + k', v = p*nv + j at ``((kb*panels + p)*kc + k')*nv + j``) is not packed: K block kb reads
the ``panels*kc*nv`` elements at ``kb*panels*kc*nv`` in place, as it would read Vp.

With ``plan.workers`` (parallel over v, or over u with a K block of V at most half of L2) the nest is one parallel
region::

    parallel for each worker w:      (min(workers, the calling thread's pool) runs of ceil(u_blocks / runs) blocks)
        for each K block k0:
            pack V[k0 : k0+kc, all v] into w's own panels                (serially: every worker packs all of V)
            for each u block of w's run: pack U, then the tiles as above

so no core waits for the others between K blocks, and every panel a core reads is in its own L2. Parallel over v
panels (one short u block) a worker takes a run of panels instead, packs only those (and U's short block), and the
last run also takes the ragged panel.

A run-time u extent (``plan.run_time_extent``, a ragged group of rows at most the region's bound) bounds the
u-block loop and the tile guards at run time; everything sized by it (views, panels) uses the bound.

Packing makes every micro-kernel read contiguous (whatever the operands' strides), the K block keeps a V
panel in L1 and a U block in L2, and the blocks of the last pass add to D, so alpha and beta apply once. The sizes
come from the target (``GemmBlocking`` in Java: 8 x 32 fp32 on AVX-512, 6 x 16 otherwise); an AVX-512 plan also
prefetches each D tile for writing as its K loop starts (``prefetch_d``).

The row kernel (``plan.kernel == "rows"``: at most one tile's worth of u rows, V stride-1 along v) packs
nothing and keeps no register tile::

    parallel for each chunk of nv columns (4 KiB of a float32 D row):
        D[u, chunk] = beta * C[u, chunk]                                   (every u)
        for each k0 in steps of k_rows:
            for each vector of columns j in the chunk:
                D[u, j] += sum_{k0 <= k < k0 + k_rows} alpha * U[u, k] * V[k, j]   (every u; k in order)

so all u rows use each V vector while it was just read (a float16 V is widened once for all rows).
"""

from __future__ import annotations

from tvm import tirx
from tvm.script import tirx as T

from .._emit import _base_last as base_last, _is_zero as is_zero, data_of, guarded, operand_bases
from .._registry import emits
from . import bf16


def prefetch_columns(row_stride: int, width: int, line: int, base=0) -> list[int]:
    """The columns of a D tile row (``width`` elements, rows ``row_stride`` elements apart from element ``base`` of
    an aligned allocation, ``line`` elements a cache line) whose lines the micro-kernel prefetches: one a line,
    ``min(j * line, width - 1)``, and one more where rows may start part way into a line (a row stride that is not a
    whole number of lines: N = 1000 fp32 rows start 32 bytes in every other row and span 3 lines, not 2; or a base
    off a line, or known only at run time), the last through the row's last element."""
    misaligned = row_stride % line or not isinstance(base, int) or base % line
    count = -(-width // line) + (1 if misaligned else 0)
    return [min(j * line, width - 1) for j in range(count)]


@emits("gemm-blocked")
def emit(request, plan):
    """The PrimFunc of a typed ``gemm-blocked`` plan (``axe4j.plan_types``)."""
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    access = plan.access
    M, N, K = plan.M, plan.N, plan.K
    d_dtype = str(request.buffers["D"].dtype)
    # the arithmetic's type: D's, except that a bfloat16 D accumulates in float32 and is rounded once where it is
    # stored, through its uint16 bits (axe4j.cpu.bf16: TVM's llvm lowering rejects a broadcast bfloat16 store)
    dtype = "float32" if bf16.is_bf16(d_dtype) else d_dtype
    alpha, beta = request.scalars["alpha"], request.scalars["beta"]
    use_c = not is_zero(beta)
    v_dim = plan.vector_dim
    u_dim = "m" if v_dim == "n" else "n"
    v_role, u_role = ("B", "A") if v_dim == "n" else ("A", "B")
    extent = {"m": M, "n": N, "k": K}
    EU, EV = extent[u_dim], extent[v_dim]
    mu, nv = plan.tile.u, plan.tile.v
    kc, mc = plan.blocks.k, plan.blocks.u
    k_blocks = -(-K // kc)
    u_blocks = -(-EU // mc)
    if plan.run_time_extent == u_dim:
        # a ragged u extent (rows of one expert's group): EU (the bound) sized the views and panels; the loops and
        # guards use the run-time value
        (EU,) = request.run_time_extents["D"].values()
        u_blocks = tirx.floordiv(EU + (mc - 1), mc)
    tiles_per_block = mc // mu
    full_panels, rest = divmod(EV, nv)
    panels = full_panels + (1 if rest else 0)
    over = plan.parallel_over
    outer = T.parallel if plan.parallel else T.serial           # V packing: whenever the plan is parallel
    u_loop = T.parallel if over == "u" else T.serial            # u blocks (each packs its own U panels)
    v_loop = T.parallel if over == "v" else T.serial            # v panels of a u block (one block: short u)
    lanes = plan.lanes                                           # the row kernel's vector width
    prefetch_d = plan.prefetch_d
    packed_v = plan.packed_v is not None                        # V is read in place as panels (no pack_v)
    k_rows = plan.k_rows if plan.k_rows is not None else 1      # row kernel: V rows added per pass over D
    # row kernel: a 16-bit V is widened once per column vector and bound for all rows; LLVM repeated vcvtph2ps for
    # every row otherwise (float16, 8 x 4096 x 4096: 41-75 -> 61-115 GFLOP/s, two runs). A float32 V is not bound (its
    # loads fold into the FMAs; binding ran 0.87-1.16x at 2, 4 and 8 rows). TVM's bfloat16 lowering miscompiles a bound
    # Cast of a bfloat16 (an int-to-float conversion of the raw bits) and rejects a bound raw one, so a bfloat16 is
    # widened by its bits where it is bound (load_bindable)
    def bindable(role):   # a bfloat16 only as float32 bits, and nothing bound for a bfloat16 D
        return not bf16.is_bf16(d_dtype) and (str(request.buffers[role].dtype) != "bfloat16" or dtype == "float32")

    bind_widened_v = str(request.buffers[v_role].dtype) in ("float16", "bfloat16") and bindable(v_role)

    def cast(v):
        return v if str(v.ty) == dtype else tirx.Cast(dtype, v)

    def const(v):
        return tirx.const(float(v.value), dtype) if hasattr(v, "value") else cast(v)

    def addr(role, **coords):
        a = access[role]
        out = bases[role].base_expr
        for name, value in coords.items():
            stride = int(getattr(a, name))   # the operand's stride along m, n or k
            if stride:
                out = out + value * stride
        return out

    spans = {}
    for role, dims in (("D", ("m", "n")), ("A", ("m", "k")), ("B", ("k", "n")), ("C", ("m", "n"))):
        spans[role] = bases[role].span_base \
            + sum((extent[d] - 1) * abs(getattr(access[role], d)) for d in dims) \
            + max([0, *access[role].replicas]) + 1
    if packed_v:   # whole panels of whole K blocks: K * EV elements from the base
        spans[v_role] = bases[v_role].span_base + K * EV

    def load(views, role, k, **coord):
        return cast(views[role][addr(role, k=k, **coord)])

    def pack_v(views, panel, k0, kext, panel_loop, p_range=None):
        """Vp[p][k][j] = V[k0 + k, p * nv + j]; the ragged last panel is zero past EV. ``p_range`` = (first full
        panel, count, the condition for the ragged one, None for always): one worker's share."""
        first_p, count_p, with_rest = p_range or (0, full_panels, None)
        if full_panels:
            with panel_loop(count_p) as i:
                p = first_p + i
                with T.serial(kext) as k:
                    with T.vectorized(nv) as j:
                        T.buffer_store(panel, load(views, v_role, k0 + k, **{v_dim: p * nv + j}),
                                       [(p * kc + k) * nv + j])
        if rest:
            guarded(with_rest, lambda: pack_rest(views, panel, k0, kext))

    def pack_rest(views, panel, k0, kext):
        """The ragged last panel: V's last ``rest`` columns, then zeros to ``nv``."""
        with T.serial(kext) as k:
            with T.vectorized(rest) as j:
                T.buffer_store(panel, load(views, v_role, k0 + k, **{v_dim: full_panels * nv + j}),
                               [(full_panels * kc + k) * nv + j])
            with T.vectorized(nv - rest) as j:
                T.buffer_store(panel, tirx.const(0, dtype), [(full_panels * kc + k) * nv + rest + j])

    def pack_u(views, panel, u_first, k0, kext):
        """Up[q][k][i] = U[u_first + q * mu + i, k0 + k], zero past EU (if_then_else does not load there)."""
        with T.serial(tiles_per_block) as q:
            with T.serial(kext) as k:
                with T.unroll(mu) as i:
                    u = u_first + q * mu + i
                    T.buffer_store(panel, tirx.if_then_else(u < EU, load(views, u_role, k0 + k, **{u_dim: u}),
                                                            tirx.const(0, dtype)), [(q * kc + k) * mu + i])

    def store(views, value, u, v):
        a = addr("D", **{u_dim: u, v_dim: v})
        for r in base_last(access["D"].replicas):
            bf16.store(views["D"], views["D bits"], value, [a + r if r else a])

    def write_tile(views, acc_row, u0, v0, first, i, j):
        u, v = u0 + i, v0 + j
        value = acc_row[j] if _is_one(alpha) else const(alpha) * acc_row[j]
        if first:
            if use_c:
                value = value + const(beta) * cast(views["C"][addr("C", **{u_dim: u, v_dim: v})])
        else:
            value = cast(views["D"][addr("D", **{u_dim: u, v_dim: v})]) + value
        store(views, value, u, v)

    def micro_kernel(views, u_panel, v_panel, v_offset, q, p, u0, v0, kext, first, width=nv):
        """The register tile at (u0, v0): mu rows of ``width`` columns (nv; the ragged last panel's columns rounded
        up to 8, the rest of its packed row left alone: N = 1000 computed 32 columns for its last 8)."""
        # one stack array per tile row, unrolled here: TVM lowers a "global" buffer to a stack array (which LLVM
        # keeps in registers) only under 1 KiB; an 8 x 32 fp32 tile is 1 KiB, became a workspace pointer, and
        # every FMA stored its accumulator back to memory (166 against 346 GFLOP/s at 1024^3 on 2 cores)
        acc = [T.decl_buffer((width,), dtype, scope="global", layout=None) for _ in range(mu)]
        line = 64 // (int("".join(ch for ch in d_dtype if ch.isdigit()) or 8) // 8)
        per_row = len(prefetch_columns(int(getattr(access["D"], u_dim)), width, line, bases["D"].base_expr))
        lines = mu * per_row
        for i in range(mu):
            with T.vectorized(width) as j:
                T.buffer_store(acc[i], tirx.const(0, dtype), [j])

        def step(k):
            for i in range(mu):
                with T.vectorized(width) as j:
                    T.buffer_store(acc[i], acc[i][j] + u_panel[(q * kc + k) * mu + i]
                                   * cast(v_panel[v_offset + (p * kc + k) * nv + j]), [j])

        if prefetch_d:
            # the D tile is read and written after the K loop; its rows are a row stride apart (often a page
            # each): ask for its cache lines, for writing, one every `spread` K steps over the first half of the K
            # block. All at once as the loop starts, the 16 requests of an 8 x 32 fp32 tile held the line-fill
            # buffers the first FMAs' loads needed (4096^3 on one core: 146 GFLOP/s; spread over the first 16
            # steps 156; over the first 128, one every 8: 164, OpenBLAS's rate; over all 256: 153)
            spread = max(1, kc // (2 * lines))
            head = tirx.min(lines, kext // spread)
            with T.serial(head) as l:
                # prefetch_columns(...)[l % per_row]: the row's line at element l * line, the last through its last
                T.evaluate(tirx.call_llvm_intrin("void", "llvm.prefetch.p0", tirx.address_of(
                    views["D"][addr("D", **{u_dim: u0 + l // per_row,
                                            v_dim: v0 + tirx.min(l % per_row * line, width - 1)})]), 1, 3, 1))
                for r in range(spread):
                    step(l * spread + r)
            with T.serial(kext - head * spread) as k:
                step(k + head * spread)
        else:
            with T.serial(kext) as k:
                step(k)
        with T.If(tirx.all(u0 + mu <= EU, v0 + width <= EV)):
            with T.Then():
                for i in range(mu):
                    with T.vectorized(width) as j:
                        write_tile(views, acc[i], u0, v0, first, i, j)
            with T.Else():
                for i in range(mu):
                    with T.serial(width) as j:
                        with T.If(tirx.all(u0 + i < EU, v0 + j < EV)):
                            with T.Then():
                                write_tile(views, acc[i], u0, v0, first, i, j)

    def k_block(views, kb, first, u_range=None, p_range=None):
        """K block ``kb``: V's panels (packed here unless ``packed_v``), then the u blocks: all of them (``u_loop``),
        or ``u_range`` = (first block, count) of one worker, which packs V itself, serially, into its own panels
        (only the panels of ``p_range``, see ``pack_v``, when it has a run of v panels)."""
        k0 = kb * kc
        kext = tirx.min(kc, K - k0) if K % kc else kc
        if packed_v:   # block kb of the packed weight is the Vp packing would write
            v_panel, v_offset = views[v_role], bases[v_role].base_expr + kb * (panels * kc * nv)
        else:
            v_panel, v_offset = T.decl_buffer((panels * kc * nv,), dtype, scope="global", layout=None), 0
            pack_v(views, v_panel, k0, kext, T.serial if u_range is not None else outer, p_range)

        def u_block(ub):
            u_first = ub * mc
            u_panel = T.decl_buffer((tiles_per_block * kc * mu,), dtype, scope="global", layout=None)
            pack_u(views, u_panel, u_first, k0, kext)
            def tiles(p, width):
                with T.serial(tiles_per_block) as q:
                    u0 = u_first + q * mu
                    with T.If(u0 < EU):
                        with T.Then():
                            micro_kernel(views, u_panel, v_panel, v_offset, q, p, u0, p * nv, kext, first, width)

            first_p, count_p, with_rest = p_range or (0, full_panels, None)   # all panels, or a worker's run
            if full_panels:
                with (v_loop if p_range is None else T.serial)(count_p) as i:
                    tiles(first_p + i, nv)
            if rest:   # the ragged last panel: only its first round_up(rest, 8) columns
                guarded(with_rest, lambda: tiles(full_panels, min(nv, -(-rest // 8) * 8)))

        if u_range is None:
            with u_loop(u_blocks) as ub:
                u_block(ub)
        else:
            with T.serial(u_range[1]) as i:
                u_block(u_range[0] + i)

    def row_span(views, v0, width):
        """The row kernel on columns [v0, v0 + width) (a constant width): D = beta * C, then for each k every
        row adds alpha * U[u, k] * V[k, v0:v0+width]; V's row segment is read once and stays in L1 for the rows."""
        groups, tail = divmod(width, lanes)

        def each_column(body):
            if groups:
                with T.serial(groups) as g:
                    with T.vectorized(lanes) as j:
                        body(v0 + g * lanes + j)
            if tail:
                with T.serial(tail) as j:
                    body(v0 + groups * lanes + j)

        def init(u):
            def body(v):
                zero = tirx.const(0, dtype)
                store(views, const(beta) * cast(views["C"][addr("C", **{u_dim: u, v_dim: v})]) if use_c else zero,
                      u, v)
            each_column(body)

        def scale(u, k):
            a = load_bindable(u_role, k, **{u_dim: u})
            return a if _is_one(alpha) else const(alpha) * a

        def load_bindable(role, k, **coord):
            """An element of ``role`` as float32 that ``T.bind`` may hold: a bfloat16 is widened by its bits (the top
            half of a float32), since a bound ``Cast`` of one is miscompiled (see ``bind_widened_v``)."""
            raw = views[role][addr(role, k=k, **coord)]
            if str(request.buffers[role].dtype) != "bfloat16" or dtype != "float32":
                return cast(raw)
            bits = tirx.Cast("uint32", tirx.call_intrin("uint16", "tirx.reinterpret", raw))
            return tirx.call_intrin(dtype, "tirx.reinterpret", bits << tirx.const(16, "uint32"))

        def add(ks):
            """D[u, v] += scale(u, k) * V[k, v] for k in ks, in that order (as k by k), for every row u in one pass over
            the columns: one load and store of D per row and column vector, all rows using V's vectors of ks right
            after they are read. Rows inside the column loop ran 1.1-1.5x the rows outside it (a pass over the chunk per
            row) at 2, 4 and 8 x 4096 x 4096 (fp32, bf16, fp16; two runs, same process)."""
            def body(v):
                row = [T.bind(load_bindable(v_role, k, **{v_dim: v})) for k in ks] if bind_widened_v \
                    else [load(views, v_role, k, **{v_dim: v}) for k in ks]
                for u in range(EU):
                    value = cast(views["D"][addr("D", **{u_dim: u, v_dim: v})])
                    for k, vk in zip(ks, row):
                        value = value + factors[(u, k)] * vk
                    store(views, value, u, v)

            # alpha * U[u, k] of the pass, bound before the column loop: LLVM cannot tell that the stores to D leave
            # U alone, and otherwise reloaded, rescaled and rebroadcast each factor for every column vector (4 scalar
            # multiplies and 4 broadcasts per 4 FMAs on znver4; a bfloat16 U also widened each again)
            factors = {(u, k): T.bind(scale(u, k)) if bindable(u_role) else scale(u, k) for u in range(EU) for k in ks}
            each_column(body)

        with T.serial(EU) as u:
            init(u)
        steps, rest_k = divmod(K, k_rows)
        if steps:
            with T.serial(steps) as kq:
                add([kq * k_rows + t for t in range(k_rows)])
        if rest_k:
            with T.serial(rest_k) as kt:
                add([steps * k_rows + kt])

    def rows(views):
        chunks, rest_width = divmod(EV, nv)
        if chunks:
            with v_loop(chunks) as c:
                row_span(views, c * nv, nv)
        if rest_width:
            row_span(views, chunks * nv, rest_width)

    def whole():
        views = {role: T.decl_buffer((spans[role],), request.buffers[role].dtype,
                                     data=data_of(request.buffers[role]), layout=None)
                 for role in ("D", "A", "B", "C")}
        views["D bits"] = bf16.bits_alias(views["D"])
        if plan.kernel == "rows":
            rows(views)
            return
        if plan.workers is not None:
            # one parallel region: worker w takes a contiguous run of u blocks (parallel over u) or of v panels
            # (over v, the ragged last panel with the last run) through every K block, packing its own V panels.
            # Runs: the plan's (the compiling machine's cores) or the calling thread's pool if smaller; two runs on
            # one thread would each pack all of V
            workers = T.bind(tirx.max(1, tirx.min(plan.workers, tirx.call_packed("runtime.NumThreads"))))
            runs = u_blocks if over == "u" else full_panels
            per = tirx.floordiv(runs + (workers - 1), workers)
            with T.parallel(workers) as w:
                count = tirx.min(per, runs - w * per)
                if over == "u":
                    u_range, p_range = (w * per, count), None
                else:
                    u_range, p_range = (0, u_blocks), (w * per, tirx.max(0, count), w == workers - 1)
                busy = count > 0 if over == "u" or not rest else tirx.any(count > 0, w == workers - 1)
                with T.If(busy):   # 5 runs on 4 workers: 2, 2, 1 and none
                    with T.Then():
                        k_block(views, 0, True, u_range, p_range)
                        if k_blocks > 1:
                            with T.serial(k_blocks - 1) as kb:
                                k_block(views, kb + 1, False, u_range, p_range)
            return
        k_block(views, 0, True)
        if k_blocks > 1:
            with T.serial(k_blocks - 1) as kb:
                k_block(views, kb + 1, False)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _is_one(expr) -> bool:
    try:
        return float(expr.value) == 1.0
    except (AttributeError, TypeError, ValueError):
        return False

