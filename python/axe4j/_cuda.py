"""CUDA compilation with the nvcc that PyPI's ``nvidia-cuda-nvcc`` wheel installs.

TVM turns CUDA C into a binary through the Python global ``tvm_callback_cuda_compile``
(``tvm/support/nvcc.py``). By default that callback uses NVRTC from ``cuda-bindings``; with
``TVM_CUDA_COMPILE_MODE=nvcc`` it runs ``nvcc`` from ``PATH`` and returns a fatbin, and TVM finds
the toolkit root (libdevice, version) as the folder above that ``nvcc``. The wheel puts nvcc in
``<site-packages>/nvidia/cu13/bin``, which no ``PATH`` names; ``use_pip_nvcc()`` adds it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ._errors import SetupError

COMPILE_MODE_ENV = "TVM_CUDA_COMPILE_MODE"


def pip_nvcc() -> Path:
    """Path of the nvcc installed by the ``nvidia-cuda-nvcc`` wheel (CUDA 13)."""
    spec = importlib.util.find_spec("nvidia.cu13")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        nvcc = Path(folder) / "bin" / "nvcc"
        if nvcc.is_file() and os.access(nvcc, os.X_OK):
            return nvcc
    raise SetupError("no nvcc from the nvidia-cuda-nvcc wheel: looked for nvidia/cu13/bin/nvcc in "
                     f"{folders or 'site-packages (package nvidia.cu13 not installed)'}; run ci/setup-python.sh")


def use_pip_nvcc() -> str:
    """Puts the wheel's nvcc first on ``PATH`` and, unless set, ``TVM_CUDA_COMPILE_MODE=nvcc``; returns nvcc's path."""
    nvcc = pip_nvcc()
    folder = str(nvcc.parent)
    entries = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry and entry != folder]
    os.environ["PATH"] = os.pathsep.join([folder, *entries])
    os.environ.setdefault(COMPILE_MODE_ENV, "nvcc")
    return str(nvcc)
