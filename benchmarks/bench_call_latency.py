"""Times TVM's C++ no-op packed function ``testing.nop`` from Python's tvm_ffi and from Java.

Usage: python bench_call_latency.py [--classpath CP] [--iterations N] [--rounds R] [--repeats K]

Both sides call the same function with no argument, one int and one short string; each figure is
the best round's mean in ns per call. Then both invoke the same compiled kernel, ``vector_add`` over
float32[16] (export_kernels.py), with three tensor arguments: Python with ``tvm.runtime.Tensor``s,
Java with TVM-allocated ``TvmTensor``s (``Kernel.call``) and with a ``Kernel.Workspace`` of tensors
over direct buffers. Java runs ``org.axe4j.bench.CallLatency`` twice per repeat, each in a fresh
JVM: once on the default call path (the JNI fast path when the build bundled libaxe4j_jni.so) and
once with ``-Daxe4j.tvm.jni=false`` (JNA direct mapping). Python and the two Java runs alternate K
times (3), keeping each side's best, so that a change in machine load does not favour one side.
CP defaults to tvm-bridge/target/classes plus tvm-bridge/target/lib/* (run
``mvn -o package -pl tvm-bridge -DskipTests`` first). Prints every figure and its ratio to Python's.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import tempfile

import tvm_ffi


def best_ns_per_call(body, iterations, rounds):
    body(max(10_000, iterations // 4))
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        body(iterations)
        best = min(best, (time.perf_counter_ns() - start) / iterations)
    return best


def python_figures(iterations, rounds):
    nop = tvm_ffi.get_global_func("testing.nop")

    def nop0(n):
        for _ in range(n):
            nop()

    def nop1_int(n):
        for _ in range(n):
            nop(1)

    def nop1_str(n):
        for _ in range(n):
            nop("short")

    return {
        "python_nop0_ns": best_ns_per_call(nop0, iterations, rounds),
        "python_nop1_int_ns": best_ns_per_call(nop1_int, iterations, rounds),
        "python_nop1_str_ns": best_ns_per_call(nop1_str, iterations, rounds),
    }


def python_kernel_figures(module_path, iterations, rounds):
    import numpy as np
    import tvm

    add = tvm.runtime.load_module(str(module_path))["vector_add"]
    a, b, c = (tvm.runtime.tensor(np.zeros(16, "float32")) for _ in range(3))

    def kernel(n):
        for _ in range(n):
            add(a, b, c)

    return {"python_kernel_ns": best_ns_per_call(kernel, iterations, rounds)}


def export_vector_add(directory):
    script = Path(__file__).resolve().parents[1] / "tvm-bridge" / "src" / "test" / "python" / "export_kernels.py"
    subprocess.run([sys.executable, str(script), directory, "16"], check=True, capture_output=True)
    return Path(directory) / "vector_add.so"


def default_classpath():
    root = Path(__file__).resolve().parents[1]
    bench = root / "benchmarks" / "target" / "classes"
    bridge = root / "tvm-bridge" / "target" / "classes"
    lib = root / "tvm-bridge" / "target" / "lib"
    if not (bench / "org" / "axe4j" / "bench" / "CallLatency.class").is_file() or not lib.is_dir():
        sys.exit(f"no compiled benchmarks under {bench.parent}: run `mvn -B -o package -pl benchmarks -am "
                 f"-DskipTests` or pass --classpath")
    return os.pathsep.join([str(bench), str(bridge), f"{lib}{os.sep}*"])


def java_figures(classpath, iterations, rounds, module_path, jvm_options=()):
    """Figures of one CallLatency JVM and the call path it reported ("jni" or "jna")."""
    java = Path(os.environ.get("JAVA_HOME", "")) / "bin" / "java" if os.environ.get("JAVA_HOME") else "java"
    out = subprocess.run(
        [str(java), *jvm_options, "-cp", classpath, "org.axe4j.bench.CallLatency", str(iterations),
         str(rounds), str(module_path)],
        check=True, capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    path = next(line.split()[1] for line in lines if line.startswith("call_path "))
    return path, json.loads(lines[-1])


def keep_best(best, figures):
    return {k: min(v, best.get(k, v)) for k, v in figures.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classpath")
    parser.add_argument("--iterations", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternate the Python and Java measurements this many times; keep each side's best")
    args = parser.parse_args()
    classpath = args.classpath or default_classpath()
    with tempfile.TemporaryDirectory() as kernels:
        module_path = export_vector_add(kernels)
        py, default, jna = {}, {}, {}
        default_path = "?"
        for _ in range(args.repeats):  # alternating, so a change in machine load hits every side alike
            p = python_figures(args.iterations, args.rounds)
            p.update(python_kernel_figures(module_path, args.iterations, args.rounds))
            py = keep_best(py, p)
            default_path, j = java_figures(classpath, args.iterations, args.rounds, module_path)
            default = keep_best(default, j)
            forced_path, j = java_figures(classpath, args.iterations, args.rounds, module_path,
                                          ["-Daxe4j.tvm.jni=false"])
            assert forced_path == "jna", f"-Daxe4j.tvm.jni=false ran on {forced_path}"
            jna = keep_best(jna, j)
    if default_path != "jni":
        print(f"note: the default Java run used {default_path}, not the JNI fast path (no libaxe4j_jni.so?)")
    print(f"{'case':<18} {'python ns':>10} {'java ' + default_path + ' ns':>12} {'java jna ns':>12} "
          f"{default_path + '/python':>12} {'jna/python':>11}")
    rows = [("nop0", "nop0"), ("nop1_int", "nop1_int"), ("nop1_str", "nop1_str"), ("kernel", "kernel"),
            ("kernel_workspace", "kernel")]  # the workspace call is compared with Python's kernel call
    for case, python_case in rows:
        p, d, n = py[f"python_{python_case}_ns"], default[f"java_{case}_ns"], jna[f"java_{case}_ns"]
        print(f"{case:<18} {p:>10.1f} {d:>12.1f} {n:>12.1f} {d / p:>12.2f} {n / p:>11.2f}")
    print(f"java->TVM->java no-op: {default['java_to_java_nop0_ns']:.1f} ns/call ({default_path}), "
          f"{jna['java_to_java_nop0_ns']:.1f} ns/call (jna)")
    # java_* are the default path's figures (as before the JNI path existed), java_jna_* the forced JNA run
    print(json.dumps({**py, **default, **{k.replace("java_", "java_jna_", 1): v for k, v in jna.items()},
                      "java_default_path": default_path}))


if __name__ == "__main__":
    main()
