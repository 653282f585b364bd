"""Builds two CPU kernels with TVM and exports them as shared libraries for the Java tests.

Usage: python export_kernels.py OUTPUT_DIR [N] [M K P]
       python export_kernels.py --cuda OUTPUT_DIR
       python export_kernels.py --parallel OUTPUT_DIR

With ``--parallel``: OUTPUT_DIR/parallel_rows.so (function ``parallel_rows(A, B)``: B[i, j] = 2 A[i, j] + i,
float32[64, 4096], the rows in a parallel loop, so the library calls ``__TVMBackendParallelLaunch``).

With ``--cuda``: OUTPUT_DIR/add_one_cuda.so (function ``add_one(A)``: A[i] += 1, float32[256], 2 blocks of 128
threads) compiled for sm_90a with ``axe4j.export_library``, which writes OUTPUT_DIR/add_one_cuda.so.fatbins/, and
OUTPUT_DIR/add_one_cuda.cu, the CUDA source the library carries (what its loader hands the compile callback).

Writes OUTPUT_DIR/vector_add.so (function ``vector_add(A, B, C)``: C[i] = A[i] + B[i], float32[N])
and OUTPUT_DIR/matmul.so (function ``matmul(A, B, C)``: C[i, j] = sum_k A[i, k] * B[k, j],
float32 A[M, K], B[K, P], C[M, P]), compiled for target ``llvm`` from tensor expressions, then
prints one JSON line describing them.
"""

import json
import sys
from pathlib import Path

import tvm
from tvm import te


def vector_add(n):
    a = te.placeholder((n,), dtype="float32", name="A")
    b = te.placeholder((n,), dtype="float32", name="B")
    c = te.compute((n,), lambda i: a[i] + b[i], name="C")
    return te.create_prim_func([a, b, c]).with_attr("global_symbol", "vector_add")


def matmul(m, k, p):
    a = te.placeholder((m, k), dtype="float32", name="A")
    b = te.placeholder((k, p), dtype="float32", name="B")
    r = te.reduce_axis((0, k), name="r")
    c = te.compute((m, p), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c]).with_attr("global_symbol", "matmul")


def parallel_rows(rows, cols):
    """B[i, j] = 2 A[i, j] + i, rows split over a parallel loop (TVMBackendParallelLaunch: ParallelPoolTest)."""
    from tvm.script import tirx as T

    @T.prim_func
    def parallel_rows(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32")):
        T.func_attr({"global_symbol": "parallel_rows"})
        for i in T.parallel(rows):
            for j in range(cols):
                B[i, j] = A[i, j] * T.float32(2) + T.Cast("float32", i)

    return parallel_rows


def add_one_cuda():
    from tvm.script import tirx as T

    @T.prim_func
    def add_one(A: T.Buffer((256,), "float32")):
        T.func_attr({"global_symbol": "add_one"})
        bx = T.launch_thread("blockIdx.x", 2)
        tx = T.launch_thread("threadIdx.x", 128)
        A[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1.0)

    return add_one


def export_cuda(out: Path):
    from axe4j.export import cuda_sources, export_library

    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    executable = tvm.compile(tvm.IRModule({"add_one": add_one_cuda()}), target=target, tir_pipeline="tirx")
    path = export_library(executable, out / "add_one_cuda.so", target)
    (out / "add_one_cuda.cu").write_text(cuda_sources(executable)[0])
    print(json.dumps({"tvm": tvm.__version__, "library": str(path)}))


def main(argv):
    if len(argv) > 2 and argv[1] == "--cuda":
        out = Path(argv[2])
        out.mkdir(parents=True, exist_ok=True)
        export_cuda(out)
        return
    if len(argv) > 2 and argv[1] == "--parallel":
        out = Path(argv[2])
        out.mkdir(parents=True, exist_ok=True)
        lib = tvm.compile(tvm.IRModule({"parallel_rows": parallel_rows(64, 4096)}), target=tvm.target.Target("llvm"))
        lib.export_library(str(out / "parallel_rows.so"))
        print(json.dumps({"tvm": tvm.__version__, "library": str(out / "parallel_rows.so"), "rows": 64, "cols": 4096}))
        return
    if len(argv) < 2:
        sys.exit("usage: export_kernels.py OUTPUT_DIR [N] [M K P]")
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    n = int(argv[2]) if len(argv) > 2 else 1000
    m, k, p = (int(x) for x in argv[3:6]) if len(argv) > 5 else (33, 47, 29)
    target = tvm.target.Target("llvm")
    written = {}
    for name, func in (("vector_add", vector_add(n)), ("matmul", matmul(m, k, p))):
        lib = tvm.compile(tvm.IRModule({name: func}), target=target)
        path = out / f"{name}.so"
        lib.export_library(str(path))
        written[name] = str(path)
    print(json.dumps({"tvm": tvm.__version__, "n": n, "m": m, "k": k, "p": p, "libraries": written}))


if __name__ == "__main__":
    main(sys.argv)
