"""Exports the CPU modules the service test serves, each with its manifest (axe4j.export_library).

Usage: python export_served.py OUTPUT_DIR
       python export_served.py --cuda OUTPUT_DIR

OUTPUT_DIR/kernels.so:    matmul(A f32[M,K], B f32[K,P] -> C f32[M,P]; rows in a parallel loop), vector_add(A f32[N], B f32[N] -> C f32[N])
                          and widen(X i32[N] -> Y f64[N, 2]): Y[i] = (2 X[i], 1)
OUTPUT_DIR/kernels_v2.so: the same functions, but vector_add computes C = A + B + 1 (a second version to reload)
With --cuda: OUTPUT_DIR/add_one_cuda.so, add_one(A f32[256]): A[i] += 1 for sm_90a, A declared inout, with its
fatbin folder. Prints one JSON line with the sizes.
"""

import json
import sys
from pathlib import Path

import tvm
from tvm import te

import axe4j

M, K, P, N = 24, 40, 16, 1000


def matmul():
    """Rows in a parallel loop, so the service runs it on its parallel pool (docs/serving.md, "Threads")."""
    from tvm.script import tirx as T

    @T.prim_func
    def matmul(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, P), "float32"), C: T.Buffer((M, P), "float32")):
        for i in T.parallel(M):
            for j in range(P):
                C[i, j] = T.float32(0)
                for r in range(K):
                    C[i, j] = C[i, j] + A[i, r] * B[r, j]

    return matmul


def vector_add(extra):
    a = te.placeholder((N,), dtype="float32", name="A")
    b = te.placeholder((N,), dtype="float32", name="B")
    c = te.compute((N,), lambda i: a[i] + b[i] + extra, name="C")
    return te.create_prim_func([a, b, c])


def widen():
    x = te.placeholder((N,), dtype="int32", name="X")
    y = te.compute((N, 2), lambda i, j: te.if_then_else(j == 0, x[i].astype("float64") * 2.0, 1.0), name="Y")
    return te.create_prim_func([x, y])


def export_cuda(out: Path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tvm-bridge" / "src" / "test" / "python"))
    from export_kernels import add_one_cuda

    out.mkdir(parents=True, exist_ok=True)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    module = tvm.IRModule({"add_one": add_one_cuda()})
    executable = tvm.compile(module, target=target, tir_pipeline="tirx")
    axe4j.export_library(executable, out / "add_one_cuda.so", target, functions=module,
                         roles={"add_one": {"A": "inout"}})
    print(json.dumps({"n": 256}))


def main(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    for name, extra in (("kernels", 0.0), ("kernels_v2", 1.0)):
        funcs = {"matmul": matmul(), "vector_add": vector_add(extra), "widen": widen()}
        module = tvm.IRModule({k: f.with_attr("global_symbol", k) for k, f in funcs.items()})
        executable = tvm.compile(module, target="llvm")
        axe4j.export_library(executable, out / f"{name}.so", functions=module)
    print(json.dumps({"m": M, "k": K, "p": P, "n": N}))


if __name__ == "__main__":
    if sys.argv[1] == "--cuda":
        export_cuda(Path(sys.argv[2]))
    else:
        main(Path(sys.argv[1]))
