"""make bench-gemm: the Hopper FP16 GEMM compiled through axe4j against cuBLAS, same GPU, same run, same timing.

For each shape (the paper's weight shapes at batch 8192, and squares) it compiles ``axe4j.kernels.hopper_gemm``
for sm_90a, runs it on inputs from the closed formula that ``native/cublas_gemm_bench`` also uses, compares D with
cuBLAS's D (FP16 tolerance), times both the same way (TVM's time evaluator: ``number`` launches per repeat, median
of ``repeat``; the harness does the same with CUDA events) and prints TFLOP/s and the ratio. Writes
``out/bench-gemm/result.json`` and ``out/bench-gemm/gemm.png``. Without a CUDA GPU it says so and exits 0.

usage: bench_gemm.py [--shapes 8192x4096x4096,...] [--number 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(8192, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336), (4096, 4096, 4096), (8192, 8192, 8192)]
OUT = ROOT / "out" / "bench-gemm"


def inputs(m, n, k, seed=0):
    """The harness's inputs (native/README.md): exact in FP16."""
    import numpy as np

    a = ((7 * np.arange(m)[:, None] + 13 * np.arange(k)[None, :] + seed) % 9 - 4) / 8.0
    b = ((11 * np.arange(n)[:, None] + 5 * np.arange(k)[None, :] + 2 * seed) % 9 - 4) / 8.0
    return a.astype("float16"), b.astype("float16")


def progress(done, total, label, width=30):
    filled = int(width * done / total)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<48}")
    sys.stderr.flush()


def parse_shapes(text):
    shapes = []
    for part in text.split(","):
        try:
            m, n, k = (int(x) for x in part.lower().split("x"))
        except ValueError:
            raise SystemExit(f"bench-gemm: shape {part!r} is not MxNxK") from None
        shapes.append((m, n, k))
    return shapes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=parse_shapes, default=SHAPES)
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    import tvm

    try:
        present = bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001  (no CUDA driver at all)
        present = False
    if not present:
        print("bench-gemm: no CUDA GPU on this machine (tvm.cuda(0) does not exist): nothing to measure")
        return 0
    dev = tvm.cuda(0)
    if dev.compute_version != "9.0":
        print(f"bench-gemm: the kernel is for sm_90a (H100/H200); this GPU is compute {dev.compute_version}")
        return 0

    import numpy as np

    import axe4j
    from axe4j import chart
    from axe4j.kernels.hopper_gemm import hopper_gemm

    axe4j.install()
    axe4j.use_pip_nvcc()
    subprocess.run(["bash", str(ROOT / "native" / "build.sh")], check=True, capture_output=True)
    harness = ROOT / "native" / "build" / "cublas_gemm_bench"
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    rows = []
    steps = 3 * len(args.shapes)
    for i, (m, n, k) in enumerate(args.shapes):
        label = f"{m}x{n}x{k}"
        progress(3 * i, steps, f"{label}: compiling through axe4j")
        started = time.time()
        executable = axe4j.compile(hopper_gemm(m, n, k), target)
        compile_s = time.time() - started
        progress(3 * i + 1, steps, f"{label}: running axe4j")
        a, b = inputs(m, n, k)
        d = tvm.runtime.tensor(np.zeros((m, n), "float16"), dev)
        tensors = [tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), d]
        executable(*tensors)
        ours = d.numpy().astype("float32")
        name = next(n for n in ("kernel", "main") if executable.mod.implements_function(n))
        evaluator = executable.mod.time_evaluator(name, dev, number=args.number, repeat=args.repeat)
        seconds = float(np.median(evaluator(*tensors).results))
        progress(3 * i + 2, steps, f"{label}: running cuBLAS")
        with tempfile.TemporaryDirectory() as tmp:
            saved = Path(tmp) / "d.bin"
            out = subprocess.run([str(harness), str(m), str(n), str(k), "--number", str(args.number), "--repeat",
                                  str(args.repeat), "--save", str(saved)], capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"bench-gemm: cuBLAS harness failed for {label}: {out.stderr.strip()}")
            theirs_report = json.loads(out.stdout)
            theirs = np.fromfile(saved, dtype=np.float16).reshape(m, n).astype("float32")
        error = float(np.max(np.abs(ours - theirs) / (np.abs(theirs) + 1.0)))
        flops = 2.0 * m * n * k
        row = {"m": m, "n": n, "k": k, "axe4j_tflops": flops / seconds / 1e12,
               "cublas_tflops": float(theirs_report["tflops"]), "axe4j_ms": seconds * 1e3,
               "cublas_ms": float(theirs_report["ms"]), "max_rel_diff": error, "matches": error <= 1e-2,
               "compile_s": compile_s, "device": theirs_report["device"]}
        row["ratio"] = row["axe4j_tflops"] / row["cublas_tflops"]
        rows.append(row)
    progress(steps, steps, "done")
    sys.stderr.write("\n")
    print(f"{'shape':>20} {'axe4j TFLOP/s':>14} {'cuBLAS TFLOP/s':>15} {'ratio':>7} {'matches cuBLAS':>15}")
    for r in rows:
        print(f"{r['m']}x{r['n']}x{r['k']:>6} {r['axe4j_tflops']:14.1f} {r['cublas_tflops']:15.1f} {r['ratio']:7.3f} "
              f"{'yes' if r['matches'] else 'NO (max rel diff %.3g)' % r['max_rel_diff']:>15}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "result.json").write_text(json.dumps({"device": rows[0]["device"] if rows else None, "number": args.number,
                                                "repeat": args.repeat, "rows": rows}, indent=2))
    chart.bar_chart(OUT / "gemm.png", f"FP16 GEMM TFLOP/s ({rows[0]['device'] if rows else ''})",
                    [f"{r['m']}x{r['n']}x{r['k']}" for r in rows],
                    {"axe4j": [r["axe4j_tflops"] for r in rows], "cuBLAS": [r["cublas_tflops"] for r in rows]},
                    [f"ratio {r['ratio']:.2f}" for r in rows])
    print(f"wrote {OUT / 'result.json'} and {OUT / 'gemm.png'}")
    return 0 if all(r["matches"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
