"""The GPU part of the MoE benchmark, run from the bundle on a machine with a Hopper GPU and PyTorch (no TVM).

For each token count and type (FP16, BF16) of the bundle's MoE library (Qwen3-30B-A3B: 128 experts, top-8, hidden
2048, intermediate 768; tokens, weights and output in that type, FP32 accumulation), on the same inputs and the same
routing:

* axe4j: the kernels of ``axe4j.moe.cuda`` after the host schedule (``moe/schedule.py``, numpy) and its upload:
  the fused ``experts`` (GEMM1 and GEMM2 in one kernel, GEMM2 of a tile starting once GEMM1 of that tile is done)
  + ``combine`` (``axe4j_ms``), and the three-kernel form (gather + GEMM1 + SiLU-and-mul + routing weight -> H;
  GEMM2 scattered to the pairs' rows of Y; combine; ``axe4j_three_kernels_ms``);
* each peer that imports: the Triton fused-MoE written in ``moe/triton_moe.py`` (where triton imports), vLLM's Triton
  ``fused_experts`` (the same w1 = [gate; up] and w2 layouts), SGLang's
  Triton ``fused_experts``; PyTorch's grouped GEMM (``torch.nn.functional.grouped_mm`` or ``torch._grouped_mm``, one
  CUTLASS grouped GEMM per projection over the expert-sorted rows, the pattern of TorchTitan's MoE), where this
  PyTorch has it; and always PyTorch's per-expert loop (the eager pattern of Hugging Face Transformers' Qwen3-MoE
  block: one cuBLAS GEMM pair per routed expert, ``index_add_`` back to token order).

Times (``rows``): the expert part only (routing given), best of ``--repeat`` batches of 10 launches, each batch timed
with CUDA events; axe4j's host schedule and upload are timed apart (``schedule_ms``). Timings with the schedule
inside (``timings``): for every implementation, the expert part (routing given; axe4j launches its ``schedule``
kernel first, the peers sort on the GPU themselves) and the whole layer (a GPU router, ``torch_router``, then the
expert part), each eager and as one CUDA-graph replay (axe4j's kernels go on PyTorch's stream through
``Runtime.set_stream``); each graph's output is checked after its first replay on a zeroed output. At 1-64 tokens
the measure is the routed experts' weight bytes per second in % of the HBM bandwidth of a 1 GiB device-to-device
copy in the same run; from 256 tokens TFLOP/s. In BF16 also: the Triton peer's block sort (torch) against numpy's,
and the Triton peer with e4m3 experts against a dequantised reference (``fp8_reference_torch``), timed. The
library's ``schedule`` kernel (the layer's default: the schedule made on the GPU) also runs once per token count on
the uploaded routing and each of its arrays is compared, bit for bit, with the host schedule's
(``device_schedule``). In BF16, at each token count of the bundle's FP8 library (``manifest["moe_fp8"]``), axe4j's
FP8 experts (``axe4j.moe.cuda_fp8``: the schedule kernel, quantise_x, gemm1, quantise_h, gemm2 and combine; weights
quantised per output channel as ``Fp8MoeLayer`` does) are checked against the same dequantised reference
(``fp8_compare``: test_moe_cuda_fp8.py's bound) and timed eagerly and as a CUDA-graph replay beside the Triton FP8
peer. Outputs are checked
against the numpy reference (FP32 arithmetic on the same FP16 values) and against each other. Writes ``moe.json``
and ``moe.md`` to ``--out``.

usage: python3 moe_bench.py [--out DIR] [--repeat 5] [--tokens 1,16,...] [--dtypes float16,bfloat16]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

LAUNCHES = 10   # launches per timed batch
TOLERANCE = {"float16": 2e-2, "bfloat16": 4e-2}   # rtol = atol of the output checks: a few units of the type's ulp


def log(message: str) -> None:
    print(f"[moe-bench] {message}", flush=True)


def timed(torch, body, repeat: int) -> float:
    """Best of ``repeat`` batches of LAUNCHES calls of ``body``, ms per call, after one warm-up call."""
    body()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(max(1, repeat)):
        start.record()
        for _ in range(LAUNCHES):
            body()
        stop.record()
        stop.synchronize()
        best = min(best, start.elapsed_time(stop) / LAUNCHES)
    return best


# ---- axe4j's layer from the bundle ----------------------------------------------------------------------------------

class Axe4jMoe:
    """The bundle's three kernels for one token count, on arrays that PyTorch owns (DLTensor views of them)."""

    def __init__(self, worker, library: str, run: dict, shape: dict, rows: int):
        self.worker, self.run, self.shape, self.rows, self.dtype = worker, run, shape, rows, run["dtype"]
        self.functions = {k: worker.function(library, s) for k, s in run["symbols"].items()}

    def view(self, tensor, dtype: str):
        return self.worker.ffi.Tensor(tensor.data_ptr(), tuple(tensor.shape), dtype, self.worker.device_type, 0)

    def prepare(self, torch, x, w1, w2, ids, weights):
        """The host schedule and its upload: the three kernels' argument lists."""
        from moe.schedule import schedule, tile_arrays

        T, H = x.shape
        I, k, rows, max_tiles = self.shape["intermediate"], ids.shape[1], self.rows, self.run["max_tiles"]
        plan = schedule(ids, weights, self.shape["experts"], rows)
        tiles = {n: torch.from_numpy(a).cuda() for n, a in tile_arrays(plan, max_tiles).items()}
        slot_token = torch.from_numpy(plan.slot_token).cuda()
        slot_pair = torch.from_numpy(plan.slot_pair).cuda()
        h = torch.zeros((max_tiles * rows, I), dtype=x.dtype, device="cuda")
        y = torch.zeros((T * k, H), dtype=torch.float32, device="cuda")
        out = torch.zeros((T, H), dtype=x.dtype, device="cuda")
        sync = torch.zeros(max_tiles + 2, dtype=torch.int32, device="cuda")   # the fused kernel's counters
        keep = (tiles, slot_token, slot_pair, h, y, out, sync)   # the views do not own their memory
        v = self.view
        te, ts, tr, rw = (v(tiles[n], "float32" if n == "row_weight" else "int32")
                          for n in ("tile_expert", "tile_start", "tile_rows", "row_weight"))
        d = self.dtype
        combine = (self.functions["combine"], (v(y, "float32"), v(out, d)))
        three = None
        if "gemm1" in self.functions:   # a fused-kernel variant has the fused form only
            three = [(self.functions["gemm1"], (v(x, d), v(w1, d), te, ts, tr, v(slot_token, "int32"), rw,
                                                v(h, d))),
                     (self.functions["gemm2"], (v(h, d), v(w2, d), te, ts, tr, v(slot_pair, "int32"),
                                                v(y, "float32"))),
                     combine]
        forms = {"three": three} if three else {}
        if "experts" in self.functions:   # a chunk-size variant has the three-kernel form only
            forms["fused"] = [(self.functions["experts"], (v(x, d), v(w1, d), v(w2, d), te, ts, tr,
                                                           v(slot_token, "int32"), v(slot_pair, "int32"), rw,
                                                           v(h, d), v(y, "float32"), v(sync, "int32"))), combine]
        return forms, out, keep

    SCHEDULE = ("tile_expert", "tile_start", "tile_rows", "slot_token", "slot_pair", "row_weight")

    def device_schedule(self, torch, ids, weights, keep) -> dict:
        """The bundle's ``schedule`` kernel on the routing on the GPU (ids int32, weights float32: tokens x top_k),
        each of its arrays compared, bit for bit, with the host schedule's that ``prepare`` uploaded (``keep``):
        {"matches", "mismatched": [array names], "error": the kernel's count of out-of-range ids}."""
        tiles, slot_token, slot_pair = keep[0], keep[1], keep[2]
        want = dict(tiles, slot_token=slot_token, slot_pair=slot_pair)
        got = {n: torch.full_like(want[n], -1) for n in self.SCHEDULE}      # -1: an element left unwritten shows
        error = torch.full((1,), -1, dtype=torch.int32, device="cuda")
        v = self.view
        self.worker.runtime.set_stream(torch.cuda.current_stream().cuda_stream)
        self.functions["schedule"](v(ids, "int32"), v(weights, "float32"),
                                   *(v(got[n], "float32" if n == "row_weight" else "int32") for n in self.SCHEDULE),
                                   v(error, "int32"))
        torch.cuda.synchronize()
        mismatched = [n for n in self.SCHEDULE
                      if not torch.equal(got[n].view(torch.int32), want[n].view(torch.int32))]
        return {"matches": not mismatched and int(error[0]) == 0, "mismatched": mismatched, "error": int(error[0])}

    def launch(self, calls):
        """The calls in order, on PyTorch's current stream (TVMFFIEnvSetStream): inside a CUDA-graph capture that
        is the capturing stream, so the graph holds them; eagerly the default stream, as before."""
        import torch

        self.worker.runtime.set_stream(torch.cuda.current_stream().cuda_stream)
        for function, args in calls:
            function(*args)

    def with_device_schedule(self, calls, keep, ids, weights, error):
        """``schedule`` (on the routing tensors ``ids`` int32 and ``weights`` float32, tokens x top_k, fixed
        addresses) writing the very arrays the expert kernels of ``calls`` read, then those kernels: the expert part
        with its schedule on the GPU, nothing on the host (what a CUDA graph can hold)."""
        arrays = dict(keep[0], slot_token=keep[1], slot_pair=keep[2])
        v = self.view
        schedule = (self.functions["schedule"], (v(ids, "int32"), v(weights, "float32"),
                                                 *(v(arrays[n], "float32" if n == "row_weight" else "int32")
                                                   for n in self.SCHEDULE), v(error, "int32")))
        return [schedule] + list(calls)


# ---- axe4j's FP8 experts from the bundle -----------------------------------------------------------------------------

# test_moe_cuda_fp8.py's bound: |got - want| <= 2e-2 |want| + 1e-2 max |want| (want: the dequantised reference)
FP8_RTOL, FP8_ATOL_OF_MAX = 2e-2, 1e-2
# one FP8 run (axe4j.moe.cuda_fp8.Fp8MoeLayer.calls): each kernel's arguments by name, in order
FP8_CALLS = (("schedule", ("ids", "weights", "tile_expert", "tile_start", "tile_rows", "slot_token", "slot_pair",
                           "row_weight", "error")),
             ("quantise_x", ("x", "tile_start", "tile_rows", "slot_token", "xq", "x_scale")),
             ("gemm1", ("xq", "x_scale", "w1q", "w1s", "tile_expert", "tile_rows", "row_weight", "h")),
             ("quantise_h", ("h", "tile_start", "tile_rows", "slot_token", "hq", "h_scale")),
             ("gemm2", ("hq", "h_scale", "w2q", "w2s", "tile_expert", "tile_start", "tile_rows", "slot_pair", "y")),
             ("combine", ("y", "out")))


def fp8_arrays(run: dict, shape: dict, rows: int) -> dict:
    """name -> (shape, dtype) of every argument of one FP8 run of ``run["tokens"]`` tokens (BF16 tokens, H and
    output; e4m3 weights with FP32 scales per output channel; e4m3 activations with FP32 scales per tile-padded
    row), as ``Fp8MoeLayer.calls`` allocates them."""
    T, K, E = run["tokens"], shape["top_k"], shape["experts"]
    H, I, tiles = shape["hidden"], shape["intermediate"], run["max_tiles"]
    padded, slots, d, e4m3 = tiles * rows, T * K + rows, run["dtype"], "float8_e4m3fn"
    return {"ids": ((T, K), "int32"), "weights": ((T, K), "float32"), "x": ((T, H), d),
            "w1q": ((E, 2 * I, H), e4m3), "w1s": ((E, 2 * I), "float32"),
            "w2q": ((E, H, I), e4m3), "w2s": ((E, H), "float32"),
            "tile_expert": ((tiles,), "int32"), "tile_start": ((tiles,), "int32"), "tile_rows": ((tiles,), "int32"),
            "slot_token": ((slots,), "int32"), "slot_pair": ((slots,), "int32"), "row_weight": ((padded,), "float32"),
            "error": ((1,), "int32"), "xq": ((padded, H), e4m3), "x_scale": ((padded,), "float32"),
            "h": ((padded, I), d), "hq": ((padded, I), e4m3), "h_scale": ((padded,), "float32"),
            "y": ((T * K, H), "float32"), "out": ((T, H), d)}


def fp8_calls(functions: dict, tensors: dict, spec: dict, view) -> list:
    """[(function, arguments)] of one FP8 run in launch order: ``view(tensor, dtype)`` of each named argument,
    ``spec`` being ``fp8_arrays``'s. A tensor whose shape is not the spec's is named (a wrong view would read past
    the kernel's buffer)."""
    calls = []
    for name, argument_names in FP8_CALLS:
        args = []
        for a in argument_names:
            want, dtype = spec[a]
            if tuple(tensors[a].shape) != tuple(want):
                raise ValueError(f"FP8 run: {a} has shape {tuple(tensors[a].shape)}, the kernel {name} takes "
                                 f"{tuple(want)}")
            args.append(view(tensors[a], dtype))
        calls.append((functions[name], tuple(args)))
    return calls


def fp8_compare(torch, got, want) -> dict:
    got, want = got.float(), want.float()
    scale = float(want.abs().max())
    excess = (got - want).abs() - (FP8_RTOL * want.abs() + FP8_ATOL_OF_MAX * scale)
    return {"max_abs_diff": float((got - want).abs().max()), "max_abs": scale, "rtol": FP8_RTOL,
            "atol": FP8_ATOL_OF_MAX * scale, "matches": bool(excess.max() <= 0 and torch.isfinite(got).all())}


def quantise_weights(torch, w):
    """(codes e4m3, scales FP32) of ``w`` (experts x rows x n, FP32 on the GPU) per output channel, as
    ``Fp8MoeLayer`` does: ``moe/fp8.py``'s ``quantise_rows`` in numpy where ml_dtypes imports, else the same formula in
    torch (``quantise_rows_torch``); which one is returned third."""
    try:
        import ml_dtypes  # noqa: F401
        from moe.fp8 import quantise_rows
    except ImportError:
        from moe.triton_moe import quantise_rows_torch

        codes, scales = quantise_rows_torch(torch, w.reshape(-1, w.shape[-1]))
        return codes.view(w.shape), scales.view(w.shape[:2]), "torch"
    codes, scales = quantise_rows(w.cpu().numpy())
    codes = torch.from_numpy(codes.view("uint8")).cuda().view(torch.float8_e4m3fn)
    return codes, torch.from_numpy(scales).cuda(), "numpy"


_FP8_WEIGHTS: dict = {}


def fp8_axe4j(torch, worker, args, moe, run, x, w1_master, w2_master, t_ids, t_weights, flops, weight_bytes, hbm,
              row) -> list:
    """axe4j's FP8 experts (the bundle's FP8 library, the BF16 run's schedule and combine) on BF16 tokens ``x``:
    one run on zeroed arrays checked against ``fp8_reference_torch`` (``row["axe4j_fp8_vs_reference"]``, failed by
    ``failures``), then timed with the schedule inside, eager and as a CUDA-graph replay, beside the Triton FP8 peer."""
    fp8 = moe["fp8"]
    tokens = run["tokens"]
    spec = fp8_arrays(run, moe["shape"], moe["rows"])
    label = f"bfloat16 {tokens:5d} tokens | axe4j FP8 (e4m3)"
    try:
        if "weights" not in _FP8_WEIGHTS:   # the same weights at every token count: quantised once
            _FP8_WEIGHTS["weights"] = (quantise_weights(torch, w1_master.float()),
                                       quantise_weights(torch, w2_master.float()))
        (w1q, w1s, how), (w2q, w2s, _) = _FP8_WEIGHTS["weights"]
        x = x.to(torch.bfloat16).contiguous()
        ids, weights = t_ids.to(torch.int32).contiguous(), t_weights.to(torch.float32).contiguous()
        tensors = {"ids": ids, "weights": weights, "x": x, "w1q": w1q, "w1s": w1s, "w2q": w2q, "w2s": w2s}
        for name, (shape, dtype) in spec.items():
            if name not in tensors:   # e4m3 zeros as zero bytes (code 0 is +0)
                tensors[name] = (torch.zeros(shape, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
                                 if dtype == "float8_e4m3fn" else torch.zeros(shape, dtype=getattr(torch, dtype),
                                                                              device="cuda"))
        functions = {k: worker.function(fp8["library"], s) for k, s in run["symbols"].items()}
        functions.update({k: worker.function(moe["library"], s) for k, s in run["shared_symbols"].items()})
        view = (lambda t, dtype: worker.ffi.Tensor(t.data_ptr(), tuple(t.shape), dtype, worker.device_type, 0))
        calls = fp8_calls(functions, tensors, spec, view)

        def launch():
            worker.runtime.set_stream(torch.cuda.current_stream().cuda_stream)
            for function, arguments in calls:
                function(*arguments)

        want = fp8_reference_torch(torch, x, w1q, w1s, w2q, w2s, ids, weights)
        launch()
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001  (reported and failed by ``failures``; the other runs go on)
        row["axe4j_fp8_vs_reference"] = {"matches": False, "error": f"{type(error).__name__}: {str(error)[:300]}"}
        log(f"{label} failed: {row['axe4j_fp8_vs_reference']['error']}")
        return []
    check = fp8_compare(torch, tensors["out"], want)
    if int(tensors["error"][0]):
        check.update(matches=False, schedule_error=int(tensors["error"][0]))
    check["weights_quantised_by"] = how
    row["axe4j_fp8_vs_reference"] = check
    log(f"{label} matches the dequantised reference: {check}")

    def reset():   # a graph that captured nothing leaves the output 0
        for name in ("x_scale", "h", "h_scale", "y", "out"):
            tensors[name].zero_()

    return timings(torch, "axe4j FP8 (e4m3)", {"experts": launch},
                   lambda: fp8_compare(torch, tensors["out"], want), reset, args, tokens, "float8_e4m3fn", flops,
                   weight_bytes, hbm)


# ---- the benchmark ------------------------------------------------------------------------------------------------

def skewed_routings(np, experts: int, top_k: int, tokens: int, seed: int) -> dict:
    """Routings a trained router rarely gives but a served layer must take, skewed and ragged on the GPU: {name: (ids int32, weights float32), tokens x top_k}. ``same_top_k``: every token on the same top-k experts
    (each of them holds every token, the rest none); ``8_experts_used``: only 8 of the experts receive tokens (120 of
    Qwen3's 128 empty), each token on top_k distinct ones of them. Weights are positive and sum to 1 per token."""
    rng = np.random.default_rng(seed)
    weights = rng.random((tokens, top_k)).astype(np.float32) + np.float32(0.1)
    weights /= weights.sum(axis=1, keepdims=True)
    crowded = np.tile(np.arange(top_k, dtype=np.int32), (tokens, 1))
    used = rng.choice(experts, size=min(max(8, top_k), experts), replace=False)
    sparse = np.stack([rng.permutation(used)[:top_k] for _ in range(tokens)]).astype(np.int32)
    return {"same_top_k": (crowded, weights), "8_experts_used": (sparse, weights)}


def skewed_checks(torch, ours, x, w1, w2, w1_host, w2_host, found, dtype: str, shape: dict, seed: int) -> dict:
    """axe4j's fused layer (host schedule uploaded, and the schedule kernel against it) and each peer on each of
    ``skewed_routings``, against the reference: {routing: {"axe4j": compare, "device_schedule": ..., peer: compare}}."""
    import numpy as np
    from moe.reference import moe_reference

    results = {}
    for name, (ids, weights) in skewed_routings(np, shape["experts"], shape["top_k"], x.shape[0], seed).items():
        reference = torch.from_numpy(moe_reference(x.float().cpu().numpy(), w1_host, w2_host, ids, weights)).cuda()
        t_ids, t_weights = torch.from_numpy(ids).cuda(), torch.from_numpy(weights).cuda()
        entry = {}
        try:
            forms, out, keep = ours.prepare(torch, x, w1, w2, ids, weights)
            for array in (keep[3], keep[4], out):
                array.zero_()
            ours.launch(forms["fused"])
            torch.cuda.synchronize()
            entry["axe4j"] = compare(torch, out, reference, dtype)
            if "schedule" in ours.functions:
                entry["device_schedule"] = ours.device_schedule(torch, t_ids, t_weights, keep)
            del keep
        except Exception as error:  # noqa: BLE001  (reported, and a failure of the run)
            entry["axe4j"] = {"matches": False, "error": f"{type(error).__name__}: {str(error)[:300]}"}
        for peer, fused in found:
            try:
                entry[peer] = compare(torch, fused(x, w1, w2, t_weights, t_ids), reference, dtype)
            except Exception as error:  # noqa: BLE001  (a peer that cannot take the routing is reported)
                entry[peer] = {"error": f"{type(error).__name__}: {str(error)[:300]}"}
        results[name] = entry
    return results


def compare(torch, got, want, dtype: str) -> dict:
    got, want, tol = got.float(), want.float(), TOLERANCE[dtype]
    diff = (got - want).abs()
    return {"max_abs_diff": float(diff.max()), "max_abs": float(want.abs().max()), "tolerance": tol,
            "matches": bool(torch.allclose(got, want, rtol=tol, atol=tol))}


def hbm_bandwidth(torch) -> float:
    """GB/s of a device-to-device copy of 1 GiB (bytes read + bytes written), best of 5 batches: the bandwidth the
    few-token figures are a fraction of, measured in the same run."""
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = timed(torch, lambda: b.copy_(a), 5)
    return 2 * (1 << 30) / (ms * 1e-3) / 1e9


def torch_router(torch, x, wr, top_k):
    """The router on the GPU for the whole-layer timings: FP32 logits, top-k, softmax over the k (as
    ``route_reference``; ties may break differently, which only the timing sees)."""
    top, ids = torch.topk(x.float() @ wr.t(), top_k, dim=1)
    return ids.to(torch.int32), torch.softmax(top, dim=1)


def graph_of(torch, body):
    """``body`` captured into a CUDA graph (after a warm-up on a side stream, as PyTorch asks): its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    torch.cuda.synchronize()
    return graph


def timings(torch, name, bodies: dict, check, reset, args, tokens, dtype, flops, weight_bytes, hbm) -> list:
    """``name``'s timings per scope of ``bodies`` ({"experts": routing given, the schedule inside; "layer": the
    router too}), each ``eager`` (launches from Python) and ``graph`` (one CUDA-graph replay); 1-64 tokens are also
    shown as achieved weight bandwidth (the routed experts' weights once per call) in % of ``hbm``, more tokens as
    TFLOP/s. A graph's first replay runs on a zeroed output (``reset``) and is checked (``check``), so a graph that
    captured nothing, or kernels launched on another stream, fails."""
    out = []
    for scope, body in bodies.items():
        for mode in ("eager", "graph"):
            entry = {"impl": name, "dtype": dtype, "tokens": tokens, "scope": scope, "mode": mode}
            try:
                if mode == "eager":
                    ms = timed(torch, body, args.repeat)
                else:
                    graph = graph_of(torch, body)
                    reset()
                    graph.replay()
                    torch.cuda.synchronize()
                    entry["vs_reference"] = check()
                    ms = timed(torch, graph.replay, args.repeat)
                entry.update(ms=ms, tflops=flops / ms / 1e9, weight_GBps=weight_bytes / ms / 1e6,
                             weight_bw_pct=100 * weight_bytes / ms / 1e6 / hbm)
                shown = (f"{entry['weight_bw_pct']:.0f}% of HBM ({entry['weight_GBps']:.0f} GB/s of weights)"
                         if tokens <= 64 else f"{entry['tflops']:.1f} TFLOP/s")
                log(f"{dtype} {tokens:5d} tokens | {name} | {scope} | {mode} | {ms:.3f} ms | {shown}"
                    + ("" if entry.get("vs_reference", {"matches": True})["matches"] else " | DIFFERS"))
            except Exception as error:  # noqa: BLE001  (e.g. a peer that syncs with the host cannot be captured)
                entry["error"] = f"{type(error).__name__}: {str(error)[:300]}"
                log(f"{dtype} {tokens:5d} tokens | {name} | {scope} | {mode} | not timed: {entry['error'][:120]}")
                torch.cuda.synchronize()
            out.append(entry)
    return out


def fp8_reference_torch(torch, x, w1q, w1s, w2q, w2s, ids, weights):
    """The FP8 layer in FP32 on dequantised values, step for step as axe4j.moe.fp8.fp8_reference (x per token, the
    activation rounded to x's type then per pair row; e4m3 codes times their scales), in torch on the GPU."""
    from moe.triton_moe import quantise_rows_torch

    def deq(codes, scales):
        return codes.float() * scales.float()[..., None]

    xd = deq(*quantise_rows_torch(torch, x))
    w1d, w2d = deq(w1q, w1s), deq(w2q, w2s)
    tokens, top_k = ids.shape
    inter = w2d.shape[2]
    flat = ids.reshape(-1).long()
    pairs = torch.zeros((tokens * top_k, x.shape[1]), dtype=torch.float32, device=x.device)
    for e in torch.unique(flat).tolist():
        chosen = (flat == e).nonzero().squeeze(1)
        h = xd[chosen // top_k] @ w1d[e].t()
        act = (torch.nn.functional.silu(h[:, :inter]) * h[:, inter:] * weights.reshape(-1)[chosen, None].float())
        pairs[chosen] = deq(*quantise_rows_torch(torch, act.to(x.dtype))) @ w2d[e].t()
    return pairs.view(tokens, top_k, -1).sum(dim=1)


def bench(args) -> dict:
    import numpy as np
    import torch

    from run import Worker
    from moe.peers import peers
    from moe.reference import moe_reference, route_reference

    manifest = json.loads((HERE / "manifest.json").read_text())
    moe = manifest["moe"]
    shape, rows = moe["shape"], moe["rows"]
    E, K, H, I = shape["experts"], shape["top_k"], shape["hidden"], shape["intermediate"]
    wanted = [int(t) for t in args.tokens.split(",")] if args.tokens else [r["tokens"] for r in moe["runs"]]
    worker = Worker(manifest, "cuda")
    fp8_runs = manifest.get("moe_fp8", {}).get("runs", [])   # axe4j's FP8 experts, beside the Triton FP8 peer
    found, missing = peers(torch)
    hbm = hbm_bandwidth(torch)
    log(f"HBM bandwidth (device-to-device copy of 1 GiB, read + write): {hbm:.0f} GB/s")
    timing_rows = []
    log(f"peers: {[n for n, _ in found]}; not importable: {sorted(missing)}")

    generator = torch.Generator(device="cuda").manual_seed(args.seed)
    wr = torch.randn((E, H), generator=generator, device="cuda")
    w1_master = torch.randn((E, 2 * I, H), generator=generator, device="cuda") / H ** 0.5
    w2_master = torch.randn((E, H, I), generator=generator, device="cuda") / I ** 0.5
    x_master = {t: torch.randn((t, H), generator=generator, device="cuda") for t in wanted}
    rows_out, variants_out = [], []
    from moe.block_sort import block_sort, block_sort_torch
    for dtype in dict.fromkeys(r["dtype"] for r in moe["runs"]):
        if args.dtypes and dtype not in args.dtypes.split(","):
            continue
        tdtype = getattr(torch, dtype)
        w1, w2 = w1_master.to(tdtype), w2_master.to(tdtype)
        w1_host, w2_host = w1.float().cpu().numpy(), w2.float().cpu().numpy()   # the reference's FP32 copies
        for run in moe["runs"]:
            T = run["tokens"]
            if run["dtype"] != dtype or T not in wanted:
                continue
            x = x_master[T].to(tdtype)
            logits = (x.float() @ wr.t()).cpu().numpy()
            ids, weights = route_reference(logits, K)          # the host router of axe4j.moe.cuda
            t_ids, t_weights = torch.from_numpy(ids).cuda(), torch.from_numpy(weights).cuda()
            reference = torch.from_numpy(moe_reference(x.float().cpu().numpy(), w1_host, w2_host, ids,
                                                       weights)).cuda()
            ours = Axe4jMoe(worker, moe["library"], run, shape, rows)
            started = time.perf_counter()
            forms, out, keep = ours.prepare(torch, x, w1, w2, ids, weights)
            torch.cuda.synchronize()
            schedule_ms = (time.perf_counter() - started) * 1e3
            h, y = keep[3], keep[4]

            def checked(form):
                """One launch on zeroed H, Y and output (stale rows from an earlier launch would hide a GEMM2 that
                read H too early), compared with the reference."""
                for array in (h, y, out):
                    array.zero_()
                ours.launch(forms[form])
                torch.cuda.synchronize()
                return compare(torch, out, reference, dtype)

            three_check = checked("three")
            three_ms = timed(torch, lambda: ours.launch(forms["three"]), args.repeat)
            fused_check = checked("fused")
            kernels_ms = timed(torch, lambda: ours.launch(forms["fused"]), args.repeat)
            torch.cuda.synchronize()
            flops = 2.0 * T * K * 3 * H * I
            row = {"tokens": T, "dtype": dtype, "axe4j_ms": kernels_ms, "axe4j_tflops": flops / kernels_ms / 1e9,
                   "schedule_ms": schedule_ms, "axe4j_vs_reference": fused_check,
                   "axe4j_three_kernels_ms": three_ms, "axe4j_three_kernels_vs_reference": three_check,
                   "peers": {}}
            if "schedule" in ours.functions:   # correctness only: the kernel is not timed yet
                try:
                    row["device_schedule"] = ours.device_schedule(torch, t_ids.to(torch.int32),
                                                                  t_weights.to(torch.float32), keep)
                except Exception as error:  # noqa: BLE001  (reported; the timing goes on)
                    row["device_schedule"] = {"error": f"{type(error).__name__}: {str(error)[:300]}"}
                log(f"{dtype} {T:5d} tokens: the schedule kernel equals the host schedule: {row['device_schedule']}")
            for name, fused in found:
                try:
                    got = fused(x, w1, w2, t_weights, t_ids)
                    ms = timed(torch, lambda: fused(x, w1, w2, t_weights, t_ids), args.repeat)
                    row["peers"][name] = {"ms": ms, "tflops": flops / ms / 1e9, "axe4j_speedup": ms / kernels_ms,
                                          "vs_reference": compare(torch, got, reference, dtype),
                                          "vs_axe4j": compare(torch, got, out, dtype)}
                except Exception as error:  # noqa: BLE001  (a peer that fails here is reported, the run goes on)
                    row["peers"][name] = {"error": f"{type(error).__name__}: {str(error)[:300]}"}
            # the honest timings: schedule inside, experts and whole layer, eager and CUDA graph
            ids_buf, w_buf = t_ids.to(torch.int32).clone(), t_weights.to(torch.float32).clone()   # fixed addresses
            error = torch.zeros(1, dtype=torch.int32, device="cuda")
            weight_bytes = len(set(ids.reshape(-1).tolist())) * 3 * H * I * x.element_size()
            impls = []   # (name, expert part with its schedule, output getter, zeroes the output)
            if "schedule" in ours.functions:
                for form, label in (("three", "axe4j (three kernels)"), ("fused", "axe4j (fused)")):
                    calls = ours.with_device_schedule(forms[form], keep, ids_buf, w_buf, error)
                    impls.append((label, lambda calls=calls: ours.launch(calls), lambda: out,
                                  lambda: [a.zero_() for a in (h, y, out)]))
            for name, fused in found:
                if "error" in row["peers"].get(name, {}):
                    continue
                result_of = {}

                def run_peer(fused=fused, result_of=result_of):
                    result_of["out"] = fused(x, w1, w2, w_buf, ids_buf)

                impls.append((name, run_peer, lambda r=result_of: r["out"], lambda r=result_of: r["out"].zero_()))

            def routed():
                got_ids, got_w = torch_router(torch, x, wr, K)
                ids_buf.copy_(got_ids)
                w_buf.copy_(got_w)

            for name, experts_body, output, reset in impls:
                def layer_body(experts_body=experts_body):
                    routed()
                    experts_body()

                ids_buf.copy_(t_ids)
                w_buf.copy_(t_weights)
                # the GPU router computes the host router's logits (same GEMM on the GPU), so the layer's output
                # is checked against the same reference
                timing_rows += timings(torch, name, {"experts": experts_body, "layer": layer_body},
                                       lambda output=output: compare(torch, output(), reference, dtype), reset,
                                       args, T, dtype, flops, weight_bytes, hbm)
            if dtype == "bfloat16":   # the block sort of the Triton peer: torch ops against numpy, array for array
                for bm in (16, 64, 128):
                    want = block_sort(ids, E, bm)
                    got = block_sort_torch(torch, t_ids, E, bm)
                    row.setdefault("block_sort_matches", {})[bm] = all(
                        g.cpu().numpy().tolist() == w_.tolist() for g, w_ in zip(got, want))
                timing_rows += fp8_triton(torch, args, x, w1_master, w2_master, t_ids, t_weights, T, K, H, I, flops,
                                          len(set(ids.reshape(-1).tolist())) * 3 * H * I, hbm, row)
                fp8_run = next((r for r in fp8_runs if r["tokens"] == T), None)
                if fp8_run is not None:   # e4m3 weights: one byte each
                    timing_rows += fp8_axe4j(torch, worker, args, dict(moe, fp8=manifest["moe_fp8"]), fp8_run, x,
                                             w1_master, w2_master, t_ids, t_weights, flops,
                                             len(set(ids.reshape(-1).tolist())) * 3 * H * I, hbm, row)
            del keep
            row["skewed"] = skewed_checks(torch, ours, x, w1, w2, w1_host, w2_host, found, dtype, shape, args.seed)
            verdicts = {r: {n: c.get("matches", c.get("error", "")[:40]) for n, c in e.items()}
                        for r, e in row["skewed"].items()}
            log(f"{dtype} {T:5d} tokens, skewed routings (matches the reference): {verdicts}")
            rows_out.append(row)
            line = ", ".join(f"{n}: {p['ms']:.3f} ms" if "ms" in p else f"{n}: {p['error'][:80]}"
                             for n, p in row["peers"].items())
            log(f"{dtype} {T:5d} tokens: axe4j {kernels_ms:.3f} ms ({row['axe4j_tflops']:.1f} TFLOP/s, schedule "
                f"{schedule_ms:.2f} ms, matches the reference: {row['axe4j_vs_reference']['matches']}; three "
                f"kernels {three_ms:.3f} ms, matches: {three_check['matches']}); {line}")
        for run in moe.get("variants", []):   # other chunk sizes (three kernels) or fused-kernel variants
            T = run["tokens"]
            if run["dtype"] != dtype or T not in wanted:
                continue
            x = x_master[T].to(tdtype)
            ids, weights = route_reference((x.float() @ wr.t()).cpu().numpy(), K)
            reference = torch.from_numpy(moe_reference(x.float().cpu().numpy(), w1_host, w2_host, ids,
                                                       weights)).cuda()
            ours = Axe4jMoe(worker, moe["library"], run, shape, rows)
            forms, out, keep = ours.prepare(torch, x, w1, w2, ids, weights)
            form = "fused" if "fused" in forms else "three"
            sync = keep[6]

            def launch():
                if not run.get("reset", True):   # the variant leaves its counters to the caller
                    sync.zero_()
                ours.launch(forms[form])

            for array in (keep[3], keep[4], out):
                array.zero_()
            launch()
            torch.cuda.synchronize()
            check = compare(torch, out, reference, dtype)
            ms = timed(torch, launch, args.repeat)
            label = (f"fused, {'tickets' if run['tickets'] else 'block order'}, "
                     f"{'reset by the last CTA' if run['reset'] else 'zeroed by the caller'}" if form == "fused"
                     else f"three kernels, BN1 x BN2 = {run['bn1']} x {run['bn2']}")
            variants_out.append({"tokens": T, "dtype": dtype, "bn1": run["bn1"], "bn2": run["bn2"],
                                 "variant": label, "ms": ms, "tflops": 2.0 * T * K * 3 * H * I / ms / 1e9,
                                 "vs_reference": check})
            del keep
            log(f"{dtype} {T:5d} tokens, {label}: {ms:.3f} ms, matches the reference: {check['matches']}")
    return {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "shape": shape,
            "repeat": args.repeat, "launches_per_batch": LAUNCHES, "peers_missing": missing, "rows": rows_out,
            "variants": variants_out, "hbm_GBps": hbm, "timings": timing_rows,
            "fp8_tokens": [r["tokens"] for r in fp8_runs if r["tokens"] in wanted]}


def fp8_triton(torch, args, x, w1_master, w2_master, t_ids, t_weights, tokens, top_k, hidden, inter, flops,
               weight_bytes, hbm, row) -> list:
    """The Triton peer with e4m3 experts (per-channel weight scales, per-row activation scales) on BF16 tokens,
    checked against ``fp8_reference_torch``; its expert-part timings (eager, graph). Where triton does not import,
    nothing (the 16-bit peer's absence is reported already)."""
    try:
        from moe.triton_moe import peer, quantise_rows_torch

        fused = peer(torch, fp8=True)
    except ImportError:
        return []
    w1q, w1s = quantise_rows_torch(torch, w1_master.reshape(-1, hidden))
    w2q, w2s = quantise_rows_torch(torch, w2_master.reshape(-1, inter))
    w1 = (w1q.view(w1_master.shape), w1s.view(w1_master.shape[:2]))
    w2 = (w2q.view(w2_master.shape), w2s.view(w2_master.shape[:2]))
    x = x.to(torch.bfloat16)
    ids, weights = t_ids.to(torch.int32).clone(), t_weights.to(torch.float32).clone()
    want = fp8_reference_torch(torch, x, *w1, *w2, ids, weights)
    got = {}

    def body():
        got["out"] = fused(x, w1, w2, weights, ids)

    try:
        body()
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001  (reported and failed by ``failures``; the other runs go on)
        row["triton_fp8_vs_reference"] = {"matches": False, "error": f"{type(error).__name__}: {str(error)[:300]}"}
        log(f"bfloat16 {tokens:5d} tokens | Triton fused-MoE FP8 failed: {row['triton_fp8_vs_reference']['error']}")
        return []
    row["triton_fp8_vs_reference"] = compare(torch, got["out"], want, "bfloat16")
    log(f"bfloat16 {tokens:5d} tokens | Triton fused-MoE FP8 matches the dequantised reference: "
        f"{row['triton_fp8_vs_reference']}")
    return timings(torch, "Triton fused-MoE FP8 (e4m3)", {"experts": body},
                   lambda: compare(torch, got["out"], want, "bfloat16"), lambda: got["out"].zero_(), args, tokens,
                   "float8_e4m3fn", flops, weight_bytes, hbm)


def markdown(result: dict) -> str:
    names = sorted({n for r in result["rows"] for n in r["peers"]})
    lines = [f"# MoE layer on {result['device']} (Qwen3-30B-A3B experts), torch {result['torch']}", "",
             "Expert part only (routing given), ms per call, best of batches of 10 launches; axe4j's columns after its "
             "host schedule and upload, which are not in them (the timings below have the schedule inside). "
             "Speed-up = peer time / axe4j time.", "",
             "| type | tokens | axe4j (fused) ms | TFLOP/s | matches reference | axe4j three kernels ms | " +
             " | ".join(f"{n} ms | speed-up" for n in names) + " |", "|---" * (6 + 2 * len(names)) + "|"]
    for r in result["rows"]:
        cells = [r["dtype"], str(r["tokens"]), f"{r['axe4j_ms']:.3f}", f"{r['axe4j_tflops']:.1f}",
                 str(r["axe4j_vs_reference"]["matches"]), f"{r.get('axe4j_three_kernels_ms', float('nan')):.3f}"]
        for n in names:
            p = r["peers"].get(n, {})
            cells += [f"{p['ms']:.3f}", f"{p['axe4j_speedup']:.2f}"] if "ms" in p else ["error", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    checked = [r for r in result["rows"] if "device_schedule" in r]
    if checked:
        lines += ["", "The schedule kernel on the GPU equals the host schedule, array for array: " + ", ".join(
            f"{r['dtype']} {r['tokens']}: {r['device_schedule'].get('matches', r['device_schedule'].get('error'))}"
            for r in checked)]
    fp8 = [r for r in result["rows"] if "axe4j_fp8_vs_reference" in r]
    if fp8:
        lines += ["", "axe4j's FP8 (e4m3) experts against the dequantised reference: " + ", ".join(
            f"{r['tokens']} tokens: {r['axe4j_fp8_vs_reference'].get('matches')}" for r in fp8)]
    if result.get("variants"):
        lines += ["", "Variants: chunk sizes of the three kernels (BN1 intermediate columns per GEMM1 CTA, BN2 hidden "
                  "columns per GEMM2 CTA; the default is 128 x 128) and forms of the fused kernel", "",
                  "| type | tokens | variant | ms | TFLOP/s | matches reference |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['dtype']} | {r['tokens']} | {r.get('variant', str(r['bn1']) + ' x ' + str(r['bn2']))} | "
                  f"{r['ms']:.3f} | {r['tflops']:.1f} | {r['vs_reference']['matches']} |" for r in result["variants"]]
    if result.get("timings"):
        lines += ["", timings_markdown(result)]
    if result["peers_missing"]:
        lines += ["", "Not run (not importable here):"] + [f"- {n}: {why}" for n, why in
                                                            sorted(result["peers_missing"].items())]
    return "\n".join(lines) + "\n"


def timings_markdown(result: dict) -> str:
    """Per implementation, token count, scope and mode: ms, and the measure that matters at that size (1-64 tokens:
    the routed experts' weight bytes per second in % of the HBM bandwidth measured in the same run; more: TFLOP/s)."""
    lines = [f"Timed with the schedule inside (axe4j: the schedule kernel; peers: their own sort). experts = routing "
             f"given; layer = the GPU router too. eager = launches from Python; graph = one CUDA-graph replay. HBM "
             f"bandwidth measured by a 1 GiB device-to-device copy: {result['hbm_GBps']:.0f} GB/s.", "",
             "| type | tokens | implementation | scope | mode | ms | weight bandwidth, % of HBM | TFLOP/s | "
             "graph output matches |", "|---|---|---|---|---|---|---|---|---|"]
    for t in result["timings"]:
        if "error" in t:
            lines.append(f"| {t['dtype']} | {t['tokens']} | {t['impl']} | {t['scope']} | {t['mode']} | not timed: "
                         f"{t['error'][:80]} | | | |")
            continue
        matches = t.get("vs_reference", {}).get("matches", "-")
        lines.append(f"| {t['dtype']} | {t['tokens']} | {t['impl']} | {t['scope']} | {t['mode']} | {t['ms']:.3f} | "
                     f"{t['weight_bw_pct']:.0f}% | {t['tflops']:.1f} | {matches} |")
    return "\n".join(lines)


def failures(result: dict) -> list:
    """What makes the run fail (exit 1): axe4j differing from the reference in any form, variant or CUDA graph, or
    failing to time (axe4j's kernels must capture), or on a skewed routing; the schedule kernel differing from the host
    schedule; the Triton
    peer (16-bit, FP8, its torch block sort) differing from its reference or failing to run."""
    bad = [(r["dtype"], r["tokens"]) for r in result["rows"]
           if not (r["axe4j_vs_reference"]["matches"] and r["axe4j_three_kernels_vs_reference"]["matches"])]
    bad += [(r["dtype"], r["tokens"], r["bn1"], r["bn2"]) for r in result.get("variants", [])
            if not r["vs_reference"]["matches"]]
    bad += [(r["dtype"], r["tokens"], "schedule kernel") for r in result["rows"]
            if "device_schedule" in r and not r["device_schedule"].get("matches", False)]
    bad += [(t["dtype"], t["tokens"], t["impl"], t["scope"], "graph") for t in result.get("timings", [])
            if not t.get("vs_reference", {"matches": True})["matches"]]
    bad += [(r["dtype"], r["tokens"], name) for r in result["rows"] for name, p in r["peers"].items()
            if name.startswith("Triton fused-MoE") and not p.get("vs_reference", {}).get("matches", False)]
    bad += [(r["dtype"], r["tokens"], "Triton FP8") for r in result["rows"]
            if not r.get("triton_fp8_vs_reference", {"matches": True})["matches"]]
    bad += [(r["dtype"], r["tokens"], "axe4j FP8") for r in result["rows"]
            if not r.get("axe4j_fp8_vs_reference", {"matches": True})["matches"]]
    bad += [(r["dtype"], r["tokens"], "axe4j FP8 not run") for r in result["rows"]
            if r["tokens"] in result.get("fp8_tokens", []) and r["dtype"] == "bfloat16"
            and "axe4j_fp8_vs_reference" not in r]
    bad += [(r["dtype"], r["tokens"], routing, name) for r in result["rows"]
            for routing, entry in r.get("skewed", {}).items() for name, check in entry.items()
            if (name in ("axe4j", "device_schedule") or name.startswith("Triton fused-MoE"))
            and not check.get("matches", False)]
    bad += [(r["dtype"], r["tokens"], "block sort", bm) for r in result["rows"]
            for bm, ok in r.get("block_sort_matches", {}).items() if not ok]
    bad += [(t["dtype"], t["tokens"], t["impl"], t["scope"], t["mode"], "not timed") for t in result.get("timings", [])
            if "error" in t and (t["impl"].startswith("axe4j") or t["impl"].startswith("Triton fused-MoE"))]
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tokens", default="", help="comma-separated token counts (default: all in the bundle)")
    parser.add_argument("--dtypes", default="", help="comma-separated types (default: float16,bfloat16)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError as error:
        log(f"not run: PyTorch is not importable ({error}); the peers and the arrays are torch tensors")
        return 0
    if not torch.cuda.is_available() or torch.cuda.get_device_capability(0) != (9, 0):
        log("not run: the MoE kernels are sm_90a code and need a Hopper GPU (compute capability 9.0)")
        return 0
    result = bench(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "moe.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "moe.md").write_text(markdown(result))
    bad = failures(result)
    log(f"wrote {args.out / 'moe.json'}" + (f"; FAILED (differs from its reference, or not run): {bad}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
