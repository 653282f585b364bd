"""The GPU part of ``make bench-moe``: the CUDA layer (``axe4j.moe.cuda``) at each token count on ``tvm.cuda(0)``,
and every peer of ``axe4j.moe.peers`` that imports (vLLM's or SGLang's Triton ``fused_experts``, PyTorch's grouped
GEMM, PyTorch's per-expert loop; all take the same w1 = [gate; up] and w2 layouts), same weights, same routing, FP16.

Per token count: ``kernels_ms`` = the layer's kernels alone (the ``schedule`` kernel, then the expert kernels and
the combine; routing and arrays already on the GPU; best of ``repeat`` batches of launches, each batch synchronised
once), ``layer_ms`` = a whole ``layer(x)`` call (host router, uploads of the routing, kernels, download),
``peers``: each peer's ms on the same routing.
The output is checked against ``moe_reference`` on the same FP16 values (FP32 arithmetic).
"""

from __future__ import annotations

import time

import numpy as np

from .config import MoeShape
from .reference import moe_reference

LAUNCHES = 10      # launches per timed batch


def _weights(shape: MoeShape, seed: int = 0):
    rng = np.random.default_rng(seed)
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    wr = rng.standard_normal((E, H), dtype=np.float32)
    w1 = np.empty((E, 2 * I, H), np.float16)
    w2 = np.empty((E, H, I), np.float16)
    for e in range(E):   # expert by expert: no FP32 copy of all the weights at once
        w1[e] = rng.standard_normal((2 * I, H), dtype=np.float32) / np.float32(np.sqrt(H))
        w2[e] = rng.standard_normal((H, I), dtype=np.float32) / np.float32(np.sqrt(I))
    return wr, w1, w2


def _timed(body, sync, repeat: int) -> float:
    """Best of ``repeat`` batches of LAUNCHES calls, in ms per call, after a warm-up."""
    body()
    sync()
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        for _ in range(LAUNCHES):
            body()
        sync()
        best = min(best, (time.perf_counter() - start) / LAUNCHES)
    return best * 1e3


def bench(shape: MoeShape, tokens_list, repeat: int) -> list:
    import tvm

    from . import cuda

    from .peers import peers

    dev = tvm.cuda(0)
    wr, w1, w2 = _weights(shape)
    w1_dev, w2_dev = tvm.runtime.tensor(w1, dev), tvm.runtime.tensor(w2, dev)
    try:
        import torch

        found, missing = peers(torch)
    except ImportError as error:   # every peer runs on torch tensors
        found, missing = [], {"every peer": f"PyTorch is not importable ({error})"}
    rows = []
    for tokens in tokens_list:
        rng = np.random.default_rng(tokens)
        x = rng.standard_normal((tokens, shape.hidden), dtype=np.float32).astype(np.float16)
        start = time.perf_counter()
        layer = cuda.MoeLayer(shape, tokens, wr, w1_dev, w2_dev, device="gpu")
        compile_s = time.perf_counter() - start
        _, ids, weights = layer.route(x)
        calls = layer.calls(x, ids, weights)
        kernels_ms = _timed(lambda: layer.launch(calls), dev.sync, repeat)
        out = calls[-1][1][-1].numpy()
        layer_ms = _timed(lambda: layer(x), dev.sync, repeat)
        want = moe_reference(x.astype(np.float32), w1, w2, ids, weights)
        diff = float(np.abs(out.astype(np.float32) - want).max())
        row = {"tokens": tokens, "kernels_ms": kernels_ms, "layer_ms": layer_ms, "compile_s": compile_s,
               "tflops": shape.flops(tokens) / kernels_ms / 1e9, "max_abs_diff": diff,
               "matches": bool(np.allclose(out.astype(np.float32), want, rtol=2e-2, atol=2e-2)),
               "peers": {name: _run_peer(peer, x, w1, w2, ids, weights, repeat, want) for name, peer in found},
               "peers_missing": missing}
        rows.append(row)
        peer_text = ", ".join(f"{n} {p['peer_ms']:.3f} ms" for n, p in row["peers"].items())
        print(f"  CUDA {tokens:5d} tokens: kernels {kernels_ms:8.3f} ms ({row['tflops']:6.1f} TFLOP/s), layer "
              f"{layer_ms:8.3f} ms, max abs diff {diff:.2e}; peers: {peer_text}")
    return rows


def _run_peer(fused_experts, x, w1, w2, ids, weights, repeat, want) -> dict:
    import torch

    cuda = torch.device("cuda")
    tx = torch.from_numpy(x).to(cuda)
    tw1, tw2 = torch.from_numpy(w1).to(cuda), torch.from_numpy(w2).to(cuda)
    tw, tids = torch.from_numpy(weights).to(cuda), torch.from_numpy(ids).to(cuda)
    out = fused_experts(tx, tw1, tw2, tw, tids)
    ms = _timed(lambda: fused_experts(tx, tw1, tw2, tw, tids), torch.cuda.synchronize, repeat)
    got = out.float().cpu().numpy()
    return {"peer_ms": ms, "peer_max_abs_diff": float(np.abs(got - want).max())}
