"""Run time of kernels compiled through the Java CPU rules, against numpy and variant against variant.

Usage: python bench_cpu_kernels.py [--size N] [--numpy-size M] [--rounds R] [--no-sweep] [--no-16bit] [--out DIR]

First an fp32 GEMM M x M x M (default 1024) through axe4j on llvm against numpy.matmul, same run, best of R
interleaved rounds each: both GFLOP/s and the ratio. Then the shape sweep against numpy (bench_cpu_gemm_sweep.py:
squares 256-4096, skinny M in {1, 8, 64}, odd sizes; DIR/gemm-sweep.json and .png, a markdown table), and its
16-bit rows: float16 and bfloat16 A and B into a float32 D at 1024^3 and 8 x 4096 x 4096, against numpy's float32
matmul on float32 copies of the same values (numpy has no fast 16-bit GEMM; ``rows_16bit`` in the JSON). Then the
variants at size N.
Prints one line per kernel: the best of TVM's time_evaluator repeats (number=10, repeat=15; the machine is
shared, so the minimum is the steadiest figure) and GFLOP/s or GB/s.

Both sides get the same machine: kernels are compiled for the host CPU (``axe4j.host_target()``; numpy's BLAS
picks its AVX2/AVX-512 kernels at run time). This script does not size TVM's thread pool: importing axe4j does, as
for any user (the physical cores of the affinity mask within the cgroup quota, ``axe4j._threads``; TVM's own default
is half the logical CPUs, one thread on a 2-vCPU machine), and ``TVM_NUM_THREADS`` set by the caller wins. The GEMM
line prints the count and where it came from, and also shows plain ``"llvm"`` (generic x86-64).
"""

import os

import tvm  # noqa: E402  (before the JVM)

import argparse
import sys
from pathlib import Path

import numpy as np  # noqa: E402
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_cpu_gemm_sweep as gemm_sweep  # noqa: E402


def gemm_kernel(n, dispatch, trans_b=False):
    b_shape = (n, n)

    @T.prim_func
    def gemm(A: T.Buffer((n, n), "float32"), B: T.Buffer(b_shape, "float32"), C: T.Buffer((n, n), "float32"),
             D: T.Buffer((n, n), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, trans_b, T.float32(1.0), T.float32(0.0), dispatch=dispatch)

    return gemm


def copy_kernel(n, dispatch, transpose):
    src = TileLayout(S[(n, n):(1, n)]) if transpose else TileLayout(S[(n, n):(n, 1)])

    @T.prim_func
    def copy(Af: T.Buffer((n * n,), "float32"), B: T.Buffer((n, n), "float32")):
        A = T.decl_buffer((n, n), "float32", data=Af.data, layout=src)
        Tx.copy(B[:, :], A[:, :], dispatch=dispatch)

    return copy


def timed(kernel, name, *arrays):
    lib = axe4j.compile(kernel, axe4j.host_target())
    tensors = [tvm.runtime.tensor(a) for a in arrays]
    evaluator = lib.mod.time_evaluator(name, tvm.cpu(), number=10, repeat=15)
    return min(evaluator(*tensors).results)


def gemm_against_numpy(m, rounds):
    """axe4j's blocked GEMM (fp32, C = A @ B) and numpy.matmul on the same inputs, best of interleaved rounds."""
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((m, m)).astype("float32") for _ in range(2))
    zeros = np.zeros((m, m), "float32")
    out = np.empty((m, m), "float32")
    flops = 2.0 * m ** 3
    bodies = {"numpy": lambda: np.matmul(a, b, out=out)}
    for label, target in (("generic llvm", "llvm"), ("host llvm", axe4j.host_target())):
        lib = axe4j.compile(gemm_kernel(m, "axe4j-cpu-gemm-blocked"), target)
        tensors = [tvm.runtime.tensor(x) for x in (a, b, zeros, zeros)]
        lib["gemm"](*tensors)
        np.testing.assert_allclose(tensors[3].numpy(), a @ b, rtol=1e-3, atol=1e-2)
        bodies[label] = lambda f=lib["gemm"], t=tensors: f(*t)
    best = gemm_sweep.interleaved_best(bodies, rounds, 3)
    rates = {label: flops / seconds / 1e9 for label, seconds in best.items()}
    ours, theirs = rates["host llvm"], rates["numpy"]
    threads = tvm.get_global_func("runtime.NumThreads")()
    print(f"gemm {m}^3 fp32 on {os.cpu_count()} CPUs (TVM threads {threads}: {axe4j.THREADS_FROM}), target "
          f"{axe4j.host_target()}, best of {rounds} interleaved rounds")
    print(f"gemm {m}^3 fp32: axe4j {ours:.2f} GFLOP/s, numpy.matmul {theirs:.2f} GFLOP/s, axe4j/numpy {ours / theirs:.2f}"
          f" (generic llvm target: {rates['generic llvm']:.2f} GFLOP/s)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--numpy-size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds against numpy (best of each)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the shape sweep against numpy")
    parser.add_argument("--no-16bit", action="store_true", help="skip the sweep's float16/bfloat16 rows")
    parser.add_argument("--out", default="out/bench-cpu", help="where the sweep writes gemm-sweep.json and .png")
    args = parser.parse_args()
    n = args.size
    axe4j.install()
    gemm_against_numpy(args.numpy_size, args.rounds)
    if not args.no_sweep:
        gemm_sweep.sweep(Path(args.out), rounds=args.rounds, sixteen_bit=not args.no_16bit)
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal((n, n)).astype("float32") for _ in range(4)]
    flops = 2.0 * n ** 3
    for variant in ("axe4j-cpu-gemm-blocked", "axe4j-cpu-gemm-naive"):
        for trans_b in (False, True):
            t = timed(gemm_kernel(n, variant, trans_b), "gemm", *mats)
            print(f"gemm {n}^3 {variant:24s} trans_b={trans_b!s:5s} {t * 1e3:9.3f} ms {flops / t / 1e9:8.2f} GFLOP/s")
    moved = 2.0 * 4 * n * n
    for variant in ("axe4j-cpu-vector", "axe4j-cpu-scalar"):
        for transpose in (False, True):
            t = timed(copy_kernel(n, variant, transpose), "copy", mats[0].reshape(-1), mats[1])
            print(f"copy {n}x{n} {variant:18s} transposing={transpose!s:5s} {t * 1e6:9.1f} us "
                  f"{moved / t / 1e9:8.2f} GB/s")


if __name__ == "__main__":
    main()
