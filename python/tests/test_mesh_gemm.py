"""The GEMM + reduce-scatter example on 4 MPI ranks gives numpy's result, unfused and overlapped (the example asserts
it per element), at a size that keeps the test short."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_gemm_reduce_scatter_example_matches_numpy():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "gemm_reduce_scatter.py"), "--m", "128", "--k",
                           "256", "--n", "64", "--repeat", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "reduce_scatter over mesh dims [0] (groups of 4)" in done.stdout
    assert "matches numpy (every element)" in done.stdout
    assert "= the plan's count" in done.stdout
