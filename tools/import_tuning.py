"""Reads the GEMM timings of a GPU bundle run (``summary.json`` of ``run.py``) into the tile-configuration cache
``python/axe4j/cuda/kernels/gemm_tuning.json`` and prints the sweep as a Markdown table (docs/cuda-gemm.md).

For each shape of the sweep, the configuration with the most TFLOP/s among those that ran and matched numpy is the
choice for (the run's arch, dtype, shape); every configuration's figure and cuBLAS's (and torch's, when timed) are
kept with it, with the device, the date and the kind of input they were measured on (the run's top-level figures:
random-normal unless the run was told otherwise). Entries of other shapes already in the cache stay.

usage: python tools/import_tuning.py SUMMARY_JSON [--markdown FILE] [--plot FILE.png]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

PREFIX = "hopper_gemm_pipelined/"


def entries_of(summary: dict) -> dict:
    from axe4j.cuda.kernels import gemm_tuning

    shapes: dict = {}
    for t in summary.get("timings", []):
        if not t.get("name", "").startswith(PREFIX) or "tflops" not in t or not t.get("matches_numpy"):
            continue
        if t.get("epilogue") or t["name"].endswith("_fused"):   # a fused epilogue is not a tile configuration
            continue
        label = t["name"][len(PREFIX):].split("_", 1)[1]
        dtype = t.get("dtype", "float16")
        if dtype == "bfloat16":
            label = label.removesuffix("_bf16")
        shapes.setdefault((t["m"], t["n"], t["k"], dtype), []).append((label, t))
    entries = {}
    for (m, n, k, dtype), runs in shapes.items():
        best_label, _ = max(runs, key=lambda r: r[1]["tflops"])
        cublas = runs[0][1].get("cublas", {})
        torch = runs[0][1].get("torch", {})
        entries[gemm_tuning.key(summary["arch"], m, n, k, dtype)] = {
            "choice": best_label, "device": summary["device"].split(",")[0], "date": summary.get("date", "unknown"),
            # the kind of input the figures are on (runs before 2026-11-28 timed the harness's formula only)
            "inputs": runs[0][1].get("inputs", "structured"),
            "cublas_tflops": cublas.get("tflops", 0.0),
            **({"torch_tflops": round(torch["tflops"], 1)} if "tflops" in torch else {}),
            "measured": [{"config": label, "tflops": round(t["tflops"], 1), "median_ms": round(t["median_ms"], 4)}
                         for label, t in runs]}
    return entries


def markdown(entries: dict) -> str:
    lines = ["| shape (M x N x K) | TFLOP/s per tile configuration | chosen | cuBLAS TFLOP/s | ratio |",
             "|---|---|---|---|---|"]
    for key, e in entries.items():
        best = max(r["tflops"] for r in e["measured"])
        ratio = f"{best / e['cublas_tflops']:.3f}" if e["cublas_tflops"] else "-"
        figures = ", ".join(f"{r['config']}: {r['tflops']:.1f}" for r in e["measured"])
        shape = key.split("/")[-1] + ("" if "/float16/" in key else f" {key.split('/')[1]}")
        lines.append(f"| {shape} | {figures} | {e['choice']} | {e['cublas_tflops']:.1f} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from axe4j.cuda.kernels import gemm_tuning

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("summary", type=Path)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--plot", type=Path, help="a bar chart (PNG) of the chosen configuration's TFLOP/s and "
                                                 "cuBLAS's per shape")
    parser.add_argument("--cache", type=Path, default=gemm_tuning.TUNING_FILE)
    args = parser.parse_args(argv)
    summary = json.loads(args.summary.read_text())
    new = entries_of(summary)
    if not new:
        print(f"{args.summary}: no pipelined GEMM timing that matched numpy; the cache is unchanged")
        return 1
    cache = json.loads(args.cache.read_text()) if args.cache.is_file() else {"entries": {}}
    cache["entries"].update(new)
    cache["entries"] = dict(sorted(cache["entries"].items()))
    args.cache.write_text(json.dumps(cache, indent=1) + "\n")
    table = markdown(new)
    if args.markdown:
        args.markdown.write_text(table)
    if args.plot:
        from axe4j_tools import chart

        shapes = [k.split("/")[-1] for k in new]
        best = [max(r["tflops"] for r in e["measured"]) for e in new.values()]
        chart.bar_chart(args.plot, f"FP16 GEMM TFLOP/s, {summary['device'].split(',')[0]}", shapes,
                        {"axe4j": best, "cuBLAS": [e["cublas_tflops"] for e in new.values()]},
                        notes=[f"{b / e['cublas_tflops']:.3f}x" if e["cublas_tflops"] else "-"
                               for b, e in zip(best, new.values())])
    print(table, end="")
    print(f"{len(new)} shapes written to {args.cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
