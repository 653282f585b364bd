"""One TIRx kernel with Axe layouts, compiled for the CPU through axe4j's Java dispatch rules, checked and timed.

C = A @ B^T over a column-major B (an Axe layout S[(n,n):(1,n)] declared on its memory), then a row sum:
``axe4j.explain`` shows which rule each tile call took and why, the result is compared with numpy, and
TVM's time evaluator times the kernel, compiled for this machine's CPU (``axe4j.host_target()``).
"""

import tvm  # noqa: F401  (TVM before the JVM)

import numpy as np
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

N = 192


@T.prim_func
def gemm_then_rowsum(A: T.Buffer((N, N), "float32"), Bf: T.Buffer((N * N,), "float32"),
                     Z: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32"), r: T.Buffer((N,), "float32")):
    B = T.decl_buffer((N, N), "float32", data=Bf.data, layout=TileLayout(S[(N, N):(1, N)]))
    Tx.gemm(C[:, :], A[:, :], B[:, :], Z[:, :], False, False, T.float32(1.0), T.float32(0.0))
    Tx.sum(r[:], C[:, :], [1])


def main() -> None:
    axe4j.install()
    axe4j.explain(gemm_then_rowsum, "llvm")  # prints every candidate rule per tile call
    target = axe4j.host_target()  # plain "llvm" is generic x86-64 (no AVX2/FMA)
    lib = axe4j.compile(gemm_then_rowsum, target)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype("float32")
    b = rng.standard_normal((N, N)).astype("float32")
    args = [tvm.runtime.tensor(x) for x in (a, b.T.reshape(-1).copy(), np.zeros((N, N), "float32"),
                                            np.zeros((N, N), "float32"), np.zeros(N, "float32"))]
    lib["gemm_then_rowsum"](*args)
    c, r = args[3].numpy(), args[4].numpy()
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r, (a @ b).sum(axis=1), rtol=1e-3, atol=1e-2)
    seconds = min(lib.mod.time_evaluator("gemm_then_rowsum", tvm.cpu(), number=5, repeat=5)(*args).results)
    print(f"result check: C and its row sums match numpy for N={N} (every element)")
    print(f"time on {target.attrs['mcpu']}: {seconds * 1e3:.3f} ms, {2.0 * N ** 3 / seconds / 1e9:.2f} GFLOP/s")


if __name__ == "__main__":
    main()
