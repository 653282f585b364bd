"""The blocked CPU GEMM's one-region form (``plan.workers``): parallel over u blocks, with a K block of B at most half
of L2, each core runs a contiguous run of u blocks through every K block and packs B into its own panels; with a
larger K block of B the panels are packed once per K block for all cores (a parallel region to pack, one to compute).
Parallel over v panels (one short u block), each core packs and computes its own run of panels.

The code is checked for explicit -mcpus (LLVM writes it for any), the numbers on this machine against numpy: several
K blocks with a short last one, a ragged last panel and tile, beta * C, a run-time row count that leaves a core no u
block at all, and fewer full panels than cores (the last core then has only the ragged one)."""

import io
import re

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j.cpu import target as cpu_target

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

M, N, K = 264, 200, 600            # 33 tiles of 8 rows (or 44 of 6), a ragged last panel, 3 K blocks
SENTINEL = -7.0
RNG = np.random.default_rng(11)
MCPUS = ("x86-64-v3", "znver4", "skylake-avx512", "host")
ONE_REGION = "one parallel region: each of"


@pytest.fixture(autouse=True)
def two_cores_two_mib_l2(monkeypatch):
    """Plans for 2 cores with a 48 KiB L1d and a 2 MiB L2 whatever this machine has (only the sizes change; the code
    runs on any core and any pool): with a 256 KiB L2 the K block of B here would pass half of it, and one core would
    leave nothing to run in parallel."""
    monkeypatch.setattr(cpu_target, "cache_bytes", lambda root=None: {"l1d": 48 * 1024, "l2": 2048 * 1024})
    monkeypatch.setattr(cpu_target, "cores", lambda: 2)


def gemm(beta, m=M, n=N):
    @T.prim_func
    def kernel(A: T.Buffer((m, K), "float32"), B: T.Buffer((K, n), "float32"), C: T.Buffer((m, n), "float32"),
               D: T.Buffer((m, n), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.0), T.float32(beta))

    return kernel


def ragged():
    @T.prim_func
    def kernel(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), D: T.Buffer((M, N), "float32"),
               m: T.Buffer((1,), "int32")):
        Tx.gemm(D[0:T.min(m[0], M), :], A[0:T.min(m[0], M), :], B[:, :], D[0:T.min(m[0], M), :],
                False, False, T.float32(1.0), T.float32(0.0))

    return kernel


def target_of(mcpu):
    return axe4j.host_target() if mcpu == "host" else tvm.target.Target({"kind": "llvm", "mcpu": mcpu})


def parallel_regions(lib) -> int:
    """The parallel regions LLVM was given: one ``__tvm_parallel_lambda`` definition each."""
    return len(re.findall(r"^define .*@__tvm_parallel_lambda[.\w]*\(", lib.mod.inspect_source("ll"), re.MULTILINE))


@pytest.mark.parametrize("mcpu", MCPUS)
def test_a_k_block_of_b_within_half_of_l2_gives_one_parallel_region(mcpu):
    target = target_of(mcpu)
    plan = axe4j.explain(gemm(0.5), target, file=io.StringIO())
    assert ONE_REGION in plan and "parallel over" in plan and "u blocks" in plan, plan
    assert parallel_regions(axe4j.compile(gemm(0.5), target)) == 1


@pytest.mark.parametrize("mcpu", MCPUS)
def test_a_larger_k_block_of_b_is_packed_once_for_all_cores(mcpu, monkeypatch):
    # a 64 KiB L2: a K block of B's panels (at least 13 x 16 x 256 x 4 bytes) is past its half
    monkeypatch.setattr(cpu_target, "cache_bytes", lambda root=None: {"l1d": 48 * 1024, "l2": 64 * 1024})
    target = target_of(mcpu)
    plan = axe4j.explain(gemm(0.5), target, file=io.StringIO())
    assert ONE_REGION not in plan and "parallel over" in plan, plan
    # B's packing and the u blocks are two regions, written once for the first K block and once for the rest
    assert parallel_regions(axe4j.compile(gemm(0.5), target)) == 4


@pytest.mark.parametrize("pool", [None, 1])
def test_one_region_computes_beta_c_plus_a_b(pool):
    """Also with a pool of one thread at run time: the runs are then the calling thread's pool size, not the plan's
    two (each run would pack all of B again)."""
    lib = axe4j.compile(gemm(0.5), axe4j.host_target())
    assert "runtime.NumThreads" in lib.mod.inspect_source("ll")
    a, b, c = (RNG.standard_normal(s).astype("float32") for s in ((M, K), (K, N), (M, N)))
    d = tvm.runtime.tensor(np.full((M, N), SENTINEL, "float32"))
    threads = tvm.get_global_func("runtime.NumThreads")()
    configure = tvm.get_global_func("runtime.config_threadpool")
    try:
        if pool is not None:
            configure(0, pool)
        lib["kernel"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), tvm.runtime.tensor(c), d)
    finally:
        configure(0, threads)
    np.testing.assert_allclose(d.numpy(), a @ b + 0.5 * c, rtol=1e-4, atol=1e-3)


def test_a_run_time_row_count_may_leave_a_core_without_u_blocks():
    target = axe4j.host_target()
    plan = axe4j.explain(ragged(), target, file=io.StringIO())
    assert ONE_REGION in plan and "M=<=264 (run time)" in plan, plan
    lib = axe4j.compile(ragged(), target)
    a, b = RNG.standard_normal((M, K)).astype("float32"), RNG.standard_normal((K, N)).astype("float32")
    full = a @ b
    mc = int(re.search(r"(\d+)-row blocks", plan).group(1))
    # no rows; fewer than one u block (the second core's run is empty); one block and a row; all
    for rows in (0, 5, mc + 1, M):
        d = tvm.runtime.tensor(np.full((M, N), SENTINEL, "float32"))
        lib["kernel"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), d, tvm.runtime.tensor(np.array([rows], "int32")))
        got = d.numpy()
        np.testing.assert_allclose(got[:rows], full[:rows], rtol=1e-4, atol=1e-3, err_msg=f"rows={rows}")
        assert (got[rows:] == SENTINEL).all(), f"rows={rows}: a row past the run-time count was written"


@pytest.mark.parametrize("mcpu", MCPUS)
def test_one_short_u_block_gives_each_core_a_run_of_v_panels(mcpu):
    target = target_of(mcpu)
    plan = axe4j.explain(gemm(0.5, 40, N), target, file=io.StringIO())
    assert f"{ONE_REGION}" in plan and "runs its own v panels" in plan, plan
    assert parallel_regions(axe4j.compile(gemm(0.5, 40, N), target)) == 1


@pytest.mark.parametrize("n", [N, 40])   # 40: one full AVX-512 panel and a ragged one for two cores
def test_runs_of_v_panels_compute_beta_c_plus_a_b(n):
    lib = axe4j.compile(gemm(0.5, 40, n), axe4j.host_target())
    a, b, c = (RNG.standard_normal(s).astype("float32") for s in ((40, K), (K, n), (40, n)))
    d = tvm.runtime.tensor(np.full((40, n), SENTINEL, "float32"))
    lib["kernel"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), tvm.runtime.tensor(c), d)
    np.testing.assert_allclose(d.numpy(), a @ b + 0.5 * c, rtol=1e-4, atol=1e-3)
