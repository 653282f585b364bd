"""Runs the JVM GPU bundle on this machine (``run.sh`` calls it): the Java side, then the Python side on the same
kernels, then the two services under the same load; writes ``summary.json`` and ``summary.md`` to ``--out``.

1. Java (``jre/``, no Python in that process): every carried case checked element by element, the Hopper GEMMs timed
   against cuBLAS in the same JVM, the MoE kernels on ``moe_inputs.py``'s inputs, the launch overhead
   (``org.axe4j.benchmarks.gpu.GpuBundleRunner``). Without a GPU it says so, and so does this script, exit 0.
2. Python: ``run.py`` on the same cases and GEMMs (its cuBLAS harness), ``moe_bench.py`` at the same token counts
   (with PyTorch), the launch overhead of the same kernel through ``tvm_ffi_ctypes`` and of a comparable PyTorch
   kernel (``torch.add`` on the same shape).
3. Services: ``DeviceKernelService`` (Java) and ``python_device_service.py`` on the same module, each checked on one
   request against the case's expected output, then driven by the same closed-loop load generator (4 clients, 2 s
   warm-up, 8 s measured), in the order Java, Python, Python, Java.

usage: python3 driver.py --out DIR [--runs 30] [--skip-serve] [--skip-python]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True

import run as runner  # noqa: E402

JAVA = HERE / "jre" / "bin" / "java"
CLASSPATH = str(HERE / "jars" / "*")


def log(message: str) -> None:
    print(f"[jvm-gpu-bundle] {message}", flush=True)


def java_env() -> dict:
    env = dict(os.environ, AXE4J_TVM_LIBDIR=str(HERE / "lib"))
    env["AXE4J_CUDA_LIBS"] = os.pathsep.join(runner.library_folders())
    return env


def java(main: str, *args: str, heap: str = "16g") -> list[str]:
    return [str(JAVA), f"-Xmx{heap}", "-cp", CLASSPATH, main, *args]


def java_side(out: Path, moe_inputs: Path | None, runs: int) -> dict:
    command = java("org.axe4j.benchmarks.gpu.GpuBundleRunner", str(HERE), str(out / "java"), "--runs", str(runs))
    if moe_inputs is not None:
        command += ["--moe-inputs", str(moe_inputs)]
    started = time.time()
    done = subprocess.run(command, env=java_env(), text=True, capture_output=True)
    (out / "java.log").write_text(done.stdout + done.stderr)
    log(f"Java side: exit {done.returncode} in {time.time() - started:.0f} s; {done.stdout.strip().splitlines()[-1:]}")
    summary_file = out / "java" / "java-summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    summary["exit"] = done.returncode
    if done.returncode != 0:
        summary["stderr_tail"] = done.stderr.strip().splitlines()[-15:]
    return summary


def python_launch_overhead(spec: dict, calls: int = 20000) -> dict:
    """The same kernel's launches through tvm_ffi_ctypes, and a comparable PyTorch kernel, as the Java side times."""
    import tvm_ffi_ctypes as ffi

    result = {"kernel": spec["name"], "calls": calls}
    worker = runner.Worker(json.loads((HERE / "manifest.json").read_text()), "cuda")
    function = worker.function(spec["library"], spec["symbol"])
    pointers = [worker.cuda.malloc(ffi.Tensor(0, a["shape"], a["dtype"]).nbytes) for a in spec["args"]]
    tensors = [ffi.Tensor(p, a["shape"], a["dtype"], ffi.CUDA, 0) for p, a in zip(pointers, spec["args"])]

    def best(body) -> float:
        times = []
        for _ in range(6):
            start = time.perf_counter()
            body()
            times.append((time.perf_counter() - start) * 1e6 / calls)
        return min(times[1:])

    def ours():
        for _ in range(calls):
            function(*tensors)
        worker.cuda.synchronize("launch-overhead round")

    result["tvm_ffi_ctypes_us_per_launch"] = best(ours)
    try:
        import torch

        shape = spec["args"][0]["shape"]
        a, b = torch.zeros(shape, dtype=torch.float16, device="cuda"), torch.ones(shape, dtype=torch.float16,
                                                                                   device="cuda")
        c = torch.empty_like(a)

        def theirs():
            for _ in range(calls):
                torch.add(a, b, out=c)
            torch.cuda.synchronize()

        result["torch_add_us_per_launch"] = best(theirs)
        result["torch"] = torch.__version__
    except ImportError:
        result["torch"] = "not installed"
    return result


def start_service(command: list[str], env: dict) -> tuple[subprocess.Popen, int, list[str]]:
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, deadline = [], time.time() + 120
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if line.startswith("listening on "):
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            return process, int(line.split()[2]), lines
    process.kill()
    raise RuntimeError(f"service did not start: {' | '.join(lines[-8:])}")


def serve_side(out: Path, seconds: float = 8.0, warmup: float = 2.0, clients: int = 4) -> dict:
    import numpy as np

    spec = json.loads((HERE / "serve-kernel.json").read_text())
    data = np.load(HERE / spec["npz"])
    body = b"".join(np.ascontiguousarray(data[f"a{i}"]).tobytes() for i in spec["inputs"])
    body_file = out / "serve-body.bin"
    body_file.write_bytes(body)
    expected = data["e0"].astype(np.float32)
    answer_bytes = sum(np.asarray(data[f"a{i}"]).nbytes for i in spec["outputs"])
    commands = {
        "java": (java("org.axe4j.serve.DeviceKernelService", str(HERE / "serve-kernel.json"), "--port", "0",
                      "--threads", str(clients), heap="2g"), java_env()),
        "python": ([sys.executable, str(HERE / "python_device_service.py"), str(HERE / "serve-kernel.json"),
                    "--port", "0", "--threads", str(clients)], dict(os.environ)),
    }
    result = {"kernel": spec["function"], "request_bytes": len(body), "answer_bytes": answer_bytes,
              "clients": clients, "seconds": seconds, "warmup": warmup, "runs": {"java": [], "python": []}}
    for side in ("java", "python", "python", "java"):
        command, env = commands[side]
        process, port, lines = start_service(command, env)
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/run", data=body, method="POST")
            answer = urllib.request.urlopen(request, timeout=60).read()
            got = np.frombuffer(answer, dtype=data["e0"].dtype).reshape(expected.shape).astype(np.float32)
            bad = int((np.abs(got - expected) > spec["atol"] + spec["rtol"] * np.abs(expected)).sum())
            load = subprocess.run(java("org.axe4j.serve.LoadGenerator", f"http://127.0.0.1:{port}/v1/run",
                                       str(body_file), str(answer_bytes), str(clients), str(seconds), str(warmup),
                                       heap="1g"), capture_output=True, text=True, env=java_env())
            record = json.loads(load.stdout.strip().splitlines()[-1]) if load.returncode == 0 else {
                "error": load.stdout + load.stderr}
            record["answer_mismatches"] = bad
            result["runs"][side].append(record)
            log(f"service {side}: {record}")
        finally:
            process.terminate()
            process.wait(timeout=30)
    for side, runs in result["runs"].items():
        good = [r for r in runs if "rps" in r]
        if good:
            result[side] = {"rps": sum(r["rps"] for r in good) / len(good),
                            "p50_us": sum(r["p50_us"] for r in good) / len(good),
                            "p99_us": sum(r["p99_us"] for r in good) / len(good),
                            "errors": sum(r["errors"] for r in good),
                            "answer_mismatches": sum(r["answer_mismatches"] for r in runs)}
    return result


def agreement(java: dict, python: dict) -> list[dict]:
    """Per timed GEMM: Java's and run.py's median times and cuBLAS ratios, and how far apart they are."""
    rows = []
    by_name = {t["name"]: t for t in python.get("timings", [])}
    for ours in java.get("gemm", []):
        theirs = by_name.get(ours["name"], {})
        row = {"name": ours["name"], "java_ms": ours.get("median_ms"), "python_ms": theirs.get("median_ms"),
               "java_ratio_to_cublas": ours.get("ratio_to_cublas"),
               "python_ratio_to_cublas": theirs.get("ratio_to_cublas")}
        if row["java_ms"] and row["python_ms"]:
            row["time_difference"] = row["java_ms"] / row["python_ms"] - 1
        if row["java_ratio_to_cublas"] and row["python_ratio_to_cublas"]:
            row["ratio_difference"] = row["java_ratio_to_cublas"] / row["python_ratio_to_cublas"] - 1
        rows.append(row)
    return rows


def write_summary(out: Path, summary: dict) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = [f"# JVM GPU bundle: {summary.get('device')}", "", f"date {summary['date']}, {summary['seconds']:.0f} s", ""]
    java = summary.get("java", {})
    cases = java.get("cases", [])
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    lines += ["## Cases from Java", "", " ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none", ""]
    lines += [f"- {c['name']}: {c['status']} {c.get('message', '')}" for c in cases if c["status"] != "pass"]
    py_counts = summary.get("python", {}).get("counts", {})
    lines += ["", f"run.py on the same cases: {py_counts}", ""]
    lines += ["## GEMM (FP16, cold L2, median of the runs)", "",
              "| kernel | Java ms | Java TFLOP/s | cuBLAS from Java | ratio (Java) | run.py ms | ratio (run.py) | Java/run.py time |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    gemm_by_name = {g["name"]: g for g in java.get("gemm", [])}
    for row in summary.get("agreement", []):
        g = gemm_by_name.get(row["name"], {})

        def f(v, fmt):
            return format(v, fmt) if isinstance(v, (int, float)) else "-"

        lines.append(f"| {row['name']} | {f(row['java_ms'], '.4f')} | {f(g.get('tflops'), '.1f')} | "
                     f"{f(g.get('cublas_tflops'), '.1f')} | {f(row['java_ratio_to_cublas'], '.3f')} | "
                     f"{f(row['python_ms'], '.4f')} | {f(row['python_ratio_to_cublas'], '.3f')} | "
                     f"{f(row.get('time_difference'), '+.2%')} |")
    lines += ["", "## MoE from Java (BF16, best of 5 batches of 10 launches)", ""]
    for m in java.get("moe", []):
        lines.append(f"- {m}")
    lines += ["", "## Launch overhead (µs per launch, host side)", "", f"- Java: {java.get('launch')}",
              f"- Python: {summary.get('python_launch')}", "", "## Services", "", f"{summary.get('serve')}", ""]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--skip-python", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    present, device, major, minor = runner.gpu_present()
    summary = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "device": device if present else None}
    if not present:
        java = java_side(args.out, None, args.runs)   # the bundled JRE and jars start and say so too
        log(f"no GPU: {device}; nothing to run")
        summary.update({"java": java, "seconds": time.time() - started})
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        return 0 if java.get("exit") == 0 else 1
    summary["device"] = f"{device}, compute capability {major}.{minor}"
    with tempfile.TemporaryDirectory() as scratch:
        moe_inputs = Path(scratch) / "moe"
        done = subprocess.run([sys.executable, str(HERE / "moe_inputs.py"), "--out", str(moe_inputs)])
        summary["moe_inputs_exit"] = done.returncode
        summary["java"] = java_side(args.out, moe_inputs if done.returncode == 0 else None, args.runs)
    if not args.skip_python:
        done = subprocess.run([sys.executable, str(HERE / "run.py"), "--out", str(args.out / "python"),
                               "--runs", str(args.runs)])
        py = args.out / "python" / "summary.json"
        summary["python"] = json.loads(py.read_text()) if py.is_file() else {"exit": done.returncode}
        summary["agreement"] = agreement(summary["java"], summary["python"])
        tokens = ",".join(str(r["tokens"]) for r in json.loads((HERE / "manifest.json").read_text())["moe"]["runs"])
        subprocess.run([sys.executable, str(HERE / "moe_bench.py"), "--out", str(args.out / "python"), "--tokens",
                        tokens, "--dtypes", "bfloat16"])
        moe = args.out / "python" / "moe.json"
        summary["python_moe"] = json.loads(moe.read_text()) if moe.is_file() else None
        try:
            summary["python_launch"] = python_launch_overhead(
                json.loads((HERE / "jvm-manifest.json").read_text())["launch"])
        except Exception as error:  # noqa: BLE001  (reported, the run goes on)
            summary["python_launch"] = {"error": f"{type(error).__name__}: {error}"}
    if not args.skip_serve:
        try:
            summary["serve"] = serve_side(args.out)
        except Exception as error:  # noqa: BLE001
            summary["serve"] = {"error": f"{type(error).__name__}: {error}"}
    summary["seconds"] = time.time() - started
    write_summary(args.out, summary)
    cases = summary["java"].get("cases", [])
    passed = bool(cases) and all(c["status"] == "pass" for c in cases)
    log(f"{'PASS' if passed else 'FAIL'}: {sum(c['status'] == 'pass' for c in cases)}/{len(cases)} cases from Java; "
        f"summary in {args.out / 'summary.md'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
