"""The block-aligned sort of the Triton fused-MoE peer (axe4j.moe.block_sort) against a brute-force build of the same
arrays, and the peer's block-size table. The torch twin (``block_sort_torch``) runs where torch is installed: here
only if it imports; on the GPU machine moe_bench.py compares it with the numpy one array for array."""

import numpy as np
import pytest

from axe4j.moe import block_sort as bs
from axe4j.moe import triton_moe


def brute(ids, experts, bm):
    """Expert by expert, its pairs in pair order, padded with the sentinel to a multiple of bm."""
    flat = np.asarray(ids).reshape(-1)
    rows, owners = [], []
    for e in range(experts):
        mine = [p for p in range(flat.size) if flat[p] == e]
        padded = mine + [flat.size] * (-len(mine) % bm)
        rows += padded
        owners += [e] * (len(padded) // bm)
    return rows, owners


CASES = [(1, 8, 128, 16), (16, 8, 128, 16), (63, 2, 16, 32), (200, 1, 4, 64), (5, 4, 8, 1), (40, 3, 5, 16)]


@pytest.mark.parametrize("tokens,top_k,experts,bm", CASES)
def test_block_sort_equals_the_brute_force_build(tokens, top_k, experts, bm):
    rng = np.random.default_rng(tokens * 1000 + experts)
    ids = np.stack([rng.choice(experts, top_k, replace=False) for _ in range(tokens)]).astype(np.int32)
    if tokens > 10:
        ids[: tokens // 2, 0] = experts - 1          # one crowded expert: several blocks, the last ragged
    sorted_pairs, block_expert, used = bs.block_sort(ids, experts, bm)
    rows, owners = brute(ids, experts, bm)
    assert sorted_pairs.dtype == block_expert.dtype == used.dtype == np.int32
    assert used.tolist() == [len(rows)]
    assert sorted_pairs.size == bs.capacity(tokens * top_k, experts, bm) >= len(rows)
    assert sorted_pairs.size % bm == 0 and block_expert.size == sorted_pairs.size // bm
    assert sorted_pairs[:len(rows)].tolist() == rows
    assert (sorted_pairs[len(rows):] == tokens * top_k).all()
    assert block_expert[:len(owners)].tolist() == owners


def test_block_sort_names_bad_ids():
    with pytest.raises(ValueError, match=r"ids has values outside \[0, 4\)"):
        bs.block_sort(np.array([[0, 4]]), 4, 16)


def test_block_sort_torch_equals_numpy_where_torch_imports():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    for tokens, top_k, experts, bm in CASES:
        ids = np.stack([rng.choice(experts, top_k, replace=False) for _ in range(tokens)]).astype(np.int32)
        got = bs.block_sort_torch(torch, torch.from_numpy(ids), experts, bm)
        for a, b in zip(got, bs.block_sort(ids, experts, bm)):
            assert a.numpy().tolist() == b.tolist()


def test_the_triton_block_sizes_cover_every_token_count():
    assert triton_moe.config(1)["BM"] == 16 and triton_moe.config(4096)["BM"] == 128
    assert triton_moe.config(100_000)["BM"] == 128
    assert triton_moe.config(64, fp8=True)["BK"] == 2 * triton_moe.config(64)["BK"]
    for bound, row in triton_moe.CONFIGS:
        bm, bn, bk = row[:3]
        assert bm >= 16 and bn % 16 == 0 and bk % 16 == 0, row   # tl.dot needs 16 x 16 blocks at least


def test_the_triton_kernels_match_numpy_in_tritons_interpreter():
    """tools/triton_moe_interp.py: the two Triton kernels in TRITON_INTERPRET=1 (numpy arrays, no torch, no GPU)
    against moe_reference and fp8_reference, 3 routings x FP16/FP8, in out/triton-venv (ci/setup-triton.sh, which
    `make test` runs: Triton is kept out of .venv). moe_bench.py checks the same kernels on the GPU."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    python = root / "out" / "triton-venv" / "bin" / "python"
    assert python.is_file(), "out/triton-venv is missing: bash ci/setup-triton.sh installs Triton there (make test does)"
    script = root / "tools" / "triton_moe_interp.py"
    out = subprocess.run([str(python), str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.count(" ok") == 6, out.stdout + out.stderr


def test_the_triton_kernels_compile_for_sm90_without_spills_or_register_staged_loads():
    """tools/triton_moe_compile.py: gemm1 and gemm2 of every distinct CONFIGS row (FP16, FP8; BF16 at the largest)
    through Triton's own compiler for sm_90, in out/triton-venv: each compiles, fits the block's shared memory and
    registers, uses wgmma from 64 rows and cp.async for its tiles. The GPU run times them (moe_bench.py)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    python = root / "out" / "triton-venv" / "bin" / "python"
    assert python.is_file(), "out/triton-venv is missing: bash ci/setup-triton.sh installs Triton there (make test does)"
    out = subprocess.run([str(python), str(root / "tools" / "triton_moe_compile.py")], capture_output=True, text=True,
                         timeout=600)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and len(lines) == 22 and all(line.endswith(" ok") for line in lines), \
        out.stdout + out.stderr
    assert sum("wgmma" in line for line in lines) == 10, out.stdout      # BM >= 64: the two largest rows, x2 x2 + BF16
