"""The three TIRx kernels of the CUDA MoE layer (sm_90a, FP16 or BF16 in, FP32 accumulation; docs/moe.md,
"CUDA (sm_90a)").

H is kept in *tile-padded order*: tile i of the ``TileSchedule`` (at most ``ROWS`` = 64 rows, one m64 wgmma block)
owns rows ``[i * ROWS, i * ROWS + ROWS)`` of the intermediate H; row r of that block is slot ``tile_start[i] + r``.
So a tile's rows are one aligned row block of H (a layout: row = 64 i + r), each CTA writes only its own block, and
GEMM2 reads it with one TMA box; the rows past ``tile_rows[i]`` are 0 (their weight is). Y is in *pair order*
(row t k + j is token t's j-th expert), so the combine is a sum over a view.

``gemm1``  grid (I / BN1, max_tiles), one warpgroup. Per K tile of 64 columns of the hidden dim:
           TMA of W1[e] gate rows [c BN1, +BN1) and up rows [I + c BN1, +BN1) (a run-time row start e 2I of the
           (E 2I, hidden) view of W1), and the threads' gather of the tile's 64 token rows of X (row
           slot_token[tile_start + r], a run-time index; cp.async of 16 bytes per thread) into 128-byte-swizzled
           shared tiles, both in 2-slot rings filled one K tile ahead; two wgmma (gate, up). Epilogue in
           registers: SiLU(gate) * up * weight (``row_weight``, the routing weights in tile-padded order with 0 past
           each tile's rows, seen as a (rows, BN1) tensor with column stride 0, loaded into up's registers), cast
           to the input type (FP16 or BF16), stored to H: rows past tile_rows are 0 in H, hence in Y.
``gemm2``  grid (hidden / BN2, max_tiles), one warpgroup: H[64 i : +64, :] W2[e]^T chunk [n BN2, +BN2), both
           operands by TMA into a 2-slot ring (H: a 64-row block; W2: a run-time row start e hidden of the
           (E hidden, I) view); the FP32 accumulator goes to a row-major shared tile, then one warp per row stores
           row r < tile_rows to Y's row slot_pair[tile_start + r] (a run-time row: the scatter to pair order).
``combine`` grid (tokens,): out[t, :] = sum_j Y3[t, j, :] with Y3 = Y seen as tokens x k x hidden (the same memory),
           ``Tx.cta.sum`` over dim 1, stored in the input type.
"""

from __future__ import annotations

from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

from ..cuda.kernels.hopper_gemm import SWIZZLE_ROW, accumulator, shared_tile
from ..cuda.kernels.pipeline import PipelineState
from ..cuda.kernels.tiles import local_tile
from .config import MoeShape

ROWS = 64             # rows of a tile: one m64nNk16 wgmma block, one consumer warpgroup
BK = SWIZZLE_ROW      # K tile: one 128-byte swizzle row of FP16
N_STEP = 16          # chunk widths: a multiple of the wgmma fragment's 8 columns and of two 16-byte FP16 vectors
THREADS = 128


@T.macro
def init_ring(full, tid):
    """The 2-slot ring's full barriers (one arrival each), then a proxy fence and a CTA barrier: every thread, and
    the TMA unit, sees them initialised."""
    if tid == 0:
        for s in T.unroll(2):
            T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()


def chunk_sizes(shape: MoeShape, bn1: int = 128, bn2: int = 128) -> tuple[int, int]:
    """(BN1, BN2): the intermediate columns of one GEMM1 CTA and the hidden columns of one GEMM2 CTA."""
    bn1, bn2 = min(bn1, shape.intermediate), min(bn2, shape.hidden)
    return check_chunks(shape, bn1, bn2, BK, "the K tile", "axe4j.moe.cuda")


def check_chunks(shape: MoeShape, bn1: int, bn2: int, bk: int, k_tile: str, who: str,
                 names: tuple[str, str] = ("BN1", "BN2")) -> tuple[int, int]:
    """(bn1, bn2) if one wgmma N each and dividing their dims, with hidden and intermediate whole ``bk`` K tiles;
    else a ValueError from ``who`` naming every problem, the chunk sizes as ``names``."""
    problems = []
    for name, value, width, dim in ((names[0], bn1, shape.intermediate, "intermediate"),
                                    (names[1], bn2, shape.hidden, "hidden")):
        if value % N_STEP or value > 256:
            problems.append(f"{name}={value} must be a multiple of {N_STEP} and at most 256 (one wgmma N)")
        if width % value:
            problems.append(f"{name}={value} must divide {dim} ({width})")
    for name, value in (("hidden", shape.hidden), ("intermediate", shape.intermediate)):
        if value % bk:
            problems.append(f"{name} ({value}) must be a multiple of {k_tile} {bk}")
    if problems:
        raise ValueError(f"{who} for {shape}: " + "; ".join(problems))
    return bn1, bn2


class _Gemm1:
    """GEMM1 of one (tile, chunk): the shared tiles it needs and the macro ``tile`` that computes it (gather + TMA
    ring + two wgmma + the register epilogue into H's rows of the tile)."""

    def __init__(self, shape: MoeShape, tokens: int, max_tiles: int, bn1: int, dtype: str):
        E, H, I = shape.experts, shape.hidden, shape.intermediate
        self.slots = tokens * shape.top_k + ROWS
        k_tiles = H // BK
        self.a_layout = shared_tile(2, 1, ROWS, BK)            # (stage, 1, 64 rows, BK)
        self.b_layout = shared_tile(2, 2, bn1, BK)            # (stage, gate | up, BN1, BK)
        acc_layout = accumulator(ROWS, bn1)
        # row 64 i + r's weight in every column: a broadcast
        self.weight_rows = TileLayout(S[(max_tiles * ROWS, bn1):(1, 0)])
        stage_bytes = 2 * bn1 * BK * 2
        per_pass = THREADS * 8 // BK                      # rows gathered per pass: 8 FP16 (16 bytes) per thread

        @T.macro
        def load_weights(W1_rows, B_smem, full, first, kt):
            """TMA of K tile kt of the chunk's gate rows and up rows into ring slot kt % 2."""
            ring = T.meta_var(PipelineState(2, kt))
            Tx.copy_async(B_smem[ring.index(), 0, :, :], W1_rows[first:first + bn1, kt * BK:kt * BK + BK],
                          mbar=full.ptr_to([ring.index()]))
            Tx.copy_async(B_smem[ring.index(), 1, :, :], W1_rows[first + I:first + I + bn1, kt * BK:kt * BK + BK],
                          mbar=full.ptr_to([ring.index()]))
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([ring.index()]), T.uint32(stage_bytes))

        @T.macro
        def gather(X, slot_token, tile_start, A_smem, i, tid, kt):
            """K tile kt of the tile's rows into slot kt % 2: row r is X's row slot_token[tile_start + r] (rows past
            tile_rows read the next slots, in bounds by the schedule's padding; their weight is 0, so their rows of
            H are 0); 16 bytes per thread and pass, then one cp.async group."""
            for p in T.serial(ROWS // per_pass):
                Tx.thread.copy_async(A_smem[kt % 2, 0, p * per_pass + tid // 8, (tid % 8) * 8:(tid % 8) * 8 + 8],
                                     X[slot_token[tile_start[i] + p * per_pass + tid // 8],
                                       kt * BK + (tid % 8) * 8:kt * BK + (tid % 8) * 8 + 8])
            T.ptx["cp.async.commit_group"]()

        @T.macro
        def tile(X, W1_rows, slot_token, tile_expert, tile_start, weights, Hbuf, A_smem, B_smem, full, i, c, tid):
            gate = T.alloc_buffer((ROWS, bn1), "float32", scope="local", layout=acc_layout)
            up = T.alloc_buffer((ROWS, bn1), "float32", scope="local", layout=acc_layout)
            out = T.alloc_buffer((ROWS, bn1), dtype, scope="local", layout=acc_layout)
            Tx.wg.fill(gate[:, :], T.float32(0.0))
            Tx.wg.fill(up[:, :], T.float32(0.0))
            first = tile_expert[i] * (2 * I) + c * bn1     # gate rows of this chunk; up rows I further
            if tid == 0:
                load_weights(W1_rows, B_smem, full, first, 0)
            gather(X, slot_token, tile_start, A_smem, i, tid, 0)
            T.ptx["cp.async.wait_group"](0)
            T.ptx.fence.proxy.async_.shared__cta()         # the threads' copies, then wgmma's async-proxy reads
            T.cuda.cta_sync()
            for kt in T.serial(k_tiles):
                if kt + 1 < k_tiles:
                    # the next K tile's weights and rows load while this one multiplies: their slots' wgmma
                    # (K tile kt - 1) has completed and every thread passed the barrier after it
                    if tid == 0:
                        load_weights(W1_rows, B_smem, full, first, kt + 1)
                    gather(X, slot_token, tile_start, A_smem, i, tid, kt + 1)
                ring = T.meta_var(PipelineState(2, kt))
                T.cuda.mbarrier_wait(full.ptr_to([ring.index()]), ring.phase())
                Tx.wg.gemm_async(gate[:, :], A_smem[ring.index(), 0, :, :], B_smem[ring.index(), 0, :, :],
                                 transA=False, transB=False, accum=True, wait=0, proxy_fence=False)
                Tx.wg.gemm_async(up[:, :], A_smem[ring.index(), 0, :, :], B_smem[ring.index(), 1, :, :], transA=False,
                                 transB=False, accum=True, wait=0, proxy_fence=False)
                T.ptx["cp.async.wait_group"](0)                 # the next K tile's rows have landed ...
                T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()                              # ... for every thread, and all are past the wgmma
            # SiLU(gate) * up * weight on the accumulator's layout; the weights land in up's registers
            Tx.wg.silu(gate[:, :], gate[:, :])
            Tx.wg.mul(gate[:, :], gate[:, :], up[:, :])
            Tx.wg.copy(up[:, :], local_tile(weights, (ROWS, None), (i, None)))
            Tx.wg.mul(gate[:, :], gate[:, :], up[:, :])
            Tx.wg.cast(out[:, :], gate[:, :])
            Tx.wg.copy(local_tile(Hbuf, (ROWS, bn1), (i, c)), out[:, :])

        self.tile = tile


def gemm1_kernel(shape: MoeShape, tokens: int, max_tiles: int, bn1: int, dtype: str = "float16"):
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    part = _Gemm1(shape, tokens, max_tiles, bn1, dtype)
    slots, tile = part.slots, part.tile

    @T.prim_func
    def gemm1(X: T.Buffer((tokens, H), dtype), W1: T.Buffer((E, 2 * I, H), dtype),
              tile_expert: T.Buffer((max_tiles,), "int32"), tile_start: T.Buffer((max_tiles,), "int32"),
              tile_rows: T.Buffer((max_tiles,), "int32"), slot_token: T.Buffer((slots,), "int32"),
              row_weight: T.Buffer((max_tiles * ROWS,), "float32"), Hbuf: T.Buffer((max_tiles * ROWS, I), dtype)):
        T.device_entry()
        c, i = T.cta_id([I // bn1, max_tiles])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([THREADS])
        W1_rows = T.decl_buffer((E * 2 * I, H), dtype, data=W1.data)        # expert e: rows [2 I e, 2 I e + 2 I)
        weights = T.decl_buffer((max_tiles * ROWS, bn1), "float32", data=row_weight.data, layout=part.weight_rows)
        pool = T.SMEMPool()
        A_smem = pool.alloc((2, 1, ROWS, BK), dtype, layout=part.a_layout, align=1024)
        B_smem = pool.alloc((2, 2, bn1, BK), dtype, layout=part.b_layout, align=1024)
        full = pool.alloc((2,), "uint64", align=8)
        pool.commit()
        init_ring(full, tid)
        if tile_rows[i] > 0:   # the grid covers max_tiles; the schedule's unused tiles have no rows
            tile(X, W1_rows, slot_token, tile_expert, tile_start, weights, Hbuf, A_smem, B_smem, full, i, c, tid)

    return gemm1


class Gemm2Part:
    """GEMM2 of one (tile, hidden chunk) in two macros, shared by the 16-bit and the FP8 layer: ``mainloop`` (a TMA
    ring of H's tile rows and W2's chunk rows, one wgmma per K tile of ``bk`` elements, accumulated into ``acc``) and
    ``scatter`` (the accumulator's rows to pair order in Y). The 16-bit ``tile`` is the two in a row; the FP8
    kernel dequantises ``acc`` between them."""

    def __init__(self, shape: MoeShape, tokens: int, max_tiles: int, bn2: int, bk: int = BK, itemsize: int = 2):
        H, I = shape.hidden, shape.intermediate
        self.pairs = tokens * shape.top_k
        self.slots = self.pairs + ROWS
        k_tiles = I // bk
        self.a_layout = shared_tile(2, 1, ROWS, bk, itemsize)
        self.b_layout = shared_tile(2, 1, bn2, bk, itemsize)
        self.y_layout = TileLayout(S[(ROWS, bn2):(bn2, 1)])
        self.acc_layout = acc_layout = accumulator(ROWS, bn2)
        stage_bytes = (ROWS + bn2) * bk * itemsize

        @T.macro
        def load(Hbuf, W2_rows, A_smem, B_smem, full, i, first, kt):
            ring = T.meta_var(PipelineState(2, kt))
            s = ring.index()
            Tx.copy_async(A_smem[s, 0, :, :], local_tile(Hbuf, (ROWS, bk), (i, kt)), mbar=full.ptr_to([s]))
            Tx.copy_async(B_smem[s, 0, :, :], W2_rows[first:first + bn2, kt * bk:kt * bk + bk], mbar=full.ptr_to([s]))
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(stage_bytes))

        @T.macro
        def mainloop(acc, Hbuf, W2_rows, A_smem, B_smem, full, i, first, tid):
            if tid == 0:
                load(Hbuf, W2_rows, A_smem, B_smem, full, i, first, 0)
            for kt in T.serial(k_tiles):
                if tid == 0:
                    if kt + 1 < k_tiles:
                        load(Hbuf, W2_rows, A_smem, B_smem, full, i, first, kt + 1)   # its slot's wgmma completed
                ring = T.meta_var(PipelineState(2, kt))
                T.cuda.mbarrier_wait(full.ptr_to([ring.index()]), ring.phase())
                Tx.wg.gemm_async(acc[:, :], A_smem[ring.index(), 0, :, :], B_smem[ring.index(), 0, :, :], transA=False,
                                 transB=False, accum=True, wait=0, proxy_fence=False)
                T.cuda.cta_sync()                          # every thread is past the wgmma before its slot refills

        @T.macro
        def scatter(acc, tile_start, tile_rows, slot_pair, Y, Y_smem, i, n, warp):
            # the tile's row r is slot tile_start + r, whose pair's row of Y is slot_pair[tile_start + r];
            # registers -> a row-major shared tile -> one warp per row (rows past tile_rows are not stored)
            Tx.wg.copy(Y_smem[:, :], acc[:, :])
            T.cuda.cta_sync()
            for q in T.serial(ROWS // 4):
                if q * 4 + warp < tile_rows[i]:
                    Tx.warp.copy(Y[slot_pair[tile_start[i] + q * 4 + warp], n * bn2:n * bn2 + bn2],
                                 Y_smem[q * 4 + warp, :])

        @T.macro
        def tile(Hbuf, W2_rows, tile_expert, tile_start, tile_rows, slot_pair, Y, A_smem, B_smem, Y_smem, full, i, n,
                 tid, warp):
            acc = T.alloc_buffer((ROWS, bn2), "float32", scope="local", layout=acc_layout)
            Tx.wg.fill(acc[:, :], T.float32(0.0))
            first = tile_expert[i] * H + n * bn2
            mainloop(acc, Hbuf, W2_rows, A_smem, B_smem, full, i, first, tid)
            scatter(acc, tile_start, tile_rows, slot_pair, Y, Y_smem, i, n, warp)

        self.mainloop, self.scatter, self.tile = mainloop, scatter, tile


def gemm2_kernel(shape: MoeShape, tokens: int, max_tiles: int, bn2: int, dtype: str = "float16"):
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    part = Gemm2Part(shape, tokens, max_tiles, bn2)
    pairs, slots, tile = part.pairs, part.slots, part.tile

    @T.prim_func
    def gemm2(Hbuf: T.Buffer((max_tiles * ROWS, I), dtype), W2: T.Buffer((E, H, I), dtype),
              tile_expert: T.Buffer((max_tiles,), "int32"), tile_start: T.Buffer((max_tiles,), "int32"),
              tile_rows: T.Buffer((max_tiles,), "int32"), slot_pair: T.Buffer((slots,), "int32"),
              Y: T.Buffer((pairs, H), "float32")):
        T.device_entry()
        n, i = T.cta_id([H // bn2, max_tiles])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        warp = T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([THREADS])
        W2_rows = T.decl_buffer((E * H, I), dtype, data=W2.data)          # expert e: rows [H e, H e + H)
        pool = T.SMEMPool()
        A_smem = pool.alloc((2, 1, ROWS, BK), dtype, layout=part.a_layout, align=1024)
        B_smem = pool.alloc((2, 1, bn2, BK), dtype, layout=part.b_layout, align=1024)
        Y_smem = pool.alloc((ROWS, bn2), "float32", layout=part.y_layout, align=16)
        full = pool.alloc((2,), "uint64", align=8)
        pool.commit()
        init_ring(full, tid)
        if tile_rows[i] > 0:
            tile(Hbuf, W2_rows, tile_expert, tile_start, tile_rows, slot_pair, Y, A_smem, B_smem, Y_smem, full, i, n,
                 tid, warp)

    return gemm2


def sync_words(max_tiles: int) -> int:
    """Length of the fused kernel's ``sync`` array: a ready count per tile, the ticket counter, the done counter."""
    return max_tiles + 2


def experts_kernel(shape: MoeShape, tokens: int, max_tiles: int, bn1: int, bn2: int, dtype: str = "float16",
                   tickets: bool = True, reset: bool = True):
    """GEMM1 and GEMM2 in one kernel, GEMM2 of a tile starting as soon as GEMM1 of that tile is done (the paper's
    finer-grained pipelining), not after all of GEMM1.

    Grid: n1 + n2 CTAs, n1 = (I / BN1) max_tiles GEMM1 works and n2 = (hidden / BN2) max_tiles GEMM2 works, both in
    tile-major order. A CTA takes its work by ticket (``atomicAdd(sync[max_tiles], 1)``), not by its block index:
    tickets below n1 are GEMM1 works, the rest GEMM2 works, so every GEMM1 work is held by a CTA that is running or
    done before any GEMM2 work is handed out, and a GEMM2 CTA waiting for its tile never waits on a CTA that has not
    started (no deadlock, whatever order the hardware starts CTAs in). GEMM1 of (tile i, chunk c) stores its rows of
    H, fences (``__threadfence``), then adds 1 to ``sync[i]``; GEMM2 of tile i waits until ``sync[i]`` counts all
    I / BN1 chunks, fences, and reads H by TMA after ``fence.proxy.async.global`` (H was written through the generic
    proxy). The last CTA to finish (``atomicAdd(sync[max_tiles + 1], 1)`` = n1 + n2 - 1) sets ``sync`` back to 0 for
    the next launch; it must be 0 at the first.

    Shared memory: the mbarriers and the ticket, then the GEMM1 tiles and the GEMM2 tiles over the same bytes (a CTA
    is one or the other): 80 KiB at BN1 = BN2 = 128, as each kernel alone.

    For measurement only (docs/moe.md): ``tickets=False`` takes the work from the block index instead (correct only
    while the hardware starts CTAs in index order, which CUDA does not promise), ``reset=False`` leaves ``sync`` for
    the caller to zero before each launch (no done counter)."""
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    one, two = _Gemm1(shape, tokens, max_tiles, bn1, dtype), Gemm2Part(shape, tokens, max_tiles, bn2)
    slots, pairs = one.slots, two.pairs
    chunks1, chunks2 = I // bn1, H // bn2
    n1, n2 = chunks1 * max_tiles, chunks2 * max_tiles
    words = sync_words(max_tiles)
    gemm1_tile, gemm2_tile = one.tile, two.tile

    @T.prim_func
    def experts(X: T.Buffer((tokens, H), dtype), W1: T.Buffer((E, 2 * I, H), dtype), W2: T.Buffer((E, H, I), dtype),
                tile_expert: T.Buffer((max_tiles,), "int32"), tile_start: T.Buffer((max_tiles,), "int32"),
                tile_rows: T.Buffer((max_tiles,), "int32"), slot_token: T.Buffer((slots,), "int32"),
                slot_pair: T.Buffer((slots,), "int32"), row_weight: T.Buffer((max_tiles * ROWS,), "float32"),
                Hbuf: T.Buffer((max_tiles * ROWS, I), dtype), Y: T.Buffer((pairs, H), "float32"),
                sync: T.Buffer((words,), "int32")):
        T.device_entry()
        block = T.cta_id([n1 + n2])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        warp = T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([THREADS])
        W1_rows = T.decl_buffer((E * 2 * I, H), dtype, data=W1.data)
        W2_rows = T.decl_buffer((E * H, I), dtype, data=W2.data)
        weights = T.decl_buffer((max_tiles * ROWS, bn1), "float32", data=row_weight.data, layout=one.weight_rows)
        pool = T.SMEMPool()
        full = pool.alloc((2,), "uint64", align=8)
        ticket = pool.alloc((1,), "int32", align=4)
        pool.move_base_to(1024)
        A1 = pool.alloc((2, 1, ROWS, BK), dtype, layout=one.a_layout, align=1024)
        B1 = pool.alloc((2, 2, bn1, BK), dtype, layout=one.b_layout, align=1024)
        pool.move_base_to(1024)                            # GEMM2's tiles over GEMM1's bytes
        A2 = pool.alloc((2, 1, ROWS, BK), dtype, layout=two.a_layout, align=1024)
        B2 = pool.alloc((2, 1, bn2, BK), dtype, layout=two.b_layout, align=1024)
        Y_smem = pool.alloc((ROWS, bn2), "float32", layout=two.y_layout, align=16)
        pool.commit()
        if tid == 0:
            if tickets:
                ticket[0] = T.cuda.atomic_add(T.address_of(sync[max_tiles]), 1)
            else:
                ticket[0] = block
        init_ring(full, tid)                              # its barrier also publishes the ticket
        work = ticket[0]
        if work < n1:
            if tile_rows[work // chunks1] > 0:
                gemm1_tile(X, W1_rows, slot_token, tile_expert, tile_start, weights, Hbuf, A1, B1, full,
                           work // chunks1, work % chunks1, tid)
            T.cuda.thread_fence()                          # this thread's rows of H before the count
            T.cuda.cta_sync()
            if tid == 0:
                T.cuda.atomic_add(T.address_of(sync[work // chunks1]), 1)
        else:
            if tile_rows[(work - n1) // chunks2] > 0:
                if tid == 0:
                    while T.cuda.atomic_add(T.address_of(sync[(work - n1) // chunks2]), 0) < chunks1:
                        T.evaluate(0)
                    T.cuda.thread_fence()
                    T.ptx.fence.proxy.async_.global_()     # H written by the generic proxy, read by TMA next
                T.cuda.cta_sync()
                gemm2_tile(Hbuf, W2_rows, tile_expert, tile_start, tile_rows, slot_pair, Y, A2, B2, Y_smem, full,
                           (work - n1) // chunks2, (work - n1) % chunks2, tid, warp)
        if reset:
            if tid == 0:
                T.cuda.thread_fence()
                if T.cuda.atomic_add(T.address_of(sync[max_tiles + 1]), 1) == n1 + n2 - 1:
                    for j in T.serial(words):              # the last CTA: every other is past its last use
                        sync[j] = 0

    return experts


def combine_kernel(shape: MoeShape, tokens: int, dtype: str = "float16"):
    H, K = shape.hidden, shape.top_k

    @T.prim_func
    def combine(Y: T.Buffer((tokens * K, H), "float32"), out: T.Buffer((tokens, H), dtype)):
        T.device_entry()
        t = T.cta_id([tokens])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([THREADS])
        Y3 = T.decl_buffer((tokens, K, H), "float32", data=Y.data)   # row t k + j of Y is Y3[t, j]: the same memory
        Tx.cta.sum(out[t, :], Y3[t, :, :], [1])

    return combine
