"""make bench-gemm: the Hopper FP16 GEMMs compiled through axe4j against cuBLAS, same GPU, same run, same timing.

One measuring path for every machine: the GPU bundle (``make gpu-bundle``, docs/gpu-bundle.md) holds the teaching
``hopper_gemm`` and the benchmark sweep (``hopper_gemm_pipelined`` with every tile configuration that applies to
every shape of ``axe4j.cuda.kernels.gemm_tuning.SWEEP``); its runner checks each against numpy, times it with the L2
flushed before each of 30 launches (median), and times cuBLAS (cuBLASLt heuristic) the same way on the same shape,
comparing D with ours. This script runs the runner on the GEMM cases, then reads its timings as
``tools/import_tuning.py`` does: ``out/bench-gemm/`` gets ``summary.json`` / ``summary.md`` (every kernel),
``sweep.md`` (per shape: each configuration, the chosen one, cuBLAS, the ratio), ``gemm.png`` and
``gemm_tuning.json`` (the choices; ``--update-cache`` writes them into the package's cache instead). Without a GPU
the runner says so and this exits 0.

usage: bench_gemm.py [--runs 30] [--update-cache]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "out" / "gpu-bundle"
OUT = ROOT / "out" / "bench-gemm"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed launches per GEMM (the median is reported)")
    parser.add_argument("--update-cache", action="store_true",
                        help="write the choices into python/axe4j/cuda/kernels/gemm_tuning.json")
    args = parser.parse_args(argv)
    subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_bundle.py")], check=True)
    OUT.mkdir(parents=True, exist_ok=True)
    summary = OUT / "summary.json"
    summary.unlink(missing_ok=True)
    run = subprocess.run([sys.executable, str(BUNDLE / "run.py"), "--only", "hopper_gemm", "--runs", str(args.runs),
                          "--out", str(OUT)])
    if not summary.is_file():   # no GPU (the runner said so), or it could not start
        return run.returncode
    cache = [] if args.update_cache else ["--cache", str(OUT / "gemm_tuning.json")]
    imported = subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(summary), "--markdown",
                               str(OUT / "sweep.md"), "--plot", str(OUT / "gemm.png"), *cache])
    return run.returncode or imported.returncode


if __name__ == "__main__":
    sys.exit(main())
