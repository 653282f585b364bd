"""A persistent, warp-specialised FP16/BF16 GEMM for Hopper (sm_90a) with wgmma kept in flight, written with Axe
layouts and tile ops: D = A B^T, A (M x K) and B (N x K) row-major, FP32 accumulation, D (M x N) in the input type.

Structure (each decision is a layout or a tile-op argument that ``axe4j.explain`` shows):

* **Persistent CTAs.** The grid is ``min(tiles, sms)`` CTAs; CTA c computes output tiles c, c + grid, ... in the
  grouped order below, so the pipeline fills once per CTA rather than once per tile, and the producer prefetches the
  next tile's operands while the consumers store the last one.
* **Grouped rasterization** (L2 reuse): tiles are visited in groups of ``group_m`` tile rows; inside a group, down the
  rows first, then across. Linear tile t: group g = t / (group_m * tiles_n), first row f = g * group_m, rows in the
  group r = min(tiles_m - f, group_m), tile (f + (t mod (group_m tiles_n)) mod r, (t mod (group_m tiles_n)) / r).
* **Warp specialisation.** Warpgroup 0 is the producer (one thread issues TMA loads into a ring of ``stages`` slots
  with the 128-byte swizzle; it gives registers back with ``setmaxnreg.dec``); warpgroups 1 and 2 are consumers
  (``setmaxnreg.inc``), each owning BM/2 rows of the tile.
* **wgmma in flight.** Each K tile is one ``Tx.wg.gemm_async(..., wait=1)``: the rule commits the tile's wgmma group
  and waits only until one group is pending, so the next K tile's MMAs issue while this one retires. The slot a group
  read is released (its ``empty`` mbarrier) only after the next wait shows that group retired: the slot of iteration
  i - 1 after the wait of iteration i, the last one after a ``wait_group 0``.
* **Epilogue through shared memory.** Each consumer casts its accumulator, writes it with ``stmatrix`` into its
  own 128-byte-swizzled staging tile and one thread stores the tile with a TMA store (``bulk_group``); before the
  next tile overwrites the staging tile, ``cp.async.bulk.wait_group.read 0`` waits until the store has read it.
  Named barriers (``bar.sync 1 + part, 128``) order the warpgroup's writes, the proxy fence and the store.
* **Any M, N, K.** The tile grid is ceil(M / BM) x ceil(N / BN) and the K loop ceil(K / BK) steps. An edge tile's
  TMA loads read zeros past the tensor's end (also for M smaller than one 64-row block, down to M = 1) and its TMA
  store writes nothing there, so no code path differs at the edge. TMA's one rule is that rows are a multiple of
  16 bytes: K and N multiples of 8 (FP16/BF16); ``gemm_tuning.padded_gemm`` runs other shapes on zero-padded copies.
* **Fused epilogue at any shape.** act(alpha acc + beta C + bias) runs on the accumulator after the K loop (after
  split-K's sum). On whole tiles C and the bias come by register loads; where the grid has edge tiles, one thread of
  each consumer loads C's box (D's own) into the staging tile and the bias box into a float32 vector by TMA, which
  clips, and the consumer waits on its own mbarrier (``epilogue_through_tma``). Swapped, C is read through the
  transposed staging view and the bias runs down the tile's rows.
* **Decode and small M** (docs/cuda-gemm.md, "Decode and small-M strategies"): ``bm=64`` runs one consumer
  warpgroup; ``swap_ab`` computes D^T = B A^T (N on the tile's rows, M on its BN columns) and writes the accumulator
  into D's staging box through a transposed layout of the same bytes (``transposed_staging``); ``split_k=S`` walks
  (tile, split) work units, FP32 partials in a workspace, the tile's last unit summing them in split order.
* **Stages from capacity.** Unless given, stages = the most (BM + BN) x BK tiles that fit the 227 KiB of shared memory
  of an H100 CTA next to the barriers and the BM x BN staging tile, at most 8.

The shared tiles are K-major with the 128-byte swizzle (``Swizzle<3,3,3>`` on element addresses, 64-element rows, K
blocks outermost), the TMA box and the wgmma descriptor walk of the same layout; the accumulator is a tile of the
wgmma m64nNk16 fragment over (``wid_in_wg``, ``laneid``, registers).
"""

from __future__ import annotations

from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

from tvm.tirx.layout import ComposeLayout, S, TileLayout

from .epilogue import Epilogue
from .hopper_gemm import ITEMSIZE, accumulator, alignment_problems, ceil_div, shared_tile, tile_problems
from .pipeline import PipelineState, release
from .tiles import local_tile

SHARED_BYTES = 227 * 1024
CLUSTERS = ((1, 1), (2, 1), (1, 2))   # (CTAs along M, along N) of a thread-block cluster
MAX_STAGES = 8
EPILOGUE_COLS = 32   # accumulator columns the fused epilogue works on at a time
ARRIVAL_BYTES = 8    # split-K: one int32 per consumer warpgroup (allocated in every kernel, used by split-K's)


def stages_for(bm: int, bn: int, bk: int, itemsize: int = 2, out_itemsize: int | None = None, extra: int = 0) -> int:
    """The most ring slots of (BM + BN) x BK elements of ``itemsize`` bytes (and 2 mbarriers each) that fit a CTA's
    shared memory beside the BM x BN epilogue staging tile (``out_itemsize`` bytes an element, default the same),
    split-K's two arrival words (``ARRIVAL_BYTES``) and ``extra`` bytes (``epilogue_bytes``)."""
    per = (bm + bn) * bk * itemsize + 16
    return max(1, min(MAX_STAGES, (SHARED_BYTES - bm * bn * (out_itemsize or itemsize) - ARRIVAL_BYTES - extra) // per))


def epilogue_cols(bn: int) -> int:
    """Accumulator columns the fused epilogue works on at a time: ``EPILOGUE_COLS``, or all BN when narrower
    (swap-AB's BN = 16 at decode)."""
    return min(bn, EPILOGUE_COLS)


def epilogue_through_tma(m: int, n: int, bm: int, bn: int, epilogue, swap_ab: bool = False) -> bool:
    """Whether the fused epilogue loads C and the bias with TMA (boxes that clip at the tensors' ends): when it reads
    either and the tile grid has edge tiles. On whole tiles it reads them with register loads from global memory."""
    rows, cols = (n, m) if swap_ab else (m, n)
    reads = epilogue is not None and (epilogue.beta != 0 or epilogue.bias)
    return bool(reads and (rows % bm or cols % bn))


def epilogue_plan(m: int, n: int, bm: int, bn: int, epilogue, swap_ab: bool = False, split_k: int = 1) -> str:
    """How the fused epilogue runs at this shape and configuration, in words (``gemm_tuning`` puts it in the kernel's
    ``axe4j.tuning`` attribute, which ``axe4j.explain`` prints)."""
    if epilogue is None:
        return "no fused epilogue"
    operands = " and ".join(([f"C{' transposed' if swap_ab else ''}"] if epilogue.beta != 0 else []) +
                            ([f"the bias{' down the rows' if swap_ab else ''}"] if epilogue.bias else []))
    if epilogue_through_tma(m, n, bm, bn, epilogue, swap_ab):
        reads = f"{operands} by TMA (edge tiles clip)"
    elif operands:
        reads = f"{operands} by register loads (whole tiles)"
    else:
        reads = "no operand read"
    where = [f"{epilogue_cols(bn)}-column chunks"]
    if split_k > 1:
        where.append(f"once per tile, after the sum of the {split_k} split-K partials")
    return f"fused epilogue ({epilogue.label}): {reads}; " + ", ".join(where)


def epilogue_bytes(m: int, n: int, bm: int, bn: int, epilogue, swap_ab: bool = False) -> int:
    """Shared memory of the TMA-loaded epilogue: each consumer's bias box (float32: BN columns, swapped BM/2 rows)
    and its mbarrier (8 bytes), 128-byte aligned; C lands in the staging tile D is stored from (no bytes more)."""
    if not epilogue_through_tma(m, n, bm, bn, epilogue, swap_ab):
        return 0
    consumers = consumers_of(bm)
    span = bm // consumers if swap_ab else bn
    return consumers * span * 4 + 128 + consumers * 8


def tile_order(t, tiles_m: int, tiles_n: int, group_m: int):
    """(tile row, tile column) of linear tile ``t`` in grouped order (see the module docstring); works on ints and
    on TIR expressions."""
    per_group = group_m * tiles_n
    first = (t // per_group) * group_m
    rows = T.min(tiles_m - first, group_m) if not isinstance(t, int) else min(tiles_m - first, group_m)
    within = t % per_group
    return first + within % rows, within // rows


def tile_in_cluster(t, rank, tiles_m: int, tiles_n: int, group_m: int, cluster):
    """(tile row, tile column) of CTA ``rank`` of a cluster on cluster tile ``t``: cluster tiles are (cm x cn)
    blocks of tiles in grouped order; rank r is the r-th tile of its block (down M for 2x1, across N for 1x2)."""
    cm, cn = cluster
    block_m, block_n = tile_order(t, tiles_m // cm, tiles_n // cn, group_m)
    if cm > 1:
        return block_m * cm + rank, block_n
    return block_m, block_n * cn + rank


def transposed_staging(consumers: int, rows: int, cols: int, itemsize: int = 2):
    """The swapped kernel's staging tile as the accumulator sees it: (consumers, 1, rows, cols) over the bytes of
    ``shared_tile(consumers, 1, cols, rows)`` (D's cols x rows box, rows = one 128-byte swizzle row), so element
    (c, 0, i, j) lies at swz(c cols rows + j rows + i): D^T written through a layout, D stored by TMA unchanged."""
    return ComposeLayout((16 // itemsize).bit_length() - 1, 3, 3,
                         TileLayout(S[(consumers, 1, rows, cols): (cols * rows, cols * rows, 1, rows)]))


def split_k_workspace(m: int, n: int, bm: int, bn: int, split_k: int, swap_ab: bool = False) -> tuple:
    """Shapes of the split-K kernel's W (split_k, tiles, BM, BN) float32 and Count (tiles x consumers,) int32."""
    tiles = ceil_div(n if swap_ab else m, bm) * ceil_div(m if swap_ab else n, bn)
    return (split_k, tiles, bm, bn), (tiles * consumers_of(bm),)


INPUTS_16 = ("float16", "bfloat16")
INPUTS_8 = ("float8_e4m3fn", "float8_e5m2")


def consumers_of(bm: int) -> int:
    """Consumer warpgroups of a BM-row tile: one for BM = 64 (one m64 wgmma block), else two of BM/2 rows."""
    return 1 if bm == 64 else 2


def check(m, n, k, bm, bn, bk, stages, group_m, sms, dtype, cluster=(1, 1), dtype_b=None, out_dtype=None,
          swap_ab=False, extra=0):
    dtype_b, out_dtype = dtype_b or dtype, out_dtype or output_dtype(dtype)
    itemsize, out_itemsize = ITEMSIZE.get(dtype, 2), ITEMSIZE.get(out_dtype, 2)
    problems = []
    cm, cn = cluster
    if (cm, cn) not in CLUSTERS:
        problems.append(f"cluster={cluster}: one of {', '.join(map(str, CLUSTERS))} (M x N CTAs)")
    elif cm > 1 and ceil_div(m, bm) % cm:
        problems.append(f"cluster={cluster}: {ceil_div(m, bm)} tile rows are not a multiple of {cm}")
    elif cn > 1 and ceil_div(n, bn) % cn:
        problems.append(f"cluster={cluster}: {ceil_div(n, bn)} tile columns are not a multiple of {cn}")
    elif cm * cn > 1 and sms < cm * cn:
        problems.append(f"cluster={cluster}: sms={sms} holds no whole cluster")
    problems += tile_problems(bm, bn, bk, unit="elements", itemsize=itemsize, one_consumer=True)
    if bm == 64 and (cm, cn) != (1, 1):
        problems.append(f"BM=64 with cluster={cluster}: one consumer warpgroup has no half of the A tile to share; "
                        "clusters run BM >= 128")
    staging_row = 128 // out_itemsize   # elements of one 128-byte swizzle row of the staging tile
    if swap_ab:
        if bm // consumers_of(bm) != staging_row:
            problems.append(f"swap_ab with BM={bm}: each consumer's {bm // consumers_of(bm)} N columns of D must be "
                            f"one {staging_row}-element swizzle row of the staging tile (BM=64 or 128)")
        if bn % 8:
            problems.append(f"swap_ab with BN={bn}: the M side is whole 8-row swizzle atoms (a multiple of 8)")
        if (cm, cn) != (1, 1):
            problems.append(f"swap_ab with cluster={cluster}: not written (decode tiles are few; no operand to share)")
    problems += alignment_problems(m, n, k, dtype, out_dtype)
    if (bm // consumers_of(bm)) * bn // 128 > 128:
        problems.append(f"BM={bm}, BN={bn}: {(bm // consumers_of(bm)) * bn // 128} accumulator registers per "
                        "consumer thread "
                        "(at most 128 leave room for addresses)")
    smem = stages * ((bm + bn) * bk * itemsize + 16) + bm * bn * out_itemsize + ARRIVAL_BYTES + extra
    if smem > SHARED_BYTES:
        problems.append(f"{stages} stages of ({bm} + {bn}) x {bk} need {smem} bytes of shared memory; an H100 CTA "
                        f"has {SHARED_BYTES}")
    if group_m < 1 or sms < 1:
        problems.append(f"group_m={group_m} and sms={sms} must be positive")
    if not ((dtype in INPUTS_16 and dtype_b == dtype) or (dtype in INPUTS_8 and dtype_b in INPUTS_8)):
        problems.append(f"dtype {dtype} x {dtype_b}: wgmma here multiplies float16 or bfloat16 by itself, or "
                        "float8_e4m3fn/float8_e5m2 by either")
    if out_dtype not in INPUTS_16:
        problems.append(f"out_dtype {out_dtype}: D is float16 or bfloat16")
    if problems:
        raise ValueError(f"hopper_gemm_pipelined(M={m}, N={n}, K={k}, BM={bm}, BN={bn}, BK={bk}, stages={stages}"
                         f"{', swap_ab' if swap_ab else ''}): " + "; ".join(problems))


def output_dtype(dtype: str) -> str:
    """D's default type: the inputs' for 16-bit inputs, bfloat16 for FP8 ones."""
    return "bfloat16" if dtype in INPUTS_8 else dtype


def hopper_gemm_pipelined(m: int, n: int, k: int, bm: int = 128, bn: int = 256, bk: int | None = None,
                          stages: int | None = None, group_m: int = 8, sms: int = 132, dtype: str = "float16",
                          epilogue: Epilogue | None = None, cluster: tuple = (1, 1), dtype_b: str | None = None,
                          out_dtype: str | None = None, scale: bool = False, swap_ab: bool = False,
                          split_k: int = 1):
    """The kernel as a TIRx PrimFunc of (A, B, D), or of (A, B, C, Bias, D) with a fused ``epilogue``
    (``axe4j.cuda.kernels.epilogue``); ``cluster=(2, 1)`` / ``(1, 2)`` launches pairs of CTAs in thread-block clusters
    that share the B / A tile through TMA multicast. FP8: ``dtype`` (A) and ``dtype_b`` (B) float8_e4m3fn or
    float8_e5m2 (wgmma k32, BK a multiple of 128), D in ``out_dtype`` (default bfloat16); ``scale=True`` adds a
    ``Scale`` argument (2,) float32 of per-tensor scales: D = Scale[0] Scale[1] (A B^T), the dequantised product.
    ``bm=64`` runs one consumer warpgroup (an m64nNk16 wgmma per K step). ``swap_ab=True`` computes D^T = B A^T: the
    tile's BM rows run over N (B feeds wgmma's A side), its BN columns over M (BN = 8 .. 256, e.g. 16 for a decode
    step), and the staging tile is D's (BN x BM/2) box, written from the accumulator through a transposed view of
    the same shared bytes (a layout, ``transposed_staging``), so the TMA store is the unswapped one.
    ``split_k=S`` (S > 1 dividing the K tiles) splits each tile's K loop over S work units (tile t, split s) that
    the persistent CTAs walk like tiles; the kernel takes (A, B, W, Count, D): each unit stores its FP32 partial
    sum into the workspace W (``split_k_workspace``) and counts itself in Count (zeros, left zeros); the last unit
    of a tile sums W[0], ..., W[S - 1] in that order (deterministic whichever unit comes last) and stores D.
    The fused epilogue runs at every shape, tile and strategy above but clusters with split-K; with split-K the
    kernel takes (A, B, C, Bias, W, Count, D) and the epilogue runs once per tile, after the sum.
    Raises ValueError naming every parameter it cannot lower."""
    dtype_b, out_dtype = dtype_b or dtype, out_dtype or output_dtype(dtype)
    itemsize, out_itemsize = ITEMSIZE.get(dtype, 2), ITEMSIZE.get(out_dtype, 2)
    bk = bk or 128 // itemsize   # one 128-byte swizzle row of K
    extra = epilogue_bytes(m, n, bm, bn, epilogue, swap_ab)
    stages = stages or stages_for(bm, bn, bk, itemsize, out_itemsize, extra)
    cluster = tuple(cluster)
    check(m, n, k, bm, bn, bk, stages, group_m, sms, dtype, cluster, dtype_b, out_dtype, swap_ab, extra)
    if scale and epilogue is not None:
        raise ValueError("hopper_gemm_pipelined: scale=True and a fused epilogue together are not written; fold the "
                         "scales into the epilogue's alpha")
    if split_k < 1 or ceil_div(k, bk) % split_k:
        raise ValueError(f"hopper_gemm_pipelined(K={k}, BK={bk}): split_k={split_k} must be a positive divisor of "
                         f"the {ceil_div(k, bk)} K tiles")
    if split_k > 1 and tuple(cluster) != (1, 1):
        raise ValueError(f"hopper_gemm_pipelined: split_k={split_k} with a cluster is not written")
    if epilogue is not None and bn % epilogue_cols(bn):
        raise ValueError(f"hopper_gemm_pipelined: BN={bn}: the fused epilogue works on {epilogue_cols(bn)}-column "
                         "chunks")
    clipped = epilogue_through_tma(m, n, bm, bn, epilogue, swap_ab)
    consumers = consumers_of(bm)
    half = bm // consumers   # rows of one consumer warpgroup
    threads = 128 * (consumers + 1)
    # swapped, wgmma's A side is B (N x K) and its B side A (M x K): the tile grid runs over (N, M)
    rows_total, cols_total = (n, m) if swap_ab else (m, n)
    type_rows, type_cols = (dtype_b, dtype) if swap_ab else (dtype, dtype_b)
    a_layout = shared_tile(stages, consumers, half, bk, itemsize)
    b_layout = shared_tile(stages, 1, bn, bk, itemsize)
    acc_layout = accumulator(half, bn)
    ch = epilogue_cols(bn)
    chunk_layout = accumulator(half, ch)
    span = half if swap_ab else bn   # the bias box of one consumer: its rows swapped, else the tile's columns
    strides = (span, 1, 0) if swap_ab else (span, 0, 1)   # the bias runs down the rows swapped, else along them
    bias_layout = TileLayout(S[(consumers, half, bn):strides])
    operand_bytes = 0   # what one consumer's epilogue TMA loads bring: C's box and the bias box
    if clipped:
        operand_bytes = (half * bn * out_itemsize if epilogue.beta != 0 else 0) + (span * 4 if epilogue.bias else 0)
    k_tiles = ceil_div(k, bk) // split_k   # K tiles of one work unit; the last one reads past K: TMA fills zeros
    # edge tiles: zero-filled loads, clipped TMA stores
    tiles_m, tiles_n = ceil_div(rows_total, bm), ceil_div(cols_total, bn)
    tiles = tiles_m * tiles_n
    cm, cn = cluster
    size = cm * cn                           # CTAs per cluster
    work = tiles * split_k                   # work units: (tile, split) pairs, split-major
    units = min(work // size, sms // size)   # persistent units: CTAs, or clusters of `size` CTAs
    grid = units * size
    stage_bytes = (bm + bn) * bk * itemsize

    def tile_of(w):
        """The tile of work unit w (split-major: unit w is split w / tiles of tile w mod tiles)."""
        return w % tiles if split_k > 1 else w

    def k_tile(w, kt):
        """Global K tile of the unit's kt-th step: its split's first K tile + kt."""
        return kt if split_k == 1 else w // tiles * k_tiles + kt

    def last_unit(arrivals, part):
        """Whether this unit stores D: always without split-K, else when S - 1 units of the tile came before."""
        return True if split_k == 1 else arrivals[part] == split_k - 1

    @T.macro
    def body(A, B, D, C, Bias, Scale, W, Count):
        T.device_entry()
        if size == 1:
            unit = T.cta_id([grid])
        else:
            unit = T.cluster_id([units])
            rank = T.cta_id_in_cluster([size])
        wg = T.warpgroup_id([consumers + 1])
        T.warp_id_in_wg([4])
        T.warp_id([threads // 32])
        T.lane_id([32])
        tid_in_wg = T.thread_id_in_wg([128])
        tid = T.thread_id([threads])
        pool = T.SMEMPool()
        A_smem = pool.alloc((stages, consumers, half, bk), type_rows, layout=a_layout, align=1024)
        B_smem = pool.alloc((stages, 1, bn, bk), type_cols, layout=b_layout, align=1024)
        if swap_ab:
            # D's (BN x BM/2) box per consumer, and the same bytes seen as the accumulator's (BM/2 x BN) tile
            D_smem = pool.alloc((consumers, 1, bn, half), out_dtype,
                                layout=shared_tile(consumers, 1, bn, half, out_itemsize), align=1024)
            pool.move_base_to(pool.offset - consumers * bn * half * out_itemsize)
            D_acc = pool.alloc((consumers, 1, half, bn), out_dtype,
                               layout=transposed_staging(consumers, half, bn, out_itemsize), align=1024)
        else:
            D_smem = pool.alloc((consumers, 1, half, bn), out_dtype,
                                layout=shared_tile(consumers, 1, half, bn, out_itemsize), align=1024)
            D_acc = D_smem
        full = pool.alloc((stages,), "uint64", align=8)
        empty = pool.alloc((stages,), "uint64", align=8)
        arrivals = pool.alloc((consumers,), "int32", align=4)   # split-K: each consumer's count before it arrived
        if clipped:
            # each consumer's bias box, and the same bytes as a (BM/2 x BN) tile broadcast along the other dim
            bias_smem = pool.alloc((consumers, span), "float32", align=128)
            pool.move_base_to(pool.offset - consumers * span * 4)
            bias_tile = pool.alloc((consumers, half, bn), "float32", align=128, layout=bias_layout)
            operands = pool.alloc((consumers,), "uint64", align=8)   # each consumer's C and bias loads landed
        pool.commit()
        if tid == 0:
            for s in T.unroll(stages):
                T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                # released by every consumer of every CTA the slot's (multicast) loads write into
                T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(consumers * size))
            if clipped:
                for h in T.unroll(consumers):
                    T.ptx.mbarrier.init.shared.b64(operands.ptr_to([h]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        if size == 1:
            T.cuda.cta_sync()
        else:
            T.cuda.cluster_sync()   # every CTA's mbarriers exist before a peer's multicast or arrival reaches them
        mine = (work // size - unit + units - 1) // units  # work of this unit: unit, unit + units, ...
        if wg == 0:
            T.ptx["setmaxnreg.dec.sync.aligned.u32"](40)
            if tid == 0:
                for j in T.serial(mine):
                    if size == 1:
                        tm, tn = tile_order(tile_of(unit + j * units), tiles_m, tiles_n, group_m)
                    else:
                        tm, tn = tile_in_cluster(unit + j * units, rank, tiles_m, tiles_n, group_m, cluster)
                    for kt in T.serial(k_tiles):
                        it = j * k_tiles + kt
                        state = T.meta_var(PipelineState(stages, it, start_phase=1))
                        s = state.index()
                        if it >= stages:
                            # both consumers released the slot's previous contents
                            T.cuda.mbarrier_wait(empty.ptr_to([s]), state.phase())
                        if cn == 1:
                            for h in T.unroll(consumers):
                                Tx.copy_async(A_smem[s, h, :, :],
                                              local_tile(A, (bm, bk), (tm, k_tile(unit + j * units, kt)),
                                                         (h * half, None), (half, None)), mbar=full.ptr_to([s]))
                        else:
                            # the CTAs of a 1x2 cluster share the A tile: each loads one half into both
                            Tx.copy_async(A_smem[s, rank, :, :], local_tile(A, (bm, bk), (tm, kt), (rank * half, None),
                                                                            (half, None)),
                                          mbar=full.ptr_to([s]), cta_mask=3)
                        if cm == 1:
                            Tx.copy_async(B_smem[s, 0, :, :],
                                          local_tile(B, (bn, bk), (tn, k_tile(unit + j * units, kt))),
                                          mbar=full.ptr_to([s]))
                        else:
                            # the CTAs of a 2x1 cluster share the B tile: each loads half its rows into both
                            Tx.copy_async(B_smem[s, 0, rank * (bn // 2):rank * (bn // 2) + bn // 2, :],
                                          local_tile(B, (bn, bk), (tn, kt), (rank * (bn // 2), None), (bn // 2, None)),
                                          mbar=full.ptr_to([s]), cta_mask=3)
                        T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(stage_bytes))
        else:
            T.ptx["setmaxnreg.inc.sync.aligned.u32"](232)
            acc = T.alloc_buffer((half, bn), "float32", scope="local", layout=acc_layout)
            out = T.alloc_buffer((half, bn), out_dtype, scope="local", layout=acc_layout)
            part = wg - 1
            if clipped:
                loaded = T.alloc_local([1], "int32")   # epilogue operand loads so far: the mbarrier's phase
                loaded[0] = 0
            for j in T.serial(mine):
                if size == 1:
                    tm, tn = tile_order(tile_of(unit + j * units), tiles_m, tiles_n, group_m)
                else:
                    tm, tn = tile_in_cluster(unit + j * units, rank, tiles_m, tiles_n, group_m, cluster)
                Tx.wg.fill(acc[:, :], T.float32(0.0))
                for kt in T.serial(k_tiles - 1):
                    it = j * k_tiles + kt
                    state = T.meta_var(PipelineState(stages, it))
                    s = state.index()
                    T.cuda.mbarrier_wait(full.ptr_to([s]), state.phase())
                    Tx.wg.gemm_async(acc[:, :], A_smem[s, part, :, :], B_smem[s, 0, :, :], transA=False,
                                     transB=False, accum=True, wait=1, proxy_fence=False)
                    if kt >= 1:
                        # the group of iteration it - 1 has retired: its slot may be refilled
                        if tid_in_wg == 0:
                            release(empty, state.advance(-1), size)
                # the last K tile, peeled: its call waits for every group (wait_group 0) and fences the
                # accumulator registers, so no read of them is scheduled before the wait (cuda_register_fence)
                last = j * k_tiles + k_tiles - 1
                final = T.meta_var(PipelineState(stages, last))
                T.cuda.mbarrier_wait(full.ptr_to([final.index()]), final.phase())
                Tx.wg.gemm_async(acc[:, :], A_smem[final.index(), part, :, :], B_smem[final.index(), 0, :, :],
                                 transA=False, transB=False, accum=True, wait=0, proxy_fence=False)
                if tid_in_wg == 0:
                    if k_tiles > 1:
                        release(empty, final.advance(-1), size)
                    release(empty, final, size)
                row = tm * bm + part * half
                if split_k > 1:
                    # publish this unit's FP32 partial: W[split, tile], a fence, then one count per consumer
                    Tx.wg.copy(W[(unit + j * units) // tiles, tile_of(unit + j * units), part * half:part * half + half,
                                 :], acc[:, :])
                    T.cuda.thread_fence()
                    T.cuda.warpgroup_sync(1 + part)
                    if tid_in_wg == 0:
                        arrivals[part] = T.cuda.atomic_add(
                            T.address_of(Count[tile_of(unit + j * units) * consumers + part]), 1)
                    T.cuda.warpgroup_sync(1 + part)
                if last_unit(arrivals, part):
                    if split_k > 1:
                        # the tile's last unit: D = W[0] + ... + W[S - 1] in split order, and the count back to 0
                        T.cuda.thread_fence()
                        partial = T.alloc_buffer((half, bn), "float32", scope="local", layout=acc_layout)
                        Tx.wg.fill(acc[:, :], T.float32(0.0))
                        for sp in T.serial(split_k):
                            Tx.wg.copy(partial[:, :], W[sp, tile_of(unit + j * units), part * half:part * half + half,
                                                        :])
                            Tx.wg.add(acc[:, :], acc[:, :], partial[:, :])
                        if tid_in_wg == 0:
                            Count[tile_of(unit + j * units) * consumers + part] = 0
                    if scale:
                        Tx.wg.mul(acc[:, :], acc[:, :], Scale[0] * Scale[1])   # dequantise: the per-tensor scales
                    if epilogue is not None:
                        if clipped:
                            # C into the staging tile (D's own box) and the bias into this consumer's vector, by
                            # TMA: an edge tile's boxes read zeros past the tensors' ends, and D's store clips there
                            if tid_in_wg == 0:
                                T.ptx.cp.async_.bulk.wait_group.read(0)   # the last store has read the staging tile
                            T.cuda.warpgroup_sync(1 + part)
                            if tid_in_wg == 0:
                                if epilogue.beta != 0.0:
                                    if swap_ab:
                                        Tx.copy_async(D_smem[part, 0, :, :], C[tn * bn:tn * bn + bn, row:row + half],
                                                      mbar=operands.ptr_to([part]))
                                    else:
                                        Tx.copy_async(D_smem[part, 0, :, :], C[row:row + half, tn * bn:tn * bn + bn],
                                                      mbar=operands.ptr_to([part]))
                                if epilogue.bias:
                                    if swap_ab:
                                        Tx.copy_async(bias_smem[part, :], Bias[row:row + half],
                                                      mbar=operands.ptr_to([part]))
                                    else:
                                        Tx.copy_async(bias_smem[part, :], Bias[tn * bn:tn * bn + bn],
                                                      mbar=operands.ptr_to([part]))
                                T.ptx.mbarrier.arrive.expect_tx.shared.b64(operands.ptr_to([part]),
                                                                           T.uint32(operand_bytes))
                            for h in T.unroll(consumers):
                                if part == h:   # one barrier address per branch: the consumers wait apart
                                    T.cuda.mbarrier_wait(operands.ptr_to([h]), loaded[0] % 2)
                            loaded[0] = loaded[0] + 1
                        # act(alpha acc + beta C + bias) on the accumulator's layout, `ch` columns at a time so that
                        # the chunks of C and bias stay few registers; after split-K's sum, once per tile
                        if swap_ab:
                            # N on the tile's rows, M on its columns: C read transposed, the bias down the rows
                            c_tile = T.decl_buffer((n, m), out_dtype, data=C.data, layout=TileLayout(S[(n, m):(1, n)]))
                            bias_rows = T.decl_buffer((n, m), "float32", data=Bias.data,
                                                      layout=TileLayout(S[(n, m):(1, 0)]))   # column stride 0
                        else:
                            # row stride 0: the broadcast
                            bias_rows = T.decl_buffer((half, n), "float32", data=Bias.data,
                                                      layout=TileLayout(S[(half, n):(0, 1)]))
                        for c in T.unroll(bn // ch):
                            # (no let-bound starts: the register rule reads c * ch as a multiple of it)
                            cols = acc[:, c * ch:c * ch + ch]
                            if epilogue.alpha != 1.0:
                                Tx.wg.mul(cols, cols, T.float32(epilogue.alpha))
                            if epilogue.beta != 0.0:
                                c_in = T.alloc_buffer((half, ch), out_dtype, scope="local", layout=chunk_layout)
                                c_f32 = T.alloc_buffer((half, ch), "float32", scope="local", layout=chunk_layout)
                                if clipped:
                                    Tx.wg.copy(c_in[:, :], D_acc[part, 0, :, c * ch:c * ch + ch])
                                elif swap_ab:
                                    Tx.wg.copy(c_in[:, :], c_tile[row:row + half,
                                                                  tn * bn + c * ch:tn * bn + c * ch + ch])
                                else:
                                    Tx.wg.copy(c_in[:, :], C[row:row + half, tn * bn + c * ch:tn * bn + c * ch + ch])
                                Tx.wg.cast(c_f32[:, :], c_in[:, :])
                                Tx.wg.fma(cols, c_f32[:, :], T.float32(epilogue.beta), cols)
                            if epilogue.bias:
                                b_f32 = T.alloc_buffer((half, ch), "float32", scope="local", layout=chunk_layout)
                                if clipped:
                                    Tx.wg.copy(b_f32[:, :], bias_tile[part, :, c * ch:c * ch + ch])
                                elif swap_ab:
                                    Tx.wg.copy(b_f32[:, :], bias_rows[row:row + half,
                                                                      tn * bn + c * ch:tn * bn + c * ch + ch])
                                else:
                                    Tx.wg.copy(b_f32[:, :], bias_rows[:, tn * bn + c * ch:tn * bn + c * ch + ch])
                                Tx.wg.add(cols, cols, b_f32[:, :])
                            if epilogue.activation == "relu":
                                Tx.wg.maximum(cols, cols, T.float32(0.0))
                            if epilogue.activation == "silu":
                                Tx.wg.silu(cols, cols)
                        if clipped:
                            T.cuda.warpgroup_sync(1 + part)   # every thread has read C before D overwrites it
                    Tx.wg.cast(out[:, :], acc[:, :])
                    # registers -> swizzled shared (stmatrix) -> global (TMA store); the previous tile's store must have
                    # read this warpgroup's staging tile first
                    if tid_in_wg == 0:
                        T.ptx.cp.async_.bulk.wait_group.read(0)
                    T.cuda.warpgroup_sync(1 + part)
                    Tx.wg.copy(D_acc[part, 0, :, :], out[:, :])
                    T.ptx.fence.proxy.async_.shared__cta()
                    T.cuda.warpgroup_sync(1 + part)
                    if tid_in_wg == 0:
                        if swap_ab:
                            Tx.copy_async(D[tn * bn:tn * bn + bn, row:row + half], D_smem[part, 0, :, :])
                        else:
                            Tx.copy_async(D[row:row + half, tn * bn:tn * bn + bn], D_smem[part, 0, :, :])
                        T.ptx.cp.async_.bulk.commit_group()
            if tid_in_wg == 0:
                T.ptx.cp.async_.bulk.wait_group(0)
        if size > 1:
            T.cuda.cluster_sync()   # no CTA exits while a peer may still arrive on its mbarriers

    if scale and split_k > 1:
        @T.prim_func
        def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype_b), Scale: T.Buffer((2,), "float32"),
                   W: T.Buffer((split_k, tiles, bm, bn), "float32"), Count: T.Buffer((tiles * consumers,), "int32"),
                   D: T.Buffer((m, n), out_dtype)):
            if swap_ab:
                body(B, A, D, None, None, Scale, W, Count)
            else:
                body(A, B, D, None, None, Scale, W, Count)
    elif scale:
        @T.prim_func
        def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype_b), Scale: T.Buffer((2,), "float32"),
                   D: T.Buffer((m, n), out_dtype)):
            if swap_ab:
                body(B, A, D, None, None, Scale, None, None)
            else:
                body(A, B, D, None, None, Scale, None, None)
    elif split_k > 1 and epilogue is not None:
        @T.prim_func
        def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype_b), C: T.Buffer((m, n), out_dtype),
                   Bias: T.Buffer((n,), "float32"), W: T.Buffer((split_k, tiles, bm, bn), "float32"),
                   Count: T.Buffer((tiles * consumers,), "int32"), D: T.Buffer((m, n), out_dtype)):
            if swap_ab:
                body(B, A, D, C, Bias, None, W, Count)
            else:
                body(A, B, D, C, Bias, None, W, Count)
    elif split_k > 1:
        @T.prim_func
        def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype_b),
                   W: T.Buffer((split_k, tiles, bm, bn), "float32"), Count: T.Buffer((tiles * consumers,), "int32"),
                   D: T.Buffer((m, n), out_dtype)):
            if swap_ab:
                body(B, A, D, None, None, None, W, Count)
            else:
                body(A, B, D, None, None, None, W, Count)
    elif epilogue is None:
        @T.prim_func
        def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype_b), D: T.Buffer((m, n), out_dtype)):
            if swap_ab:
                body(B, A, D, None, None, None, None, None)
            else:
                body(A, B, D, None, None, None, None, None)
    else:
        @T.prim_func
        def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype_b), C: T.Buffer((m, n), out_dtype),
                   Bias: T.Buffer((n,), "float32"), D: T.Buffer((m, n), out_dtype)):
            if swap_ab:
                body(B, A, D, C, Bias, None, None, None)
            else:
                body(A, B, D, C, Bias, None, None, None)
    return kernel
