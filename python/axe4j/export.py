"""Exporting compiled modules for a runtime without a compiler: the library plus its CUDA code compiled.

TVM 0.27 keeps a CUDA module's C++ source in the exported library and compiles it when the library is loaded, through
the global ``tvm_callback_cuda_compile`` that TVM's Python registers. A JVM service (or any process without TVM's
Python) has no such callback; axe4j's JVM runtime registers one that serves precompiled fatbins named by the SHA-256
of the source they were made from (``org.axe4j.tvm.cuda.CudaBinaries``). ``export_library`` writes them::

    gemm.so                      the library, as ``Executable.export_library`` writes it
    gemm.so.fatbins/
        <sha256 of source>.fatbin   nvcc's fatbin of each CUDA module's source, for the target's arch
        manifest.json               {"arch": ..., "fatbins": [{"sha256", "bytes", "kernels"}], "nvcc": ...}

Content addressing means a fatbin can only serve the source it was compiled from: an edited library fails loudly at
load time instead of running stale code.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

SIDECAR_SUFFIX = ".fatbins"
KERNEL_NAME = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")


def sidecar_of(path: str | os.PathLike) -> Path:
    """The fatbin folder beside a library: ``gemm.so`` has ``gemm.so.fatbins/``."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def cuda_sources(executable) -> list[str]:
    """The CUDA C of every ``cuda`` module the executable imports, depth first."""
    sources, stack = [], list(executable.mod.imports)
    while stack:
        module = stack.pop(0)
        if module.kind == "cuda":
            sources.append(module.inspect_source("cuda"))
        stack[:0] = list(module.imports)
    return sources


def export_library(executable, path: str | os.PathLike, target=None) -> Path:
    """Writes ``path`` with ``executable.export_library`` and, when it holds CUDA modules, ``path.fatbins/`` with
    nvcc's fatbin of each module's source for ``target``'s arch (the CUDA target it was compiled for; required then).
    Returns the library's path. nvcc is the ``nvidia-cuda-nvcc`` wheel's (``axe4j.use_pip_nvcc``)."""
    import tvm

    from ._cuda import use_pip_nvcc
    from ._errors import SetupError

    path = Path(path)
    executable.export_library(str(path))
    sidecar = sidecar_of(path)
    if sidecar.exists():
        shutil.rmtree(sidecar)
    sources = cuda_sources(executable)
    if not sources:
        return path
    if target is None or target.kind.name != "cuda":
        raise ValueError(f"export_library({path}): the executable holds {len(sources)} CUDA module(s); pass the CUDA "
                         f"target it was compiled for (e.g. Target({{'kind': 'cuda', 'arch': 'sm_90a'}}, host='llvm')), "
                         f"not {target}")
    arch = str(target.arch)
    nvcc = use_pip_nvcc()
    callback = tvm.get_global_func("tvm_callback_cuda_compile", allow_missing=True)
    if callback is None:
        raise SetupError("TVM's tvm_callback_cuda_compile is not registered (import tvm.support.nvcc)")
    sidecar.mkdir(parents=True)
    entries = []
    for source in sources:
        with target:
            binary = bytes(callback(source))
        sha = hashlib.sha256(source.encode()).hexdigest()
        (sidecar / f"{sha}.fatbin").write_bytes(binary)
        kernels = sorted(set(KERNEL_NAME.findall(source)))
        entries.append({"sha256": sha, "bytes": len(binary), "kernels": kernels})
    manifest = {"library": path.name, "arch": arch, "fatbins": entries, "nvcc": nvcc,
                "tvm": tvm.__version__}
    (sidecar / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return path
