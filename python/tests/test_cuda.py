"""CUDA C from TVM's TIRx pipeline compiles to a fatbin for Hopper and Blackwell through the compile hook (no GPU)."""

import os
import re
import shutil
import struct

import pytest
import tvm
from tvm.script import tirx as T

import axe4j


@T.prim_func
def add_one(A: T.Buffer((256,), "float32")):
    bx = T.launch_thread("blockIdx.x", 2)
    tx = T.launch_thread("threadIdx.x", 128)
    A[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1.0)


FATBIN_MAGIC = bytes.fromhex("50ed55ba")
EM_CUDA = 190  # ELF e_machine of a cubin


@pytest.fixture
def pip_nvcc(monkeypatch):
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    monkeypatch.delenv("TVM_CUDA_COMPILE_MODE", raising=False)
    return axe4j.use_pip_nvcc()


def test_use_pip_nvcc_puts_the_wheel_nvcc_first_once(pip_nvcc):
    assert pip_nvcc.endswith(os.path.join("nvidia", "cu13", "bin", "nvcc"))
    assert shutil.which("nvcc") == pip_nvcc
    assert os.environ["TVM_CUDA_COMPILE_MODE"] == "nvcc"
    axe4j.use_pip_nvcc()
    assert os.environ["PATH"].split(os.pathsep).count(os.path.dirname(pip_nvcc)) == 1


def test_use_pip_nvcc_keeps_a_chosen_compile_mode(monkeypatch):
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    monkeypatch.setenv("TVM_CUDA_COMPILE_MODE", "nvrtc")
    axe4j.use_pip_nvcc()
    assert os.environ["TVM_CUDA_COMPILE_MODE"] == "nvrtc"


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_tirx_cuda_kernel_compiles_through_the_callback(pip_nvcc, arch):
    target = tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")
    executable = tvm.compile(add_one, target=target, tir_pipeline="tirx")
    device_module = executable.mod.imports[0]
    assert device_module.kind == "cuda"
    source = device_module.inspect_source("cuda")
    assert "__global__" in source
    with target:
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}
    elf = binary.find(b"\x7fELF")
    assert elf > 0, "the fatbin holds no cubin"
    assert struct.unpack_from("<H", binary, elf + 18)[0] == EM_CUDA


def test_missing_wheel_nvcc_is_reported_with_the_setup_command(monkeypatch):
    from axe4j import _cuda

    monkeypatch.setattr(_cuda.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(axe4j.SetupError, match="run ci/setup-python.sh"):
        _cuda.pip_nvcc()
