"""kernels.trn_gemm.gemm and kernels.trn_mha.attention with no layout on their SBUF/PSUM buffers: InferLayouts
chooses them (docs/passes.md). Same buffers, names and calls as the originals."""

import math

from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx


def gemm(n: int):
    bm, bn = 128, 512

    @T.prim_func
    def kernel(A: T.Buffer((n, n), "float16"), B: T.Buffer((n, n), "float16"), C: T.Buffer((n, n), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "gemm"})
        T.device_entry()
        a = T.alloc_buffer((bm, n), "float16", scope="trn.sbuf")
        b = T.alloc_buffer((n, bn), "float16", scope="trn.sbuf")
        d = T.alloc_buffer((bm, bn), "float32", scope="trn.psum")
        c = T.alloc_buffer((bm, bn), "float16", scope="trn.sbuf")
        for j in range(n // bn):
            Tx.copy(b, B[:, j * bn:(j + 1) * bn])
            for i in range(n // bm):
                Tx.copy(a, A[i * bm:(i + 1) * bm, :])
                Tx.gemm(d, a, b, d)
                Tx.copy(c, d)
                Tx.copy(C[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn], c)

    return kernel


def attention(s: int, heads: int = 1):
    d, bq, kc = 128, 128, 512
    scale = 1.0 / math.sqrt(d)

    @T.prim_func
    def kernel(Q: T.Buffer((heads * s, d), "float16"), K: T.Buffer((heads * s, d), "float16"),
               V: T.Buffer((heads * s, d), "float16"), I: T.Buffer((bq, bq), "float16"),
               O: T.Buffer((heads * s, d), "float16")):
        T.func_attr({"num_inputs": 4, "global_symbol": "attention"})
        T.device_entry()
        kt = T.alloc_buffer((s, d), "float16", scope="trn.sbuf")
        v = T.alloc_buffer((s, d), "float16", scope="trn.sbuf")
        ident = T.alloc_buffer((bq, bq), "float16", scope="trn.sbuf")
        qt = T.alloc_buffer((bq, d), "float16", scope="trn.sbuf")
        sc = T.alloc_buffer((bq, s), "float32", scope="trn.sbuf")
        p = T.alloc_buffer((bq, s), "float16", scope="trn.sbuf")
        pt = T.alloc_buffer((bq, s), "float16", scope="trn.sbuf")
        mx = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf")
        bias = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf")
        total = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf")
        inv = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf")
        o = T.alloc_buffer((bq, d), "float16", scope="trn.sbuf")
        s_ps = T.alloc_buffer((bq, kc), "float32", scope="trn.psum")
        t_ps = T.alloc_buffer((bq, bq), "float32", scope="trn.psum")
        o_ps = T.alloc_buffer((bq, d), "float32", scope="trn.psum")
        Tx.copy(ident, I)
        for h in range(heads):
            Tx.copy(kt, K[h * s:(h + 1) * s, :])
            Tx.copy(v, V[h * s:(h + 1) * s, :])
            for qb in range(s // bq):
                Tx.copy(qt, Q[h * s + qb * bq:h * s + (qb + 1) * bq, :])
                for c in range(s // kc):
                    Tx.gemm(s_ps, qt, kt[c * kc:(c + 1) * kc, :], s_ps, transpose_B=True)
                    Tx.copy(sc[:, c * kc:(c + 1) * kc], s_ps)
                Tx.max(mx, sc, -1)
                Tx.mul(bias, mx, -scale)
                Tx.exp(p, sc, bias, scale)
                Tx.sum(total, p, -1)
                Tx.copy(pt, p, workspace={"identity": ident, "acc_psum": t_ps})
                Tx.gemm(o_ps, pt, v, o_ps)
                Tx.reciprocal(inv, total)
                Tx.mul(o, o_ps, inv)
                Tx.copy(O[h * s + qb * bq:h * s + (qb + 1) * bq, :], o)

    return kernel


def conflicting(n: int = 128):
    """``x`` is gemm A (wants K on P: "FP") in one call and gemm B (wants K on P: "PF") in the next."""

    @T.prim_func
    def kernel(X: T.Buffer((n, n), "float16"), C: T.Buffer((n, n), "float32")):
        T.func_attr({"num_inputs": 1, "global_symbol": "conflicting"})
        T.device_entry()
        x = T.alloc_buffer((n, n), "float16", scope="trn.sbuf")
        y = T.alloc_buffer((n, n), "float16", scope="trn.sbuf")
        d = T.alloc_buffer((n, n), "float32", scope="trn.psum")
        Tx.copy(x, X)
        Tx.copy(y, X)
        Tx.gemm(d, x, y, d)
        Tx.gemm(d, y, x, d)
        Tx.copy(C, d)

    return kernel


def column_sums():
    """A sum along P: ``a`` is given ("PF", rows 128-wise on partitions); ``ones``, ``b`` and the PSUM workspace
    ``ps`` have no layout."""
    from tvm.backend.trn.layout import trainium_layout

    @T.prim_func
    def kernel(A: T.Buffer((256, 1024), "float16"), One: T.Buffer((128, 1), "float16"),
               B: T.Buffer((1, 1024), "float32")):
        T.func_attr({"num_inputs": 2, "global_symbol": "column_sums"})
        T.device_entry()
        a = T.alloc_buffer((256, 1024), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (256, 1024)))
        ones = T.alloc_buffer((128, 1), "float16", scope="trn.sbuf")
        b = T.alloc_buffer((1, 1024), "float32", scope="trn.sbuf")
        ps = T.alloc_buffer((1, 512), "float32", scope="trn.psum")
        Tx.copy(ones, One)
        Tx.copy(a, A)
        Tx.sum(b, a, 0, workspace={"ones": ones, "acc_psum": ps})
        Tx.copy(B, b)

    return kernel
