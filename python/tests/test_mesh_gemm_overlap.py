"""The overlapped GEMM + reduce-scatter of examples/gemm_reduce_scatter.py: its row blocks hand every rank exactly
its own rows, and on 4 MPI ranks it gives numpy's C (the example asserts it per element for both variants)."""

import tvm  # noqa: F401  (TVM before the JVM)

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gemm_reduce_scatter.py"


def _example():
    spec = importlib.util.spec_from_file_location("gemm_reduce_scatter", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("m,blocks", [(16, 1), (64, 2), (64, 4), (96, 8), (1024, 4)])
def test_row_blocks_hand_each_rank_its_own_rows_in_order(m, blocks):
    ex = _example()
    ranks, mr, mb = ex.RANKS, m // ex.RANKS, m // ex.RANKS // blocks
    every = np.concatenate([ex.block_rows(m, blocks, i) for i in range(blocks)])
    assert sorted(every.tolist()) == list(range(m)), "the blocks partition C's rows"
    for r in range(ranks):
        # [Partial()] -> [Shard(0)] of a block gives rank r the block's rows r*mb .. (r+1)*mb-1
        got = np.concatenate([ex.block_rows(m, blocks, i)[r * mb:(r + 1) * mb] for i in range(blocks)])
        np.testing.assert_array_equal(got, r * mr + np.arange(mr))


def test_sizes_that_do_not_split_are_refused():
    ex = _example()
    with pytest.raises(SystemExit):
        ex.parse_args(["--m", "64", "--blocks", "32"])


def test_overlapped_variant_matches_numpy_on_4_ranks():
    args = ["--m", "96", "--k", "64", "--n", "40", "--blocks", "8", "--repeat", "1"]
    done = subprocess.run([sys.executable, str(EXAMPLE), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "matches numpy (every element), unfused and overlapped (8 blocks)" in done.stdout
    assert "overlapped (8 blocks)" in done.stdout and "unfused/overlapped" in done.stdout
