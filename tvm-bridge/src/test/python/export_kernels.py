"""Builds two CPU kernels with TVM and exports them as shared libraries for the Java tests.

Usage: python export_kernels.py OUTPUT_DIR [N] [M K P]

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


def main(argv):
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
