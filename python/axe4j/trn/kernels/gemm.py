"""FP16 GEMM C = A B on Trainium (square n, a multiple of 512) with Axe layouts and tile ops.

A 128-row block of A sits in SBUF with K on partitions (annotation "FP": rows on F, K split 128-wise onto P),
a 512-column block of B with K on partitions ("PF"), the product in one PSUM bank (128 x 512 float32). The
axe4j rules pick the instructions: strided DMA loads, nc_matmul 128 x 128 x 512 with K/128 accumulation steps,
a tensor_copy to SBUF (float32 -> float16) and a store.
"""

import tvm
from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

TARGET = "aws/trn1/trn1.2xlarge"
SIZES = (512, 1024, 2048, 4096)


def gemm(n: int):
    """C = A B for n x n FP16 (see the module docstring); raises ValueError for an n the kernel does not tile, and when
    a tile call of the kernel for this n is one no axe4j rule lowers (the rules are asked: ``axe4j.kernel_rules``)."""
    from ... import kernel_rules as rules

    if n < 512 or n % 512:
        raise ValueError(f"trn_gemm.gemm(n={n}): the kernel tiles C in 128 x 512 blocks; n must be a multiple of 512")
    kernel = _kernel(n)
    rules.require(kernel, tvm.target.Target(TARGET), f"trn_gemm.gemm(n={n})")
    return kernel


def _kernel(n: int):
    bm, bn = 128, 512
    a_layout = trainium_layout("FP", (bm, n))
    b_layout = trainium_layout("PF", (n, bn))
    d_layout = trainium_layout("PF", (bm, bn), is_psum=True)
    c_layout = trainium_layout("PF", (bm, bn))

    @T.prim_func
    def kernel(A: T.Buffer((n, n), "float16"), B: T.Buffer((n, n), "float16"), C: T.Buffer((n, n), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "gemm"})
        T.device_entry()
        a = T.alloc_buffer((bm, n), "float16", scope="trn.sbuf", layout=a_layout)
        b = T.alloc_buffer((n, bn), "float16", scope="trn.sbuf", layout=b_layout)
        d = T.alloc_buffer((bm, bn), "float32", scope="trn.psum", layout=d_layout)
        c = T.alloc_buffer((bm, bn), "float16", scope="trn.sbuf", layout=c_layout)
        for j in range(n // bn):
            Tx.copy(b, B[:, j * bn:(j + 1) * bn])
            for i in range(n // bm):
                Tx.copy(a, A[i * bm:(i + 1) * bm, :])
                Tx.gemm(d, a, b, d)
                Tx.copy(c, d)
                Tx.copy(C[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn], c)

    return kernel


def nki_source(func) -> str:
    """The NKI source of a trn kernel, built through ``tir_pipeline="trn"`` with the axe4j rules installed, after a
    first comment line giving what each buffer's layout spans (``axe4j_tools.nki_executor.layout_extents``: strict mode
    holds accesses to it)."""
    import json

    import axe4j
    from axe4j.trn.allocation import EXTENTS_LINE

    target = tvm.target.Target(TARGET)
    # VerifyLayouts (run by axe4j.compile) stops a tile that breaks the hardware, e.g. 256 partitions, before
    # TVM's own trn cases could take it
    with target:
        ex = axe4j.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="trn")
    return EXTENTS_LINE + json.dumps(ex.trn_layout_extents) + "\n" + ex.mod.imports[0].inspect_source()
