"""Exporting compiled modules for a runtime without a compiler: the library plus its CUDA code compiled.

TVM 0.27 keeps a CUDA module's C++ source in the exported library and compiles it when the library is loaded, through
the global ``tvm_callback_cuda_compile`` that TVM's Python registers. A JVM service (or any process without TVM's
Python) has no such callback; axe4j's JVM runtime registers one that serves precompiled fatbins named by the SHA-256
of the source they were made from (``org.axe4j.tvm.cuda.CudaBinaries``). ``export_library`` writes them::

    gemm.so                      the library, as ``Executable.export_library`` writes it
    gemm.so.fatbins/
        <sha256 of source>.fatbin   nvcc's fatbin of each CUDA module's source, for the target's arch
        manifest.json               {"arch": ..., "fatbins": [{"sha256", "bytes", "kernels"}], "nvcc": ...}
    gemm.so.manifest.json        each function's arguments (shape, dtype, input or output) and the device, for a
                                 service that loads any module (``axe serve``; ``axe4j.manifest``)

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


def export_library(executable, path: str | os.PathLike, target=None, *, functions=None, roles=None) -> Path:
    """Writes ``path`` with ``executable.export_library`` and, when it holds CUDA modules, ``path.fatbins/`` with
    nvcc's fatbin of each module's source for ``target``'s arch (the CUDA target it was compiled for; required then).
    Returns the library's path. nvcc is the ``nvidia-cuda-nvcc`` wheel's (``axe4j.use_pip_nvcc``).

    Beside it goes ``path.manifest.json`` (``axe4j.manifest``) describing the PrimFuncs ``functions`` (an IRModule,
    a PrimFunc or a dict of them; default: those ``axe4j.compile`` was given, kept on its executable). An argument
    the function writes is an output, the others inputs; ``roles={function: {argument: role}}`` overrides that
    (``"inout"`` for one read and written in place). An executable from ``tvm.compile`` without ``functions=`` gets
    no manifest, since the compiled library no longer holds the argument shapes.

    All or nothing: when a step fails, neither the library nor its fatbin folder nor its manifest is left behind,
    and the error (``ExportError``) starts with the compiler's own cause (``nvcc fatal: ...``, ``error: ...``)."""
    from . import manifest as manifests

    path = Path(path)
    sidecar = sidecar_of(path)
    described = manifests.manifest_of(path)
    _check_target(executable, path, target)
    functions = functions if functions is not None else getattr(executable, "functions", None)
    if described.exists():
        described.unlink()
    manifest = None
    if functions is not None:   # checked before anything is written: a bad roles= leaves no files
        cuda_arch = str(target.attrs.get("arch", "")) if cuda_sources(executable) else None
        compiled_for = target if target is not None else getattr(executable, "target", None)
        manifest = manifests.build(path, functions, compiled_for, cuda_arch, roles)
    elif roles is not None:
        raise ValueError(f"export_library({path}): roles= needs the PrimFuncs (functions=, or an executable "
                         "from axe4j.compile)")
    try:
        written_path = _export(executable, path, sidecar, target)
        if manifest is not None:
            manifests.write(path, manifest)
        return written_path
    except Exception as error:
        for written in (path, sidecar, described):
            if written.is_dir():
                shutil.rmtree(written, ignore_errors=True)
            elif written.exists():
                written.unlink()
        if type(error).__name__ == "SetupError":
            raise
        raise ExportError(f"export_library({path}): {compiler_cause(str(error))}\n(nothing was written; "
                          f"TVM's message follows)\n{error}") from error


class ExportError(RuntimeError):
    """An export that failed; its first line is the compiler's cause."""


# The lines of a compiler failure that say why, most telling first: nvcc's fatal errors, then source errors.
_CAUSES = (re.compile(r"nvcc fatal\s*:.*"), re.compile(r"ptxas (?:fatal|error)\s*:.*"),
           re.compile(r"[^\n]*\berror\b\s*:.*", re.IGNORECASE))


def compiler_cause(message: str) -> str:
    """The line of ``message`` that names why compilation failed (nvcc's ``fatal`` first), else its first line."""
    for pattern in _CAUSES:
        found = pattern.search(message)
        if found:
            return found.group(0).strip()
    lines = [line for line in message.strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else "export failed"


def _check_target(executable, path: Path, target) -> None:
    sources = cuda_sources(executable)
    if sources and (target is None or target.kind.name != "cuda"):
        raise ValueError(f"export_library({path}): the executable holds {len(sources)} CUDA module(s); pass the CUDA "
                         f"target it was compiled for (e.g. Target({{'kind': 'cuda', 'arch': 'sm_90a'}}, host='llvm')), "
                         f"not {target}")
    if sources:
        from .target_check import check_cuda_arch

        check_cuda_arch(target, str(target.attrs.get("arch", "")))


def _export(executable, path: Path, sidecar: Path, target) -> Path:
    import tvm

    from ._cuda import use_pip_nvcc
    from ._errors import SetupError

    sources = cuda_sources(executable)
    executable.export_library(str(path))
    if sidecar.exists():
        shutil.rmtree(sidecar)
    if not sources:
        return path
    arch = str(target.arch)
    nvcc = use_pip_nvcc()
    callback = tvm.get_global_func("tvm_callback_cuda_compile", allow_missing=True)
    if callback is None:
        raise SetupError("TVM's tvm_callback_cuda_compile is not registered (import tvm.support.nvcc)")
    fatbins = []
    for source in sources:
        with target:
            binary = bytes(callback(source))
        fatbins.append((source, binary))
    sidecar.mkdir(parents=True)
    entries = []
    for source, binary in fatbins:
        sha = hashlib.sha256(source.encode()).hexdigest()
        (sidecar / f"{sha}.fatbin").write_bytes(binary)
        kernels = sorted(set(KERNEL_NAME.findall(source)))
        entries.append({"sha256": sha, "bytes": len(binary), "kernels": kernels})
    manifest = {"library": path.name, "arch": arch, "fatbins": entries, "nvcc": nvcc,
                "tvm": tvm.__version__}
    (sidecar / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return path
