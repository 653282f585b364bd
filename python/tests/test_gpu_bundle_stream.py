"""The GPU bundle's ctypes binding sets the stream TVM launches on (``Runtime.set_stream``: TVMFFIEnvSetStream),
as moe_bench.py does before it captures axe4j's kernels into a CUDA graph on PyTorch's stream. The stream table
is tvm-ffi's, on the host: checked here with this venv's libtvm_ffi.so and libtvm_runtime.so, no GPU."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_set_stream_is_what_the_runtime_reads_back_and_returns_the_previous(tmp_path):
    import tvm
    import tvm_ffi

    ffi_lib = Path(tvm_ffi.__file__).parent / "lib" / "libtvm_ffi.so"
    runtime_lib = Path(tvm.__file__).parent / "lib" / "libtvm_runtime.so"
    if not (ffi_lib.exists() and runtime_lib.exists()):
        pytest.skip(f"{ffi_lib} or {runtime_lib} is not installed")
    for lib in (ffi_lib, runtime_lib):
        os.symlink(lib, tmp_path / lib.name)
    spec = importlib.util.spec_from_file_location("tvm_ffi_ctypes_under_test",
                                                  ROOT / "tools" / "gpu-bundle" / "tvm_ffi_ctypes.py")
    ffi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ffi)
    runtime = ffi.Runtime(str(tmp_path), cuda=False)
    assert runtime.stream() == 0                              # the legacy default stream
    assert runtime.set_stream(0x7F00) == 0
    assert runtime.stream() == 0x7F00
    assert runtime.set_stream(0x7F40, device_id=1) == 0       # per device
    assert runtime.stream() == 0x7F00 and runtime.stream(device_id=1) == 0x7F40
    assert runtime.set_stream(0) == 0x7F00 and runtime.stream() == 0
