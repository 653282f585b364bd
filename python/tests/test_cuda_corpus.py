"""The CUDA corpus (axe4j_tools.cuda_corpus) under TVM's own dispatch: every kernel lowers to CUDA C that runs the
instruction it is written to exercise, nvcc turns it into a cubin for each of its archs, and on a GPU its
results match numpy. Kernels TVM 0.27 cannot lower are checked to fail with their documented error.

Lowering and nvcc run once per (kernel, arch), cached in module-level dicts; nvcc runs on two threads.
"""

import tvm  # noqa: F401  (before anything that could start the JVM)

import re
import struct
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import _gpu_cases
import axe4j
from axe4j.cuda import choices as cuda_choices
from axe4j_tools import cuda_corpus as corpus
from axe4j_tools.cuda_corpus import build
from axe4j_tools.cuda_corpus.source import live_text, missing

KERNELS = corpus.kernels()
COMPILING = [(k, arch) for k in KERNELS if not k.upstream_refuses for arch in k.archs]
REFUSED = [(k, arch) for k in KERNELS if k.upstream_refuses for arch in k.archs]

_executables: dict = {}   # (name, arch) -> Executable
_fatbins: dict = {}       # (name, arch) -> bytes or the exception nvcc raised


def _ids(pairs):
    return [f"{k.name}-{arch}" for k, arch in pairs]


@pytest.fixture(scope="module", autouse=True)
def pip_nvcc():
    return axe4j.use_pip_nvcc()


def executable(kernel, arch):
    key = (kernel.name, arch)
    if key not in _executables:
        _executables[key] = build.compile_upstream(kernel, arch)
    return _executables[key]


def source(kernel, arch) -> str:
    return build.cuda_source(executable(kernel, arch))


def fatbin(kernel, arch) -> bytes:
    """nvcc for every compiling (kernel, arch) on first use, two at a time; then this pair's fatbin."""
    if not _fatbins:
        sources = {(k.name, a): source(k, a) for k, a in COMPILING}

        def run(item):
            (name, arch_), text = item
            try:
                return (name, arch_), build.fatbin(text, arch_)
            except Exception as error:  # reported by the test of that pair
                return (name, arch_), error

        with ThreadPoolExecutor(max_workers=2) as pool:
            _fatbins.update(pool.map(run, sources.items()))
    result = _fatbins[(kernel.name, arch)]
    if isinstance(result, Exception):
        raise result
    return result


# ---- the corpus itself ---------------------------------------------------------------------------

def test_corpus_covers_ops_scopes_and_storage():
    assert len(KERNELS) >= 24
    assert len({k.name for k in KERNELS}) == len(KERNELS)
    have = {(k.op, k.scope) for k in KERNELS}
    for op, scope in [("copy", "thread"), ("copy", "warp"), ("copy", "warpgroup"), ("copy", "cta"),
                      ("copy_async", "cta"), ("copy_async", "thread"), ("fill", "cta"), ("fill", "warp"),
                      ("cast", "cta"), ("cast", "warpgroup"), ("exp", "cta"), ("exp", "warp"), ("sqrt", "thread"),
                      ("add", "cta"), ("mul", "warpgroup"), ("sum", "thread"), ("sum", "warp"), ("max", "warp"),
                      ("sum", "cta"), ("min", "warp"), ("max", "warpgroup")]:
        assert (op, scope) in have, f"no corpus kernel for {op} at {scope} scope"
    copies = " ".join(k.storage for k in KERNELS if k.op == "copy")
    for pair in ["global->shared", "shared->global", "shared->local", "local->shared", "global->local",
                 "local->global"]:
        assert pair in copies, f"no corpus copy {pair}"
    for k in KERNELS:
        assert set(k.archs) <= {corpus.HOPPER, corpus.BLACKWELL}, k.name
        assert k.upstream_refuses or any(k.expected(a) for a in k.archs), f"{k.name} expects no instruction"


def test_live_text_ignores_helpers_no_kernel_calls():
    text = ('__device__ void used(int a) { asm volatile("ld.global.v4.u32 x;"); }\n'
            '__device__ void unused(int a) { asm volatile("cp.async.cg.shared.global x;"); }\n'
            'extern "C" __global__ void k(int* p) {\n  used(p[0]);\n}\n')
    assert missing(text, [r"ld\.global\.v4"]) == []
    assert missing(text, [r"cp\.async"]) == [r"cp\.async"]
    assert "unused" not in live_text(text)


# ---- lowering with TVM's dispatch: the instruction is in what the kernel runs ---------------------------

@pytest.mark.parametrize("kernel,arch", COMPILING, ids=_ids(COMPILING))
def test_generated_cuda_runs_the_instruction(kernel, arch):
    text = source(kernel, arch)
    absent = missing(text, kernel.expected(arch))
    assert not absent, f"{kernel.name} on {arch}: the kernel never reaches {absent}; live code:\n{live_text(text)}"


@pytest.mark.parametrize("kernel,arch", COMPILING, ids=_ids(COMPILING))
def test_nvcc_builds_a_cubin_for_the_arch(kernel, arch):
    binary = fatbin(kernel, arch)
    assert binary[:4] == build.FATBIN_MAGIC
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}
    elf = binary.find(b"\x7fELF")
    assert elf > 0, f"{kernel.name}: the fatbin holds no cubin"
    assert struct.unpack_from("<H", binary, elf + 18)[0] == build.EM_CUDA


@pytest.mark.parametrize("kernel,arch", REFUSED, ids=_ids(REFUSED))
def test_upstream_refuses_with_its_documented_error(kernel, arch):
    with pytest.raises(Exception, match=kernel.upstream_refuses):
        build.compile_upstream(kernel, arch)


def test_recorded_choices_name_upstream_variants():
    expected = {"copy_ldmatrix_warp_f16": ("copy", "ldstmatrix"), "copy_stmatrix_wg_f16": ("copy", "ldstmatrix"),
                "copy_async_cp_async_cta_f16": ("copy_async", "ldgsts"),
                "copy_async_tma_g2s_f16": ("copy_async", "tma_auto"), "exp_reg_warp_f32": ("exp", "reg"),
                "add_shared_cta_f16": ("add", "smem"), "sum_lanes_warp_f32": ("sum", "local")}
    from tvm.tirx.operator.tile_primitive import dispatcher

    impls = {id(c): c.impl for cases in dispatcher._DISPATCH_TABLE.values() for c in cases}
    for name, (op, variant) in expected.items():
        kernel = corpus.get(name)
        with cuda_choices.recording() as calls:
            build.compile_upstream(kernel, corpus.HOPPER)
        chosen = {c.variant for c in calls if c.op == op}
        assert chosen == {variant}, f"{name}: {[(c.op, c.variant) for c in calls]}"
        assert all(c.scope == kernel.scope for c in calls if c.op == op)
    after = {id(c): c.impl for cases in dispatcher._DISPATCH_TABLE.values() for c in cases}
    assert after == impls, "recording() left wrapped impls in TVM's dispatch table"


# ---- numerics on a GPU ---------------------------------------------------------------------------

RUNNABLE = [k for k in KERNELS if not k.upstream_refuses]


def _case(kernel, arch):
    n_in, n_out = len(kernel.inputs), len(kernel.outputs)

    def args():
        inputs = kernel.random_inputs(np.random.default_rng(sum(map(ord, kernel.name))))
        return inputs + kernel.zero_outputs()

    return _gpu_cases.GpuCase(
        name=f"corpus/{kernel.name}/{arch}", arch=arch, build=lambda: executable(kernel, arch),
        kernel=lambda: build.module(kernel), target=build.target(arch), args=args,
        outputs=tuple(range(n_in, n_in + n_out)),
        expected=lambda host: [np.asarray(o) for o in kernel.reference(*host[:n_in])],
        rtol=kernel.rtol, atol=kernel.atol)


def gpu_cases():
    """Every kernel TVM's own dispatch lowers, for each of its archs (lowered with TVM's cases only)."""
    return [_case(k, arch) for k in RUNNABLE for arch in k.archs]


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", RUNNABLE, ids=[k.name for k in RUNNABLE])
def test_results_match_numpy_on_the_gpu(kernel):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"corpus/{kernel.name}"))


# ---- the dispatch-vs-upstream report, on recorded choices that differ --------------------------------

def _report_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "tools" / "dispatch_vs_upstream.py"
    spec = importlib.util.spec_from_file_location("dispatch_vs_upstream", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call(index, op, variant, declined=(), error=None):
    return {"index": index, "op": op, "scope": "warp", "storage": "shared->local", "dtypes": "float16->float16",
            "target": "cuda sm_90a", "variant": variant, "forced": None, "declined": list(declined),
            "error": error, "text": ""}


def test_report_explains_each_call_where_axe4j_differs():
    report = _report_module().report
    upstream = {"cases": {"copy/ldstmatrix": 10, "copy/vec_auto": 10, "sum/shared": 10}, "results": [
        {"kernel": "k1", "arch": "sm_90a", "error": None,
         "calls": [_call(0, "copy", "ldstmatrix"), _call(1, "copy", "vec_auto")]},
        {"kernel": "k2", "arch": "sm_90a", "error": "Invalid use of undefined variable tid",
         "calls": [_call(0, "sum", None, error="TIRx schedule dispatch failed")]}]}
    axe4j_run = {"cases": {**upstream["cases"], "copy/axe4j-cuda-ldmatrix": 30, "sum/axe4j-cuda-reduce": 30},
                 "results": [
        {"kernel": "k1", "arch": "sm_90a", "error": None,
         "calls": [_call(0, "copy", "axe4j-cuda-ldmatrix"),
                   _call(1, "copy", "vec_auto", declined=[("axe4j-cuda-ldmatrix", "DispatchFail: no 8x8 tile")])]},
        {"kernel": "k2", "arch": "sm_90a", "error": None, "calls": [_call(0, "sum", "axe4j-cuda-reduce")]}]}
    text, total, differing = report(upstream, axe4j_run)
    assert (total, differing) == (3, 2)
    assert "| k1 | 0 | copy | warp | shared->local | sm_90a | `ldstmatrix` | `axe4j-cuda-ldmatrix` | **no** |" in text
    assert "| k1 | 1 | copy | warp | shared->local | sm_90a | `vec_auto` | `vec_auto` | yes |" in text
    assert "| k2 | 0 | sum | warp | shared->local | sm_90a | refused | `axe4j-cuda-reduce` | **no** |" in text
    assert ("k1 sm_90a call 0 (copy, warp): axe4j's table picks `axe4j-cuda-ldmatrix` (priority 30) where TVM "
            "alone picks `ldstmatrix` (priority 10).") in text
    assert ("k2 sm_90a call 0 (sum, warp): no upstream case applies (Invalid use of undefined variable tid); "
            "axe4j's `axe4j-cuda-reduce` (priority 30) lowers it.") in text
    assert "axe4j CUDA cases registered: 2 (copy/axe4j-cuda-ldmatrix, sum/axe4j-cuda-reduce)" in text


def test_references_produce_the_declared_outputs():
    rng = np.random.default_rng(7)
    for kernel in KERNELS:
        inputs = kernel.random_inputs(rng)
        assert [(a.shape, str(a.dtype)) for a in inputs] == [(t.shape, t.dtype) for t in kernel.inputs], kernel.name
        outputs = kernel.reference(*inputs)
        assert [np.asarray(o).shape for o in outputs] == [t.shape for t in kernel.outputs], kernel.name
        for o, t in zip(outputs, kernel.outputs):
            assert str(np.asarray(o).dtype) == t.dtype, f"{kernel.name}: reference gives {np.asarray(o).dtype}"
        host = [tvm.runtime.tensor(a, tvm.cpu()) for a in inputs + kernel.zero_outputs()]
        assert [str(t.dtype) for t in host] == [t.dtype for t in kernel.inputs + kernel.outputs], kernel.name


def test_report_pairs_calls_only_one_side_dispatched():
    report = _report_module().report
    upstream = {"cases": {}, "results": [{"kernel": "k", "arch": "sm_100a", "error": None, "calls": [
        _call(0, "copy", "vec_auto"), _call(1, "sum", "local")]}]}
    extra = dict(_call(1, "fill", "reg"), scope="thread")
    axe4j_run = {"cases": {}, "results": [{"kernel": "k", "arch": "sm_100a", "error": None, "calls": [
        _call(0, "copy", "axe4j-cuda-vec"), extra, dict(_call(2, "sum", "local"))]}]}
    text, total, differing = report(upstream, axe4j_run)
    assert (total, differing) == (3, 2)
    assert "| k | 1 | sum | warp | shared->local | sm_100a | `local` | `local` | yes |" in text
    assert "| k | 1 | fill | thread | shared->local | sm_100a | (no call) | `reg` | **no** |" in text
    assert "dispatched only under axe4j (a tile call inside the expansion axe4j chose)" in text
