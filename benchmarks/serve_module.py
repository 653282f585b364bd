"""Exports the module `make bench-serve` serves: C = A @ B and r = row sums of C, float32, N x N.

Usage: python benchmarks/serve_module.py OUT_DIR [--n N]

Compiled through axe4j's Java dispatch rules (``axe4j.compile``, ``Tx.gemm`` then ``Tx.sum``) for
``axe4j.host_target()`` and written by ``axe4j.export_library`` as OUT_DIR/gemm_rowsum_N.so with its manifest: one
function ``gemm_rowsum``, inputs A and B (N x N), outputs C (N x N) and r (N). Both services of the benchmark load
this file by that manifest. Prints one JSON line with the library's path.
"""

import argparse
import json
from pathlib import Path

import tvm  # noqa: F401  (TVM before the JVM)

from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j


def gemm_rowsum(n: int):
    @T.prim_func
    def kernel(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"), C: T.Buffer((n, n), "float32"),
               r: T.Buffer((n,), "float32")):
        Tx.gemm(C[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.0), T.float32(0.0))  # beta 0: C := A B
        Tx.sum(r[:], C[:, :], [1])

    return kernel.with_attr("global_symbol", "gemm_rowsum")


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
    func = gemm_rowsum(args.n)
    executable = axe4j.compile(func, axe4j.host_target())
    path = out / f"gemm_rowsum_{args.n}.so"
    axe4j.export_library(executable, path)
    print(json.dumps({"library": str(path), "n": args.n}))


if __name__ == "__main__":
    main()
