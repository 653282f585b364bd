"""The CPU interpreter of lowered CUDA kernels (``axe4j.cuda.interp``): the GEMMs run and match numpy, faults a GPU
would hit are errors that name the kernel, the thread and the address, and five bugs planted in the emitters are
each caught. Every GPU test's kernel also runs interpreted: see ``test_cuda_interp_twins.py``."""

import tvm  # noqa: F401  (before the JVM)

import time

import contextlib

import numpy as np
import pytest
from tvm.script import tirx as T

import axe4j
from axe4j.cuda import interp as cuda_interp
from axe4j.cuda.kernels.ampere_gemm import ampere_gemm
from axe4j.cuda.kernels.hopper_gemm import hopper_gemm

import faults


def _target(arch="sm_90a"):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _operands(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (m, k)).astype("float16")
    b = rng.integers(-2, 3, (n, k)).astype("float16")
    return a, b, np.zeros((m, n), "float16"), a.astype("float32") @ b.astype("float32").T


def _run_gemm(builder, shape, arch):
    axe4j.use_pip_nvcc()
    executable = axe4j.compile(builder(*shape), _target(arch))
    a, b, d, expected = _operands(*shape)
    start = time.perf_counter()
    cuda_interp.run(executable, a, b, d)
    return d, expected, time.perf_counter() - start


def test_hopper_gemm_256x256x128_matches_numpy_within_the_time_budget():
    d, expected, seconds = _run_gemm(hopper_gemm, (256, 256, 128), "sm_90a")
    print(f"hopper_gemm 256x256x128 interpreted in {seconds:.2f} s")
    np.testing.assert_array_equal(d.astype("float32"), expected)
    assert seconds < 30, f"the interpreter took {seconds:.1f} s (budget 30 s)"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_ampere_gemm_matches_numpy(arch):
    d, expected, _ = _run_gemm(ampere_gemm, (128, 128, 128), arch)
    np.testing.assert_array_equal(d.astype("float32"), expected)


# ---- faults a GPU would hit -----------------------------------------------------------------------------------------

def _oob():
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([2])
        T.lane_id([32])
        tid = T.thread_id([64])
        B[tid] = A[tid + 1]

    return kernel


def _neighbour(sync):
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([2])
        T.lane_id([32])
        tid = T.thread_id([64])
        S = T.alloc_buffer((64,), "float32", scope="shared", layout=None)
        S[tid] = A[tid]
        if sync:
            T.cuda.cta_sync()
        B[tid] = S[(tid + 1) % 64]

    return kernel


def _never_arrives():
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([2])
        T.lane_id([32])
        tid = T.thread_id([64])
        bar = T.alloc_buffer((1,), "uint64", scope="shared", layout=None)
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.cuda.cta_sync()
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
        B[tid] = A[tid]

    return kernel


def _votes():
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([2])
        T.lane_id([32])
        tid = T.thread_id([64])
        ballot = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), T.Cast("int32", A[tid] > T.float32(40.0)))
        anyone = T.cuda.any_sync(T.uint32(0xFFFFFFFF), T.Cast("int32", A[tid] > T.float32(40.0)))
        B[tid] = T.Cast("float32", ballot) + T.Cast("float32", anyone) * T.float32(0.5) \
            + T.Cast("float32", T.tvm_warp_shuffle_down(T.uint32(0xFFFFFFFF), tid, 3, 32, 32))

    return kernel


def _run_small(kernel):
    axe4j.use_pip_nvcc()
    executable = axe4j.compile(kernel, _target())
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    cuda_interp.run(executable, a, b)
    return a, b


def test_out_of_bounds_read_names_kernel_thread_and_address():
    with pytest.raises(cuda_interp.KernelFault,
                       match=r"kernel 'kernel_kernel': out-of-bounds 4-byte read of global 'A \(argument 0\)' at byte 256 "
                             r"\(size 256\) by block \(0, 0, 0\) thread 63 \(warp 1, lane 31\)"):
        _run_small(_oob())


def test_shared_memory_race_without_a_barrier_is_named_and_the_synchronised_kernel_runs():
    with pytest.raises(cuda_interp.KernelFault, match=r"data race on shared memory byte 4: .* thread 0 .* reads what "
                                                      r".* thread 1 .* wrote with no barrier between"):
        _run_small(_neighbour(sync=False))
    a, b = _run_small(_neighbour(sync=True))
    np.testing.assert_array_equal(b, np.roll(a, -1))


def test_a_wait_that_nothing_completes_is_a_deadlock_naming_the_waiters():
    with pytest.raises(cuda_interp.KernelFault, match=r"deadlocks in block \(0, 0, 0\): threads 0-63 wait for "
                                                      r"mbarrier at shared byte 0 to complete its phase of parity 0"):
        _run_small(_never_arrives())


def test_votes_and_shuffles_follow_the_warp():
    a, b = _run_small(_votes())
    lanes = np.arange(64)
    ballot = np.where(lanes < 32, 0, sum(1 << lane for lane in range(32) if lane + 32 > 40)).astype("float64")
    anyone = np.where(lanes < 32, 0.0, 0.5)
    down = np.where(lanes % 32 + 3 < 32, lanes + 3, lanes)
    np.testing.assert_array_equal(b.astype("float64"), (ballot + anyone + down).astype("float32").astype("float64"))


def test_executables_without_recorded_modules_are_refused():
    with pytest.raises(cuda_interp.NotModelled, match="no lowered CUDA modules recorded"):
        cuda_interp.run(object())


def test_arrays_must_be_contiguous():
    axe4j.use_pip_nvcc()
    executable = axe4j.compile(_oob(), _target())
    with pytest.raises(TypeError, match="C-contiguous"):
        cuda_interp.run(executable, np.zeros((64, 2), "float32")[:, 0], np.zeros(64, "float32"))


# ---- async proxy: what threads store, wgmma may read only after fence.proxy.async ---------------------------------

def _wgmma_from_thread_stores(kind=None):
    """The wgmma test kernel whose operands the CTA stores with st.shared (64x64x32, 64-byte swizzle): on an H200
    it read stale bytes (382 of 4,096 outputs wrong) until the rule fenced the proxies."""
    import test_cuda_wgmma as wgmma_tests

    axe4j.use_pip_nvcc()
    kernel = wgmma_tests.KERNELS["wgmma_64x64x32_sw64"][0]()
    case = wgmma_tests._case("wgmma_64x64x32_sw64")
    args = case.args()
    with contextlib.ExitStack() as stack:
        if kind:
            stack.enter_context(faults.planted(kind))
        executable = axe4j.compile(kernel, _target())
    cuda_interp.run(executable, *args)
    return args, case


def test_wgmma_reading_thread_stores_is_fenced_and_right():
    args, case = _wgmma_from_thread_stores()
    np.testing.assert_allclose(args[case.outputs[0]], case.expected(args)[0], rtol=case.rtol, atol=case.atol)


def test_planted_missing_proxy_fence_is_caught():
    with pytest.raises(cuda_interp.KernelFault, match="generic proxy with no fence.proxy.async"):
        _wgmma_from_thread_stores("missing-proxy-fence")


# ---- bugs planted in the emitters -----------------------------------------------------------------------------------

def _hopper(kind):
    with faults.planted(kind):
        d, expected, _ = _run_gemm(hopper_gemm, (128, 128, 64), "sm_90a")
    return d, expected


def _ampere(kind):
    with faults.planted(kind):
        d, expected, _ = _run_gemm(ampere_gemm, (128, 128, 64), "sm_80")
    return d, expected


def _tree_reduce(kind):
    import test_cuda_dispatch as dispatch_tests  # its cross-warp tree reduction (scratch in shared, a barrier)

    axe4j.use_pip_nvcc()
    kernel = dispatch_tests.KERNELS["sum_rows_tree_cross_warp_cta_f32"][0]()
    a = np.random.default_rng(3).standard_normal((2, 512)).astype("float32")
    out = np.zeros(2, "float32")
    if kind is None:
        cuda_interp.run(axe4j.compile(kernel, _target()), a, out)
    else:
        with faults.planted(kind):
            cuda_interp.run(axe4j.compile(kernel, _target()), a, out)
    return out, a.sum(axis=1)


def test_the_kernels_used_for_planted_bugs_are_right_without_them():
    d, expected, _ = _run_gemm(hopper_gemm, (128, 128, 64), "sm_90a")
    np.testing.assert_array_equal(d.astype("float32"), expected)
    d, expected, _ = _run_gemm(ampere_gemm, (128, 128, 64), "sm_80")
    np.testing.assert_array_equal(d.astype("float32"), expected)
    out, expected = _tree_reduce(None)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)


def _wrong(d, expected):
    return not np.array_equal(d.astype("float32"), expected)


def test_planted_wrong_swizzle_is_caught():
    with pytest.raises(cuda_interp.KernelFault, match="inner box of 128 bytes exceeds the 64-byte swizzle span"):
        _hopper("wrong-swizzle")


def test_planted_wrong_wgmma_descriptor_stride_is_caught():
    assert _wrong(*_hopper("wgmma-descriptor-stride"))


def test_planted_lane_off_by_one_is_caught():
    assert _wrong(*_ampere("lane-off-by-one"))


def test_planted_wrong_ldmatrix_trans_is_caught():
    assert _wrong(*_ampere("ldmatrix-trans"))


def test_planted_missing_barrier_is_caught_as_a_race():
    with pytest.raises(cuda_interp.KernelFault, match="data race on shared memory"):
        _tree_reduce("missing-barrier")


def test_every_planted_kind_has_a_test():
    tested = {"wrong-swizzle", "wgmma-descriptor-stride", "lane-off-by-one", "ldmatrix-trans", "missing-barrier",
              "missing-proxy-fence", "early-release", "unpeeled-k-loop",
              "cluster-local-release",   # the last three in test_hopper_gemm_pipelined.py
              "moe-gather-unwaited"}     # in test_moe_cuda.py
    assert tested == set(faults.KINDS)


def test_an_async_operation_reaching_past_shared_memory_is_a_kernel_fault_not_an_index_error():
    """A wgmma descriptor (or a tensor map) that reaches past the CTA's shared memory: a KernelFault naming the
    operation and the byte, where numpy's IndexError came out before."""
    from axe4j.cuda.interp._memory import SharedWindow

    class Reads:
        shared_writes = np.array([], dtype=np.int64)
        shared_reads = np.array([6000, 6143, 6144, 6200], dtype=np.int64)

        def describe(self):
            return "a wgmma.mma_async of warpgroup 0 (reading A and B from shared memory)"

    with pytest.raises(cuda_interp.KernelFault, match=r"kernel 'k': a wgmma\.mma_async of warpgroup 0 .* reads shared "
                                                      r"byte 6144, outside the CTA's 6144 bytes of shared memory"):
        SharedWindow(6144).track(Reads(), "k")
