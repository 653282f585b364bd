"""axe4j against ONNX Runtime Java, in one JVM, on the same inputs: calls/s per workload and thread count, with ratios.

Usage: python benchmarks/bench_jvm.py [--threads 1,2] [--rounds 7] [--round-ms 100] [--only NAME]
                                     [--ort-constant-weights | --service]

1. Builds each workload's kernel with axe4j for this CPU (``benchmarks/jvm_kernels.py``: GEMM at N = 128, 512, 2048;
   GEMM + bias + GELU at N = 512; LayerNorm and softmax rows at 64 x 1000 and 256 x 4096; float32), exports it with
   its manifest and saves its inputs and numpy's answer (each kernel is checked against numpy here already).
2. For each thread count T, one JVM (``org.axe4j.bench.jvm.BenchJvm``, built by ``mvn -Pbench-jvm -pl benchmarks -am
   package``) with ``TVM_NUM_THREADS=T`` loads every kernel through tvm-bridge (a ``Kernel.Workspace``: tensors made
   once) and builds the same computation as an ONNX model for ONNX Runtime 1.23.2 (T intra-op threads, 1 inter-op,
   spinning off, outputs into pinned tensors). Both outputs are checked against numpy's, and against each other,
   before timing; then the two run in alternated rounds (A B, B A, ...), each at least ``--round-ms`` and 2 calls.
   With ``--ort-constant-weights`` the ONNX model holds the weights (B, bias, gamma, beta) as initializers, which ORT
   may prepare once when it loads the model (MLAS packs a constant B); axe4j's GEMMs likewise take B packed once at
   load (``jvm_kernels.py --packed-weights``: ``axe4j.cpu.weight_packer``, run by the Java side before timing) and read
   it in place.
   With ``--service`` both go through ``axe serve``'s server code instead (``org.axe4j.serve.ModuleService``): one
   service on the module's kernels and one whose ``Backend`` is ONNX Runtime (``OrtBackend``), each with one worker,
   driven alternately by a keep-alive client sending the binary request (requests/s; the answers checked first).
3. Prints a table per thread count (median calls/s per side, the median of the per-round ratios axe4j / ORT and
   their min-max) and writes out/bench-jvm/result.json (result-ort-constant-weights.json with that option).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "bench-jvm"
CLASSPATH_FILE = ROOT / "benchmarks" / "target" / "bench-jvm.classpath"


def classpath() -> str:
    if not CLASSPATH_FILE.exists():
        sys.exit(f"{CLASSPATH_FILE} is missing: build first with `mvn -Pbench-jvm -pl benchmarks -am package "
                 "-DskipTests` (make bench-jvm does)")
    return f"{ROOT / 'benchmarks' / 'target' / 'classes'}:{CLASSPATH_FILE.read_text().strip()}"


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run_jvm(threads: int, args, kernels: Path) -> dict:
    env = dict(os.environ, TVM_NUM_THREADS=str(threads), AXE4J_VENV=str(ROOT / ".venv"))
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else "java"
    command = [str(java), "-cp", classpath(), "org.axe4j.bench.jvm.BenchJvm", str(kernels), str(threads),
               str(args.rounds), str(args.round_ms)] + (["--only", args.only] if args.only else []) \
        + (["--ort-constant-weights"] if args.ort_constant_weights else []) \
        + (["--service"] if args.service else [])
    process = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=None, text=True)
    if process.returncode != 0:
        sys.exit(f"BenchJvm at {threads} thread(s) failed (exit {process.returncode}); its errors are above")
    return json.loads(process.stdout.strip().splitlines()[-1])


def table(result: dict) -> str:
    lines = [f"{'workload':<22} {'threads':>7} {'axe4j calls/s':>14} {'ORT calls/s':>12} {'axe4j/ORT':>10} "
             f"{'min-max':>11}"]
    for w in result["workloads"]:
        lines.append(f"{w['name']:<22} {w['threads']:>7} {w['axe4j_calls_per_s']:>14.1f} {w['ort_calls_per_s']:>12.1f} "
                     f"{w['ratio_median']:>10.2f} {w['ratio_min']:>5.2f}-{w['ratio_max']:<5.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--round-ms", type=int, default=100)
    parser.add_argument("--only", help="only the workloads whose names contain this")
    parser.add_argument("--ort-constant-weights", action="store_true",
                        help="ORT's model holds B, bias, gamma and beta as initializers; axe4j's GEMMs take B packed once")
    parser.add_argument("--service", action="store_true",
                        help="both sides through axe serve's server code (ORT as its backend), binary requests")
    args = parser.parse_args()
    if args.service and args.ort_constant_weights:
        parser.error("--service serves the module's own arguments to both sides; leave out --ort-constant-weights")
    threads = [int(t) for t in args.threads.split(",")]
    started = time.time()
    kernels = OUT / "kernels"
    print(f"[bench-jvm] building the kernels with axe4j into {kernels} ...", flush=True)
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "jvm_kernels.py"), str(kernels)]
                   + (["--only", args.only] if args.only else [])
                   + (["--packed-weights"] if args.ort_constant_weights else []),
                   check=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    runs = []
    for t in threads:
        print(f"[bench-jvm] {t} thread(s) a side: one JVM, {args.rounds} alternated rounds of >= {args.round_ms} ms "
              f"per workload ...", flush=True)
        runs.append(run_jvm(t, args, kernels))
    print()
    for r in runs:
        print(f"{r['threads']} thread(s) a side, {r['path']} (TVM pool: {r['tvm_pool']}; ORT: intra-op "
              f"{r['threads']}, inter-op 1, spinning off; ORT's weights: {r['ort_weights']}"
              + ("; axe4j's GEMMs: B packed once at load" if args.ort_constant_weights else "") + ")")
        print(table(r))
        print()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "cpu": cpu_name(),
        "logical_cpus": os.cpu_count(),
        "target": runs[0]["target"] if runs else None,
        "onnxruntime": "com.microsoft.onnxruntime:onnxruntime:1.23.2",
        "rounds": args.rounds,
        "round_ms": args.round_ms,
        "ort_weights": "constants (initializers)" if args.ort_constant_weights else "inputs",
        "path": "through axe serve (binary requests, one worker a side)" if args.service else "in process",
        "axe4j_weights": "GEMMs' B packed once at load, read in place" if args.ort_constant_weights else "inputs",
        "runs": runs,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    written = OUT / ("result-ort-constant-weights.json" if args.ort_constant_weights
                     else "result-service.json" if args.service else "result.json")
    written.write_text(json.dumps(result, indent=2) + "\n")
    print(f"[bench-jvm] wrote {written} ({time.time() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
