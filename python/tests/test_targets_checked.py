"""Targets are checked before any lowering (``axe4j.target_check``), and a failed export leaves nothing behind and
starts its message with the compiler's cause."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
import tvm_ffi
from tvm.script import tirx as T

import axe4j
from axe4j import export, target_check
from axe4j.target_check import TargetError


@T.prim_func
def add_one(A: T.Buffer((256,), "float32")):
    bx = T.launch_thread("blockIdx.x", 2)
    tx = T.launch_thread("threadIdx.x", 128)
    A[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1.0)


@T.prim_func
def double(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        B[i] = A[i] * T.float32(2.0)


def test_cpu_is_the_host_target_and_runs():
    assert str(target_check.checked("cpu")) == str(axe4j.host_target())
    assert str(target_check.checked({"kind": "cpu"})) == str(axe4j.host_target())
    executable = axe4j.compile(double, "cpu")
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, dtype="float32")
    executable(tvm.runtime.tensor(a), out := tvm.runtime.tensor(b))
    np.testing.assert_array_equal(out.numpy(), a * 2)


@pytest.mark.parametrize("target", ["cuda", {"kind": "cuda"}, {"kind": "cuda", "host": "llvm"}])
def test_cuda_without_an_arch_is_refused_before_lowering(target, monkeypatch):
    from axe4j import transform

    monkeypatch.setattr(transform, "run_layout_passes", lambda *a, **k: pytest.fail("lowering started"))
    with pytest.raises(TargetError, match=r"names no CUDA arch: TVM would compile for sm_50.*sm_90a"):
        axe4j.compile(add_one, target)


@pytest.mark.parametrize("arch, reason", [
    ("sm_91a", r"arch sm_91a is not one the CUDA toolkit builds \(nvcc lists sm_75, sm_80"),
    ("sm_70", r"arch sm_70 is not one the CUDA toolkit builds"),
    ("sm_80a", r"the 'a' \(arch-specific\) suffix exists from sm_90a on; write sm_80"),
    ("sm_90f", r"the 'f' \(family\) suffix exists from sm_100f on; write sm_90"),
    ("sm90a", r"arch 'sm90a' is not of the form sm_<major><minor>\[a\|f\]"),
    ("compute_90", r"is not of the form"),
])
def test_unknown_or_unsupported_cuda_arch_is_refused_by_name(arch, reason):
    with pytest.raises(TargetError, match=reason):
        axe4j.compile(add_one, {"kind": "cuda", "arch": arch})
    if arch.startswith("sm_"):   # a Target object too (TVM builds none for other spellings)
        with pytest.raises(TargetError, match=reason):
            target_check.checked(tvm.target.Target({"kind": "cuda", "arch": arch}))


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_100f", "sm_120a"])
def test_archs_nvcc_builds_pass(arch):
    assert str(target_check.checked({"kind": "cuda", "arch": arch}).attrs["arch"]) == arch


def test_nvcc_list_is_read_from_the_toolkit():
    arches = target_check.nvcc_arches()
    assert "sm_90" in arches and "sm_100" in arches and "sm_50" not in arches


def test_unknown_kind_names_the_targets_axe4j_lowers_for():
    with pytest.raises(TargetError, match=r"target 'gpu': TVM cannot build it .*'cpu' \(= axe4j.host_target\(\)\)"):
        axe4j.compile(double, "gpu")


def test_compiler_cause_is_nvccs_fatal_line_first():
    message = "Traceback (most recent call last):\n" + "  File x\n" * 300 + (
        "Compilation error:\nnvcc warning : something\nnvcc fatal   : Unsupported gpu architecture 'compute_91a'\n")
    assert export.compiler_cause(message) == "nvcc fatal   : Unsupported gpu architecture 'compute_91a'"
    assert export.compiler_cause("kernel.cu(3): error: identifier \"x\" is undefined\nmore") == (
        'kernel.cu(3): error: identifier "x" is undefined')
    assert export.compiler_cause("plain failure\nsecond") == "plain failure"


@pytest.fixture
def nvcc_for_an_arch_it_does_not_build():
    """TVM's CUDA compile callback, run for sm_91a: nvcc's real failure, as an export with a wrong arch meets it."""
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    original = tvm.get_global_func("tvm_callback_cuda_compile")

    def failing(code):
        return nvcc.compile_cuda(code, target_format="fatbin", arch="sm_91a", compiler="nvcc")

    tvm_ffi.register_global_func("tvm_callback_cuda_compile", failing, override=True)
    yield
    tvm_ffi.register_global_func("tvm_callback_cuda_compile", original, override=True)


def test_failed_export_leaves_no_files_and_leads_with_nvccs_cause(tmp_path, nvcc_for_an_arch_it_does_not_build):
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    executable = axe4j.compile(add_one, target)
    path = tmp_path / "k.so"
    with pytest.raises(export.ExportError) as raised:
        axe4j.export_library(executable, path, target)
    first = str(raised.value).splitlines()[0]
    assert first.startswith(f"export_library({path}): nvcc fatal") and "sm_91a" in first, first
    assert sorted(tmp_path.iterdir()) == []


def test_export_to_an_arch_nvcc_lacks_is_refused_before_writing(tmp_path):
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    executable = axe4j.compile(add_one, target)
    with pytest.raises(TargetError, match="sm_91a is not one the CUDA toolkit builds"):
        axe4j.export_library(executable, tmp_path / "k.so", tvm.target.Target({"kind": "cuda", "arch": "sm_91a"}))
    assert sorted(tmp_path.iterdir()) == []
