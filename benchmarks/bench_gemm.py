"""make bench-gemm: the Hopper FP16 GEMMs compiled through axe4j against cuBLAS and torch, same GPU, same run, same
timing, on random-normal and on structured inputs.

One measuring path for every machine: the GPU bundle (``make gpu-bundle``, docs/gpu-bundle.md) holds the teaching
``hopper_gemm`` and the benchmark sweep (``hopper_gemm_pipelined`` with every tile configuration that applies to
every shape of ``axe4j.cuda.kernels.gemm_tuning.SWEEP`` and ``SERVED``); its runner checks each against numpy, times
it with the L2 flushed before each of 30 launches (median) on each input kind (seeded random-normal, and the cuBLAS
harness's formula), and times cuBLAS (its harness) and ``torch.nn.functional.linear`` the same way on the same
shape and inputs, comparing D with ours; ratios are per input kind. This script runs the runner on the GEMM cases,
then reads its timings as ``tools/import_tuning.py`` does: ``out/bench-gemm/`` gets ``summary.json`` /
``summary.md`` (every kernel, both input kinds), ``sweep.md`` (per shape: each configuration, the chosen one,
cuBLAS, the ratio), ``gemm.png`` and ``gemm_tuning.json`` (the choices; ``--update-cache`` writes them into the
package's cache instead).

Without a GPU it builds nothing: it prints the recorded figures of the package's cache (``gemm_tuning.json``) with
their device, date and input kind, names the shapes that have none yet, and exits 0.

usage: bench_gemm.py [--runs 30] [--update-cache] [--recorded]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "out" / "gpu-bundle"
OUT = ROOT / "out" / "bench-gemm"
sys.path.insert(0, str(ROOT / "python"))


def recorded() -> str:
    """The cache's figures as a table: per shape the chosen tiles, TFLOP/s, the peers', the ratio, and where, when
    and on which inputs they were measured; then the swept shapes without a measurement."""
    from axe4j.cuda.kernels import gemm_tuning

    entries = gemm_tuning.load()
    lines = ["Recorded figures (python/axe4j/cuda/kernels/gemm_tuning.json; FP16 unless named, cold L2, medians of "
             "30):", "",
             "| shape (M x N x K) | tiles | TFLOP/s | cuBLAS TFLOP/s | ratio | torch TFLOP/s | device | date | inputs |",
             "|---|---|---:|---:|---:|---:|---|---|---|"]
    for key, e in sorted(entries.items(), key=lambda item: ([int(x) for x in item[0].split("/")[-1].split("x")],
                                                            item[0])):
        best = max(r["tflops"] for r in e["measured"])
        ratio = f"{best / e['cublas_tflops']:.3f}" if e.get("cublas_tflops") else "-"
        inputs = e.get("inputs", "structured")
        shape = key.split("/")[-1] + ("" if "/float16/" in key else f" {key.split('/')[1]}")
        lines.append(f"| {shape} | {e['choice']} | {best:.1f} | {e.get('cublas_tflops', 0.0):.1f} | "
                     f"{ratio} | {e.get('torch_tflops', '-')} | {e['device']} | {e['date']} | {inputs} |")
    lines += ["", "inputs: structured = the cuBLAS harness's formula ((7i + 13k) mod 9 - 4) / 8 (nine distinct values; "
                  "power-limited GPUs run faster on it); randn = seeded random-normal FP16."]
    swept = list(gemm_tuning.SWEEP) + list(gemm_tuning.SERVED)
    missing = [f"{m}x{n}x{k}" for m, n, k in swept if gemm_tuning.key("sm_90a", m, n, k, "float16") not in entries]
    if missing:
        lines += ["", f"No GPU figures yet for {len(missing)} swept shapes (pending a GPU run of make bench-gemm): "
                      + ", ".join(missing)]
    return "\n".join(lines)


def gpu() -> tuple[bool, str]:
    """Whether the CUDA driver finds a GPU (the bundle runner's check; no CUDA context), and its name or why not."""
    sys.path.insert(0, str(ROOT / "tools" / "gpu-bundle"))
    import run as bundle_runner

    present, device, _, _ = bundle_runner.gpu_present()
    return present, device


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed launches per GEMM (the median is reported)")
    parser.add_argument("--update-cache", action="store_true",
                        help="write the choices into python/axe4j/cuda/kernels/gemm_tuning.json")
    parser.add_argument("--recorded", action="store_true", help="print the recorded figures and exit")
    args = parser.parse_args(argv)
    present, device = gpu()
    if args.recorded or not present:
        if not present:
            print(f"no GPU: {device}; nothing to time. The recorded figures follow.\n")
        print(recorded())
        return 0
    subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_bundle.py")], check=True)
    OUT.mkdir(parents=True, exist_ok=True)
    summary = OUT / "summary.json"
    summary.unlink(missing_ok=True)
    run = subprocess.run([sys.executable, str(BUNDLE / "run.py"), "--only", "hopper_gemm", "--runs", str(args.runs),
                          "--out", str(OUT)])
    if not summary.is_file():   # the runner could not start
        return run.returncode
    cache = [] if args.update_cache else ["--cache", str(OUT / "gemm_tuning.json")]
    imported = subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(summary), "--markdown",
                               str(OUT / "sweep.md"), "--plot", str(OUT / "gemm.png"), *cache])
    return run.returncode or imported.returncode


if __name__ == "__main__":
    sys.exit(main())
