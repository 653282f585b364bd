"""The kernels written on both lanes and compared by their PTX (test_tile_ops_tirx.py): plain data, so that the 0.27
lane's process (_tile_kernels_027.py) and the new lane's (_tile_kernels_tirx.py) build the same kernel from one entry.

- ``roundtrip``: A (global) -> S (shared) -> B (global) at ``scope``, over the ``shape`` region of arguments of shape
  ``storage``. S is row-major, or has the strides ``s_strides``, or is ``s_swizzle`` = (per_element, swizzle_len,
  atom_len, atom): a ``ComposeLayout`` of the atom tiled to the shape.
- ``map``: A -> X (shared), ``op`` at ``scope`` into Y (shared; ``add`` reads B too, into X), Y -> C.
- ``thread_local``: each thread's row of A into registers, doubled, back to B.
- ``cp_async``: A -> S by ``copy_async`` at ``scope``, waited and synced, S -> B.
- ``tile`` (plain or meta): the tutorial's 32 x 32 tile of a 64 x 64 matrix per CTA, its offset a plain variable (the
  rules cannot prove it aligned: one element per access) or an expression (four).
- ``transpose``: the tutorial's transpose of a 64 x 64 matrix by 32 x 32 tiles through a swizzled shared tile
  (``Swizzle<3,2,3>``), written row by row and read column by column through a transposed view of the same bytes.
- ``swizzle_bytes``: a 32 x 32 tile written through that swizzled layout, its bytes read back through a plain
  row-major view.
- ``registers``: A (and B) -> register tiles of ``layout`` over the scope's threads; ``op`` (copy, add, cast) into
  a register tile -> C, or (``via_shared``) the register tile -> a shared tile (scope) -> C by the CTA
  (python/tests/test_cuda_register.py's kernels).
- ``boxes``: a warp loads the region [4:36] of a (64,) transposed view ``S[(8,8):(1,8)]`` of A into a register tile
  ``S[32:1@laneid]``; the region crosses a digit part way, so the rule cuts it into boxes
  (python/tests/test_cuda_register_boxes.py's example).
- ``memory_digits``: a CTA of 64 threads copies the region [4:36] of a (64,) transposed view ``S[(8,8):(1,8)]`` of A
  (global) to B (global): a region that crosses a digit part way between memories, which only the digits rule
  addresses (one element per thread and round).
- ``digits``: for i < 6, a warp loads [5i + 3, 5i + 67) of a (128,) transposed view ``S[(16,8):(1,16)]`` of A into
  a register tile ``S[(8,4,2):(4@laneid,1@laneid,1)]`` and stores it to B[i]: a run-time start that may cross a digit
  anywhere, so each thread visits its slots one by one (python/tests/test_cuda_register_boxes.py's example).
- ``reduce``: A (rows, cols) -> a register tile of ``layout``; ``op`` (sum, max, min) over the columns into a
  register vector of ``out_layout`` (``accum``: onto 1.0 filled first) -> B: the shuffle reduce.
- ``shared_reduce``: A (rows, cols) -> a shared tile; ``op`` over its columns by the CTA into a shared vector -> B:
  one thread per output (``axe4j-cuda-reduce``), or a group of threads and warp shuffles per output
  (``axe4j-cuda-tree-reduce``), as the rules choose.
- ``thread_reduce``: each thread's row of A into registers, summed onto 1.0 (``accum``) in one register -> B.
- ``matrix``: A -> a shared tile (row-major, ``storage`` columns, or ``swizzle`` = a ``ComposeLayout``'s (per-element,
  swizzle length, atom length) over it) -> a register tile of ``layout`` by ldmatrix at ``scope`` (a warp, or a
  warpgroup of ``threads``) -> another shared tile by stmatrix -> B; and the register tile straight to C (its
  fragment mapping shows in C).
- ``mma``: A (m x k) and B (n x k) fp16 -> shared tiles -> a warp's mma fragments by ldmatrix; ``gemm`` (mma.sync
  m16n8k16, B transposed) into an f32 fragment -> D (python/tests/test_cuda_mma.py's kernels).
- ``tma``: thread 0 loads the ``region`` of A (g_shape; ``(a, None)`` an index) into a shared tile (s_shape,
  row-major or ``s_swizzle``) by ``copy_async`` with ``mbar=``: it initialises the mbarrier (count 1), the CTA fences
  and syncs, thread 0 issues the copy and arms the mbarrier with the tile's bytes (``arrive.expect_tx``), and every
  thread waits on parity 0 (``try_wait.parity``). Then the tile goes to the same region of B by a TMA store
  (``store`` "tma": a bulk group committed and waited) or by a plain CTA copy (``store`` "copy": the shared
  layout, a swizzle included, shows in B) (python/tests/test_cuda_async.py's kernels).
- ``wgmma``: A (m x k) and B (n x k) fp16 -> K-major shared tiles (``a``, ``b``: ``("swizzled", mode)``, rows of
  8 * 2^mode elements, K blocks of a row outermost; or ``("core",)``, 8x8 core matrices) by the CTA; ``gemm_async``
  (wgmma, one warpgroup) into the f32 accumulator fragment (``accum``: onto 1.0 filled first) -> C
  (python/tests/test_cuda_wgmma.py's kernels).
- ``tcgen05``: python/tests/test_cuda_tcgen05.py's kernel: A (128 x k) and B (n x k) fp16 -> K-major shared tiles
  (``mode``: the swizzle, as ``wgmma``'s ``("swizzled", mode)``) by the CTA; warp 0 allocates 512 tensor-memory
  columns; thread 0 (``warp``: warp 0's elected lane) issues ``gemm_async`` (tcgen05.mma) into the f32 accumulator in
  tensor memory (``accum``: onto 1.0 stored there first by tcgen05.st) and commits to an mbarrier the CTA waits on;
  the warpgroup reads the accumulator back (tcgen05.ld) -> C; warp 0 frees the columns.
- ``tmem``: A (128 x ``width``) f32 -> a warpgroup's register tile (thread 32 w + l holds row 32 w + l) -> tensor
  memory columns ``column`` .. by tcgen05.st -> another register tile by tcgen05.ld -> B.
- ``hopper_gemm``: axe4j.cuda.kernels.hopper_gemm's FP16 GEMM D = A B^T (``mnk``; ``tile`` = BM, BN, BK, stages):
  a producer warpgroup streams A and B tiles into a swizzled ring by TMA (full/empty mbarriers), two consumer
  warpgroups multiply by wgmma into register accumulators, cast them to FP16 and store their rows.

A layout is written as data, so that both lanes build it: ``(extents, strides)`` plus replicas ``((extent,
stride), ...)``; a stride is an int or ``(int, thread axis)``.
"""

from __future__ import annotations

ARCHS = ("sm_80", "sm_90a")

LANE, WARP, WARP_IN_WG, THREAD_IN_WG = "laneid", "warpid", "wid_in_wg", "tid_in_wg"
# a warp's 32x8 tile: lane l holds row l, 8 consecutive elements
ROWS_ON_LANES = ((32, 8), ((1, LANE), 1))
# a CTA of 128 threads: 128x8, warp w rows 32w.., lane = row
CTA_ROWS = ((4, 32, 8), ((1, WARP), (1, LANE), 1))
# 64x16 at warpgroup scope: warp w holds rows 16w..16w+15, lanes split rows x column pairs
WG_TILES = ((4, 16, 4, 2, 2), ((1, WARP_IN_WG), (2, LANE), 2, (1, LANE), 1))
# 8x16 rows over lanes 4r + q, each lane 4 consecutive columns; the sum replicated over q
ROW_QUADS = ((8, 4, 4), ((4, LANE), (1, LANE), 1))
ROW_QUADS_SUM = ((8,), ((4, LANE),), ((4, (1, LANE)),))
# 32x16 at CTA scope over 4 warps: warp w rows 8w.., lanes as ROW_QUADS
CTA_QUADS = ((4, 8, 4, 4), ((1, WARP), (4, LANE), (1, LANE), 1))
CTA_QUADS_SUM = ((4, 8), ((1, WARP), (4, LANE)), ((4, (1, LANE)),))
# 4x64 at warp scope: each row across all 32 lanes (2 columns a lane); the result on every lane
ROW_ACROSS_WARP = ((4, 32, 2), (2, (1, LANE), 1))
ROW_ACROSS_WARP_MAX = ((4,), (1,), ((32, (1, LANE)),))
# 64x16 at warpgroup scope: warp w rows 16w.., lanes 2r + h, column pairs
WG_ROWS = ((4, 16, 2, 2, 4), ((1, WARP_IN_WG), (2, LANE), 4, (1, LANE), 1))
WG_ROWS_MIN = ((4, 16), ((1, WARP_IN_WG), (2, LANE)), ((2, (1, LANE)),))
# 16x16 fp16 as 2x2 ldmatrix blocks; block (i, j) in registers 2 * (i + 2 j) of each lane
MMA_16x16 = ((2, 8, 2, 4, 2), (2, (4, LANE), 4, (1, LANE), 1))
# 8x32: four blocks along the columns, registers in column order
MMA_8x32 = ((8, 4, 4, 2), ((4, LANE), 2, (1, LANE), 1))
# the 16x16 fragment over a warpgroup's 4 warps (warp w holds rows 16w..), and over 4 column blocks of a 16x64 tile
MMA_WG_64x16 = ((4, 2, 8, 2, 4, 2), ((1, WARP_IN_WG), 2, (4, LANE), 4, (1, LANE), 1))
MMA_16x64 = ((2, 8, 4, 2, 4, 2), (2, (4, LANE), 8, 4, (1, LANE), 1))


def mma_layouts(m, n, k):
    """The mma.sync fragments of A (m x k, 8 registers a 16x16 block), B stored n x k (4 a 8x16 block) and D (m x n
    f32, 4 a 16x8 block), blocks in row-major order."""
    bm, bn, bk = m // 16, n // 8, k // 16
    a = ((bm, 2, 8, bk, 2, 4, 2), (8 * bk, 2, (4, LANE), 8, 4, (1, LANE), 1))
    b = ((bn, 8, bk, 2, 4, 2), (4 * bk, (4, LANE), 4, 2, (1, LANE), 1))
    d = ((bm, 2, 8, bn, 4, 2), (4 * bn, 2, (4, LANE), 4, (1, LANE), 1))
    return a, b, d


def layout(spec, S, R, TileLayout, axes):
    """The layout of ``spec`` (see above) on a lane: its ``S``, ``R``, ``TileLayout`` and ``axes`` (name -> axis)."""
    def stride(s):
        return s if isinstance(s, int) else s[0] @ axes[s[1]]

    extents, strides = spec[0], spec[1]
    shard = S[tuple(extents):tuple(stride(s) for s in strides)]
    for extent, s in (spec[2] if len(spec) > 2 else ()):
        shard = shard + R[extent:stride(s)]
    return TileLayout(shard)

KERNELS = {
    # docs/tutorial.md, section 2 ("Tile offsets: T.meta_var")
    "tutorial_tile_plain": {"kind": "tile", "meta": False},
    "tutorial_tile_meta_var": {"kind": "tile", "meta": True},
    # docs/tutorial.md, section 2: the transpose through a swizzled shared tile and its transposed view
    "tutorial_transpose_swizzled": {"kind": "transpose"},
    # the same swizzled tile read back through a plain view of its bytes: the swizzle itself shows in the numbers
    "swizzled_tile_bytes_f32": {"kind": "swizzle_bytes"},
    # python/tests/test_cuda_dispatch.py's vectorized copies
    "copy_cta_f32_64x32": {"kind": "roundtrip", "shape": (64, 32), "dtype": "float32", "scope": "cta",
                           "threads": 128},
    "copy_cta_padded_rows_f32": {"kind": "roundtrip", "shape": (16, 30), "storage": (16, 32), "dtype": "float32",
                                 "scope": "cta", "threads": 64},
    "copy_cta_transposing_f32": {"kind": "roundtrip", "shape": (32, 32), "dtype": "float32", "scope": "cta",
                                 "threads": 128, "s_strides": (1, 32)},
    # python/tests/test_cuda_async.py's cp.async copies (16 bytes: .cg; 8 bytes: .ca), committed and waited
    "cp_async_cta_f32_64x32": {"kind": "cp_async", "shape": (64, 32), "dtype": "float32", "scope": "cta",
                               "threads": 128},
    "cp_async_warp_padded_rows_f32": {"kind": "cp_async", "shape": (16, 30), "storage": (16, 32),
                                      "dtype": "float32", "scope": "warp", "threads": 32},
    # fp16 128-byte swizzle (Swizzle<3,3,3>) tiled over the shared tile: 8-element units stay whole (16 bytes)
    "copy_cta_swizzled_shared_f16": {"kind": "roundtrip", "shape": (64, 64), "dtype": "float16", "scope": "cta",
                                     "threads": 128, "s_swizzle": (3, 3, 3, (8, 64))},
    "add_cta_f32": {"kind": "map", "op": "add", "shape": (32, 64), "dtype": "float32", "out_dtype": "float32",
                    "scope": "cta", "threads": 128},
    "exp_warp_f32": {"kind": "map", "op": "exp", "shape": (8, 32), "dtype": "float32", "out_dtype": "float32",
                     "scope": "warp", "threads": 32},
    "cast_cta_f32_to_f16": {"kind": "map", "op": "cast", "shape": (32, 32), "dtype": "float32",
                            "out_dtype": "float16", "scope": "cta", "threads": 128},
    "fill_warpgroup_f32": {"kind": "map", "op": "fill", "shape": (16, 32), "dtype": "float32",
                           "out_dtype": "float32", "scope": "warpgroup", "threads": 128},
    "fill_thread_f32": {"kind": "map", "op": "fill", "shape": (4, 8), "dtype": "float32", "out_dtype": "float32",
                        "scope": "thread", "threads": 32},
    "thread_local_add_f32": {"kind": "thread_local", "shape": (64, 8), "dtype": "float32"},
    # register tiles over thread axes (axe4j-cuda-register), and the shuffle reduce (axe4j-cuda-shuffle-reduce):
    # their plans do not depend on the arch, so one arch (sm_80) compiles them (the test module's time)
    "add_warp_registers_f16": {"kind": "registers", "op": "add", "shape": (32, 8), "dtype": "float16",
                               "out_dtype": "float16", "layout": ROWS_ON_LANES, "scope": "warp", "threads": 32,
                               "archs": ("sm_80",)},
    "cast_cta_registers_f16_to_f32": {"kind": "registers", "op": "cast", "shape": (128, 8), "dtype": "float16",
                                      "out_dtype": "float32", "layout": CTA_ROWS, "scope": "cta", "threads": 128,
                                      "archs": ("sm_80",)},
    "copy_warpgroup_wid_in_wg_via_shared_f32": {"kind": "registers", "op": "copy", "shape": (64, 16),
                                                "dtype": "float32", "out_dtype": "float32", "layout": WG_TILES,
                                                "scope": "warpgroup", "threads": 128, "via_shared": True,
                                                "archs": ("sm_80",)},
    "copy_warp_crossing_digits_boxes_f32": {"kind": "boxes", "archs": ("sm_80",)},
    "copy_warp_run_time_start_digits_f32": {"kind": "digits", "archs": ("sm_80",)},
    "copy_cta_crossing_digits_memory_f32": {"kind": "memory_digits", "archs": ("sm_80",)},
    "sum_warp_row_quads_f32": {"kind": "reduce", "op": "sum", "shape": (8, 16), "layout": ROW_QUADS,
                               "out_layout": ROW_QUADS_SUM, "scope": "warp", "threads": 32, "archs": ("sm_80",)},
    "max_warp_rows_across_lanes_f32": {"kind": "reduce", "op": "max", "shape": (4, 64), "layout": ROW_ACROSS_WARP,
                                       "out_layout": ROW_ACROSS_WARP_MAX, "scope": "warp", "threads": 32,
                                       "archs": ("sm_80",)},
    "min_warpgroup_rows_f32": {"kind": "reduce", "op": "min", "shape": (64, 16), "layout": WG_ROWS,
                               "out_layout": WG_ROWS_MIN, "scope": "warpgroup", "threads": 128, "archs": ("sm_80",)},
    # the one known difference in a mix, (0.27, new TIRx) counts: 0.27 folds each row by plain C loads, which nvcc
    # merges into 16-byte loads; the new lane's explicit ld.shared.f32 per term (inline asm) is never merged
    # ldmatrix/stmatrix (axe4j-cuda-ldstmatrix); stmatrix needs sm_90
    "ldst_matrix_x4_16x16_f16": {"kind": "matrix", "shape": (16, 16), "layout": MMA_16x16, "archs": ("sm_90a",),
                                 "requires": ("ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                              "stmatrix.sync.aligned.m8n8.x4.shared.b16")},
    "ldst_matrix_x4_8x32_padded_f16": {"kind": "matrix", "shape": (8, 32), "storage": (8, 40), "layout": MMA_8x32,
                                       "archs": ("sm_90a",),
                                       "requires": ("ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                                    "stmatrix.sync.aligned.m8n8.x4.shared.b16")},
    "ldst_matrix_x4_64x16_warpgroup_f16": {"kind": "matrix", "shape": (64, 16), "layout": MMA_WG_64x16,
                                           "scope": "warpgroup", "threads": 128, "archs": ("sm_90a",),
                                           "requires": ("ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                                        "stmatrix.sync.aligned.m8n8.x4.shared.b16")},
    # a 128-byte swizzled tile (Swizzle<3,3,3>): each 16-byte row of a matrix at swz(address)
    "ldst_matrix_x4_16x64_swizzled_f16": {"kind": "matrix", "shape": (16, 64), "layout": MMA_16x64,
                                          "swizzle": (3, 3, 3), "archs": ("sm_90a",),
                                          "requires": ("ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                                       "stmatrix.sync.aligned.m8n8.x4.shared.b16")},
    # mma.sync GEMM tiles of a warp (axe4j-cuda-mma), fragments loaded by ldmatrix
    "mma_16x8x16_f16": {"kind": "mma", "mnk": (16, 8, 16), "archs": ("sm_80",),
                        "requires": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",)},
    "mma_32x16x32_f16": {"kind": "mma", "mnk": (32, 16, 32), "archs": ("sm_80",),
                         "requires": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",)},
    # TMA bulk tensor copies with their mbarrier (axe4j-cuda-tma), sm_90a only
    "tma_2d_f16_64x64": {"kind": "tma", "g_shape": (128, 128), "region": ((64, 128), (0, 64)), "s_shape": (64, 64),
                         "dtype": "float16", "store": "tma", "archs": ("sm_90a",),
                         "requires": ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                                      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group")},
    # fp32 rows of 32 from a 3-d tensor with rows of 48 at batch 2: the batch is a third map dim of box 1
    "tma_3d_f32_batch": {"kind": "tma", "g_shape": (4, 32, 48), "region": ((2, None), (0, 32), (8, 40)),
                         "s_shape": (32, 32), "dtype": "float32", "store": "tma", "archs": ("sm_90a",),
                         "requires": ("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes",
                                      "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group")},
    # 128-byte swizzle (Swizzle<3,3,3> tiled over 64 x 128 fp16): the load writes the swizzled box, a CTA copy reads
    # it back through the same layout
    "tma_swizzle128_f16_64x128": {"kind": "tma", "g_shape": (64, 256), "region": ((0, 64), (128, 256)),
                                  "s_shape": (64, 128), "dtype": "float16", "s_swizzle": (3, 3, 3, (8, 64)),
                                  "store": "copy", "archs": ("sm_90a",),
                                  "requires": ("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::"
                                               "complete_tx::bytes",)},
    # wgmma GEMM tiles of a warpgroup (axe4j-cuda-wgmma), operands in shared memory, sm_90a only
    "wgmma_64x64x32_sw64_f16": {"kind": "wgmma", "mnk": (64, 64, 32), "a": ("swizzled", 2), "b": ("swizzled", 2),
                                "archs": ("sm_90a",),
                                "requires": ("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",)},
    "wgmma_64x32x32_core_accum_f16": {"kind": "wgmma", "mnk": (64, 32, 32), "a": ("core",), "b": ("core",),
                                      "accum": True, "archs": ("sm_90a",),
                                      "requires": ("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16",)},
    # the Hopper GEMM (TMA + wgmma + mbarrier ring, warp-specialised): 4 K tiles through 2 stages, so the ring wraps
    # (0.27, new TIRx) counts of the one difference: 0.27's half2 store of two cvt results, which nvcc writes as
    # st.global.v2.b16 (from ldmatrix's 32-bit registers it writes st.global.b32), is the new lane's st.global.b32
    "hopper_gemm_128x128x256": {"kind": "hopper_gemm", "mnk": (128, 128, 256), "tile": (128, 128, 64, 2),
                                "archs": ("sm_90a",),
                                "mix_differs": {"st.global.v2.b16": (32, 0), "st.global.b32": (0, 32)},
                                "requires": ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                                             "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                                             "complete_tx::bytes")},
    # tcgen05 GEMM tiles into tensor memory (axe4j-cuda-tcgen05) and tensor memory <-> registers (axe4j-cuda-tmem),
    # sm_100a only: 4 K steps under a 128-byte swizzle; an elected lane accumulating onto C under a 32-byte swizzle.
    # (0.27, new TIRx) counts of the one difference: 0.27's TMEMPool takes the allocation to start at column 0 and
    # syncs warp 0 after tcgen05.alloc (bar.warp.sync); the new lane's kernel reads the address tcgen05.alloc wrote
    # after a CTA sync, which costs one more bar.sync where a tensor-memory access comes before the CTA's first sync
    "tcgen05_128x64x64_sw128_f16": {"kind": "tcgen05", "nk": (64, 64), "mode": 3, "archs": ("sm_100a",),
                                    "mix_differs": {"bar.warp.sync": (1, 0)},
                                    "requires": ("tcgen05.mma.cta_group::1.kind::f16",
                                                 "tcgen05.ld.sync.aligned.32x32b.x64.b32")},
    "tcgen05_128x64x32_sw32_accum_warp_f16": {"kind": "tcgen05", "nk": (64, 32), "mode": 1, "accum": True,
                                              "warp": True, "archs": ("sm_100a",),
                                              "mix_differs": {"bar.warp.sync": (1, 0), "bar.sync": (2, 3)},
                                              "requires": ("tcgen05.mma.cta_group::1.kind::f16",
                                                           "tcgen05.st.sync.aligned.32x32b.x64.b32")},
    "tmem_roundtrip_f32_128x32": {"kind": "tmem", "width": 32, "column": 32, "archs": ("sm_100a",),
                                  "mix_differs": {"bar.warp.sync": (1, 0), "bar.sync": (1, 2)},
                                  "requires": ("tcgen05.st.sync.aligned.32x32b.x32.b32",
                                               "tcgen05.ld.sync.aligned.32x32b.x32.b32")},
    "max_cta_shared_rows_f32": {"kind": "shared_reduce", "op": "max", "shape": (64, 8), "threads": 64,
                                "archs": ("sm_80",),
                                "mix_differs": {"ld.shared.b32": (0, 8), "ld.shared.v4.b32": (3, 1)}},
    "sum_cta_shared_rows_tree_f32": {"kind": "shared_reduce", "op": "sum", "shape": (8, 64), "threads": 128,
                                     "archs": ("sm_80",)},
    # groups wider than a warp: the warps' partials meet in a shared scratch tile after a CTA barrier
    "sum_cta_shared_rows_cross_warp_f32": {"kind": "shared_reduce", "op": "sum", "shape": (2, 512), "threads": 256,
                                           "archs": ("sm_80",)},
    "max_cta_shared_rows_cross_warp_f32": {"kind": "shared_reduce", "op": "max", "shape": (3, 300), "threads": 256,
                                           "archs": ("sm_80",)},
    "sum_thread_registers_accum_f32": {"kind": "thread_reduce", "op": "sum", "shape": (64, 8), "accum": True,
                                       "archs": ("sm_80",)},
    "sum_cta_row_quads_accum_f32": {"kind": "reduce", "op": "sum", "shape": (32, 16), "layout": CTA_QUADS,
                                    "out_layout": CTA_QUADS_SUM, "scope": "cta", "threads": 128, "accum": True,
                                    "archs": ("sm_80",)},
}


def archs(name):
    """The arches kernel ``name`` is compiled for."""
    return KERNELS[name].get("archs", ARCHS)


def arrays(name):
    """(the kernel's arguments as numpy arrays, seeded; the outputs zero) and the expected arguments after it ran,
    from numpy: ``(args, expected, exact)``; ``exact`` False where the device computes a transcendental
    (``ex2.approx`` under fast math) and a tolerance of 2 ulp applies."""
    import numpy as np

    spec = KERNELS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    kind = spec["kind"]
    if kind == "tile":
        a = rng.standard_normal((64, 64)).astype("float32")
        return [a, np.zeros_like(a)], [a, a], True
    if kind == "transpose":
        a = rng.standard_normal((64, 64)).astype("float32")
        return [a, np.zeros_like(a)], [a, a.T.copy()], True
    if kind == "swizzle_bytes":
        a = rng.standard_normal((32, 32)).astype("float32")
        b = np.empty_like(a)
        b.reshape(-1)[swizzle_3_2_3(np.arange(a.size))] = a.reshape(-1)
        return [a, np.zeros_like(a)], [a, b], True
    if kind in ("roundtrip", "cp_async"):
        storage = spec.get("storage") or spec["shape"]
        rows, cols = spec["shape"]
        a = rng.standard_normal(storage).astype(spec["dtype"])
        b = np.zeros_like(a)
        b[:rows, :cols] = a[:rows, :cols]
        return [a, np.zeros_like(a)], [a, b], True
    if kind == "thread_local":
        a = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
        return [a, np.zeros_like(a)], [a, a + a], True
    if kind == "registers":
        a = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
        b = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
        out = {"add": lambda: a + b, "cast": lambda: a, "copy": lambda: a}[spec["op"]]().astype(spec["out_dtype"])
        return [a, b, np.zeros(spec["shape"], spec["out_dtype"])], [a, b, out], True
    if kind in ("boxes", "memory_digits"):
        a = rng.standard_normal(64).astype("float32")
        return [a, np.zeros(32, "float32")], [a, a.reshape(8, 8).T.reshape(-1)[4:36].copy()], True
    if kind == "tma":
        a = rng.standard_normal(spec["g_shape"]).astype(spec["dtype"])
        b = np.zeros_like(a)
        region = tma_region(spec)
        b[region] = a[region]
        return [a, np.zeros_like(a)], [a, b], True
    if kind == "hopper_gemm":
        m, n, k = spec["mnk"]
        # small integers: the f32 sums are exact, and so is their FP16 cast (|D| <= 4 k = 1024 <= 2048)
        a, b = rng.integers(-2, 3, (m, k)).astype("float16"), rng.integers(-2, 3, (n, k)).astype("float16")
        d = (a.astype("float32") @ b.astype("float32").T).astype("float16")
        return [a, b, np.zeros((m, n), "float16")], [a, b, d], True
    if kind == "tcgen05":
        n, k = spec["nk"]
        # small integers: every order of the products' sums is exact in f32
        a, b = rng.integers(-4, 4, (128, k)).astype("float16"), rng.integers(-4, 4, (n, k)).astype("float16")
        c = a.astype("float32") @ b.astype("float32").T + (1 if spec.get("accum") else 0)
        return [a, b, np.zeros((128, n), "float32")], [a, b, c], True
    if kind == "tmem":
        a = rng.standard_normal((128, spec["width"])).astype("float32")
        return [a, np.zeros_like(a)], [a, a], True
    if kind == "wgmma":
        m, n, k = spec["mnk"]
        # small integers: every order of the products' sums is exact in f32
        a, b = rng.integers(-4, 4, (m, k)).astype("float16"), rng.integers(-4, 4, (n, k)).astype("float16")
        c = a.astype("float32") @ b.astype("float32").T + (1 if spec.get("accum") else 0)
        return [a, b, np.zeros((m, n), "float32")], [a, b, c], True
    if kind == "mma":
        m, n, k = spec["mnk"]
        # small integers: every order of the products' sums is exact in f32
        a, b = rng.integers(-4, 4, (m, k)).astype("float16"), rng.integers(-4, 4, (n, k)).astype("float16")
        return [a, b, np.zeros((m, n), "float32")], [a, b, a.astype("float32") @ b.astype("float32").T], True
    if kind == "matrix":
        a = rng.standard_normal(spec["shape"]).astype("float16")
        return [a, np.zeros_like(a), np.zeros_like(a)], [a, a, a], True
    if kind == "digits":
        a = rng.standard_normal(128).astype("float32")
        view = a.reshape(8, 16).T.reshape(-1)
        return [a, np.zeros((6, 64), "float32")], [a, np.stack([view[5 * i + 3:5 * i + 67] for i in range(6)])], True
    if kind in ("reduce", "shared_reduce", "thread_reduce"):
        # small integers: every order of the folds and shuffles gives the same exact float sum
        a = rng.integers(-64, 64, spec["shape"]).astype("float32")
        out = {"sum": a.sum, "max": a.max, "min": a.min}[spec["op"]](axis=1)
        return [a, np.zeros(len(a), "float32")], [a, out + 1 if spec.get("accum") else out], True
    a = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
    b = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
    out = {"add": lambda: a + b, "exp": lambda: np.exp(a), "cast": lambda: a.astype(spec["out_dtype"]),
           "fill": lambda: np.full(spec["shape"], 2.5, spec["out_dtype"])}[spec["op"]]()
    exact = spec["op"] != "exp"
    return [a, b, np.zeros(spec["shape"], spec["out_dtype"])], [a, b, out.astype(spec["out_dtype"])], exact


def wgmma_shared(spec, rows, k, S, TileLayout, ComposeLayout):
    """A ``wgmma`` kernel's K-major (rows x k) shared layout for ``spec`` (``("swizzled", mode)`` or ``("core",)``),
    on a lane's ``S``, ``TileLayout``, ``ComposeLayout``."""
    if spec[0] == "core":   # 8x8 core matrices (64 contiguous elements), K-adjacent ones next, then 8-row groups
        return TileLayout(S[(rows // 8, 8, k // 8, 8):(8 * k, 8, 64, 1)])
    mode = spec[1]
    w = 8 << mode   # elements of one swizzle row (fp16)
    if k > w:
        return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k // w, w):(w, rows * w, 1)]))
    return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k):(k, 1)]))


# a warpgroup's 128 x n register tile: warp w's lane l holds row 32 w + l, n consecutive registers
def tmem_registers(n):
    return ((4, 32, n), ((1, WARP_IN_WG), (1, LANE), 1))


def wgmma_accumulator(m, n):
    """The wgmma m64nNk16 accumulator fragment (64 x n, n <= 256) tiled over m / 64 row blocks, as layout data."""
    per = n // 2
    return ((m // 64, 4, 2, 8, 1, n // 8, 4, 2),
            (per, (1, WARP_IN_WG), 2, (4, LANE), per, 4, (1, LANE), 1))


def tma_region(spec):
    """A ``tma`` kernel's region of A and B as an index: ``(a, b)`` a slice, ``(a, None)`` the index a."""
    return tuple(slice(a, b) if b is not None else a for a, b in spec["region"])


def tma_bytes(spec):
    """The bytes of a ``tma`` kernel's shared tile (what the mbarrier expects)."""
    import numpy as np

    return int(np.prod(spec["s_shape"])) * np.dtype(spec["dtype"]).itemsize


def swizzle_3_2_3(i):
    """CuTe's Swizzle<3,2,3> of element offsets, ``ComposeLayout(2, 3, 3, ...)``: bits 5..7 XORed into bits 2..4."""
    return i ^ ((i >> 3) & (7 << 2))


def agrees(got, expected, exact) -> bool:
    import numpy as np

    if exact:
        return all(np.array_equal(g, e) for g, e in zip(got, expected))
    return all(np.allclose(g, e, rtol=2 * np.finfo(e.dtype).eps, atol=0) for g, e in zip(got, expected))
