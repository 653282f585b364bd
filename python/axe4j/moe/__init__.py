"""A fused mixture-of-experts layer written with TIRx tile ops and Axe layouts (docs/moe.md).

The layer, for tokens X (T x hidden)::

    route      logits = X Wr^T, the top-k experts per token, weights = softmax over the k chosen logits
    schedule   the T*k (token, expert) pairs sorted by expert into tiles of at most ``tile_rows`` rows
    experts    per tile: gather its tokens' rows, GEMM1 (gate, up) -> SiLU(gate) * up * weight -> GEMM2,
               chunk by chunk of the intermediate dim, into the pair's row of Y (T*k x hidden)
    combine    out[t] = sum_j Y[t, j]  (a sum over the middle dim of Y seen as T x k x hidden)

The target-independent parts are here: ``MoeShape`` (sizes, ``QWEN3_30B_A3B``), ``reference`` (numpy) and
``schedule`` (the expert-sorted tile schedule, an index map computed with numpy; ``schedule_kernel`` computes the
same arrays in a CUDA kernel, for ``cuda``). ``cpu`` builds the CPU kernels
(target ``llvm``, through axe4j's Java CPU rules). A kernel for another target is a module beside ``cpu`` that takes
the same ``MoeShape``, routing and ``TileSchedule`` and answers ``layer(x)`` with the same result.
"""

from .config import MoeShape, QWEN3_30B_A3B
from .reference import NumpyLayer, moe_reference, route_reference
from .schedule import TileSchedule, schedule

__all__ = ["MoeShape", "QWEN3_30B_A3B", "NumpyLayer", "moe_reference", "route_reference", "TileSchedule", "schedule"]
