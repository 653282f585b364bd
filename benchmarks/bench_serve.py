"""`axe serve` against a Python ASGI service (Starlette under uvicorn) on the same exported module, same load.

Usage: python benchmarks/bench_serve.py [--case N:FORMAT ...] [--clients C] [--seconds S] [--warmup W] [--threads T]

For each case (default: 128:binary, 32:binary, 32:json) exports C = A @ B, r = row sums of C at N x N float32
(benchmarks/serve_module.py: axe4j.compile, axe4j.export_library with its manifest) and serves that one file twice:
with `bin/axe serve LIB --threads T` (the JVM; TVM's runtime libraries found as the bridge finds them, here the
venv's) and with benchmarks/serve_peer.py (Starlette, uvicorn with T worker processes, uvloop, httptools, orjson; TVM
from apache-tvm), both on loopback with TVM_NUM_THREADS=1, so that each side runs at most T kernels at once, one core
each. The answers of both are checked against numpy first. Then one load generator (examples/serve's LoadGenerator,
compiled here with javac: C closed-loop keep-alive clients, Nagle off, sending the same request again as soon as its
answer arrived; binary: A then B, little-endian, answered C then r; json: {"inputs": {"A": [[...]], "B": [[...]]}})
drives each for a warm-up of W seconds (default 5: the JVM compiles its hot code in the first seconds), then S
measured seconds (default 10), in the order Java, Python, Python, Java (a drift in machine load hits both alike). A
side's throughput is its requests over its measured time, its p50 and p99 the mean of its two runs'.
Prints a table with the ratios and writes out/bench-serve/result.json. Needs `make python build` and
ci/setup-bench-serve.sh (uvicorn, Starlette, ...) first; `make bench-serve` does all three.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "bench-serve"
LOAD_GENERATOR = ROOT / "examples" / "serve" / "src" / "main" / "java" / "org" / "axe4j" / "serve" / "LoadGenerator.java"
CONTENT_TYPES = {"binary": "application/octet-stream", "json": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, path, body=None, content_type=None, timeout=30):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": content_type} if content_type else {}
        connection.request("POST" if body is not None else "GET", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def start(name, command, port, env):
    log = open(OUT / f"{name}.log", "w")
    process = subprocess.Popen(command, cwd=str(ROOT), env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if process.poll() is not None:
            break
        try:
            if request(port, "/healthz", timeout=2)[0] == 200:
                return process
        except OSError:
            pass
        time.sleep(0.2)
    stop(process)
    sys.exit(f"{name} did not start; its log: {OUT / f'{name}.log'}\n{(OUT / f'{name}.log').read_text()[-2000:]}")


def stop(process):
    """SIGTERM to the service's process group (uvicorn's workers with it), then wait."""
    try:
        os.killpg(process.pid, 15)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.wait()


def check(port, n, a, b, fmt):
    """One request; the answer against numpy (C = A B, r = row sums of C). Returns (C, r)."""
    if fmt == "binary":
        status, body = request(port, "/v1/gemm_rowsum", a.tobytes() + b.tobytes(), CONTENT_TYPES[fmt])
        assert status == 200, (status, body[:300])
        assert len(body) == 4 * (n * n + n), len(body)
        c = np.frombuffer(body[:4 * n * n], "<f4").reshape(n, n)
        r = np.frombuffer(body[4 * n * n:], "<f4")
    else:
        status, body = request(port, "/v1/gemm_rowsum", json.dumps({"inputs": {"A": a.tolist(), "B": b.tolist()}}),
                               CONTENT_TYPES[fmt])
        assert status == 200, (status, body[:300])
        outputs = json.loads(body)["outputs"]
        c = np.asarray(outputs["C"], "f4")
        r = np.asarray(outputs["r"], "f4")
    reference = a.astype("f8") @ b.astype("f8")
    np.testing.assert_allclose(c, reference, rtol=1e-4, atol=1e-4 * n)
    np.testing.assert_allclose(r, reference.sum(axis=1), rtol=1e-4, atol=1e-3 * n)
    return c, r


def drive(port, body_file, answer_bytes, content_type, args, classes):
    out = subprocess.run(["java", "-cp", str(classes), "org.axe4j.serve.LoadGenerator",
                          f"http://127.0.0.1:{port}/v1/gemm_rowsum", str(body_file), str(answer_bytes),
                          str(args.clients), str(args.seconds), str(args.warmup), content_type],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_case(n, fmt, args, classes, env):
    library = OUT / f"gemm_rowsum_{n}.so"
    exported = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "serve_module.py"), str(OUT), "--n", str(n)],
                              env={**env, "PYTHONPATH": str(ROOT / "python")}, capture_output=True, text=True)
    if exported.returncode:
        sys.exit(f"exporting the N={n} module failed:\n{exported.stdout}{exported.stderr}")
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype("<f4")
    b = rng.standard_normal((n, n)).astype("<f4")
    body_file = OUT / f"request_{n}_{fmt}.bin"
    if fmt == "binary":
        body_file.write_bytes(a.tobytes() + b.tobytes())
        answer_bytes = 4 * (n * n + n)
    else:
        body_file.write_text(json.dumps({"inputs": {"A": a.tolist(), "B": b.tolist()}}))
        answer_bytes = -1  # each side writes its floats its own way
    services = {
        "java": lambda port: [str(ROOT / "bin" / "axe"), "serve", str(library), "--port", str(port),
                              "--threads", str(args.threads)],
        "python": lambda port: [sys.executable, str(ROOT / "benchmarks" / "serve_peer.py"), str(library),
                                "--port", str(port), "--workers", str(args.threads)],
    }
    runs = {"java": [], "python": []}
    answers = {}
    for name in ("java", "python", "python", "java"):  # ABBA: a drift in machine load hits both alike
        port = free_port()
        process = start(name, services[name](port), port, env)
        try:
            if name not in answers:
                answers[name] = check(port, n, a, b, fmt)
            runs[name].append(drive(port, body_file, answer_bytes, CONTENT_TYPES[fmt], args, classes))
        finally:
            stop(process)
    np.testing.assert_allclose(answers["java"][0], answers["python"][0], rtol=1e-6, atol=1e-6)
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
    target = json.loads(Path(str(library) + ".manifest.json").read_text())["device"].get("target", "")
    return {"n": n, "format": fmt, "target": target, "request_bytes": body_file.stat().st_size, "java": j, "python": p,
            "throughput_java_over_python": j["rps"] / p["rps"],
            "p50_python_over_java": p["p50_us"] / j["p50_us"],
            "p99_python_over_java": p["p99_us"] / j["p99_us"]}


def machine():
    flags = ""
    model = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("", "x86_64"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = line
                break
    except OSError:
        pass
    return {"cpu": model, "avx512": " avx512f" in flags, "cores": os.cpu_count()}


def versions():
    from importlib.metadata import version

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return {"java": java, "python": platform.python_version(),
            **{p: version(p) for p in ("uvicorn", "starlette", "uvloop", "httptools", "orjson", "apache-tvm")}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", metavar="N:FORMAT",
                        help="N x N GEMM + row sum, binary or json requests (repeatable)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    cases = []
    for text in args.case or ["128:binary", "32:binary", "32:json"]:
        n, _, fmt = text.partition(":")
        if fmt not in CONTENT_TYPES or not n.isdigit():
            parser.error(f"--case {text}: give N:binary or N:json")
        cases.append((int(n), fmt))
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        sys.exit("no uvicorn/Starlette in this Python: run ci/setup-bench-serve.sh (make bench-serve does)")
    OUT.mkdir(parents=True, exist_ok=True)
    classes = OUT / "load-generator"
    subprocess.run(["javac", "-d", str(classes), str(LOAD_GENERATOR)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXE4J_")}
    env["TVM_NUM_THREADS"] = "1"
    results = [run_case(n, fmt, args, classes, env) for n, fmt in cases]
    print(f"GEMM + row sum, float32; {args.clients} closed-loop keep-alive clients; {args.threads} kernels at once "
          f"a side (axe serve --threads {args.threads}, uvicorn --workers {args.threads}), TVM_NUM_THREADS=1; "
          f"2 x {args.seconds:g} s a side after {args.warmup:g} s warm-ups, order Java, Python, Python, Java")
    print(f"{'N':>4} {'format':<7} {'bytes':>7} | {'Java req/s':>10} {'Python req/s':>12} {'J/P':>5} | "
          f"{'p50 us J/P':>15} {'P/J':>5} | {'p99 us J/P':>15} {'P/J':>5} | errors")
    for r in results:
        j, p = r["java"], r["python"]
        print(f"{r['n']:>4} {r['format']:<7} {r['request_bytes']:>7} | {j['rps']:>10.0f} {p['rps']:>12.0f} "
              f"{r['throughput_java_over_python']:>5.2f} | {j['p50_us']:>7.0f}/{p['p50_us']:<7.0f} "
              f"{r['p50_python_over_java']:>5.2f} | {j['p99_us']:>7.0f}/{p['p99_us']:<7.0f} "
              f"{r['p99_python_over_java']:>5.2f} | {j['errors']}/{p['errors']}")
    summary = {"date": datetime.date.today().isoformat(), "machine": machine(), "versions": versions(),
               "clients": args.clients, "threads": args.threads, "seconds": args.seconds, "warmup": args.warmup,
               "cases": results}
    (OUT / "result.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"written {OUT / 'result.json'}")
    if any(r["java"]["errors"] or r["python"]["errors"] for r in results):
        sys.exit("some requests failed")


if __name__ == "__main__":
    main()
