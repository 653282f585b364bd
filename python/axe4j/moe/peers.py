"""Peers of the CUDA MoE layer on a GPU, each a function ``fused_experts(x, w1, w2, weights, ids)`` over torch
tensors on the GPU with axe4j's weight layouts (w1: experts x 2*intermediate x hidden, gate rows then up rows; w2:
experts x hidden x intermediate; weights, ids: tokens x top_k), returning tokens x hidden in x's type.

``peers(torch)`` lists those that import here, in this order: vLLM's Triton ``fused_experts``, SGLang's Triton
``fused_experts``, the Triton fused-MoE written here (``triton_moe``: block-aligned sort, two grouped Triton GEMMs;
where triton imports), PyTorch's grouped GEMM (``torch_grouped``) and PyTorch's per-expert loop (``torch_loop``,
always). Used by ``axe4j.moe.cuda_bench`` and by the GPU bundle's ``moe_bench.py`` (which carries this file).
Needs only torch.
"""

from __future__ import annotations


def torch_loop(torch):
    """PyTorch's per-expert loop: for each expert some token chose, its tokens' rows through gate/up (one GEMM over
    w1[e] = [gate; up]), SiLU(gate) * up, down (w2[e]), times the routing weight, added to the tokens' rows."""
    def run(x, w1, w2, weights, ids):
        tokens, top_k = ids.shape
        intermediate = w2.shape[2]
        out = torch.zeros_like(x, dtype=torch.float32)
        flat = ids.reshape(-1)
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=w1.shape[0]).tolist()   # one host sync, as the eager block has
        start = 0
        for e, n in enumerate(counts):
            if n == 0:
                continue
            pairs = order[start:start + n]
            start += n
            rows = pairs // top_k
            h = x[rows] @ w1[e].t()
            act = torch.nn.functional.silu(h[:, :intermediate]) * h[:, intermediate:]
            y = (act @ w2[e].t()).float() * weights.reshape(-1)[pairs, None]
            out.index_add_(0, rows, y)
        return out.to(x.dtype)

    return run


def torch_grouped(torch):
    """PyTorch's grouped GEMM: the pairs sorted by expert on the GPU, the sorted token rows through one grouped GEMM
    with w1 (groups = experts, ends = cumulative counts), SiLU(gate) * up, one grouped GEMM with w2, times the
    routing weight, added to the tokens' rows. No host synchronisation."""
    grouped = getattr(torch.nn.functional, "grouped_mm", None) or getattr(torch, "_grouped_mm", None)
    if grouped is None:
        raise ImportError(f"torch {torch.__version__} has neither torch.nn.functional.grouped_mm nor _grouped_mm")

    def run(x, w1, w2, weights, ids):
        tokens, top_k = ids.shape
        intermediate = w2.shape[2]
        flat = ids.reshape(-1)
        order = torch.argsort(flat, stable=True)
        ends = torch.cumsum(torch.bincount(flat, minlength=w1.shape[0]), 0, dtype=torch.int32)
        rows = order // top_k
        h = grouped(x[rows], w1.transpose(1, 2), offs=ends)
        act = torch.nn.functional.silu(h[:, :intermediate]) * h[:, intermediate:]
        y = grouped(act, w2.transpose(1, 2), offs=ends).float() * weights.reshape(-1)[order, None]
        out = torch.zeros((tokens, x.shape[1]), dtype=torch.float32, device=x.device)
        return out.index_add_(0, rows, y).to(x.dtype)

    return run


TRITON = "Triton fused-MoE (axe4j.moe.triton_moe)"


def peers(torch) -> tuple[list, dict]:
    """([(name, fused_experts(x, w1, w2, weights, ids))], {name: why it is not run})."""
    found, missing = [], {}
    try:
        from vllm.model_executor.layers.fused_moe import fused_experts

        found.append(("vLLM fused_experts (Triton)", fused_experts))
    except Exception as error:  # noqa: BLE001  (not installed, or not usable here)
        missing["vLLM fused_experts (Triton)"] = f"{type(error).__name__}: {error}"
    try:
        from sglang.srt.layers.moe.fused_moe_triton import fused_experts as sgl_fused_experts

        found.append(("SGLang fused_experts (Triton)", sgl_fused_experts))
    except Exception as error:  # noqa: BLE001
        missing["SGLang fused_experts (Triton)"] = f"{type(error).__name__}: {error}"
    try:
        from .triton_moe import peer as triton_peer

        found.append((TRITON, triton_peer(torch)))
    except ImportError as error:
        missing[TRITON] = f"ImportError: {error}"
    try:
        found.append(("PyTorch grouped_mm (CUTLASS)", torch_grouped(torch)))
    except ImportError as error:
        missing["PyTorch grouped_mm (CUTLASS)"] = str(error)
    found.append(("PyTorch per-expert loop (cuBLAS)", torch_loop(torch)))
    return found, missing
