"""The MoE layer on the CPU: TIRx kernels with Axe layouts, compiled by ``axe4j.compile`` for ``llvm``.

Two kernels per token count T (their buffer shapes are static):

``route``: logits = X Wr^T (``Tx.gemm``, the blocked rule), then per token the top-k by k passes of argmax
(ties to the lower id) and the softmax over the chosen logits (scalar loops).

``experts``: a parallel loop over the tiles of a ``TileSchedule`` (a run-time count). For tile i of expert e with
m <= ``rows`` rows (m known at run time)::

    for each row r < m:  Xt[r, :] = X[slot_token[s + r], :]                      (gather, a run-time row start)
    Yt[0:m, :] = 0
    for each chunk c of the intermediate dim (``chunk`` wide):
        G[0:m, 0:chunk]       = Xt[0:m, :] W1[e, c*chunk : +chunk, :]^T             (gate, ragged-row GEMM)
        G[0:m, chunk:2chunk]  = Xt[0:m, :] W1[e, I + c*chunk : +chunk, :]^T         (up)
        for each row r < m: A[r, :] = silu(G[r, gate]) * G[r, up] * w[s + r]   (w: a stride-0 broadcast view)
        Yt[0:m, :]           += A[0:m, :] W2[e, :, c*chunk : +chunk]^T            (GEMM2, K = this chunk)
    for each row r < m:  Y[slot_pair[s + r], :] = Yt[r, :]                       (scatter to the pair's row)
    out = sum over j of Y seen as T x top_k x hidden                            (Tx.sum over the middle dim)

GEMM2 of a chunk runs as soon as GEMM1 produced that chunk's gate and up columns, while they are in cache: the
CPU form of the paper's finer-grained pipelining between the two grouped GEMMs (no barrier between a GEMM1 over all
tiles and a GEMM2 over all tiles, no intermediate tensor in memory). The expert's weights are regions of W1 and W2
at the run-time expert index: selected by their layout's start, never copied.
"""

from __future__ import annotations

import os

import numpy as np

from .config import MoeShape
from .schedule import TileSchedule, schedule

TILE_ROWS = 128     # rows of a tile: each tile reads its expert's weights once; 128 rows keep that read under a fifth of its time
CHUNK = 256         # intermediate columns per GEMM1 -> GEMM2 step: one K block of GEMM2


def route_kernel(shape: MoeShape, tokens: int):
    import tvm  # noqa: F401
    from tvm.script import tirx as T
    from tvm.tirx.script import tile as Tx

    from tvm.tirx.layout import S, TileLayout

    E, K, H = shape.experts, shape.top_k, shape.hidden
    # one token: the product is a matrix-vector one (the GEMM rules take matrices); X's row seen as E x H with
    # stride 0 along E, multiplied element-wise with Wr and summed over H
    one_row = TileLayout(S[(E, H):(0, 1)])

    @T.prim_func
    def route(X: T.Buffer((tokens, H), "float32"), Wr: T.Buffer((E, H), "float32"),
              logits: T.Buffer((tokens, E), "float32"), ids: T.Buffer((tokens, K), "int32"),
              weights: T.Buffer((tokens, K), "float32")):
        if tokens > 1:
            Tx.gemm(logits[:, :], X[:, :], Wr[:, :], logits[:, :], False, True, T.float32(1.0), T.float32(0.0))
        else:
            xs = T.decl_buffer((E, H), "float32", data=X.data, layout=one_row)
            products = T.decl_buffer((E, H), "float32", scope="global")
            Tx.mul(products[:, :], xs[:, :], Wr[:, :])
            Tx.sum(logits[0, :], products[:, :], [1])
        for t in T.serial(tokens):
            row = T.decl_buffer((E,), "float32", scope="global", layout=None)
            best = T.decl_buffer((2,), "int32", scope="global", layout=None)
            for e in T.serial(E):
                row[e] = logits[t, e]
            for j in T.serial(K):
                best[0] = 0
                for e in T.serial(E):
                    if row[e] > row[best[0]]:
                        best[0] = e
                ids[t, j] = best[0]
                weights[t, j] = row[best[0]]
                row[best[0]] = T.min_value("float32")
            for j in T.serial(K):
                weights[t, K - 1 - j] = T.exp(weights[t, K - 1 - j] - weights[t, 0])
            for j in T.serial(K - 1):
                weights[t, 0] = weights[t, 0] + weights[t, j + 1]
            for j in T.serial(K - 1):
                weights[t, j + 1] = weights[t, j + 1] / weights[t, 0]
            weights[t, 0] = T.float32(1.0) / weights[t, 0]

    return route


def experts_kernel(shape: MoeShape, tokens: int, rows: int = TILE_ROWS, chunk: int = CHUNK, workers: int | None = None):
    import tvm  # noqa: F401
    from tvm.script import tirx as T
    from tvm.tirx.layout import S, TileLayout
    from tvm.tirx.script import tile as Tx

    E, K, H, I = shape.experts, shape.top_k, shape.hidden, shape.intermediate
    C = min(chunk, I)
    if I % C:
        raise ValueError(f"experts_kernel: chunk ({C}) must divide intermediate ({I})")
    P = tokens * K
    slots = P + rows
    max_tiles = TileSchedule.max_tiles(P, E, rows)
    broadcast = TileLayout(S[(slots, C):(1, 0)])   # w[s] for every column: the routing weight of slot s, per row
    workers = workers if workers is not None else max(1, os.cpu_count() or 1)
    tile = _tile_macro(shape, rows, C)

    @T.prim_func
    def experts(X: T.Buffer((tokens, H), "float32"), W1: T.Buffer((E, 2 * I, H), "float32"),
                W2: T.Buffer((E, H, I), "float32"), tile_expert: T.Buffer((max_tiles,), "int32"),
                tile_start: T.Buffer((max_tiles,), "int32"), tile_rows: T.Buffer((max_tiles,), "int32"),
                n_tiles: T.Buffer((1,), "int32"), slot_token: T.Buffer((slots,), "int32"),
                slot_pair: T.Buffer((slots,), "int32"), slot_weight: T.Buffer((slots,), "float32"),
                Y: T.Buffer((P, H), "float32"), out: T.Buffer((tokens, H), "float32")):
        w = T.decl_buffer((slots, C), "float32", data=slot_weight.data, layout=broadcast)
        Y3 = T.decl_buffer((tokens, K, H), "float32", data=Y.data)
        for worker in T.parallel(workers):
            Xt = T.decl_buffer((rows, H), "float32", scope="global")
            G = T.decl_buffer((rows, 2 * C), "float32", scope="global")
            A = T.decl_buffer((rows, C), "float32", scope="global")
            Yt = T.decl_buffer((rows, H), "float32", scope="global")
            for q in T.serial(T.floordiv(n_tiles[0] - worker + (workers - 1), workers)):
                tile(X, W1, W2, tile_expert, tile_start, tile_rows, slot_token, slot_pair, w, Y, Xt, G, A, Yt,
                     worker + q * workers)
        Tx.sum(out[:, :], Y3[:, :, :], [1])

    return experts


def _tile_macro(shape: MoeShape, rows: int, C: int):
    """One tile's work (the ``experts`` docstring), as a TVMScript macro over tile index i."""
    from tvm.script import tirx as T
    from tvm.tirx.script import tile as Tx

    H, I = shape.hidden, shape.intermediate

    @T.macro
    def tile(X, W1, W2, tile_expert, tile_start, tile_rows, slot_token, slot_pair, w, Y, Xt, G, A, Yt, i):
        for r in T.serial(T.min(tile_rows[i], rows)):
            Tx.copy(Xt[r, 0:H], X[slot_token[tile_start[i] + r], 0:H])
            Tx.fill(Yt[r, 0:H], T.float32(0.0))
        for c in T.serial(I // C):
            Tx.gemm(G[0:T.min(tile_rows[i], rows), 0:C], Xt[0:T.min(tile_rows[i], rows), 0:H],
                    W1[tile_expert[i], c * C:c * C + C, 0:H], G[0:T.min(tile_rows[i], rows), 0:C],
                    False, True, T.float32(1.0), T.float32(0.0), parallel=False)
            Tx.gemm(G[0:T.min(tile_rows[i], rows), C:2 * C], Xt[0:T.min(tile_rows[i], rows), 0:H],
                    W1[tile_expert[i], I + c * C:I + c * C + C, 0:H], G[0:T.min(tile_rows[i], rows), C:2 * C],
                    False, True, T.float32(1.0), T.float32(0.0), parallel=False)
            for r in T.serial(T.min(tile_rows[i], rows)):
                Tx.silu(A[r, 0:C], G[r, 0:C])
                Tx.mul(A[r, 0:C], A[r, 0:C], G[r, C:2 * C])
                Tx.mul(A[r, 0:C], A[r, 0:C], w[tile_start[i] + r, 0:C])
            Tx.gemm(Yt[0:T.min(tile_rows[i], rows), 0:H], A[0:T.min(tile_rows[i], rows), 0:C],
                    W2[tile_expert[i], 0:H, c * C:c * C + C], Yt[0:T.min(tile_rows[i], rows), 0:H],
                    False, True, T.float32(1.0), T.float32(1.0), parallel=False)
        for r in T.serial(T.min(tile_rows[i], rows)):
            Tx.copy(Y[slot_pair[tile_start[i] + r], 0:H], Yt[r, 0:H])

    return tile


class MoeLayer:
    """The layer for ``tokens`` tokens on this CPU: ``layer(x)`` routes and runs the experts; ``experts(x, ids,
    weights)`` runs the experts for a given routing. Weights: router ``wr`` (experts x hidden), ``w1`` (experts x
    2*intermediate x hidden, gate rows then up rows) and ``w2`` (experts x hidden x intermediate), float32."""

    def __init__(self, shape: MoeShape, tokens: int, wr, w1, w2, *, target=None, rows: int = TILE_ROWS,
                 chunk: int = CHUNK):
        import tvm

        import axe4j

        if not isinstance(tokens, int) or tokens < 1:
            raise ValueError(f"MoeLayer: tokens ({tokens!r}) must be a positive int")
        E, H, I = shape.experts, shape.hidden, shape.intermediate
        for name, value, want in (("wr", wr, (E, H)), ("w1", w1, (E, 2 * I, H)), ("w2", w2, (E, H, I))):
            if np.shape(value) != want:
                raise ValueError(f"MoeLayer: {name} has shape {np.shape(value)}, expected {want} for {shape}")
        self.shape, self.tokens, self.rows = shape, tokens, rows
        target = target if target is not None else axe4j.host_target()
        self._route = axe4j.compile(route_kernel(shape, tokens), target)["route"]
        self._experts = axe4j.compile(experts_kernel(shape, tokens, rows, chunk), target)["experts"]
        self._weights = [tvm.runtime.tensor(np.ascontiguousarray(a, np.float32)) for a in (wr, w1, w2)]
        pairs = tokens * shape.top_k
        self._max_tiles = TileSchedule.max_tiles(pairs, E, rows)
        self._logits = tvm.runtime.empty((tokens, E), "float32")
        self._ids = tvm.runtime.empty((tokens, shape.top_k), "int32")
        self._w = tvm.runtime.empty((tokens, shape.top_k), "float32")
        self._y = tvm.runtime.empty((pairs, H), "float32")
        self._out = tvm.runtime.empty((tokens, H), "float32")

    def _input(self, x):
        import tvm

        if np.shape(x) != (self.tokens, self.shape.hidden):
            raise ValueError(f"MoeLayer: x has shape {np.shape(x)}, expected ({self.tokens}, {self.shape.hidden})")
        return tvm.runtime.tensor(np.ascontiguousarray(x, np.float32))

    def route(self, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(logits, ids, weights) of the router kernel."""
        self._route(self._input(x), self._weights[0], self._logits, self._ids, self._w)
        return self._logits.numpy(), self._ids.numpy(), self._w.numpy()

    def experts(self, x, ids, weights) -> np.ndarray:
        """The expert part for a routing (ids, weights: tokens x top_k)."""
        return self._run_experts(self._input(x), schedule(ids, weights, self.shape.experts, self.rows))

    def __call__(self, x) -> np.ndarray:
        tx = self._input(x)
        self._route(tx, self._weights[0], self._logits, self._ids, self._w)
        return self._run_experts(tx, schedule(self._ids.numpy(), self._w.numpy(), self.shape.experts, self.rows))

    def _run_experts(self, tx, plan: TileSchedule) -> np.ndarray:
        import tvm

        def padded(a):
            return tvm.runtime.tensor(np.concatenate([a, np.zeros(self._max_tiles - a.size, np.int32)]))

        self._experts(tx, self._weights[1], self._weights[2], padded(plan.tile_expert), padded(plan.tile_start),
                      padded(plan.tile_rows), tvm.runtime.tensor(np.array([plan.tiles], np.int32)),
                      tvm.runtime.tensor(plan.slot_token), tvm.runtime.tensor(plan.slot_pair),
                      tvm.runtime.tensor(plan.slot_weight), self._y, self._out)
        return self._out.numpy()


def use_every_cpu() -> None:
    """Gives TVM's thread pool every CPU (its default is half the logical CPUs); call before TVM starts it."""
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count()))
