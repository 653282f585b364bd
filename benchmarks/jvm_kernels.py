"""The axe4j side of `make bench-jvm`: each workload's kernel compiled for this CPU, exported with its manifest, and
its inputs and numpy's answer saved as .npy files, for the Java benchmark against ONNX Runtime (BenchJvm).

Usage: python benchmarks/jvm_kernels.py OUT_DIR [--only NAME] [--packed-weights]

Writes OUT_DIR/workloads.json (name, kind, shape, library, function, input and output files, tolerance per
workload), OUT_DIR/<name>.so (+ .so.manifest.json, ``axe4j.export_library``) and OUT_DIR/<name>.<arg>.npy.

The kernels are what a user writes with axe4j's tile ops, compiled through its Java dispatch rules for
``axe4j.host_target()``:

- ``gemm``: ``C = A @ B`` (``Tx.gemm``, the blocked GEMM; it runs its u blocks on TVM's pool).
  With ``--packed-weights`` the GEMMs (and the GEMM of ``gemm_bias_gelu``) take B already in the blocked GEMM's
  panel layout (``axe4j.cpu.packed_weight_layout``), which they read in place: argument B is then the K * N packed
  buffer, and ``<name>.pack_B.so`` holds ``axe4j.cpu.weight_packer``'s ``Tx.copy`` from the row-major B, which the
  Java side runs once when it loads the kernel (workloads.json's ``prepack``).
- ``gemm_bias_gelu``: ``Y = gelu(A @ B + bias)``: the bias is C of ``Tx.gemm`` with beta = 1, a stride-0 view of the
  bias vector over the rows; then, per block of rows on TVM's pool, GELU's tanh form written with ``exp``:
  ``0.5 x (1 + tanh(z)) = x / (1 + exp(-2 z))``, ``z = sqrt(2/pi) (x + 0.044715 x^3)``.
- ``layernorm``: per row, ``(x - mean) / sqrt(var + 1e-5) * gamma + beta`` (biased variance, as ONNX's
  LayerNormalization), per block of rows on TVM's pool; mean, variance and ``1/sqrt`` are per-row vectors broadcast
  back over the row by stride-0 layouts.
- ``softmax``: per row, ``exp(x - max) / sum``, per block of rows on TVM's pool (16 KiB of input per block, so
  its passes stay in L1): row max (negated), ``exp`` of x with that as a stride-0 bias (one pass), row sum, 1/sum,
  mul.
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np

import tvm  # noqa: F401  (TVM before the JVM)

from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
import axe4j.cpu

EPS = 1e-5
ROW_BLOCK_FLOATS = 8192   # a block of rows takes at most 32 KiB, so its passes stay in L1/L2
# softmax reads a block 4 times and writes its output twice: 16 KiB in and 16 KiB out stay in a 32-48 KiB L1d
SOFTMAX_BLOCK_FLOATS = 4096


def row_block(rows: int, cols: int, floats: int = ROW_BLOCK_FLOATS) -> int:
    """Rows per block: the most that fit ``floats`` and divide ``rows``."""
    rb = max(1, min(rows, floats // cols))
    while rows % rb:
        rb -= 1
    return rb


def b_layout(n: int, packed: bool):
    """B's layout: row-major, or the panels the blocked GEMM for this CPU reads in place (a flat n * n argument)."""
    return axe4j.cpu.packed_weight_layout(n, n, "float32", axe4j.host_target()) if packed else TileLayout(S[(n, n)])


def gemm(n: int, packed: bool = False):
    layout, b_shape = b_layout(n, packed), (n * n,) if packed else (n, n)

    @T.prim_func
    def kernel(A: T.Buffer((n, n), "float32"), B: T.Buffer(b_shape, "float32"), C: T.Buffer((n, n), "float32")):
        Bl = T.decl_buffer((n, n), "float32", data=B.data, layout=layout)
        Tx.gemm(C[:, :], A[:, :], Bl[:, :], C[:, :], False, False, T.float32(1.0), T.float32(0.0))

    return kernel.with_attr("global_symbol", f"gemm_{n}")


def gemm_packers(kind: str, shape) -> dict:
    """{argument: the PrimFunc that packs it} for a workload whose B is taken packed (``--packed-weights``)."""
    if kind not in ("gemm", "gemm_bias_gelu"):
        return {}
    _, n, k = shape
    packer = axe4j.cpu.weight_packer(k, n, "float32", axe4j.host_target())
    return {"B": packer.with_attr("global_symbol", f"pack_B_{k}x{n}")}


def gemm_bias_gelu(n: int, packed: bool = False):
    rb = row_block(n, n)
    layout, b_shape = b_layout(n, packed), (n * n,) if packed else (n, n)
    c1 = -2.0 * math.sqrt(2.0 / math.pi)   # exp(x (c1 + c2 x^2)) = exp(-2 z)
    c2 = c1 * 0.044715

    @T.prim_func
    def kernel(A: T.Buffer((n, n), "float32"), B: T.Buffer(b_shape, "float32"), bias: T.Buffer((n,), "float32"),
               Y: T.Buffer((n, n), "float32")):
        Bl = T.decl_buffer((n, n), "float32", data=B.data, layout=layout)
        bias_rows = T.decl_buffer((n, n), "float32", data=bias.data, layout=TileLayout(S[(n, n):(0, 1)]))
        Tx.gemm(Y[:, :], A[:, :], Bl[:, :], bias_rows[:, :], False, False, T.float32(1.0), T.float32(1.0))
        for blk in T.parallel(n // rb):
            t = T.decl_buffer((rb, n), "float32", scope="global")
            x = Y[blk * rb:blk * rb + rb, :]
            Tx.mul(t[:, :], x, x)
            Tx.mul(t[:, :], t[:, :], T.float32(c2))
            Tx.add(t[:, :], t[:, :], T.float32(c1))
            Tx.mul(t[:, :], t[:, :], x)
            Tx.exp(t[:, :], t[:, :])
            Tx.add(t[:, :], t[:, :], T.float32(1.0))
            Tx.fdiv(x, x, t[:, :])

    return kernel.with_attr("global_symbol", f"gemm_bias_gelu_{n}")


def layernorm(rows: int, cols: int):
    rb = row_block(rows, cols)
    per_row = TileLayout(S[(rb, cols):(1, 0)])   # a per-row value seen at every column
    per_col = TileLayout(S[(rb, cols):(0, 1)])   # gamma, beta seen at every row

    @T.prim_func
    def kernel(X: T.Buffer((rows, cols), "float32"), gamma: T.Buffer((cols,), "float32"),
               beta: T.Buffer((cols,), "float32"), Y: T.Buffer((rows, cols), "float32")):
        g = T.decl_buffer((rb, cols), "float32", data=gamma.data, layout=per_col)
        b = T.decl_buffer((rb, cols), "float32", data=beta.data, layout=per_col)
        for blk in T.parallel(rows // rb):
            sq = T.decl_buffer((rb, cols), "float32", scope="global")
            stat = T.decl_buffer((rb,), "float32", scope="global")
            stat_rows = T.decl_buffer((rb, cols), "float32", data=stat.data, scope="global", layout=per_row)
            x = X[blk * rb:blk * rb + rb, :]
            y = Y[blk * rb:blk * rb + rb, :]
            Tx.sum(stat[:], x, [1])
            Tx.mul(stat[:], stat[:], T.float32(1.0 / cols))             # mean
            Tx.sub(y, x, stat_rows[:, :])                                # x - mean
            Tx.mul(sq[:, :], y, y)
            Tx.sum(stat[:], sq[:, :], [1])
            Tx.mul(stat[:], stat[:], T.float32(1.0 / cols))             # biased variance
            Tx.add(stat[:], stat[:], T.float32(EPS))
            Tx.sqrt(stat[:], stat[:])
            Tx.reciprocal(stat[:], stat[:])
            Tx.mul(y, y, stat_rows[:, :])
            Tx.mul(y, y, g[:, :])
            Tx.add(y, y, b[:, :])

    return kernel.with_attr("global_symbol", f"layernorm_{rows}x{cols}")


def softmax(rows: int, cols: int):
    rb = row_block(rows, cols, SOFTMAX_BLOCK_FLOATS)
    per_row = TileLayout(S[(rb, cols):(1, 0)])

    @T.prim_func
    def kernel(X: T.Buffer((rows, cols), "float32"), Y: T.Buffer((rows, cols), "float32")):
        for blk in T.parallel(rows // rb):
            stat = T.decl_buffer((rb,), "float32", scope="global")
            stat_rows = T.decl_buffer((rb, cols), "float32", data=stat.data, scope="global", layout=per_row)
            x = X[blk * rb:blk * rb + rb, :]
            y = Y[blk * rb:blk * rb + rb, :]
            Tx.max(stat[:], x, [1])
            Tx.mul(stat[:], stat[:], T.float32(-1))
            Tx.exp(y, x, stat_rows[:, :])   # exp(x * 1 + (-max)): one pass, the row's bias broadcast (stride 0)
            Tx.sum(stat[:], y, [1])
            Tx.reciprocal(stat[:], stat[:])
            Tx.mul(y, y, stat_rows[:, :])

    return kernel.with_attr("global_symbol", f"softmax_{rows}x{cols}")


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def workloads(rng, packed_weights: bool = False):
    """(name, kind, shape, PrimFunc, inputs, expected output, rtol, atol) per workload; references in float64. With
    ``packed_weights`` the GEMMs read B packed (their inputs stay row-major: ``gemm_packers`` packs them)."""
    out = []
    for n in (128, 512, 2048):
        a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
        # float32 sums of n products: error grows like sqrt(n) eps |a||b|
        out.append((f"gemm_{n}", "gemm", [n, n, n], gemm(n, packed_weights), {"A": a, "B": b},
                    a.astype("float64") @ b.astype("float64"), 1e-4, 1e-3 * math.sqrt(n / 128)))
    n = 512
    a, b = (rng.standard_normal((n, n)).astype("float32") / math.sqrt(math.sqrt(n)) for _ in range(2))
    bias = rng.standard_normal(n).astype("float32")
    out.append((f"gemm_bias_gelu_{n}", "gemm_bias_gelu", [n, n, n], gemm_bias_gelu(n, packed_weights),
                {"A": a, "B": b, "bias": bias},
                gelu_tanh(a.astype("float64") @ b.astype("float64") + bias), 1e-4, 1e-4))
    for rows, cols in ((64, 1000), (256, 4096)):
        x = rng.standard_normal((rows, cols)).astype("float32") * 3 + 1
        gamma = rng.standard_normal(cols).astype("float32")
        beta = rng.standard_normal(cols).astype("float32")
        x64 = x.astype("float64")
        mean = x64.mean(axis=1, keepdims=True)
        var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
        out.append((f"layernorm_{rows}x{cols}", "layernorm", [rows, cols], layernorm(rows, cols),
                    {"X": x, "gamma": gamma, "beta": beta}, (x64 - mean) / np.sqrt(var + EPS) * gamma + beta,
                    1e-4, 1e-4))
    for rows, cols in ((64, 1000), (256, 4096)):
        x = rng.standard_normal((rows, cols)).astype("float32") * 3
        e = np.exp(x.astype("float64") - x.max(axis=1, keepdims=True))
        out.append((f"softmax_{rows}x{cols}", "softmax", [rows, cols], softmax(rows, cols), {"X": x},
                    e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--only", help="build only the workloads whose names contain this")
    parser.add_argument("--packed-weights", action="store_true",
                        help="the GEMMs take B packed once (by a pack_B kernel the Java side runs at load)")
    args = parser.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    axe4j.install()
    target = axe4j.host_target()
    described = []
    for name, kind, shape, func, inputs, expected, rtol, atol in workloads(np.random.default_rng(47),
                                                                           args.packed_weights):
        if args.only and args.only not in name:
            continue
        library = out / f"{name}.so"
        lib = axe4j.compile(func, target)
        axe4j.export_library(lib, library)
        # the kernel in this process, against numpy, before the JVM ever sees it
        args_nd = {arg: tvm.runtime.tensor(v) for arg, v in inputs.items()}
        prepack = []
        for arg, packer in (gemm_packers(kind, shape) if args.packed_weights else {}).items():
            pack_library = out / f"{name}.pack_{arg}.so"
            pack_function = str(packer.attrs["global_symbol"])
            pack_lib = axe4j.compile(packer, target)
            axe4j.export_library(pack_lib, pack_library, roles={pack_function: {"Bp_flat": "output"}})
            packed = tvm.runtime.tensor(np.zeros(inputs[arg].size, "float32"))
            pack_lib[pack_function](args_nd[arg], packed)
            args_nd[arg] = packed
            prepack.append({"input": arg, "library": pack_library.name, "function": pack_function})
        args_nd = list(args_nd.values())
        result = tvm.runtime.tensor(np.zeros(expected.shape, "float32"))
        lib[str(func.attrs["global_symbol"])](*args_nd, result)
        np.testing.assert_allclose(result.numpy(), expected, rtol=rtol, atol=atol, err_msg=name)
        for arg, value in inputs.items():
            np.save(out / f"{name}.{arg}.npy", value)
        np.save(out / f"{name}.expected.npy", expected.astype("float32"))
        described.append({"name": name, "kind": kind, "shape": shape, "library": library.name,
                          "function": str(func.attrs["global_symbol"]), "inputs": list(inputs),
                          "rtol": rtol, "atol": atol, **({"prepack": prepack} if prepack else {})})
        print(f"built {name}: {library.name}, checked against numpy (rtol {rtol:g}, atol {atol:g})", flush=True)
    (out / "workloads.json").write_text(json.dumps({"target": str(target), "workloads": described}, indent=2) + "\n")


if __name__ == "__main__":
    main()
