"""Times each layout operation four ways in one process and prints the ratios.

Usage: python bench_layout_vs_tirx.py [--rounds R] [--batch-ms MS] [--json FILE] [--clock thread|cpu|wall]

  axe4j (JVM)       axe4j's algebra called in the JVM          org.axe4j.bench.TirxComparison
  TIRx from Java    TIRx's C++ (tirx.* globals) through tvm-bridge, same inputs as TVM objects
  TIRx from Python  the same C++ through TVM's Python methods (layout.slice(...), ...)
  axe4j from Python axe4j.layout.<op> (Python -> TVM FFI -> Java -> back), TVM objects in and out

Inputs are TirxComparison.CASES. After a warm-up (>= 200,000 calls and >= 2 s, at most 20 s), figures are medians of
R batches of about MS milliseconds each, in ns per operation, by the CPU time of the calling thread (``--clock cpu``:
of the whole process, every thread; ``--clock wall``: elapsed time); the ratios divide TIRx's time
by axe4j's (above 1: axe4j is faster). Run ``make build`` first (the harness starts the JVM in this process through ``axe4j.install()``).
"""

import argparse
import json
import statistics
import time

import tvm  # noqa: F401  (TVM before the JVM)
from tvm.tirx.layout import TileLayout

import axe4j


def median_ns(body, rounds: int, batch_ms: float, clock=time.perf_counter_ns) -> float:
    # Warm-up as on the Java side: >= 200,000 calls and >= 2 s (at most 20 s), so that the Java code
    # behind axe4j's globals is compiled by the JIT.
    start, n = time.perf_counter_ns(), 0
    while (n < 200_000 or time.perf_counter_ns() - start < 2e9) and time.perf_counter_ns() - start < 2e10:
        body()
        n += 1
    calls, start = 0, time.perf_counter_ns()
    while time.perf_counter_ns() - start < batch_ms * 1e6:  # the batch size, by the wall clock as in Java
        body()
        calls += 1
    figures = []
    for _ in range(rounds):
        t0 = clock()
        for _ in range(calls):
            body()
        figures.append((clock() - t0) / calls)
    return statistics.median(figures)


def ints(csv: str) -> list:
    return [int(v) for v in csv.split(",")]


def python_bodies(op: str, inputs: list):
    """(TIRx from Python, axe4j from Python) for one operation, on TIRx objects built once."""
    a: TileLayout = axe4j.layout.parse(inputs[0])
    L = axe4j.layout
    if op == "apply":
        x = int(inputs[1])
        return (lambda: a.apply(x)), (lambda: L.apply(a, x))
    if op == "span":
        return (lambda: a.span(inputs[1])), (lambda: L.span(a, inputs[1]))
    if op == "canonicalize":
        return (lambda: a.canonicalize()), (lambda: L.canonicalize(a))
    if op == "group":
        s = ints(inputs[1])
        return (lambda: a.group(s)), (lambda: L.group(a, s))
    if op == "tile":
        outer, os_, is_ = axe4j.layout.parse(inputs[1]), ints(inputs[2]), ints(inputs[3])
        return (lambda: a.tile(outer, os_, is_)), (lambda: L.tile(a, outer, os_, is_))
    if op == "is_tile_inner":
        tiled, ts, is_ = axe4j.layout.parse(inputs[1]), ints(inputs[2]), ints(inputs[3])
        return (lambda: a.is_tile_inner(tiled, ts, is_)), (lambda: L.is_tile_inner(a, tiled, ts, is_))
    if op == "direct_sum":
        left, ls, rs = axe4j.layout.parse(inputs[1]), ints(inputs[2]), ints(inputs[3])
        return (lambda: a.direct_sum(left, ls, rs)), (lambda: L.direct_sum(a, left, ls, rs))
    if op == "slice":
        s, b = ints(inputs[1]), ints(inputs[2])
        box = [(b[0], b[1]), (b[2], b[3])]
        return (lambda: a.slice(s, box)), (lambda: L.slice(a, s, box))
    raise ValueError(op)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-ms", type=float, default=200.0)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--clock", choices=["thread", "cpu", "wall"], default="thread",
                        help="thread: CPU time of the calling thread (ns; what a shared machine does not inflate by "
                             "waiting for a core; other threads' work, such as the JVM's garbage collector, is not "
                             "counted); cpu: CPU time of the whole process, every thread (10 ms steps in the JVM); "
                             "wall: elapsed time")
    args = parser.parse_args()

    axe4j.install()
    import jpype

    comparison = jpype.JClass("org.axe4j.bench.TirxComparison")
    clock = {"thread": time.thread_time_ns, "cpu": time.process_time_ns, "wall": time.perf_counter_ns}[args.clock]
    rows = []
    for op in comparison.CASES.keySet():
        op = str(op)
        inputs = [str(s) for s in comparison.CASES.get(op)]
        java_axe4j, java_tirx = comparison.measure(op, args.rounds, int(args.batch_ms * 1e6), args.clock)
        tirx_py, axe4j_py = python_bodies(op, inputs)
        rows.append({
            "op": op,
            "inputs": inputs,
            "axe4j_jvm_ns": float(java_axe4j),
            "tirx_from_java_ns": float(java_tirx),
            "tirx_from_python_ns": median_ns(tirx_py, args.rounds, args.batch_ms, clock),
            "axe4j_from_python_ns": median_ns(axe4j_py, args.rounds, args.batch_ms, clock),
        })
        print(f"  measured {op}", flush=True)

    header = (f"{'operation':<14}{'axe4j JVM':>11}{'TIRx<-Java':>12}{'TIRx<-Py':>11}{'axe4j<-Py':>11}"
              f"{'TIRx(Java)/axe4j':>18}{'TIRx(Py)/axe4j':>16}")
    print(f"\nns per operation ({args.clock} clock), same inputs, same process\n" + header)
    for r in rows:
        print(f"{r['op']:<14}{r['axe4j_jvm_ns']:>11.0f}{r['tirx_from_java_ns']:>12.0f}"
              f"{r['tirx_from_python_ns']:>11.0f}{r['axe4j_from_python_ns']:>11.0f}"
              f"{r['tirx_from_java_ns'] / r['axe4j_jvm_ns']:>18.2f}"
              f"{r['tirx_from_python_ns'] / r['axe4j_jvm_ns']:>16.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
