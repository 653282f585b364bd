"""Register tiles partitioned over thread axes (Java ``axe4j-cuda-register``, ``axe4j-cuda-shuffle-reduce``).

Kernels at warp, warpgroup and CTA scope whose register tiles name laneid, warpid, wid_in_wg or tid_in_wg are
compiled through ``axe4j.compile`` for sm_90a and sm_100a; the PTX must hold the accesses the plan asks for
(``ld.global.v4`` for a thread's 8 consecutive fp16, ``st.shared.v4``, ...) and, for reductions across lanes,
``shfl.sync.bfly``; the fatbin must hold a cubin for the arch. Explain output and decline reasons are asserted.
On a GPU (``-m gpu``) each kernel runs against numpy; without one those tests skip with the reason.
"""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, TileLayout, laneid, tid_in_wg, warpid, wid_in_wg
from tvm.tirx.script import tile as Tx

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered

ARCHS = ["sm_90a", "sm_100a"]
FATBIN_MAGIC = bytes.fromhex("50ed55ba")

LD_G4 = r"ld\.global(\.nc)?\.v4\.(f32|u32|b32)"
ST_G4 = r"st\.global\.v4\.(f32|u32|b32)"
ST_S4 = r"st\.shared\.v4\.(f32|u32|b32)"
LD_S4 = r"ld\.shared\.v4\.(f32|u32|b32)"
LD_G2 = r"ld\.global(\.nc)?\.v2\.(f32|u32|b32)"
SHFL = r"shfl\.sync\.bfly\.b32"


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _header(threads):
    T.device_entry()
    T.cta_id([1])
    T.warpgroup_id([max(1, threads // 128)])
    T.warp_id_in_wg([min(4, threads // 32)])
    T.warp_id([threads // 32])
    T.lane_id([32])
    T.thread_id_in_wg([min(threads, 128)])
    T.thread_id([threads])


def _ns(scope):
    return getattr(Tx, {"warpgroup": "wg"}.get(scope, scope))


def _through_registers(shape, dtype, layout, scope, threads, via_shared=False, from_shared=False):
    """A [-> shared] -> register tile (scope) -> [shared (scope) ->] B: a register <- global (or shared) load, a
    register -> memory store."""
    ns = _ns(scope)
    full = tuple(slice(0, d) for d in shape)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        _header(threads)
        r = T.alloc_buffer(shape, dtype, scope="local", layout=layout)
        if from_shared:
            a = T.alloc_buffer(shape, dtype, scope="shared", layout=TileLayout(S[shape]))
            Tx.cta.copy(a[full], A[full])
            T.cuda.cta_sync()
            ns.copy(r[full], a[full])
        else:
            ns.copy(r[full], A[full])
        if via_shared:
            s = T.alloc_buffer(shape, dtype, scope="shared", layout=TileLayout(S[shape]))
            ns.copy(s[full], r[full])
            T.cuda.cta_sync()
            Tx.cta.copy(B[full], s[full])
        else:
            ns.copy(B[full], r[full])

    return kernel


def _row_blocks_by_loop(blocks, dtype):
    """A warp loads block i of A into register block i with a run-time index i (a dim on registers only), then
    stores the whole register tile to B."""
    shape = (blocks, 32, 8)
    layout = TileLayout(S[shape:(8, 1 @ laneid, 1)])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        _header(32)
        r = T.alloc_buffer(shape, dtype, scope="local", layout=layout)
        for i in T.serial(blocks):
            Tx.warp.copy(r[i:i + 1, :, :], A[i:i + 1, :, :])
        Tx.warp.copy(B[:, :, :], r[:, :, :])

    return kernel


def _register_math(op, shape, layout, scope, threads):
    """A, B -> register tiles; ``op`` on them (add, exp, cast to fp32) into a register tile -> C."""
    ns = _ns(scope)
    full = tuple(slice(0, d) for d in shape)
    out = "float32" if op == "cast" else "float16"

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float16")
        B = T.match_buffer(B_ptr, shape, "float16")
        C = T.match_buffer(C_ptr, shape, out)
        _header(threads)
        a = T.alloc_buffer(shape, "float16", scope="local", layout=layout)
        b = T.alloc_buffer(shape, "float16", scope="local", layout=layout)
        c = T.alloc_buffer(shape, out, scope="local", layout=layout)
        ns.copy(a[full], A[full])
        if op == "add":
            ns.copy(b[full], B[full])
            ns.add(c[full], a[full], b[full])
        elif op == "exp":
            ns.exp(c[full], a[full])
        elif op == "cast":
            ns.cast(c[full], a[full])
        else:
            ns.fill(c[full], T.float16(1.5))
        ns.copy(C[full], c[full])

    return kernel


def _reduce(op, shape, src_layout, dst_layout, scope, threads, accum=False):
    """A (rows, cols) fp32 -> register tile; ``op`` over the columns into a register vector -> B."""
    rows, _ = shape
    ns = _ns(scope)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float32")
        B = T.match_buffer(B_ptr, (rows,), "float32")
        _header(threads)
        r = T.alloc_buffer(shape, "float32", scope="local", layout=src_layout)
        s = T.alloc_buffer((rows,), "float32", scope="local", layout=dst_layout)
        ns.copy(r[:, :], A[:, :])
        if accum:
            ns.fill(s[:], T.float32(1.0))
        if op == "sum":
            ns.sum(s[:], r[:, :], [1], accum)
        elif op == "max":
            ns.max(s[:], r[:, :], [1], accum)
        else:
            ns.min(s[:], r[:, :], [1], accum)
        ns.copy(B[:], s[:])

    return kernel


# a warp's 32x8 fp16 tile: lane l holds row l, 8 consecutive halves (16 bytes)
ROWS_ON_LANES = TileLayout(S[(32, 8):(1 @ laneid, 1)])
# a warpgroup's 128x4 fp32 tile on tid_in_wg
ROWS_ON_WG = TileLayout(S[(128, 4):(1 @ tid_in_wg, 1)])
# 64x16 fp32 at warpgroup scope: warp w (wid_in_wg) holds rows 16w..16w+15, lanes split rows x column quads
WG_TILES = TileLayout(S[(4, 16, 4, 2, 2):(1 @ wid_in_wg, 2 @ laneid, 2, 1 @ laneid, 1)])
# a CTA of 128 threads: 128x8 fp16, warp w rows 32w.., lane = row
CTA_ROWS = TileLayout(S[(4, 32, 8):(1 @ warpid, 1 @ laneid, 1)])
# 8x16 fp32 rows over lanes 4r + q, each lane 4 consecutive columns; the reduced result replicated over q
ROW_QUADS = TileLayout(S[(8, 4, 4):(4 @ laneid, 1 @ laneid, 1)])
ROW_QUADS_SUM = TileLayout(S[(8,):(4 @ laneid,)] + R[4:1 @ laneid])
# 32x16 fp32 at CTA scope over 4 warps: warp w rows 8w.., lanes as ROW_QUADS
CTA_QUADS = TileLayout(S[(4, 8, 4, 4):(1 @ warpid, 4 @ laneid, 1 @ laneid, 1)])
CTA_QUADS_SUM = TileLayout(S[(4, 8):(1 @ warpid, 4 @ laneid)] + R[4:1 @ laneid])
# 4x64 fp32 at warp scope: each row across all 32 lanes (2 columns per lane); result on every lane
ROW_ACROSS_WARP = TileLayout(S[(4, 32, 2):(2, 1 @ laneid, 1)])
ROW_ACROSS_WARP_SUM = TileLayout(S[(4,):(1,)] + R[32:1 @ laneid])

KERNELS = {
    "copy_warp_global_to_registers_f16": (lambda: _through_registers((32, 8), "float16", ROWS_ON_LANES, "warp", 32),
                                          [LD_G4, ST_G4]),
    "copy_warp_registers_to_shared_f16": (lambda: _through_registers((32, 8), "float16", ROWS_ON_LANES, "warp", 32,
                                                                     via_shared=True), [LD_G4, ST_S4]),
    "copy_warpgroup_tid_in_wg_f32": (lambda: _through_registers((128, 4), "float32", ROWS_ON_WG, "warpgroup", 128),
                                     [LD_G4, ST_G4]),
    "copy_warpgroup_shared_to_registers_f32": (lambda: _through_registers((128, 4), "float32", ROWS_ON_WG,
                                                                          "warpgroup", 128, from_shared=True),
                                               [LD_S4, ST_G4]),
    "copy_warpgroup_wid_in_wg_f32": (lambda: _through_registers((64, 16), "float32", WG_TILES, "warpgroup", 128,
                                                                via_shared=True), [LD_G2, r"st\.shared\.v2"]),
    "copy_cta_warpid_f16": (lambda: _through_registers((128, 8), "float16", CTA_ROWS, "cta", 128), [LD_G4, ST_G4]),
    "copy_warp_run_time_block_f16": (lambda: _row_blocks_by_loop(4, "float16"), [LD_G4, ST_G4]),
    "add_warp_registers_f16": (lambda: _register_math("add", (32, 8), ROWS_ON_LANES, "warp", 32),
                               [LD_G4, r"add(\.rn)?\.f16", ST_G4]),
    "exp_warpgroup_registers_f16": (lambda: _register_math("exp", (128, 8), TileLayout(S[(128, 8):(1 @ tid_in_wg, 1)]),
                                                           "warpgroup", 128), [LD_G4, r"ex2\.approx"]),
    "cast_cta_registers_f16_to_f32": (lambda: _register_math("cast", (128, 8), CTA_ROWS, "cta", 128),
                                      [LD_G4, r"cvt\.f32\.f16", ST_G4]),
    "fill_cta_registers_f16": (lambda: _register_math("fill", (128, 8), CTA_ROWS, "cta", 128), [ST_G4]),
    "sum_warp_row_quads_f32": (lambda: _reduce("sum", (8, 16), ROW_QUADS, ROW_QUADS_SUM, "warp", 32),
                               [LD_G4, SHFL, r"add(\.rn)?(\.ftz)?\.f32"]),
    "max_warp_rows_across_lanes_f32": (lambda: _reduce("max", (4, 64), ROW_ACROSS_WARP, ROW_ACROSS_WARP_SUM, "warp",
                                                       32), [SHFL, r"max(\.ftz)?\.f32"]),
    "sum_cta_row_quads_accum_f32": (lambda: _reduce("sum", (32, 16), CTA_QUADS, CTA_QUADS_SUM, "cta", 128,
                                                    accum=True), [SHFL]),
    "min_warpgroup_rows_f32": (lambda: _reduce("min", (64, 16), TileLayout(S[(4, 16, 2, 2, 4):(
        1 @ wid_in_wg, 2 @ laneid, 4, 1 @ laneid, 1)]), TileLayout(S[(4, 16):(1 @ wid_in_wg, 2 @ laneid)]
                                                                    + R[2:1 @ laneid]), "warpgroup", 128),
                               [SHFL, r"min(\.ftz)?\.f32"]),
}

_built: dict = {}
_executables: dict = {}   # (name, arch) -> (PrimFunc, Executable), without the PTX


def _executable(name, arch):
    key = (name, arch)
    if key not in _executables:
        axe4j.use_pip_nvcc()
        kernel = KERNELS[name][0]()
        _executables[key] = (kernel, axe4j.compile(kernel, _target(arch)))
    return _executables[key]


def _build(name, arch):
    key = (name, arch)
    if key not in _built:
        kernel, executable = _executable(name, arch)
        source = executable.mod.imports[0].inspect_source("cuda")
        _built[key] = (kernel, executable, source, _ptx(source, arch))
    return _built[key]


def _ptx(source, arch):
    from tvm.support import nvcc

    with _target(arch):
        return bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()


def _explain(kernel):
    return axe4j.explain(kernel, _target("sm_90a"), file=open("/dev/null", "w"))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_register_kernel_compiles_to_the_intended_instructions(name, arch):
    _, executable, source, ptx = _build(name, arch)
    assert_axe4j_lowered(executable)
    assert {r.variant for r in executable.lowered} & {"axe4j-cuda-register", "axe4j-cuda-shuffle-reduce"}
    assert "tvm_builtin_ptx_ld_vec" not in source and "tvm_builtin_ptx_st_vec" not in source, \
        "an upstream register copy case ran instead of the axe4j rule"
    for pattern in KERNELS[name][1]:
        assert re.search(pattern, ptx), f"{pattern} not in the PTX of {name} ({arch})"
    with _target(arch):
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}


def test_every_register_call_is_planned_by_the_register_rules():
    for name in KERNELS:
        report = _explain(KERNELS[name][0]())
        chosen = [line for line in report.splitlines() if line.endswith("<- chosen")]
        ours = [line for line in chosen if "axe4j-cuda-register" in line or "axe4j-cuda-shuffle-reduce" in line]
        assert ours, f"{name}: no register rule chosen\n{report}"


def test_explain_names_the_partition_and_the_vector_width():
    report = _explain(KERNELS["copy_warp_global_to_registers_f16"][0]())
    assert "axe4j-cuda-register (prio=111): accepted <- chosen" in report
    assert "partition dst S[(32,8):(1@laneid,1)]: 8 register slots per thread over 32 threads, 8 elements " \
           "(16 bytes) per access" in report
    report = _explain(KERNELS["sum_warp_row_quads_f32"][0]())
    assert "axe4j-cuda-shuffle-reduce (prio=111): accepted <- chosen" in report
    assert "1 output per thread, 4 register terms folded each, then 2 butterfly shuffles (xor [1, 2])" in report
    assert "one store per replicated element" in report


def test_thread_axes_are_read_from_thread_idx():
    # warp w = tx / 32 holds rows 32w.., lane = tx % 32 its row: row = tx, 8 halves from tx * 8
    _, _, source, _ = _build("copy_cta_warpid_f16", "sm_90a")
    assert "*(uint4*)(r_ptr + 0) = *(uint4*)(A_ptr + (((int)threadIdx.x) * 8));" in source
    # wid_in_wg * 16 + (lane >> 1) = tx >> 1 is the row, lane & 1 picks the column pair; registers 2 apart
    _, _, source, _ = _build("copy_warpgroup_wid_in_wg_f32", "sm_90a")
    base = "(((((int)threadIdx.x) >> 1) * 16) + ((((int)threadIdx.x) & 1) * 2))"
    assert f"*(float2*)(r_ptr + 0) = *(float2*)(A_ptr + {base});" in source
    for k in range(1, 4):
        assert f"*(float2*)(r_ptr + {2 * k}) = *(float2*)(A_ptr + ({base} + {4 * k}));" in source


def test_a_layout_that_leaves_threads_out_is_declined():
    kernel = _through_registers((32, 4), "float32", TileLayout(S[(32, 4):(1 @ laneid, 1)]), "cta", 128)
    report = _explain(kernel)
    assert "the layout's thread iters cover 32 of the scope's 128 threads" in report
    report = _explain(_through_registers((64, 4), "float32", TileLayout(S[(64, 4):(1 @ laneid, 1)]), "warp", 32))
    assert "the laneid iters reach 64, the warp scope has 32 values of laneid" in report


def test_a_reduction_across_warps_is_declined_for_shared_memory():
    # 4x256 at CTA scope (256 threads): rows on lanes 8.., each row's columns over 8 warps x 8 lanes x 4 registers
    src = TileLayout(S[(4, 8, 8, 4):(8 @ laneid, 1 @ warpid, 1 @ laneid, 1)])
    dst = TileLayout(S[(4,):(8 @ laneid,)] + R[8:1 @ laneid] + R[8:1 @ warpid])
    report = _explain(_reduce("sum", (4, 256), src, dst, "cta", 256))
    assert "lies on warps (thread digit (t / 32) mod 8, warpid); combining warps needs shared memory" in report


def test_the_destination_holds_each_result_on_the_reduced_lanes():
    # two replica iters of 2 lanes are one of 4; leaving the lanes unnamed (dropped) means the same
    for dst in (TileLayout(S[(8,):(4 @ laneid,)] + R[2:1 @ laneid] + R[2:2 @ laneid]),
                TileLayout(S[(8,):(4 @ laneid,)] + R[2:1 @ laneid]), TileLayout(S[(8,):(4 @ laneid,)])):
        report = _explain(_reduce("sum", (8, 16), ROW_QUADS, dst, "warp", 32))
        assert "axe4j-cuda-shuffle-reduce (prio=111): accepted <- chosen" in report, report
    report = _explain(_reduce("sum", (8, 16), ROW_QUADS, TileLayout(S[(8,):(1 @ laneid,)] + R[4:8 @ laneid]), "warp",
                              32))
    assert "kept dim 0 of the source is held on other threads than the destination's" in report


def _reference(name, host):
    a = host[0]
    if name.startswith("copy_"):
        return a
    if name.startswith("add_"):
        return (a + host[1]).astype("float16")
    if name.startswith("exp_"):
        return np.exp(a.astype("float32")).astype("float16")
    if name.startswith("cast_"):
        return a.astype("float32")
    if name.startswith("fill_"):
        return np.full_like(host[-1], 1.5)
    if name.startswith("sum_"):
        return a.sum(axis=1) + (1.0 if "accum" in name else 0.0)
    if name.startswith("max_"):
        return a.max(axis=1)
    if name.startswith("min_"):
        return a.min(axis=1)
    raise KeyError(name)


def _case(name, arch):
    shapes = _gpu_cases.params(KERNELS[name][0]())
    return _gpu_cases.GpuCase(
        name=f"register/{name}/{arch}", arch=arch, build=lambda: _executable(name, arch)[1], kernel=KERNELS[name][0],
        target=_target(arch), args=lambda: _gpu_cases.normal_args(shapes), outputs=(len(shapes) - 1,),
        expected=lambda host: [_reference(name, host)], rtol=2e-3, atol=2e-3)


@functools.cache
def gpu_cases():
    return [_case(name, arch) for name in sorted(KERNELS) for arch in ARCHS]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_register_kernel_results_on_a_gpu(name):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"register/{name}"))
