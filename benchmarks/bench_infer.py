"""Kernels whose intermediate buffers get their layouts from InferLayouts, against the same kernels with
hand-written layouts: run time of each (best of TVM's time_evaluator repeats, same run, same machine) and the ratio
inferred / hand-written. The kernels are those of python/tests/_infer_kernels.py at size N (default 256).

Usage: python benchmarks/bench_infer.py [--size N]
"""

import os
import sys

os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count()))  # before TVM's thread pool starts

import tvm  # noqa: E402  (before the JVM)

import argparse  # noqa: E402
import re  # noqa: E402

import numpy as np  # noqa: E402

import axe4j  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from _infer_kernels import KERNELS, build, inputs, reference  # noqa: E402


def llvm_text(lib):
    """The module's LLVM IR without object addresses (TVM names alias-analysis nodes after buffer addresses)."""
    return re.sub(r"0x[0-9a-f]+", "0x?", lib.mod.inspect_source("ll"))


def best_seconds(lib, tensors, number, repeat):
    name = "k" if lib.mod.implements_function("k") else "main"
    evaluator = lib.mod.time_evaluator(name, tvm.cpu(), number=number, repeat=repeat)
    return min(evaluator(*tensors).results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    axe4j.install()
    target = axe4j.host_target()
    rng = np.random.default_rng(1)
    print(f"InferLayouts vs hand-written layouts, size {args.size}, target {target}, "
          f"TVM_NUM_THREADS={os.environ['TVM_NUM_THREADS']}")
    print(f"{'kernel':28s} {'inferred us':>12s} {'hand us':>12s} {'ratio':>7s} {'same LLVM':>10s}")
    worst = 0.0
    for name in KERNELS:
        arrays = inputs(name, args.size, rng)
        expected = reference(name, arrays)
        runs = {}
        for hand in (False, True):
            lib = axe4j.compile(build(name, args.size, hand), target)
            tensors = [tvm.runtime.tensor(a) for a in arrays]
            lib(*tensors)
            for t, e in zip(tensors, expected):
                np.testing.assert_allclose(t.numpy(), e, rtol=1e-3, atol=1e-3)
            runs[hand] = (lib, tensors)
        times = {False: float("inf"), True: float("inf")}
        for _ in range(args.rounds):  # alternate, so both see the same machine load
            for hand in (False, True):
                times[hand] = min(times[hand], best_seconds(*runs[hand], args.number, args.repeat))
        same = llvm_text(runs[False][0]) == llvm_text(runs[True][0])
        ratio = times[False] / times[True]
        worst = max(worst, ratio)
        print(f"{name:28s} {times[False] * 1e6:12.1f} {times[True] * 1e6:12.1f} {ratio:7.3f} "
              f"{'yes' if same else 'no':>10s}")
    print(f"worst ratio inferred / hand-written: {worst:.3f} ({'within' if worst <= 1.10 else 'NOT within'} 10%)")


if __name__ == "__main__":
    main()
