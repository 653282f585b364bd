"""A Triton fused-MoE peer (docs/moe.md, "Triton fused-MoE peer"): the algorithm of the Triton fused-MoE kernels
that serving stacks use, written here from its description, for the GPU machine where vLLM and SGLang are not
installed.

``fused_experts(x, w1, w2, weights, ids)`` on torch tensors with axe4j's layouts (w1: experts x 2I x hidden, gate
rows then up rows; w2: experts x hidden x I), tokens x hidden out in x's type:

1. ``block_sort_torch``: the pairs sorted by expert into blocks of BM rows (torch ops on the GPU, no host sync);
2. ``_gemm1`` grid (blocks x I / BN): per block of sorted rows, its tokens' rows of x gathered by pointer
   (row = pair // top_k) and multiplied with the block's expert's gate and up rows (two ``tl.dot`` accumulators);
   epilogue SiLU(gate) up w (the routing weight), stored to the pair's row of A (P x I);
3. ``_gemm2`` grid (blocks x hidden / BN): the block's rows of A times the expert's W2 rows, stored to the pair's
   row of Y (P x hidden, FP32);
4. ``out = Y`` seen as tokens x top_k x hidden summed over top_k.

FP8 (``fp8=True``; weights given as e4m3 codes with per-channel FP32 scales): x quantised per token and A per
pair row (``quantise_rows_torch``: scale = max |row| / 448), e4m3 x e4m3 ``tl.dot`` in FP32, the row and channel
scales applied in each GEMM's epilogue; the same quantisation as ``axe4j.moe.fp8``.

Block sizes per token count: ``CONFIGS`` (a starting table, not tuned on a GPU yet; GEMM1 takes BN / 2 columns of
gate and of up). Needs torch and triton; the
import of this module does not (``peer(torch)`` imports triton and raises ImportError without it).
"""

from __future__ import annotations

from .block_sort import block_sort_torch

E4M3_MAX = 448.0

# tokens up to (inclusive) -> (BM, BN, BK, GROUP_M, num_warps, num_stages); BK doubles for FP8 (same bytes)
CONFIGS = ((1, (16, 64, 128, 1, 4, 4)),
           (16, (16, 64, 128, 1, 4, 4)),
           (64, (16, 128, 128, 1, 4, 4)),
           (256, (32, 128, 64, 8, 4, 4)),
           (1024, (64, 128, 64, 8, 4, 4)),
           (None, (128, 128, 64, 8, 8, 3)))


def config(tokens: int, fp8: bool = False) -> dict:
    """The block sizes for ``tokens`` tokens: the first row of ``CONFIGS`` whose bound is >= tokens."""
    for bound, (bm, bn, bk, group_m, warps, stages) in CONFIGS:
        if bound is None or tokens <= bound:
            return {"BM": bm, "BN": bn, "BK": bk * 2 if fp8 else bk, "GROUP_M": group_m, "num_warps": warps,
                    "num_stages": stages}
    raise AssertionError("CONFIGS ends with an unbounded row")


def quantise_rows_torch(torch, a):
    """(codes e4m3, scales FP32) of ``a`` (rows x n) per row: scale = max |row| / 448, 1 for a zero row."""
    amax = a.float().abs().amax(dim=-1)
    scales = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    return (a.float() / scales[:, None]).to(torch.float8_e4m3fn), scales


def _kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def gemm1(x_ptr, w1_ptr, a_ptr, sorted_ptr, block_expert_ptr, used_ptr, weight_ptr, xs_ptr, w1s_ptr,
              pairs, top_k, blocks_m, H: tl.constexpr, I: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, FP8: tl.constexpr):
        blocks_n = I // BN
        # blocks in groups of GROUP_M row blocks, so a group's blocks share their columns' weights in L2
        per_group = GROUP_M * blocks_n
        first_m = (tl.program_id(0) // per_group) * GROUP_M
        size = tl.minimum(blocks_m - first_m, GROUP_M)
        pid_m = first_m + (tl.program_id(0) % per_group) % size
        pid_n = (tl.program_id(0) % per_group) // size
        if pid_m * BM >= tl.load(used_ptr):
            return
        expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
        pair = tl.load(sorted_ptr + pid_m * BM + tl.arange(0, BM))
        valid = pair < pairs
        token = tl.where(valid, pair // top_k, 0).to(tl.int64)
        cols = pid_n * BN + tl.arange(0, BN)
        ks = tl.arange(0, BK)
        x_rows = x_ptr + token[:, None] * H + ks[None, :]
        gate_rows = w1_ptr + expert * (2 * I * H) + cols[None, :].to(tl.int64) * H + ks[:, None]   # BK x BN
        up_rows = gate_rows + I * H
        gate = tl.zeros((BM, BN), dtype=tl.float32)
        up = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, H // BK):
            a = tl.load(x_rows + k * BK, mask=valid[:, None], other=0.0)
            gate = tl.dot(a, tl.load(gate_rows + k * BK), gate)
            up = tl.dot(a, tl.load(up_rows + k * BK), up)
        if FP8:
            row_scale = tl.load(xs_ptr + token, mask=valid, other=0.0)[:, None]
            gate = gate * row_scale * tl.load(w1s_ptr + expert * (2 * I) + cols)[None, :]
            up = up * row_scale * tl.load(w1s_ptr + expert * (2 * I) + I + cols)[None, :]
        weight = tl.load(weight_ptr + pair, mask=valid, other=0.0)
        act = gate * tl.sigmoid(gate) * up * weight[:, None]
        out = a_ptr + pair[:, None].to(tl.int64) * I + cols[None, :]
        tl.store(out, act.to(a_ptr.dtype.element_ty), mask=valid[:, None])

    @triton.jit
    def gemm2(a_ptr, w2_ptr, y_ptr, sorted_ptr, block_expert_ptr, used_ptr, as_ptr, w2s_ptr,
              pairs, blocks_m, H: tl.constexpr, I: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, FP8: tl.constexpr):
        blocks_n = H // BN
        # blocks in groups of GROUP_M row blocks, so a group's blocks share their columns' weights in L2
        per_group = GROUP_M * blocks_n
        first_m = (tl.program_id(0) // per_group) * GROUP_M
        size = tl.minimum(blocks_m - first_m, GROUP_M)
        pid_m = first_m + (tl.program_id(0) % per_group) % size
        pid_n = (tl.program_id(0) % per_group) // size
        if pid_m * BM >= tl.load(used_ptr):
            return
        expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
        pair = tl.load(sorted_ptr + pid_m * BM + tl.arange(0, BM))
        valid = pair < pairs
        row = tl.where(valid, pair, 0).to(tl.int64)
        cols = pid_n * BN + tl.arange(0, BN)
        ks = tl.arange(0, BK)
        a_rows = a_ptr + row[:, None] * I + ks[None, :]
        w_rows = w2_ptr + expert * (H * I) + cols[None, :].to(tl.int64) * I + ks[:, None]           # BK x BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, I // BK):
            acc = tl.dot(tl.load(a_rows + k * BK, mask=valid[:, None], other=0.0), tl.load(w_rows + k * BK), acc)
        if FP8:
            acc = acc * tl.load(as_ptr + row, mask=valid, other=0.0)[:, None] \
                * tl.load(w2s_ptr + expert * H + cols)[None, :]
        tl.store(y_ptr + row[:, None] * H + cols[None, :], acc, mask=valid[:, None])

    return gemm1, gemm2


def peer(torch, fp8: bool = False, configs=None):
    """``fused_experts(x, w1, w2, weights, ids)`` (16-bit weights), or with ``fp8`` ``fused_experts(x, (w1q, w1s),
    (w2q, w2s), weights, ids)`` (e4m3 codes, FP32 scales experts x rows). ``configs``: a function tokens -> block
    sizes (default ``config``). Raises ImportError where triton does not import."""
    import triton  # noqa: F401  (ImportError here: the peer is listed as missing)

    gemm1, gemm2 = _kernels()
    choose = configs or (lambda tokens: config(tokens, fp8))

    def run(x, w1, w2, weights, ids):
        (w1, w1s), (w2, w2s) = (w1, w2) if fp8 else ((w1, None), (w2, None))
        tokens, top_k = ids.shape
        experts, two_i, hidden = w1.shape
        inter = two_i // 2
        c = choose(tokens)
        # GEMM1 holds two accumulators (gate, up): BN / 2 columns of each, BN in all, as GEMM2's one
        bm, bn1, bk = c["BM"], min(c["BN"] // 2, inter), min(c["BK"], inter)
        bn2 = min(c["BN"], hidden)
        for name, value, tile in (("hidden", hidden, bk), ("intermediate", inter, bk), ("intermediate", inter, bn1),
                                  ("hidden", hidden, bn2)):
            if value % tile:
                raise ValueError(f"triton fused_experts: {name} ({value}) must be a multiple of the block {tile}")
        pairs = tokens * top_k
        sorted_pairs, block_expert, used = block_sort_torch(torch, ids, experts, bm)
        blocks_m = sorted_pairs.numel() // bm
        flat_weights = weights.reshape(-1).float()
        if fp8:
            xq, xs = quantise_rows_torch(torch, x)
        else:
            xq, xs = x, flat_weights   # xs unused (FP8 off): any FP32 pointer
        act = torch.empty((pairs, inter), dtype=x.dtype, device=x.device)
        gemm1[(blocks_m * (inter // bn1),)](
            xq, w1, act, sorted_pairs, block_expert, used, flat_weights, xs, w1s if fp8 else xs,
            pairs, top_k, blocks_m, H=hidden, I=inter, BM=bm, BN=bn1, BK=bk, GROUP_M=c["GROUP_M"], FP8=fp8,
            num_warps=c["num_warps"], num_stages=c["num_stages"])
        if fp8:
            aq, a_scale = quantise_rows_torch(torch, act)
        else:
            aq, a_scale = act, flat_weights
        y = torch.empty((pairs, hidden), dtype=torch.float32, device=x.device)
        gemm2[(blocks_m * (hidden // bn2),)](
            aq, w2, y, sorted_pairs, block_expert, used, a_scale, w2s if fp8 else a_scale,
            pairs, blocks_m, H=hidden, I=inter, BM=bm, BN=bn2, BK=bk, GROUP_M=c["GROUP_M"], FP8=fp8,
            num_warps=c["num_warps"], num_stages=c["num_stages"])
        return y.view(tokens, top_k, hidden).sum(dim=1).to(x.dtype)

    return run
