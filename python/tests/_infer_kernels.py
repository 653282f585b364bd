"""CPU kernels whose intermediate buffers are allocated without layouts (``layout=None``), each with the layouts a
person would write by hand for the same buffers. ``build(name, n, hand)`` returns the PrimFunc: with ``hand=False``
the intermediates have no layout (InferLayouts gives them one), with ``hand=True`` they get the hand-written ones.
``inputs(name, n, rng)`` and ``reference(name, arrays)`` give numpy data and the expected outputs.
Used by test_passes_infer.py and benchmarks/bench_infer.py."""

import numpy as np
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx


def row(*shape):
    return TileLayout(S[tuple(shape)])


def col(m, n):
    return TileLayout(S[(m, n):(1, m)])


def _exp_add(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Tx.exp(X[:, :], A[:, :])
        Tx.add(B[:, :], X[:, :], A[:, :])
    return k


def _column_major_chain(n, L):
    @T.prim_func
    def k(Af: T.Buffer((n * n,), "float32"), Bf: T.Buffer((n * n,), "float32")):
        A = T.decl_buffer((n, n), "float32", data=Af.data, layout=col(n, n))
        B = T.decl_buffer((n, n), "float32", data=Bf.data, layout=col(n, n))
        X = T.alloc_buffer((n, n), "float32", layout=L("X", col(n, n)))
        Tx.exp(X[:, :], A[:, :])
        Tx.mul(B[:, :], X[:, :], A[:, :])
    return k


def _square_row_sum(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), r: T.Buffer((n,), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Tx.mul(X[:, :], A[:, :], A[:, :])
        Tx.sum(r[:], X[:, :], axes=-1)
    return k


def _gemm_then_copy(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"), D: T.Buffer((n, n), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Tx.gemm(X[:, :], A[:, :], B[:, :], X[:, :], False, False, T.float32(1.0), T.float32(0.0))
        Tx.add(D[:, :], X[:, :], A[:, :])
    return k


def _fill_add(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Tx.fill(X[:, :], T.float32(1.5))
        Tx.add(B[:, :], A[:, :], X[:, :])
    return k


def _two_stage(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"), C: T.Buffer((n, n), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Y = T.alloc_buffer((n, n), "float32", layout=L("Y", row(n, n)))
        Tx.add(X[:, :], A[:, :], B[:, :])
        Tx.exp(Y[:, :], X[:, :])
        Tx.mul(C[:, :], Y[:, :], A[:, :])
    return k


def _tiled_source(n, L):
    tiled = TileLayout(S[(n // 4, 4, n // 4, 4):(4 * n, 4, 16, 1)])

    @T.prim_func
    def k(Af: T.Buffer((n * n,), "float32"), B: T.Buffer((n, n), "float32")):
        A = T.decl_buffer((n, n), "float32", data=Af.data, layout=tiled)
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Tx.exp(X[:, :], A[:, :])
        Tx.add(B[:, :], X[:, :], X[:, :])
    return k


def _cube_sum(n, L):
    @T.prim_func
    def k(A: T.Buffer((4, n, n), "float32"), r: T.Buffer((4, n), "float32")):
        X = T.alloc_buffer((4, n, n), "float32", layout=L("X", row(4, n, n)))
        Tx.exp(X[:, :, :], A[:, :, :])
        Tx.sum(r[:, :], X[:, :, :], axes=2)
    return k


def _column_major_gemm_operand(n, L):
    @T.prim_func
    def k(Af: T.Buffer((n * n,), "float32"), B: T.Buffer((n, n), "float32"), D: T.Buffer((n, n), "float32")):
        A = T.decl_buffer((n, n), "float32", data=Af.data, layout=col(n, n))
        X = T.alloc_buffer((n, n), "float32", layout=L("X", col(n, n)))
        Tx.copy(X[:, :], A[:, :])
        Tx.gemm(D[:, :], X[:, :], B[:, :], D[:, :], False, False, T.float32(1.0), T.float32(0.0))
    return k


def _max_of_exps(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"), C: T.Buffer((n, n), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        Y = T.alloc_buffer((n, n), "float32", layout=L("Y", row(n, n)))
        Tx.exp(X[:, :], A[:, :])
        Tx.exp(Y[:, :], B[:, :])
        Tx.maximum(C[:, :], X[:, :], Y[:, :])
    return k


def _row_max_then_scale(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), r: T.Buffer((n,), "float32")):
        X = T.alloc_buffer((n, n), "float32", layout=L("X", row(n, n)))
        m = T.alloc_buffer((n,), "float32", layout=L("m", row(n)))
        Tx.mul(X[:, :], A[:, :], T.float32(3.0))
        Tx.max(m[:], X[:, :], axes=-1)
        Tx.add(r[:], m[:], m[:])
    return k


def _cast_chain(n, L):
    @T.prim_func
    def k(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32")):
        X = T.alloc_buffer((n, n), "float64", layout=L("X", row(n, n)))
        Tx.cast(X[:, :], A[:, :])
        Tx.cast(B[:, :], X[:, :])
    return k


KERNELS = {
    "exp_add": (_exp_add, ["A", "B"], lambda a: [a[0], np.exp(a[0]) + a[0]]),
    "column_major_chain": (_column_major_chain, ["Acol", "Bcol"], lambda a: [a[0], _col_flat(np.exp(_col(a[0])) * _col(a[0]))]),
    "square_row_sum": (_square_row_sum, ["A", "r"], lambda a: [a[0], (a[0] * a[0]).sum(axis=1)]),
    "gemm_then_add": (_gemm_then_copy, ["A", "B", "D"], lambda a: [a[0], a[1], a[0] @ a[1] + a[0]]),
    "fill_add": (_fill_add, ["A", "B"], lambda a: [a[0], a[0] + 1.5]),
    "two_stage": (_two_stage, ["A", "B", "C"], lambda a: [a[0], a[1], np.exp(a[0] + a[1]) * a[0]]),
    "tiled_source": (_tiled_source, ["Atiled", "B"], lambda a: [a[0], 2 * np.exp(_tiled(a[0]))]),
    "cube_sum": (_cube_sum, ["A3", "r2"], lambda a: [a[0], np.exp(a[0]).sum(axis=2)]),
    "column_major_gemm_operand": (_column_major_gemm_operand, ["Acol", "B", "D"],
                                  lambda a: [a[0], a[1], _col(a[0]) @ a[1]]),
    "max_of_exps": (_max_of_exps, ["A", "B", "C"], lambda a: [a[0], a[1], np.maximum(np.exp(a[0]), np.exp(a[1]))]),
    "row_max_then_scale": (_row_max_then_scale, ["A", "r"], lambda a: [a[0], 2 * (3 * a[0]).max(axis=1)]),
    "cast_chain": (_cast_chain, ["A", "B"], lambda a: [a[0], a[0]]),
}

_N = {}


def _col(flat):
    n = _N["n"]
    return flat.reshape(n, n).T


def _col_flat(matrix):
    return np.ascontiguousarray(matrix.T).reshape(-1)


def _tiled(flat):
    """The (n, n) logical matrix of memory laid out as 4x4 tiles, S[(n/4, 4, n/4, 4):(4n, 4, 16, 1)]."""
    n = _N["n"]
    return flat.reshape(n // 4, n // 4, 4, 4).transpose(0, 2, 1, 3).reshape(n, n)


def build(name, n, hand):
    make = KERNELS[name][0]
    return make(n, lambda _buffer, layout: layout if hand else None)


def inputs(name, n, rng):
    _N["n"] = n
    shapes = {"A": (n, n), "B": (n, n), "C": (n, n), "D": (n, n), "r": (n,), "A3": (4, n, n), "r2": (4, n),
              "Acol": (n * n,), "Bcol": (n * n,), "Atiled": (n * n,)}
    return [rng.uniform(-1, 1, shapes[s]).astype("float32") for s in KERNELS[name][1]]


def reference(name, arrays):
    _N["n"] = int(round(np.sqrt(arrays[0].size))) if arrays[0].ndim == 1 else arrays[0].shape[-1]
    return KERNELS[name][2](arrays)
