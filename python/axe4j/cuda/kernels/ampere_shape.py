"""The Ampere-style GEMM's tiles and its shape check, shared by both TVM lanes' kernels (``ampere_gemm`` here and in
``axe4j.tirx.kernels``); no TVM import."""

from __future__ import annotations

BM = BN = 64
BK = 32
WARP_M = WARP_N = 32


def check_shape(m: int, n: int, k: int, stages: int) -> None:
    problems = [f"{name}={value} is not a multiple of the tile {tile}"
                for name, value, tile in (("M", m, BM), ("N", n, BN), ("K", k, BK)) if value % tile]
    if stages < 2:
        problems.append(f"stages={stages}: the ring needs at least 2 slots")
    if k // BK and stages > k // BK + 1:
        problems.append(f"stages={stages} exceeds the {k // BK} K tiles plus one")
    if problems:
        raise ValueError(f"ampere_gemm(M={m}, N={n}, K={k}, stages={stages}): " + "; ".join(problems))
