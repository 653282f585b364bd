"""Multi-head attention without a causal mask on Trainium (H heads of dim 128, sequence length S a multiple of
512), with Axe layouts and tile ops. Q, K, V and O are (H, S, 128) row-major, given as (H S, 128): head h is rows
[h S, (h+1) S).

Per head, K^T and V are loaded once; per 128-query block: scores Q K^T in 512-key chunks on the TensorEngine (Q^T
and K^T in SBUF with the head dim on partitions, each chunk one PSUM bank), copied to an SBUF row of S float32; the
row max along F; p = exp(scale s - scale max) on the ScalarEngine (the max as a per-partition bias), its sum along
F; p copied to a layout with the keys on partitions, which the rules turn into TensorEngine transposes (nc_matmul
against the identity, 128 keys at a time); O = p V with the keys contracted over partitions, S/128 steps
accumulated in one PSUM bank; O times 1/sum; stored. The identity comes in as an input.
"""

import math

from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from .gemm import nki_source  # noqa: F401  (the same build path)

HEAD_DIM = 128
SIZES = (512, 1024, 2048, 4096)


def attention(s: int, heads: int = 1):
    """Attention for sequence length s and ``heads`` heads (see the module docstring); raises ValueError for a length
    the kernel does not tile, and when a tile call of the kernel is one no axe4j rule lowers (the rules are asked:
    ``axe4j.kernel_rules``)."""
    import tvm

    from ... import kernel_rules as rules
    from .gemm import TARGET

    if s < 512 or s % 512 or heads < 1:
        raise ValueError(f"trn_mha.attention(s={s}, heads={heads}): the kernel takes keys in chunks of 512 and at "
                         "least one head; s must be a multiple of 512")
    kernel = _kernel(s, heads)
    rules.require(kernel, tvm.target.Target(TARGET), f"trn_mha.attention(s={s}, heads={heads})")
    return kernel


def _kernel(s: int, heads: int):
    d, bq, kc = HEAD_DIM, 128, 512
    scale = 1.0 / math.sqrt(d)
    on_p_d = trainium_layout("FP", (s, d))          # K^T: the head dim on partitions, keys on F
    rows = trainium_layout("PF", (s, d))            # V: keys 128-wise on partitions
    keys_on_p = trainium_layout("FP", (bq, s))      # p again, with its keys 128-wise on partitions
    q_t = trainium_layout("FP", (bq, d))            # Q^T block
    row = trainium_layout("PF", (bq, s))            # one score / probability row per query
    col = trainium_layout("PF", (bq, 1))            # a value per query
    tile = trainium_layout("PF", (bq, d))
    chunk = trainium_layout("PF", (bq, kc), is_psum=True)
    square = trainium_layout("PF", (bq, bq), is_psum=True)

    @T.prim_func
    def kernel(Q: T.Buffer((heads * s, d), "float16"), K: T.Buffer((heads * s, d), "float16"),
               V: T.Buffer((heads * s, d), "float16"), I: T.Buffer((bq, bq), "float16"),
               O: T.Buffer((heads * s, d), "float16")):
        T.func_attr({"num_inputs": 4, "global_symbol": "attention"})
        T.device_entry()
        kt = T.alloc_buffer((s, d), "float16", scope="trn.sbuf", layout=on_p_d)
        v = T.alloc_buffer((s, d), "float16", scope="trn.sbuf", layout=rows)
        ident = T.alloc_buffer((bq, bq), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (bq, bq)))
        qt = T.alloc_buffer((bq, d), "float16", scope="trn.sbuf", layout=q_t)
        sc = T.alloc_buffer((bq, s), "float32", scope="trn.sbuf", layout=row)
        p = T.alloc_buffer((bq, s), "float16", scope="trn.sbuf", layout=row)
        pt = T.alloc_buffer((bq, s), "float16", scope="trn.sbuf", layout=keys_on_p)
        mx = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf", layout=col)
        bias = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf", layout=col)
        total = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf", layout=col)
        inv = T.alloc_buffer((bq, 1), "float32", scope="trn.sbuf", layout=col)
        o = T.alloc_buffer((bq, d), "float16", scope="trn.sbuf", layout=tile)
        s_ps = T.alloc_buffer((bq, kc), "float32", scope="trn.psum", layout=chunk)
        t_ps = T.alloc_buffer((bq, bq), "float32", scope="trn.psum", layout=square)
        o_ps = T.alloc_buffer((bq, d), "float32", scope="trn.psum", layout=square)
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
