"""The FP8 (e4m3) expert kernels of the CUDA MoE layer (sm_90a; docs/moe.md, "FP8 experts").

Weights e4m3 with a FP32 scale per output channel; activations e4m3 with a scale per row, made on the device:

``quantise`` grid (max_tiles,), 128 threads: the tile-padded rows of an activation (row 64 i + r of tile i) to
           e4m3 codes and a scale per row, ``scale = max |row| / 448`` (1 for a zero row), ``code = e4m3(v / scale)``;
           rows past ``tile_rows[i]`` get codes 0 and scale 0. With ``gather`` the source row is the token
           ``slot_token[tile_start[i] + r]`` of X (tokens x hidden): the gathered, quantised tokens come out in
           tile-padded order, so GEMM1 reads its A operand by TMA (a token routed to k experts is quantised k times,
           T k rows of hidden bytes, against the experts' weights it saves reading in 16 bits). Without ``gather``
           the source is H itself (its rows are tile-padded already). Thread t takes half t % 2 of row t / 2; the
           two halves' maxima meet in shared memory.
``gemm1``  grid (I / BN1, max_tiles), one warpgroup: per K tile of 128 hidden columns (one 128-byte swizzle row of
           e4m3), TMA of the tile's 64 rows of quantised X and of W1[e]'s gate and up rows of the chunk into a
           2-slot ring; two wgmma m64nNk32 e4m3 x e4m3 -> FP32. Epilogue in registers: gate and up times the row's
           token scale (a stride-0 column view of the row scales) and the channel's weight scale (a stride-0 row
           view of W1's scales at the run-time start 2I e + c BN1), SiLU(gate) up w, cast to ``h_dtype``, stored to
           the tile's rows of H.
``gemm2``  grid (hidden / BN2, max_tiles), one warpgroup: quantised H's 64-row block and W2[e]'s BN2 rows by TMA,
           wgmma k32; the accumulator times the row's scale and the channel's W2 scale, then the scatter to pair
           order in Y as the 16-bit ``gemm2``.
The schedule and the combine are the 16-bit layer's kernels (``schedule_kernel``, ``combine_kernel``).
"""

from __future__ import annotations

from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

from ..cuda.kernels.hopper_gemm import accumulator, shared_tile
from ..cuda.kernels.pipeline import PipelineState
from ..cuda.kernels.tiles import local_tile
from .config import MoeShape
from .cuda_kernels import ROWS, THREADS, Gemm2Part, check_chunks, init_ring
from .fp8 import DTYPE as FP8, E4M3_MAX

BK8 = 128            # K tile: one 128-byte swizzle row of e4m3
H_DTYPES = ("bfloat16", "float16")


def chunk_sizes(shape: MoeShape, bn1: int, bn2: int) -> tuple[int, int]:
    """(bn1, bn2) if the FP8 kernels can tile ``shape`` with them, else ValueError naming every problem."""
    return check_chunks(shape, bn1, bn2, BK8, "the e4m3 K tile", "axe4j.moe.cuda_fp8", ("bn1", "bn2"))


def quantise_kernel(rows_in: int, cols: int, max_tiles: int, slots: int, dtype: str, gather: bool):
    """``quantise(src, tile_start, tile_rows, slot_token, codes, scales)``: see the module's docstring."""
    if cols % 2:
        raise ValueError(f"axe4j.moe.cuda_fp8 quantise: cols ({cols}) must be even (two threads per row)")
    half = cols // 2
    rows_total = max_tiles * ROWS

    @T.prim_func
    def quantise(src: T.Buffer((rows_in, cols), dtype), tile_start: T.Buffer((max_tiles,), "int32"),
                 tile_rows: T.Buffer((max_tiles,), "int32"), slot_token: T.Buffer((slots,), "int32"),
                 codes: T.Buffer((rows_total, cols), FP8), scales: T.Buffer((rows_total,), "float32")):
        T.device_entry()
        i = T.cta_id([max_tiles])
        T.warp_id([THREADS // 32])
        T.lane_id([32])
        tid = T.thread_id([THREADS])
        pool = T.SMEMPool()
        part = pool.alloc((THREADS,), "float32", align=16)        # each half row's max |v|
        pool.commit()
        amax = T.alloc_local([1], "float32")
        r = tid // 2
        row = T.meta_var(slot_token[tile_start[i] + r] if gather else i * ROWS + r)
        amax[0] = T.float32(0)
        if r < tile_rows[i]:
            for j in T.serial(half):
                amax[0] = T.max(amax[0], T.abs(T.Cast("float32", src[row, (tid % 2) * half + j])))
        part[tid] = amax[0]
        T.cuda.cta_sync()
        amax[0] = T.max(part[r * 2], part[r * 2 + 1])
        amax[0] = T.Select(amax[0] > T.float32(0), amax[0] / T.float32(E4M3_MAX), T.float32(1))   # the scale
        if r < tile_rows[i]:
            for j in T.serial(half):
                codes[i * ROWS + r, (tid % 2) * half + j] = T.Cast(
                    FP8, T.Cast("float32", src[row, (tid % 2) * half + j]) / amax[0])
            if tid % 2 == 0:
                scales[i * ROWS + r] = amax[0]
        else:
            for j in T.serial(half):
                codes[i * ROWS + r, (tid % 2) * half + j] = T.Cast(FP8, T.float32(0))
            if tid % 2 == 0:
                scales[i * ROWS + r] = T.float32(0)

    return quantise


def gemm1_kernel(shape: MoeShape, max_tiles: int, bn1: int, h_dtype: str = "bfloat16"):
    """``gemm1(Xq, x_scale, W1q, w1_scale, tile_expert, tile_rows, row_weight, Hbuf)``."""
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    rows_total = max_tiles * ROWS
    k_tiles = H // BK8
    a_layout, b_layout = shared_tile(2, 1, ROWS, BK8, 1), shared_tile(2, 2, bn1, BK8, 1)
    acc_layout = accumulator(ROWS, bn1)
    per_row = TileLayout(S[(rows_total, bn1):(1, 0)])          # a row's value in every column
    per_channel = TileLayout(S[(ROWS, E * 2 * I):(0, 1)])       # a channel's value in every row
    stage_bytes = (ROWS + 2 * bn1) * BK8

    @T.macro
    def load(Xq, W1_rows, A_smem, B_smem, full, i, first, kt):
        ring = T.meta_var(PipelineState(2, kt))
        s = ring.index()
        Tx.copy_async(A_smem[s, 0, :, :], local_tile(Xq, (ROWS, BK8), (i, kt)), mbar=full.ptr_to([s]))
        Tx.copy_async(B_smem[s, 0, :, :], W1_rows[first:first + bn1, kt * BK8:kt * BK8 + BK8], mbar=full.ptr_to([s]))
        Tx.copy_async(B_smem[s, 1, :, :], W1_rows[first + I:first + I + bn1, kt * BK8:kt * BK8 + BK8],
                      mbar=full.ptr_to([s]))
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(stage_bytes))

    @T.prim_func
    def gemm1(Xq: T.Buffer((rows_total, H), FP8), x_scale: T.Buffer((rows_total,), "float32"),
              W1: T.Buffer((E, 2 * I, H), FP8), w1_scale: T.Buffer((E, 2 * I), "float32"),
              tile_expert: T.Buffer((max_tiles,), "int32"), tile_rows: T.Buffer((max_tiles,), "int32"),
              row_weight: T.Buffer((rows_total,), "float32"), Hbuf: T.Buffer((rows_total, I), h_dtype)):
        T.device_entry()
        c, i = T.cta_id([I // bn1, max_tiles])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([THREADS])
        W1_rows = T.decl_buffer((E * 2 * I, H), FP8, data=W1.data)
        xs = T.decl_buffer((rows_total, bn1), "float32", data=x_scale.data, layout=per_row)
        ws = T.decl_buffer((rows_total, bn1), "float32", data=row_weight.data, layout=per_row)
        w1s = T.decl_buffer((ROWS, E * 2 * I), "float32", data=w1_scale.data, layout=per_channel)
        pool = T.SMEMPool()
        A_smem = pool.alloc((2, 1, ROWS, BK8), FP8, layout=a_layout, align=1024)
        B_smem = pool.alloc((2, 2, bn1, BK8), FP8, layout=b_layout, align=1024)
        full = pool.alloc((2,), "uint64", align=8)
        pool.commit()
        init_ring(full, tid)
        if tile_rows[i] > 0:
            gate = T.alloc_buffer((ROWS, bn1), "float32", scope="local", layout=acc_layout)
            up = T.alloc_buffer((ROWS, bn1), "float32", scope="local", layout=acc_layout)
            tmp = T.alloc_buffer((ROWS, bn1), "float32", scope="local", layout=acc_layout)
            out = T.alloc_buffer((ROWS, bn1), h_dtype, scope="local", layout=acc_layout)
            Tx.wg.fill(gate[:, :], T.float32(0.0))
            Tx.wg.fill(up[:, :], T.float32(0.0))
            first = tile_expert[i] * (2 * I) + c * bn1     # gate rows of this chunk; up rows I further
            if tid == 0:
                load(Xq, W1_rows, A_smem, B_smem, full, i, first, 0)
            for kt in T.serial(k_tiles):
                if tid == 0:
                    if kt + 1 < k_tiles:
                        load(Xq, W1_rows, A_smem, B_smem, full, i, first, kt + 1)   # its slot's wgmma completed
                ring = T.meta_var(PipelineState(2, kt))
                T.cuda.mbarrier_wait(full.ptr_to([ring.index()]), ring.phase())
                Tx.wg.gemm_async(gate[:, :], A_smem[ring.index(), 0, :, :], B_smem[ring.index(), 0, :, :],
                                 transA=False, transB=False, accum=True, wait=0, proxy_fence=False)
                Tx.wg.gemm_async(up[:, :], A_smem[ring.index(), 0, :, :], B_smem[ring.index(), 1, :, :],
                                 transA=False, transB=False, accum=True, wait=0, proxy_fence=False)
                T.cuda.cta_sync()                          # every thread is past the wgmma before its slot refills
            # dequantise: the row's token scale, then each channel's weight scale
            Tx.wg.copy(tmp[:, :], local_tile(xs, (ROWS, None), (i, None)))
            Tx.wg.mul(gate[:, :], gate[:, :], tmp[:, :])
            Tx.wg.mul(up[:, :], up[:, :], tmp[:, :])
            Tx.wg.copy(tmp[:, :], w1s[:, first:first + bn1])
            Tx.wg.mul(gate[:, :], gate[:, :], tmp[:, :])
            Tx.wg.copy(tmp[:, :], w1s[:, first + I:first + I + bn1])
            Tx.wg.mul(up[:, :], up[:, :], tmp[:, :])
            # SiLU(gate) * up * routing weight (0 past the tile's rows)
            Tx.wg.silu(gate[:, :], gate[:, :])
            Tx.wg.mul(gate[:, :], gate[:, :], up[:, :])
            Tx.wg.copy(tmp[:, :], local_tile(ws, (ROWS, None), (i, None)))
            Tx.wg.mul(gate[:, :], gate[:, :], tmp[:, :])
            Tx.wg.cast(out[:, :], gate[:, :])
            Tx.wg.copy(local_tile(Hbuf, (ROWS, bn1), (i, c)), out[:, :])

    return gemm1


def gemm2_kernel(shape: MoeShape, tokens: int, max_tiles: int, bn2: int):
    """``gemm2(Hq, h_scale, W2q, w2_scale, tile_expert, tile_start, tile_rows, slot_pair, Y)``: the 16-bit GEMM2's
    ring and scatter (``Gemm2Part`` at K tiles of 128 e4m3), the accumulator dequantised between them."""
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    part = Gemm2Part(shape, tokens, max_tiles, bn2, BK8, 1)
    pairs, slots, mainloop, scatter = part.pairs, part.slots, part.mainloop, part.scatter
    rows_total = max_tiles * ROWS
    acc_layout = part.acc_layout
    per_row = TileLayout(S[(rows_total, bn2):(1, 0)])
    per_channel = TileLayout(S[(ROWS, E * H):(0, 1)])

    @T.prim_func
    def gemm2(Hq: T.Buffer((rows_total, I), FP8), h_scale: T.Buffer((rows_total,), "float32"),
              W2: T.Buffer((E, H, I), FP8), w2_scale: T.Buffer((E, H), "float32"),
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
        W2_rows = T.decl_buffer((E * H, I), FP8, data=W2.data)
        hs = T.decl_buffer((rows_total, bn2), "float32", data=h_scale.data, layout=per_row)
        w2s = T.decl_buffer((ROWS, E * H), "float32", data=w2_scale.data, layout=per_channel)
        pool = T.SMEMPool()
        A_smem = pool.alloc((2, 1, ROWS, BK8), FP8, layout=part.a_layout, align=1024)
        B_smem = pool.alloc((2, 1, bn2, BK8), FP8, layout=part.b_layout, align=1024)
        Y_smem = pool.alloc((ROWS, bn2), "float32", layout=part.y_layout, align=16)
        full = pool.alloc((2,), "uint64", align=8)
        pool.commit()
        init_ring(full, tid)
        if tile_rows[i] > 0:
            acc = T.alloc_buffer((ROWS, bn2), "float32", scope="local", layout=acc_layout)
            tmp = T.alloc_buffer((ROWS, bn2), "float32", scope="local", layout=acc_layout)
            Tx.wg.fill(acc[:, :], T.float32(0.0))
            first = tile_expert[i] * H + n * bn2
            mainloop(acc, Hq, W2_rows, A_smem, B_smem, full, i, first, tid)
            Tx.wg.copy(tmp[:, :], local_tile(hs, (ROWS, None), (i, None)))      # the row's scale
            Tx.wg.mul(acc[:, :], acc[:, :], tmp[:, :])
            Tx.wg.copy(tmp[:, :], w2s[:, first:first + bn2])                    # each channel's W2 scale
            Tx.wg.mul(acc[:, :], acc[:, :], tmp[:, :])
            scatter(acc, tile_start, tile_rows, slot_pair, Y, Y_smem, i, n, warp)

    return gemm2
