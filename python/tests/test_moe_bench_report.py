"""The GPU bundle's moe_bench.py, the parts that need no GPU: its report of the timings with the schedule inside and
what fails a run (``failures``: the exit status of a GPU run). The GPU part itself runs only on a lent GPU."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("moe_bench_under_test", ROOT / "tools" / "gpu-bundle" / "moe_bench.py")
    module = importlib.util.module_from_spec(spec)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True   # no __pycache__ in the bundle's payload
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module


def _row(**extra):
    return {"tokens": 16, "dtype": "bfloat16", "axe4j_ms": 0.2, "axe4j_tflops": 5.0, "axe4j_three_kernels_ms": 0.25,
            "axe4j_vs_reference": {"matches": True}, "axe4j_three_kernels_vs_reference": {"matches": True},
            "device_schedule": {"matches": True},
            "peers": {"Triton fused-MoE (axe4j.moe.triton_moe)": {"ms": 0.3, "axe4j_speedup": 1.5,
                                                                  "vs_reference": {"matches": True}},
                      "PyTorch per-expert loop (cuBLAS)": {"ms": 9.0, "axe4j_speedup": 45.0,
                                                           "vs_reference": {"matches": True}}},
            "triton_fp8_vs_reference": {"matches": True}, "block_sort_matches": {16: True, 64: True}, **extra}


def _timing(impl, scope, mode, **extra):
    entry = {"impl": impl, "dtype": "bfloat16", "tokens": 16, "scope": scope, "mode": mode, "ms": 0.25,
             "tflops": 4.0, "weight_GBps": 2400.0, "weight_bw_pct": 60.0}
    entry.update(extra)
    return entry


def _result(rows=None, timings=None):
    return {"device": "D", "torch": "t", "peers_missing": {}, "hbm_GBps": 4000.0, "rows": rows or [_row()],
            "timings": timings if timings is not None else [
                _timing("axe4j (fused)", "experts", "eager"),
                _timing("axe4j (fused)", "layer", "graph", vs_reference={"matches": True}),
                _timing("PyTorch per-expert loop (cuBLAS)", "experts", "graph", error="RuntimeError: capture")]}


def test_a_clean_run_has_no_failures_and_reports_every_timing():
    bench = _bench()
    assert bench.failures(_result()) == []
    text = bench.markdown(_result())
    assert "HBM bandwidth measured by a 1 GiB device-to-device copy: 4000 GB/s" in text
    assert "| bfloat16 | 16 | axe4j (fused) | layer | graph | 0.250 | 60% | 4.0 | True |" in text
    assert "| bfloat16 | 16 | PyTorch per-expert loop (cuBLAS) | experts | graph | not timed: RuntimeError: capture" \
        in text


def test_each_wrong_or_missing_result_fails_the_run():
    bench = _bench()
    cases = {
        "axe4j graph differs": _result(timings=[_timing("axe4j (three kernels)", "experts", "graph",
                                                        vs_reference={"matches": False})]),
        "axe4j not captured": _result(timings=[_timing("axe4j (fused)", "layer", "graph", error="CudaError")]),
        "triton peer differs": _result(rows=[_row(peers={"Triton fused-MoE (axe4j.moe.triton_moe)": {
            "ms": 1.0, "axe4j_speedup": 1.0, "vs_reference": {"matches": False}}})]),
        "triton peer failed": _result(rows=[_row(peers={"Triton fused-MoE (axe4j.moe.triton_moe)": {
            "error": "CompilationError"}})]),
        "triton fp8 differs": _result(rows=[_row(triton_fp8_vs_reference={"matches": False})]),
        "block sort differs": _result(rows=[_row(block_sort_matches={16: True, 128: False})]),
        "schedule kernel differs": _result(rows=[_row(device_schedule={"matches": False})]),
        "axe4j differs": _result(rows=[_row(axe4j_vs_reference={"matches": False})]),
        "axe4j fp8 differs": dict(_result(rows=[_row(axe4j_fp8_vs_reference={"matches": False})]), fp8_tokens=[16]),
        "axe4j fp8 not run": dict(_result(), fp8_tokens=[16]),
        "axe4j fp8 not captured": _result(timings=[_timing("axe4j FP8 (e4m3)", "experts", "graph", error="CudaError")]),
    }
    for what, result in cases.items():
        assert len(bench.failures(result)) == 1, what


def test_an_fp8_run_that_matches_passes_and_is_reported():
    bench = _bench()
    result = dict(_result(rows=[_row(axe4j_fp8_vs_reference={"matches": True})],
                          timings=[_timing("axe4j FP8 (e4m3)", "experts", "graph", dtype="float8_e4m3fn",
                                           vs_reference={"matches": True})]), fp8_tokens=[16])
    assert bench.failures(result) == []
    text = bench.markdown(result)
    assert "axe4j's FP8 (e4m3) experts against the dequantised reference: 16 tokens: True" in text
    assert "| float8_e4m3fn | 16 | axe4j FP8 (e4m3) | experts | graph | 0.250 | 60% | 4.0 | True |" in text


def test_skewed_routings_crowd_every_token_on_the_same_experts_and_leave_all_but_8_empty():
    import numpy as np

    bench = _bench()
    for tokens in (1, 16, 257):
        routings = bench.skewed_routings(np, 128, 8, tokens, 5)
        crowded, weights = routings["same_top_k"]
        assert crowded.dtype == np.int32 and (crowded == np.arange(8)).all() and crowded.shape == (tokens, 8)
        sparse, _ = routings["8_experts_used"]
        assert len(np.unique(sparse)) == min(8, 8 * tokens) and all(len(set(row)) == 8 for row in sparse.tolist())
        assert weights.dtype == np.float32 and (weights > 0).all() and np.allclose(weights.sum(axis=1), 1, atol=1e-6)


def test_a_skewed_routing_that_differs_fails_the_run():
    bench = _bench()
    good = {"axe4j": {"matches": True}, "device_schedule": {"matches": True},
            "Triton fused-MoE (axe4j.moe.triton_moe)": {"matches": True}, "PyTorch per-expert loop": {"error": "x"}}
    assert bench.failures(_result(rows=[_row(skewed={"same_top_k": good})])) == []
    for name in ("axe4j", "device_schedule", "Triton fused-MoE (axe4j.moe.triton_moe)"):
        bad = dict(good, **{name: {"matches": False}})
        assert bench.failures(_result(rows=[_row(skewed={"same_top_k": bad})])) == [
            ("bfloat16", 16, "same_top_k", name)]
