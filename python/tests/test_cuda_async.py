"""Java ``copy_async`` rules on CUDA: ``cp.async`` (global -> shared, any scope) and TMA bulk tensor copies
(global <-> shared, one thread, sm_90+), compiled to PTX and cubins for sm_90a / sm_100a.

No GPU is needed to compile: the PTX must hold the instructions the plan asks for (``cp.async.cg`` with 16 bytes,
``cp.async.ca`` with 4 or 8, ``cp.async.bulk.tensor.Nd`` loads and stores), upstream's own cases must not have run
(their helpers and variable names are absent), and the fatbin must hold a cubin for the arch. On a GPU
(``-m gpu``) the kernels run against numpy; without one those tests skip with the reason.
"""

import tvm  # noqa: F401  (before the JVM)

import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

ARCHS = ["sm_90a", "sm_100a"]
FATBIN_MAGIC = bytes.fromhex("50ed55ba")


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _cp_async(shape, dtype, scope, threads, g_layout=None, s_layout=None):
    """A -> shared with copy_async at ``scope``; commit, wait, sync; shared -> B with a plain CTA copy."""
    g_layout = g_layout or TileLayout(S[shape])
    s_layout = s_layout or TileLayout(S[shape])
    ns = getattr(Tx, {"warpgroup": "wg"}.get(scope, scope))
    full = tuple(slice(0, d) for d in shape)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype, layout=g_layout)
        B = T.match_buffer(B_ptr, shape, dtype, layout=g_layout)
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([threads // 128 if threads >= 128 else 1])
        T.warp_id_in_wg([4 if threads >= 128 else threads // 32])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id_in_wg([min(threads, 128)])
        T.thread_id([threads])
        A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
        ns.copy_async(A_smem[full], A[full])
        T.ptx["cp.async.commit_group"]()
        T.ptx["cp.async.wait_group"](0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[full], A_smem[full])

    return kernel


def _cp(kind, size):
    return rf"cp\.async\.{kind}\.shared\.global(\.L2::\w+)? \[%r\d+\], \[%rd\d+\], {size};"


SWIZZLED_F16 = ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((64, 64), (8, 64))   # Swizzle<3,3,3>

KERNELS = {
    "cp_async_cta_f32_64x32": (lambda: _cp_async((64, 32), "float32", "cta", 128), [_cp("cg", 16)]),
    "cp_async_warp_f16_32x64": (lambda: _cp_async((32, 64), "float16", "warp", 32), [_cp("cg", 16)]),
    "cp_async_warpgroup_f32_128x16": (lambda: _cp_async((128, 16), "float32", "warpgroup", 128), [_cp("cg", 16)]),
    "cp_async_thread_f32_8x8": (lambda: _cp_async((8, 8), "float32", "thread", 32), [_cp("cg", 16)]),
    # rows of 30 fp32 at a pitch of 32 in global: 2-element (8-byte) chunks, .ca
    "cp_async_cta_padded_rows_f32": (lambda: _cp_async((16, 30), "float32", "cta", 64,
                                                       g_layout=TileLayout(S[(16, 30):(32, 1)])), [_cp("ca", 8)]),
    # a transposing shared tile: one 4-byte element per cp.async, .ca
    "cp_async_cta_transposing_f32": (lambda: _cp_async((32, 32), "float32", "cta", 128,
                                                       s_layout=TileLayout(S[(32, 32):(1, 32)])), [_cp("ca", 4)]),
    # 128-byte swizzle of fp16 (8-element units stay whole): 16-byte chunks at XORed addresses
    "cp_async_cta_swizzled_f16": (lambda: _cp_async((64, 64), "float16", "cta", 128, s_layout=SWIZZLED_F16),
                                  [_cp("cg", 16)]),
}

# names only upstream's copy_async cases write into the kernel (ldgsts, tma)
UPSTREAM_MARKS = ["g_lin_ptr", "s_off_ptr", "s_buf_w_offset"]

_built: dict = {}


def _build(name, arch):
    key = (name, arch)
    if key not in _built:
        axe4j.use_pip_nvcc()
        kernel = KERNELS[name][0]()
        executable = axe4j.compile(kernel, _target(arch))
        source = executable.mod.imports[0].inspect_source("cuda")
        _built[key] = (kernel, executable, source, _ptx(source, arch))
    return _built[key]


def _ptx(source, arch):
    """PTX from TVM's own nvcc driver (it adds the toolkit's include folders, as for the cubin)."""
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    with _target(arch):
        return bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_copy_async_compiles_to_the_intended_instructions(name, arch):
    kernel, executable, source, ptx = _build(name, arch)
    for mark in UPSTREAM_MARKS:
        assert mark not in source, f"an upstream copy_async case ran instead of the axe4j rule ({mark})"
    for pattern in KERNELS[name][1]:
        assert re.search(pattern, ptx), f"{pattern} not in the PTX of {name} ({arch})"
    with _target(arch):
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}


def test_cp_async_plan_is_chosen_and_explained():
    report = axe4j.explain(KERNELS["cp_async_cta_f32_64x32"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    offset = axe4j.dispatch.cuda_priority_offset()
    assert f"axe4j-cuda-cp-async (prio={10 + offset}): accepted <- chosen" in report
    assert "cp.async.cg.shared.global of 16 bytes (4 elements), 512 chunks over 128 threads" in report
    report = axe4j.explain(KERNELS["cp_async_cta_swizzled_f16"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "cp.async.cg.shared.global of 16 bytes (8 elements), 512 chunks over 128 threads" in report
    _, _, source, _ = _build("cp_async_cta_swizzled_f16", "sm_90a")
    assert "^" in source, "no XOR in the shared addresses: the swizzle was dropped"


def test_cp_async_declines_two_byte_chunks_with_the_reason():
    kernel = _cp_async((32, 32), "float16", "cta", 128, s_layout=TileLayout(S[(32, 32):(1, 32)]))
    report = axe4j.explain(kernel, _target("sm_90a"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-cp-async (prio=110): declined: copy_async: cp.async moves 4, 8 or 16 bytes per " \
           "instruction, but the widest aligned chunk of dst=A_smem[0:32, 0:32] float16 S[(32,32):(1,32)]" in report
    assert "1 element(s) = 2 bytes" in report


def _gpu():
    try:
        return tvm.cuda(0).exist
    except Exception:  # noqa: BLE001  (no driver at all)
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu(), reason="no CUDA GPU on this machine: the kernels were compiled, not run")
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_copy_async_results_on_a_gpu(name):
    major = int(tvm.cuda(0).compute_version.split(".")[0])
    kernel, executable, _, _ = _build(name, "sm_100a" if major >= 10 else "sm_90a")
    rng = np.random.default_rng(0)
    buffers = [kernel.buffer_map[p] for p in kernel.params]
    host = [rng.standard_normal([int(n) for n in b.shape]).astype(str(b.dtype)) for b in buffers]
    host[-1][...] = 0
    device = [tvm.runtime.tensor(x, tvm.cuda(0)) for x in host]
    executable(*device)
    np.testing.assert_array_equal(device[-1].numpy(), host[0])
