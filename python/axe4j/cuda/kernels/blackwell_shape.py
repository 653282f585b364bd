"""The Blackwell GEMM's shape checks and ring sizing, shared by both TVM lanes' kernels (``blackwell_gemm`` here and
in ``axe4j.tirx.kernels``); no TVM import. The layouts are the Hopper GEMM's K-major swizzled ring
(``hopper_shape.shared_tile_shard``) and one accumulator row per thread."""

from __future__ import annotations

from .hopper_shape import SWIZZLE_ROW

SHARED_BYTES = 227 * 1024   # bytes of shared memory a B200 CTA may use
MAX_STAGES = 8


def stages_for(bn: int, bk: int, itemsize: int = 2) -> int:
    """The most ring slots of (128 + ``bn``) x ``bk`` (and an mbarrier pair) that fit a CTA, at most MAX_STAGES."""
    per = (128 + bn) * bk * itemsize + 16
    return max(1, min(MAX_STAGES, (SHARED_BYTES - 64) // per))


def check(m, n, k, bn, bk, stages, dtype, cta_group=1):
    """Raises ValueError naming every reason (M, N, K) cannot be walked in (128 x BN x BK) tiles (a CTA pair's
    256 x BN with ``cta_group=2``) through ``stages`` slots of ``dtype``."""
    problems = []
    if cta_group not in (1, 2):
        problems.append(f"cta_group={cta_group}: 1 (one CTA per 128-row tile) or 2 (a CTA pair per 256-row tile)")
    elif cta_group == 2 and bn % 32:
        problems.append(f"BN={bn}: with cta_group=2 each CTA loads BN/2 rows of B, a multiple of 16")
    for name, value, tile in (("M", m, 128 * max(1, cta_group)), ("N", n, bn), ("K", k, bk)):
        if value % tile:
            problems.append(f"{name}={value} is not a multiple of the tile {tile}")
    if bk % SWIZZLE_ROW:
        problems.append(f"BK={bk} is not a multiple of the 128-byte swizzle row ({SWIZZLE_ROW} elements)")
    if bn % 16 or not 16 <= bn <= 256:
        problems.append(f"BN={bn}: tcgen05.mma with M = 128 takes N in [16, 256], a multiple of 16")
    if bn > 128:
        problems.append(f"BN={bn}: the epilogue holds one accumulator row per thread; at most 128 columns")
    b_rows = bn // max(1, cta_group)   # rows of B each CTA holds
    smem = stages * ((128 + b_rows) * bk * 2 + 16) + 64
    if smem > SHARED_BYTES:
        problems.append(f"{stages} stages of (128 + {b_rows}) x {bk} need {smem} bytes of shared memory; a B200 CTA "
                        f"has {SHARED_BYTES}")
    if dtype not in ("float16", "bfloat16"):
        problems.append(f"dtype {dtype}: tcgen05 .kind::f16 here multiplies float16 or bfloat16")
    if problems:
        raise ValueError(f"blackwell_gemm(M={m}, N={n}, K={k}, BN={bn}, BK={bk}, stages={stages}"
                         f"{', cta_group=2' if cta_group == 2 else ''}): " + "; ".join(problems))
