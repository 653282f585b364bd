"""What the CPU rules need to know of an ``llvm`` target: its vector ISA, the caches and the cores.

The ISA comes from the target itself (``mcpu`` and ``mattr``, through LLVM's feature table), so a kernel
compiled for ``{"kind": "llvm", "mcpu": "haswell"}`` gets the AVX2 plan on any machine; plain ``"llvm"``
(generic x86-64, SSE2) reports ``sse``. Cache sizes and the core count are this machine's (the one compiling is
the one running, as for ``axe4j.host_target()``): L1d and L2 of cpu0 from
``/sys/devices/system/cpu/cpu0/cache``, else :data:`DEFAULT_CACHE_BYTES`; cores = TVM's thread pool size.
"""

from __future__ import annotations

from pathlib import Path

# (vector ISA, feature LLVM must report, vector bits, vector registers), widest first
ISAS = (
    ("avx512", "avx512f", 512, 32),
    ("avx2", "avx2", 256, 16),
    ("avx", "avx", 256, 16),
)
SSE = ("sse", None, 128, 16)

# a common x86 core when the OS reports nothing: 32 KiB L1d, 1 MiB L2
DEFAULT_CACHE_BYTES = {"l1d": 32 * 1024, "l2": 1024 * 1024}

CACHE_ROOT = Path("/sys/devices/system/cpu/cpu0/cache")


def isa_of(target) -> tuple[str, int, int]:
    """(ISA name, vector bits, vector registers) of an llvm ``target`` from its ``mcpu``/``mattr``."""
    import tvm

    has = tvm.target.codegen.target_has_features
    for name, feature, bits, registers in ISAS:
        if has([feature], target):
            return name, bits, registers
    return SSE[0], SSE[2], SSE[3]


def cache_bytes(root: Path = CACHE_ROOT) -> dict[str, int]:
    """{"l1d": bytes, "l2": bytes} of one core, from sysfs ``index*/{level,type,size}``; defaults where absent."""
    found = dict(DEFAULT_CACHE_BYTES)
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _size_bytes((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if level == 1 and kind == "Data":
            found["l1d"] = size
        elif level == 2 and kind in ("Unified", "Data"):
            found["l2"] = size
    return found


def _size_bytes(text: str) -> int:
    """sysfs sizes: ``48K``, ``2048K``, ``1M``."""
    scale = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}
    return int(text[:-1]) * scale[text[-1]] if text[-1] in scale else int(text)


def cores() -> int:
    """Threads TVM's CPU pool runs a parallel loop on (``TVM_NUM_THREADS``, else its own default)."""
    import tvm

    return max(1, int(tvm.get_global_func("runtime.NumThreads")()))


def describe(target) -> dict:
    """The ``cpu`` entry of a request's params (see ``CpuTarget`` in the Java rules)."""
    isa, bits, registers = isa_of(target)
    caches = cache_bytes()
    return {"mcpu": str(target.attrs.get("mcpu", "")), "isa": isa, "vector_bits": bits,
            "vector_registers": registers, "cores": cores(), "l1d_bytes": caches["l1d"], "l2_bytes": caches["l2"],
            "f16c": has_f16c(target)}


def has_f16c(target) -> bool:
    """Whether ``target`` converts float16 to float32 in vectors (F16C ``vcvtph2ps``); plain ``"llvm"`` does not,
    and LLVM then converts each element with a call to ``__extendhfsf2``."""
    import tvm

    return bool(tvm.target.codegen.target_has_features(["f16c"], target))
