"""The Blackwell GEMM tests' configurations and inputs, shared by both lanes' processes (numpy and ml_dtypes only):
a configuration "MxNxKxBNxSTAGESxCTA_GROUPxDTYPE" (BK 64), and small-integer A and B whose products and sums are
exact in float32 and in the output type."""

from __future__ import annotations

import ml_dtypes
import numpy as np


def label(m, n, k, bn, stages, cta_group, dtype) -> str:
    return "x".join(map(str, (m, n, k, bn, stages, cta_group, dtype)))


def parse(config: str):
    """((M, N, K), blackwell_gemm's keyword arguments) of a configuration."""
    m, n, k, bn, stages, cta_group, dtype = config.split("x")
    return (int(m), int(n), int(k)), dict(bn=int(bn), stages=int(stages), cta_group=int(cta_group), dtype=dtype)


def arrays(config: str):
    """(A, B, D zeroed, A B^T in float32) of the configuration: entries in -2..2, so |D| <= 4 K is exact in float32
    and (K <= 256) in float16 and bfloat16."""
    (m, n, k), options = parse(config)
    dtype = ml_dtypes.bfloat16 if options["dtype"] == "bfloat16" else np.float16
    rng = np.random.default_rng(m + 3 * n + 7 * k)
    a = rng.integers(-2, 3, (m, k)).astype("float32")
    b = rng.integers(-2, 3, (n, k)).astype("float32")
    return a.astype(dtype), b.astype(dtype), np.zeros((m, n), dtype), a @ b.T
