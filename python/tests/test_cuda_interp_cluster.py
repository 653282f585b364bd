"""Thread-block clusters in the CPU interpreter (``axe4j.cuda.interp._cluster``): the CTAs of a cluster run
together; a multicast TMA load lands in every CTA of its mask and completes on each one's mbarrier; ``mapa`` and
``mbarrier.arrive.shared::cluster`` reach a peer's barrier; the cluster barrier waits for every thread of the
cluster; cluster special registers; faults name the cluster. The clustered GEMM is in test_hopper_gemm_pipelined.py."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j.cuda import interp as cuda_interp
from axe4j.cuda.kernels.hopper_gemm import shared_tile

TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
ROWS, COLS = 64, 64


def _multicast_kernel(mask, clusters=2):
    """Each CTA of a 2-CTA cluster loads its half of A (2 ROWS x COLS) and multicasts it with ``mask``; every CTA
    then writes the whole tile it holds to its own rows of D."""

    @T.prim_func
    def kernel(A: T.Buffer((2 * ROWS, COLS), "float16"), D: T.Buffer((2 * clusters * 2 * ROWS, COLS), "float16")):
        T.device_entry()
        cl = T.cluster_id([clusters])
        rank = T.cta_id_in_cluster([2])
        tid = T.thread_id([128])
        pool = T.SMEMPool()
        tile = pool.alloc((1, 1, 2 * ROWS, COLS), "float16", layout=shared_tile(1, 1, 2 * ROWS, COLS), align=1024)
        full = pool.alloc((1,), "uint64", align=8)
        pool.commit()
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cluster_sync()
        if tid == 0:
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([0]), T.uint32(2 * ROWS * COLS * 2))
            Tx.copy_async(tile[0, 0, rank * ROWS:rank * ROWS + ROWS, :], A[rank * ROWS:rank * ROWS + ROWS, :],
                          mbar=full.ptr_to([0]), cta_mask=mask)
        T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
        for i in T.serial(2 * ROWS * COLS // 128):
            e = i * 128 + tid
            D[(cl * 2 + rank) * 2 * ROWS + e // COLS, e % COLS] = tile[0, 0, e // COLS, e % COLS]
        T.cuda.cluster_sync()

    return kernel


def _compile(kernel):
    axe4j.use_pip_nvcc()
    return axe4j.compile(kernel, TARGET)


def test_a_multicast_load_lands_in_every_cta_of_its_mask():
    executable = _compile(_multicast_kernel(3))
    a = (np.arange(2 * ROWS * COLS) % 251).astype(np.float16).reshape(2 * ROWS, COLS)
    d = np.zeros((8 * ROWS, COLS), np.float16)
    cuda_interp.run(executable, a, d)
    for cta in range(4):   # 2 clusters x 2 CTAs, each holding both halves
        np.testing.assert_array_equal(d[cta * 2 * ROWS:(cta + 1) * 2 * ROWS], a)
    source = executable.mod.imports[0].inspect_source("cuda")
    assert "multicast::cluster" in source


def test_a_mask_without_the_peer_leaves_it_waiting_for_ever():
    """Mask 1: both halves land in rank 0 only; rank 1's mbarrier, armed for the whole tile, never completes."""
    executable = _compile(_multicast_kernel(1))
    a = np.ones((2 * ROWS, COLS), np.float16)
    d = np.zeros((8 * ROWS, COLS), np.float16)
    with pytest.raises(cuda_interp.KernelFault, match=r"deadlocks in the cluster of blocks \(0, 0, 0\), \(1, 0, 0\): "
                                                      r".*mbarrier at shared byte \d+ to complete its phase"):
        cuda_interp.run(executable, a, d)


def test_a_mask_naming_a_cta_outside_the_cluster_is_a_fault():
    executable = _compile(_multicast_kernel(5))
    a = np.ones((2 * ROWS, COLS), np.float16)
    with pytest.raises(cuda_interp.KernelFault, match=r"multicast TMA load has CTA mask 0x0005 for a cluster of 2"):
        cuda_interp.run(executable, a, np.zeros((8 * ROWS, COLS), np.float16))


def _handoff_kernel(remote):
    """Rank 0 writes its block index into shared memory, then arrives on rank 1's mbarrier through mapa (or, with
    ``remote`` False, on its own); rank 1 waits on its mbarrier and records what it saw."""

    @T.prim_func
    def kernel(D: T.Buffer((4, 4), "int32")):
        T.device_entry()
        cl = T.cluster_id([2])
        rank = T.cta_id_in_cluster([2])
        tid = T.thread_id([32])
        pool = T.SMEMPool()
        bar = pool.alloc((1,), "uint64", align=8)
        pool.commit()
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.cuda.cluster_sync()
        if tid == 0:
            if rank == 0:
                mapped = T.alloc_local([1], "uint32")
                if remote:
                    T.ptx.mapa.shared__cluster.u32(mapped[0], T.cuda.cvta_generic_to_shared(bar.ptr_to([0])),
                                                   T.uint32(1))
                else:
                    mapped[0] = T.cuda.cvta_generic_to_shared(bar.ptr_to([0]))
                T.ptx.mbarrier.arrive.shared__cluster.b64(mapped[0])
            else:
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
            D[cl * 2 + rank, 0] = T.cuda.mov_sreg(32, "cluster_ctarank")
            D[cl * 2 + rank, 1] = T.cuda.mov_sreg(32, "clusterid.x")
            D[cl * 2 + rank, 2] = T.cuda.mov_sreg(32, "cluster_nctarank")
            D[cl * 2 + rank, 3] = T.cuda.mov_sreg(32, "nclusterid.x")
        T.cuda.cluster_sync()

    return kernel


def test_mapa_and_a_remote_arrive_release_the_peer_and_special_registers_name_the_cta():
    executable = _compile(_handoff_kernel(True))
    d = np.full((4, 4), -1, np.int32)
    cuda_interp.run(executable, d)
    np.testing.assert_array_equal(d, [[0, 0, 2, 2], [1, 0, 2, 2], [0, 1, 2, 2], [1, 1, 2, 2]])


def test_an_arrive_on_its_own_barrier_leaves_the_peer_waiting():
    executable = _compile(_handoff_kernel(False))
    with pytest.raises(cuda_interp.KernelFault, match=r"deadlocks in the cluster of blocks .*block \(1, 0, 0\): "
                                                      r"threads 0 wait for mbarrier"):
        cuda_interp.run(executable, np.zeros((4, 4), np.int32))
