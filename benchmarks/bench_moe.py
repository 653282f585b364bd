"""make bench-moe: the fused MoE layer (axe4j.moe) at Qwen3-30B-A3B's shapes against a numpy/BLAS layer, same run.

CPU part (always): for each token count, the layer compiled through axe4j's CPU rules (``axe4j.moe.cpu``, FP32,
host CPU, TVM given every CPU as numpy's BLAS has) and the numpy layer (``axe4j.moe.NumpyLayer``: router GEMM,
top-k, per-expert BLAS GEMMs on weights transposed once to the layout BLAS reads best) on the same inputs; best of ``--repeat`` runs each, alternating, after one warm-up. numpy is timed with its BLAS on every CPU and on one
(small GEMMs on busy cores can be faster on one thread) and the faster is the baseline; both are in the JSON.
Outputs are compared (numpy's expert part is given axe4j's routing, so a top-k near-tie cannot make them differ;
how many tokens' expert sets differ between the two routers is reported). Prints ms, GFLOP/s of the expert GEMMs
and the ratio; writes ``out/bench-moe/result.json`` and ``out/bench-moe/moe-cpu.png``.

GPU part: on a machine with a Hopper GPU (compute 9.0; the CUDA layer ``axe4j.moe.cuda`` is sm_90a code) and TVM:
``bench(shape, tokens, repeat) -> list[dict]`` (``axe4j.moe.cuda_bench``, one row per token count: the three
kernels alone, the whole layer call, each peer of ``axe4j.moe.peers`` that imports). Where no such GPU is present it
says why, prints the figures last measured on a lent GPU (the newest ``docs/gpu-runs/*-moe.json``, written by the GPU
bundle's ``moe_bench.py``: docs/gpu-bundle.md) with their device and date, plots them to
``out/bench-moe/moe-gpu.png``, and the run still succeeds.

usage: bench_moe.py [--tokens 1,16,128,1024,4096] [--repeat 3] [--seed 0] [--out DIR] [--small]
(--small: 16 experts, top-4, hidden 256, intermediate 128, the sizes of the tests)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count()))  # before TVM's thread pool starts

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "bench-moe"


def best(body, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        body()
        times.append(time.perf_counter() - start)
    return min(times)


def blas_threads():
    """A function setting numpy's OpenBLAS thread count, or None where numpy's BLAS does not export one. Small GEMMs
    on 2 busy cores can run faster on one BLAS thread than on two, so the baseline is timed both ways."""
    import ctypes
    import glob

    import numpy as np

    for path in glob.glob(str(Path(np.__file__).parent.parent / "numpy.libs" / "libscipy_openblas*.so")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads"):
            if hasattr(lib, name):
                function = getattr(lib, name)
                return lambda n: function(ctypes.c_int(n))
    return None


def cpu_rows(shape, tokens_list, repeat, seed):
    import numpy as np

    import axe4j
    from axe4j.moe import NumpyLayer
    from axe4j.moe import cpu

    rng = np.random.default_rng(seed)
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    sys.stderr.write(f"bench-moe: random weights, {4 * E * 3 * H * I / 2 ** 30:.1f} GiB fp32\n")
    wr = rng.standard_normal((E, H), np.float32)
    w1 = rng.standard_normal((E, 2 * I, H), np.float32) / np.float32(np.sqrt(H))
    w2 = rng.standard_normal((E, H, I), np.float32) / np.float32(np.sqrt(I))
    target = axe4j.host_target()
    numpy_layer = NumpyLayer(wr, w1, w2, shape.top_k)
    set_blas = blas_threads()
    blas = [os.cpu_count() or 1, 1] if set_blas and (os.cpu_count() or 1) > 1 else [os.cpu_count() or 1]
    rows = []
    for tokens in tokens_list:
        x = rng.standard_normal((tokens, H), np.float32)
        started = time.time()
        layer = cpu.MoeLayer(shape, tokens, wr, w1, w2, target=target)
        compile_s = time.time() - started
        ours = layer(x)
        logits, ids, weights = layer.route(x)
        error = float(np.max(np.abs(ours - numpy_layer.experts(x, ids, weights))))
        scale = float(np.max(np.abs(ours)))
        np_ids, _ = numpy_layer.route(x)
        differ = int(np.sum(np.any(np.sort(np_ids, 1) != np.sort(ids, 1), axis=1)))
        numpy_layer(x)
        t_ours, t_numpy = float("inf"), {n: float("inf") for n in blas}
        for _ in range(repeat):  # alternating, so both see the same machine load
            t_ours = min(t_ours, best(lambda: layer(x), 1))
            for n in blas:
                if set_blas:
                    set_blas(n)
                t_numpy[n] = min(t_numpy[n], best(lambda: numpy_layer(x), 1))
        blas_best = min(t_numpy, key=t_numpy.get)
        if set_blas:
            set_blas(blas_best)
        t_experts = best(lambda: layer.experts(x, ids, weights), repeat)
        t_numpy_experts = best(lambda: numpy_layer.experts(x, ids, weights), repeat)
        if set_blas:
            set_blas(blas[0])
        numpy_by_threads = {str(n): t * 1e3 for n, t in t_numpy.items()}
        t_numpy = t_numpy[blas_best]
        flops = shape.flops(tokens)
        row = {"tokens": tokens, "axe4j_ms": t_ours * 1e3, "numpy_ms": t_numpy * 1e3,
               "axe4j_experts_ms": t_experts * 1e3,
               "numpy_experts_ms": t_numpy_experts * 1e3, "numpy_ms_by_blas_threads": numpy_by_threads,
               "numpy_blas_threads": blas_best, "ratio": t_numpy / t_ours,
               "axe4j_gflops": flops / t_ours / 1e9, "numpy_gflops": flops / t_numpy / 1e9,
               "max_abs_diff": error, "max_abs_out": scale, "matches": error <= 1e-3 * max(1.0, scale),
               "tokens_routed_differently": differ, "compile_s": compile_s}
        rows.append(row)
        print(f"tokens {tokens:5d}: axe4j {row['axe4j_ms']:9.2f} ms ({row['axe4j_gflops']:6.1f} GFLOP/s), "
              f"numpy {row['numpy_ms']:9.2f} ms ({row['numpy_gflops']:6.1f} GFLOP/s, {blas_best} BLAS threads), numpy/axe4j time "
              f"{row['ratio']:5.2f}; experts alone {row['axe4j_experts_ms']:.2f} / {row['numpy_experts_ms']:.2f} ms; max |diff| "
              f"{error:.2e} of {scale:.2f}; compile {compile_s:.1f} s", flush=True)
    return rows


def gpu_part(shape, tokens_list, repeat):
    import tvm

    try:
        present = bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001  (no CUDA driver at all)
        present = False
    if not present:
        return {"status": "not run: no CUDA GPU on this machine (tvm.cuda(0) does not exist); the GPU part needs "
                          "a GPU"}
    if importlib.util.find_spec("axe4j.moe.cuda") is None:
        return {"status": "not run: a CUDA GPU is present but axe4j.moe has no CUDA version of the layer "
                          "(module axe4j.moe.cuda)"}
    version = str(tvm.cuda(0).compute_version)
    if version != "9.0":
        return {"status": f"not run: the CUDA layer is sm_90a code (Hopper, compute 9.0); this GPU is compute "
                          f"{version}"}
    from axe4j.moe import cuda_bench

    print(f"GPU part: {tvm.cuda(0).device_name}, FP16, axe4j.moe.cuda against a peer where importable")
    return {"status": "run", "device": tvm.cuda(0).device_name, "rows": cuda_bench.bench(shape, tokens_list, repeat)}


RECORDED = ROOT / "docs" / "gpu-runs"


def recorded_gpu():
    """The newest MoE figures measured on a lent GPU (``docs/gpu-runs/<date>-<device>-moe.json``), or None."""
    runs = sorted(RECORDED.glob("*-moe.json"))
    if not runs:
        return None
    result = json.loads(runs[-1].read_text())
    result["file"] = str(runs[-1].relative_to(ROOT))
    result["date"] = runs[-1].name[:10]          # the files are named <YYYY-MM-DD>-<device>-...-moe.json
    return result


def print_recorded(recorded) -> None:
    names = sorted({n for r in recorded["rows"] for n in r["peers"]})
    print(f"GPU figures recorded on {recorded['device']} ({recorded['file']}; torch {recorded['torch']}; measured "
          f"{recorded['date']}): expert "
          f"part, ms per call; axe4j = the fused GEMM1 -> GEMM2 kernel + combine where the three-kernel form is "
          f"also given; speed-up = peer time / that axe4j time")
    for r in recorded["rows"]:
        peers = "; ".join(f"{n} {p['ms']:.3f} ms (x{p['axe4j_speedup']:.2f})" for n, p in
                          ((n, r["peers"][n]) for n in names if n in r["peers"]) if "ms" in p)
        three = (f", three kernels {r['axe4j_three_kernels_ms']:.3f} ms" if "axe4j_three_kernels_ms" in r else "")
        print(f"  {r['dtype']:8s} {r['tokens']:5d} tokens: axe4j {r['axe4j_ms']:.3f} ms "
              f"({r['axe4j_tflops']:.1f} TFLOP/s, matches the reference: {r['axe4j_vs_reference']['matches']}{three});"
              f" {peers}")
    if recorded.get("timings"):   # moe_bench.py since the schedule went inside the timed region
        print(f"  with the schedule inside (HBM copy {recorded['hbm_GBps']:.0f} GB/s): implementation | scope | mode")
        for t in recorded["timings"]:
            shown = (f"not timed: {t['error'][:60]}" if "error" in t else
                     f"{t['ms']:.3f} ms, " + (f"{t['weight_bw_pct']:.0f}% of HBM" if t["tokens"] <= 64 else
                                             f"{t['tflops']:.1f} TFLOP/s"))
            print(f"  {t['dtype']:13s} {t['tokens']:5d} tokens: {t['impl']} | {t['scope']} | {t['mode']}: {shown}")
    else:
        print("  (these figures predate the timings with the schedule inside and CUDA graphs: pending, no GPU run "
              "of the current moe_bench.py yet)")


def gpu_chart(path: Path, recorded) -> None:
    """TFLOP/s of axe4j and each peer by token count, one bar group per (type, tokens)."""
    from axe4j_tools import chart

    rows = recorded["rows"]
    names = sorted({n for r in rows for n in r["peers"]})
    flops = [r["axe4j_tflops"] * r["axe4j_ms"] for r in rows]      # GFLOP of each row (TFLOP/s x ms)
    series = {"axe4j": [f / r.get("axe4j_three_kernels_ms", r["axe4j_ms"]) for f, r in zip(flops, rows)]}
    if all("axe4j_three_kernels_ms" in r for r in rows):
        series["axe4j fused"] = [r["axe4j_tflops"] for r in rows]
    for n in names:   # the chart's font has letters, digits and a little punctuation: the name without the rest
        label = "".join(c for c in n.replace("_", " ") if c.isalnum() or c in " ()-.,")
        series[label] = [r["peers"].get(n, {}).get("tflops", 0.0) for r in rows]
    chart.bar_chart(path, f"MoE layer (128 experts, top-8, hidden 2048, intermediate 768) on {recorded['device']}, "
                          f"{recorded['date']}: TFLOP/s of the expert GEMMs",
                    [f"{'bf16' if r['dtype'] == 'bfloat16' else 'fp16'} {r['tokens']}" for r in rows], series, [])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="1,16,128,1024,4096")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args(argv)
    try:
        tokens_list = [int(t) for t in args.tokens.split(",")]
    except ValueError:
        raise SystemExit(f"bench-moe: --tokens {args.tokens!r} is not a comma-separated list of ints") from None

    import tvm  # noqa: F401  (before the JVM)

    import axe4j
    from axe4j_tools import chart
    from axe4j.moe import QWEN3_30B_A3B, MoeShape

    axe4j.install()
    shape = MoeShape(16, 4, 256, 128) if args.small else QWEN3_30B_A3B
    threads = tvm.get_global_func("runtime.NumThreads")()
    print(f"bench-moe: {shape}, FP32 on {os.cpu_count()} CPUs (TVM threads {threads}), target "
          f"{axe4j.host_target()}; best of {args.repeat}")
    rows = cpu_rows(shape, tokens_list, args.repeat, args.seed)
    gpu = gpu_part(shape, tokens_list, args.repeat)
    print(f"GPU part: {gpu['status']}")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    recorded = recorded_gpu() if gpu["status"] != "run" else None
    if recorded is not None:
        print_recorded(recorded)
        gpu_chart(out / "moe-gpu.png", recorded)
        gpu["recorded"] = recorded
    result = {"shape": vars(shape), "cpu": {"cpus": os.cpu_count(), "tvm_threads": threads,
                                             "target": str(axe4j.host_target()), "repeat": args.repeat, "rows": rows},
              "gpu": gpu}
    (out / "result.json").write_text(json.dumps(result, indent=2))
    chart.bar_chart(out / "moe-cpu.png", "MoE layer fp32 on the CPU: GFLOP/s of the expert GEMMs, by tokens",
                    [str(r["tokens"]) for r in rows],
                    {"axe4j": [r["axe4j_gflops"] for r in rows], "numpy": [r["numpy_gflops"] for r in rows]},
                    [f"x{r['ratio']:.2f}" for r in rows])
    print(f"wrote {out / 'result.json'} and {out / 'moe-cpu.png'}")
    return 0 if all(r["matches"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
