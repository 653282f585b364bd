"""make bench-moe end to end at the test sizes (--small): it runs, checks its output against numpy, writes its JSON
and chart, and without a GPU says the GPU part needs one, prints and plots the figures recorded on a lent GPU, and
still exits 0."""

import tvm  # noqa: F401  (before the JVM)

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _gpu() -> bool:
    try:
        return bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001
        return False


def test_small_run_writes_its_figures_and_reports_the_gpu_part(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_moe.py"), "--small", "--tokens", "1,64",
                          "--repeat", "1", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    rows = result["cpu"]["rows"]
    assert [r["tokens"] for r in rows] == [1, 64]
    assert all(r["matches"] and r["axe4j_ms"] > 0 and r["numpy_ms"] > 0 for r in rows), rows
    assert (tmp_path / "moe-cpu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if not _gpu():
        assert "GPU part: not run: no CUDA GPU on this machine" in out.stdout
        assert result["gpu"]["status"].startswith("not run")
        # the figures last measured on a lent GPU, from the newest docs/gpu-runs/*-moe.json, printed and plotted
        newest = sorted((ROOT / "docs" / "gpu-runs").glob("*-moe.json"))[-1]
        recorded = json.loads(newest.read_text())
        assert result["gpu"]["recorded"]["file"] == str(newest.relative_to(ROOT))
        assert f"GPU figures recorded on {recorded['device']} ({newest.relative_to(ROOT)}" in out.stdout
        assert f"measured {newest.name[:10]})" in out.stdout               # the date, beside the device
        for r in recorded["rows"]:
            assert f"{r['dtype']:8s} {r['tokens']:5d} tokens: axe4j {r['axe4j_ms']:.3f} ms" in out.stdout
        assert (tmp_path / "moe-gpu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_bad_token_list_is_named():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_moe.py"), "--tokens", "1,x"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "--tokens '1,x' is not a comma-separated list of ints" in out.stderr
