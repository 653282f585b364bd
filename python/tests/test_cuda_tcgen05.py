"""tcgen05 GEMM on Blackwell through the Java rule ``axe4j-cuda-tcgen05`` (sm_100a), compiled to PTX and cubins.

Each kernel stages A (128 x K) and B (N x K), K-major and swizzled, in shared memory, allocates the accumulator in
tensor memory (``TMEMPool``), issues ``Tx.gemm_async`` from one thread (or one elected lane of a warp), commits to
an mbarrier, reads the accumulator back with ``tcgen05.ld`` and stores C. The PTX must hold one
``tcgen05.mma.cta_group::1.kind::f16`` per N block and K step; the instruction descriptor Java encodes from the PTX
ISA table must equal TVM's own encoder's. On a GPU (``-m gpu``) C is compared with numpy.
"""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout, wg_local_layout
from tvm.tirx.script import tile as Tx

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered

FATBIN_MAGIC = bytes.fromhex("50ed55ba")
TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"}, host="llvm")


def _swizzled(rows, k, mode):
    w = 8 << mode
    if k > w:
        return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k // w, w):(w, rows * w, 1)]))
    return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k):(k, 1)]))


def _gemm(n, k, mode=3, dtype="float16", accum=False, warp=False):
    a_layout, b_layout = _swizzled(128, k, mode), _swizzled(n, k, mode)

    @T.prim_func
    def kernel(A: T.Buffer((128, k), dtype), B: T.Buffer((n, k), dtype), C: T.Buffer((128, n), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        warp_id = T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        pool = T.SMEMPool()
        A_smem = pool.alloc((128, k), dtype, layout=a_layout, align=1024)
        B_smem = pool.alloc((n, k), dtype, layout=b_layout, align=1024)
        mbar = pool.alloc((1,), "uint64", align=8)
        tmem = T.TMEMPool(pool, total_cols=512)
        C_tmem = tmem.alloc((128, n), "float32")
        pool.commit()
        tmem.commit()
        C_reg = T.alloc_buffer((128, n), "float32", scope="local", layout=wg_local_layout(n))
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], B[:, :])
        if accum:
            Tx.wg.fill(C_reg[:, :], T.float32(1.0))
            Tx.wg.copy_async(C_tmem[:, :], C_reg[:, :])
            T.ptx["tcgen05.wait::st.sync.aligned"]()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if warp:
            if warp_id == 0:
                Tx.warp.gemm_async(C_tmem[:, :], A_smem[:, :], B_smem[:, :], transA=False, transB=False, accum=accum)
                if tid == 0:
                    T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](mbar.ptr_to([0]))
        else:
            if tid == 0:
                Tx.gemm_async(C_tmem[:, :], A_smem[:, :], B_smem[:, :], transA=False, transB=False, accum=accum)
                T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](mbar.ptr_to([0]))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        Tx.wg.copy_async(C_reg[:, :], C_tmem[:, :])
        T.ptx["tcgen05.wait::ld.sync.aligned"]()
        Tx.wg.copy(C[:, :], C_reg[:, :])
        T.cuda.cta_sync()
        tmem.dealloc()

    return kernel


KERNELS = {
    "tcgen05_128x128x64_sw128": (lambda: _gemm(128, 64), 4, 128),
    "tcgen05_128x128x32_sw64_bf16": (lambda: _gemm(128, 32, mode=2, dtype="bfloat16"), 2, 128),
    "tcgen05_128x64x32_sw32_accum_warp": (lambda: _gemm(64, 32, mode=1, accum=True, warp=True), 2, 64),
}

_built: dict = {}
_executables: dict = {}   # name -> (PrimFunc, Executable), without the PTX


def _executable(name):
    if name not in _executables:
        axe4j.use_pip_nvcc()
        kernel = KERNELS[name][0]()
        _executables[name] = (kernel, axe4j.compile(kernel, TARGET))
    return _executables[name]


def _build(name):
    if name not in _built:
        from tvm.support import nvcc

        kernel, executable = _executable(name)
        source = executable.mod.imports[0].inspect_source("cuda")
        with TARGET:
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        _built[name] = (kernel, executable, source, ptx)
    return _built[name]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gemm_async_is_one_tcgen05_mma_per_block_and_k_step(name):
    _, executable, source, ptx = _build(name)
    # reading the accumulator back from tensor memory (tcgen05.ld) is TVM's own case, on purpose
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-tcgen05", "axe4j-cuda-tmem"])
    assert len(re.findall(r"tcgen05\.mma\.cta_group::1\.kind::f16", ptx)) == KERNELS[name][1]
    with TARGET:
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC and set(re.findall(rb"sm_[0-9]+a?", binary)) == {b"sm_100a"}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_axe4j_chooses_tcgen05_and_its_instruction_descriptor_is_tvms(name):
    from tvm.backend.cuda.cpp.descriptors import encode_instr_descriptor_dense_uint32

    report = axe4j.explain(KERNELS[name][0](), TARGET, file=open("/dev/null", "w"))
    assert "axe4j-cuda-tcgen05 (prio=110): accepted <- chosen" in report
    idesc = int(re.search(r"instruction descriptor 0x([0-9a-f]+)", report).group(1), 16)
    n = KERNELS[name][2]
    dtype = "bfloat16" if "bf16" in name else "float16"
    assert idesc == encode_instr_descriptor_dense_uint32(M=128, N=n, K=16, d_dtype="float32", a_dtype=dtype,
                                                         b_dtype=dtype, trans_a=False, trans_b=False)


def test_declines_name_the_reason():
    report = axe4j.explain(KERNELS["tcgen05_128x128x64_sw128"][0](),
                           tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm"),
                           file=open("/dev/null", "w"))
    assert "tcgen05 needs arch [sm_100a, sm_101a, sm_103a], the target's is sm_90a" in report


def _dtype(name):
    return "bfloat16" if "bf16" in name else "float16"


def _case(name):
    shapes = _gpu_cases.params(KERNELS[name][0]())
    plus = 1.0 if "accum" in name else 0.0
    return _gpu_cases.GpuCase(
        name=f"tcgen05/{name}", arch="sm_100a", build=lambda: _executable(name)[1], kernel=KERNELS[name][0],
        target=TARGET, args=lambda: _gpu_cases.integer_operands(shapes, _dtype(name)),
        outputs=(2,), expected=lambda host: _gpu_cases.product(host, plus), rtol=1e-3, atol=1e-3)


@functools.cache
def gpu_cases():
    return [_case(name) for name in sorted(KERNELS)]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_results_on_a_gpu(name):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"tcgen05/{name}"))
