"""Where the TVM libraries already loaded into this process live.

Java must open the very same ``libtvm_ffi.so`` as Python: the table of global functions lives
inside that file, and a second copy of it would be a second, separate table. ``import tvm`` loads
``libtvm_ffi.so`` (through the ``tvm_ffi`` package), then ``libtvm_runtime.so`` and
``libtvm_compiler.so``; the folders of the files it actually opened are handed to Java.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._errors import SetupError


def loaded_library_dirs() -> list[str]:
    """Folders of the loaded ``libtvm_ffi.so`` and ``libtvm_runtime.so``, in that order, without repeats."""
    import tvm_ffi

    from . import _lane

    tvm = _lane.tvm()

    ffi_file = _handle_path(getattr(tvm_ffi, "LIB", None)) or tvm_ffi.libinfo.find_libtvm_ffi()
    loaded = getattr(getattr(tvm, "base", None), "_LOADED_LIBS", {})
    runtime_file = _handle_path(loaded.get("tvm_runtime")) or tvm.libinfo.find_libtvm_runtime()
    _require_single_copy("libtvm_ffi.so", ffi_file)
    dirs: list[str] = []
    for path in (ffi_file, runtime_file):
        folder = str(Path(path).resolve().parent)
        if folder not in dirs:
            dirs.append(folder)
    return dirs


def _handle_path(handle) -> str | None:
    """The file a ``ctypes.CDLL`` was opened from, if it is one."""
    name = getattr(handle, "_name", None)
    return name if isinstance(name, str) and os.path.isfile(name) else None


def _require_single_copy(basename: str, expected: str) -> None:
    """Fails if the process maps ``basename`` from a file other than ``expected`` (two registries)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            mapped = {line.split()[-1] for line in maps if line.rstrip().endswith("/" + basename)}
    except OSError:
        return
    real = {os.path.realpath(p) for p in mapped}
    if len(real) > 1 or (real and os.path.realpath(expected) not in real):
        raise SetupError(f"this process has {basename} loaded from {sorted(real)}, "
                         f"but tvm_ffi uses {expected}: two copies mean two separate function registries")
