"""Compiles the demo's GEMM + row-sum kernel with axe4j for this CPU and exports it for a JVM service.

Usage: python build_kernel.py OUT_DIR [--n N]

Writes OUT_DIR/gemm_rowsum.so (``export_library``) and OUT_DIR/kernel.json, which tells a service the
function's name, N and argument order. The kernel is ``examples/cpu_kernel_demo.py``'s: C = A @ B over a
column-major B (an Axe layout on its memory), then r = row sums of C; its arguments are
A (N x N), B's N*N floats in column-major order, Z (N x N, unused by beta = 0), C (N x N) and r (N),
all float32. Compiled through axe4j's Java dispatch rules (``axe4j.compile``) for ``axe4j.host_target()``.
"""

import argparse
import json
from pathlib import Path

import tvm  # noqa: F401  (TVM before the JVM)

from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j


def gemm_then_rowsum(n: int):
    @T.prim_func
    def kernel(A: T.Buffer((n, n), "float32"), Bf: T.Buffer((n * n,), "float32"),
               Z: T.Buffer((n, n), "float32"), C: T.Buffer((n, n), "float32"), r: T.Buffer((n,), "float32")):
        B = T.decl_buffer((n, n), "float32", data=Bf.data, layout=TileLayout(S[(n, n):(1, n)]))
        Tx.gemm(C[:, :], A[:, :], B[:, :], Z[:, :], False, False, T.float32(1.0), T.float32(0.0))
        Tx.sum(r[:], C[:, :], [1])

    return kernel.with_attr("global_symbol", "gemm_then_rowsum")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--n", type=int, default=128)
    args = parser.parse_args()
    if args.n < 8 or args.n % 8:
        parser.error(f"--n ({args.n}) must be a positive multiple of 8")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    axe4j.install()
    lib = axe4j.compile(gemm_then_rowsum(args.n), axe4j.host_target())
    path = out / "gemm_rowsum.so"
    lib.export_library(str(path))
    n = args.n
    description = {
        "module": path.name,
        "function": "gemm_then_rowsum",
        "n": n,
        "args": [{"name": "A", "shape": [n, n]}, {"name": "B_column_major", "shape": [n * n]},
                 {"name": "Z", "shape": [n, n]}, {"name": "C", "shape": [n, n]}, {"name": "r", "shape": [n]}],
        "dtype": "float32",
    }
    (out / "kernel.json").write_text(json.dumps(description, indent=2) + "\n")
    print(json.dumps({"module": str(path), "n": n}))


if __name__ == "__main__":
    main()
