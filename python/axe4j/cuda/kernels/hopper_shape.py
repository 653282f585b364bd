"""The Hopper GEMM's shape checks and its layouts as plain data, shared by both TVM lanes' kernels (``hopper_gemm``
here and in ``axe4j.tirx.kernels``); no TVM import. Each lane builds its layout objects from the data
(``shared_tile_shard``, ``accumulator_shard``) with its own ``S``, ``TileLayout``, ``ComposeLayout`` and axes."""

from __future__ import annotations

SWIZZLE_ROW = 64  # elements of one 128-byte swizzle row (FP16)
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1}
SHARED_LIMIT = 227 * 1024   # bytes of shared memory an H100 CTA may use


def shared_tile_shard(stages: int, parts: int, rows: int, bk: int, itemsize: int = 2):
    """(per_element, swizzle_len, atom_len, extents, strides) of the (stages, parts, rows, bk) K-major tile under the
    128-byte swizzle: ``Swizzle<log2(16 / itemsize), 3, 3>`` on element addresses over extents (stages, parts, rows,
    K blocks, row) with strides (parts * block, block, row, rows * row, 1), block = rows * bk, row = 128 / itemsize
    elements."""
    row = 128 // itemsize
    kb = bk // row
    block = rows * bk
    return ((16 // itemsize).bit_length() - 1, 3, 3, (stages, parts, rows, kb, row),
            (parts * block, block, row, rows * row, 1))


def accumulator_shard(rows: int, n: int):
    """(extents, strides) of one warpgroup's (rows, n) registers: the wgmma m64nNk16 accumulator fragment tiled over
    rows/64 blocks (and n/256 column blocks past 256); a stride ``(k, "wid_in_wg")`` or ``(k, "laneid")`` is k times
    that thread axis, an int a register stride."""
    width = min(n, 256)
    per, bn = width // 2, n // width
    return ((rows // 64, 4, 2, 8, bn, width // 8, 4, 2),
            (per * bn, (1, "wid_in_wg"), 2, (4, "laneid"), per, 4, (1, "laneid"), 1))


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def tile_problems(bm: int, bn: int, bk: int, unit: str = "FP16", itemsize: int = 2,
                  one_consumer: bool = False) -> list[str]:
    """What keeps (BM, BN, BK) from being a tile of two consumer warpgroups (or, with ``one_consumer``, also of one
    warpgroup of 64 rows) with wgmma on swizzled shared tiles (``unit`` names the elements of a swizzle row in the
    message)."""
    problems = []
    row = 128 // itemsize
    if bm % 128 and not (one_consumer and bm == 64):
        problems.append(f"BM={bm}: two consumer warpgroups of 64-row wgmma blocks need a multiple of 128"
                        + (" (or BM=64: one consumer warpgroup)" if one_consumer else ""))
    if bk % row:
        problems.append(f"BK={bk} is not a multiple of the 128-byte swizzle row ({row} {unit})")
    if bn > 256 or bn % 8:
        problems.append(f"BN={bn}: one wgmma covers N <= 256 in steps of 8")
    return problems


def divisibility_problems(m: int, n: int, k: int, bm: int, bn: int, bk: int) -> list[str]:
    """The teaching kernel walks whole tiles only: M, N and K multiples of the tile."""
    return [f"{name}={value} is not a multiple of the tile {tile}"
            for name, value, tile in (("M", m, bm), ("N", n, bn), ("K", k, bk)) if value % tile]


def alignment_problems(m: int, n: int, k: int, dtype: str = "float16", out_dtype: str | None = None) -> list[str]:
    """TMA's rules for a row-major global tensor (cuTensorMapEncodeTiled): every dim at least 1 and every row
    stride a multiple of 16 bytes, so K (rows of A and B, ``dtype``) and N (rows of D, ``out_dtype``) must be
    multiples of 16 / itemsize."""
    problems = [f"{name}={value} must be at least 1" for name, value in (("M", m), ("N", n), ("K", k)) if value < 1]
    for name, value, what, of in (("K", k, "A's and B's", dtype), ("N", n, "D's", out_dtype or dtype)):
        per = 16 // ITEMSIZE.get(of, 2)
        if value >= 1 and value % per:
            problems.append(f"{name}={value}: TMA needs {what} rows of a multiple of 16 bytes ({name} a multiple of "
                            f"{per} {of} elements); pad {name} to {ceil_div(value, per) * per} "
                            f"(axe4j.cuda.kernels.gemm_tuning.padded_gemm does)")
    return problems


def ring_bytes(bm: int, bn: int, bk: int, stages: int) -> int:
    """Shared bytes of the ring: ``stages`` slots of (BM + BN) x BK FP16."""
    return stages * (bm + bn) * bk * 2


def check_shape(m: int, n: int, k: int, bm: int, bn: int, bk: int, stages: int) -> None:
    """Raises ValueError naming every reason (M, N, K) cannot be walked in (BM, BN, BK) tiles through ``stages``
    slots."""
    problems = [f"{name}={value} must be at least 1" for name, value in
                (("M", m), ("N", n), ("K", k), ("BM", bm), ("BN", bn), ("BK", bk)) if value < 1]
    if problems:   # the divisions below need positive tiles
        raise ValueError(f"hopper_gemm(M={m}, N={n}, K={k}, BM={bm}, BN={bn}, BK={bk}, stages={stages}): "
                         + "; ".join(problems))
    problems = divisibility_problems(m, n, k, bm, bn, bk) + tile_problems(bm, bn, bk)
    if stages < 1:
        problems.append(f"stages={stages}: the ring needs at least one slot")
    smem = ring_bytes(bm, bn, bk, stages)
    if smem > SHARED_LIMIT:
        problems.append(f"{stages} stages of ({bm} + {bn}) x {bk} FP16 need {smem} bytes of shared memory; "
                        "an H100 CTA has 227 KiB")
    if problems:
        raise ValueError(f"hopper_gemm(M={m}, N={n}, K={k}, BM={bm}, BN={bn}, BK={bk}, stages={stages}): "
                         + "; ".join(problems))
