"""The JVM service against the Python service on the same compiled module, same machine, same load.

Usage: python benchmarks/bench_serve.py [--n N] [--clients C] [--seconds S] [--warmup W] [--threads T]

Builds the GEMM + row-sum kernel (examples/serve/build_kernel.py, N = 128 by default), starts the Java
service (examples/serve, TVM from the tvm-runtime-natives jar) and then the Python one
(examples/serve/python_service.py, TVM from the venv), each on loopback with T request threads and
TVM_NUM_THREADS=1 (one request runs on one core, T requests at once), and drives each with the same
load generator: C closed-loop keep-alive clients sending the same binary request, a warm-up of W seconds,
then S measured seconds. The services run in the order Java, Python, Python, Java (a drift in machine
load hits both alike); each side's throughput is its requests over its measured time, its p50 and p99
the mean of its two runs'. Prints both services' throughput and p50/p99 latency side by side with the
ratios, and writes out/bench-serve/result.json. Needs `mvn install` and `mvn -f examples/serve/pom.xml
package` first (`make bench-serve` does both).
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "examples" / "serve"
JAR = SERVE / "target" / "axe4j-serve-1.0.0.jar"


def start(command, env):
    process = subprocess.Popen(command, cwd=str(ROOT / "out" / "bench-serve"), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if line.startswith("listening on "):
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            return process, int(line.split()[2]), lines
    process.kill()
    sys.exit(f"service did not start: {' | '.join(lines)}")


def drive(port, body_file, answer_bytes, args):
    out = subprocess.run(["java", "-cp", str(JAR), "org.axe4j.serve.LoadGenerator",
                          f"http://127.0.0.1:{port}/v1/gemm_rowsum", str(body_file), str(answer_bytes),
                          str(args.clients), str(args.seconds), str(args.warmup)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if not JAR.is_file():
        sys.exit(f"no {JAR}: run `mvn -DskipTests install && mvn -f examples/serve/pom.xml package` (make bench-serve)")
    out_dir = ROOT / "out" / "bench-serve"
    out_dir.mkdir(parents=True, exist_ok=True)
    kernel = out_dir / "kernel"
    subprocess.run([sys.executable, str(SERVE / "build_kernel.py"), str(kernel), "--n", str(args.n)], check=True,
                   capture_output=True)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((args.n, args.n)).astype("<f4")
    b = rng.standard_normal((args.n, args.n)).astype("<f4")
    body_file = out_dir / "request.bin"
    body_file.write_bytes(a.tobytes() + b.T.reshape(-1).tobytes())
    answer_bytes = 4 * args.n
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXE4J_")}
    env["TVM_NUM_THREADS"] = "1"
    services = {
        "java": ["java", "-jar", str(JAR), str(kernel), "--port", "0", "--threads", str(args.threads)],
        "python": [sys.executable, str(SERVE / "python_service.py"), str(kernel), "--port", "0",
                   "--threads", str(args.threads)],
    }
    runs = {"java": [], "python": []}
    for name in ("java", "python", "python", "java"):  # ABBA: a drift in machine load hits both alike
        process, port, banner = start(services[name], env)
        try:
            runs[name].append(drive(port, body_file, answer_bytes, args))
        finally:
            process.terminate()
            process.wait(timeout=30)
    results = {}
    for name, pair in runs.items():
        results[name] = {
            "requests": sum(r["requests"] for r in pair),
            "errors": sum(r["errors"] for r in pair),
            "rps": sum(r["requests"] for r in pair) / sum(r["seconds"] for r in pair),
            "p50_us": sum(r["p50_us"] for r in pair) / len(pair),
            "p99_us": sum(r["p99_us"] for r in pair) / len(pair),
            "runs": pair,
        }
    j, p = results["java"], results["python"]
    print(f"GEMM + row sum, N={args.n}, binary requests of {body_file.stat().st_size} bytes, {args.clients} clients, "
          f"{args.threads} service threads, TVM_NUM_THREADS=1, 2 x {args.seconds:g} s per service after "
          f"{args.warmup:g} s warm-ups")
    print(f"{'service':<8} {'req/s':>9} {'p50 us':>9} {'p99 us':>9} {'errors':>7}")
    for name in ("java", "python"):
        r = results[name]
        print(f"{name:<8} {r['rps']:>9.1f} {r['p50_us']:>9.1f} {r['p99_us']:>9.1f} {r['errors']:>7}")
    ratios = {"throughput_java_over_python": j["rps"] / p["rps"],
              "p50_python_over_java": p["p50_us"] / j["p50_us"],
              "p99_python_over_java": p["p99_us"] / j["p99_us"]}
    print(f"Java / Python throughput {ratios['throughput_java_over_python']:.2f}; Python / Java latency "
          f"p50 {ratios['p50_python_over_java']:.2f}, p99 {ratios['p99_python_over_java']:.2f}")
    summary = {"n": args.n, "clients": args.clients, "threads": args.threads, "seconds": args.seconds,
               "java": j, "python": p, **ratios}
    (out_dir / "result.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    if j["errors"] or p["errors"]:
        sys.exit("some requests failed")


if __name__ == "__main__":
    main()
