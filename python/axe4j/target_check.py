"""Targets checked before any lowering: ``axe4j.compile`` and ``axe4j.explain`` take a target through ``checked``.

- ``"cpu"`` is an alias of ``axe4j.host_target()`` (``llvm`` with this machine's ``mcpu``); TVM knows no kind ``cpu``.
- A CUDA target must name its arch. TVM's bare ``"cuda"`` means ``sm_50`` (with a warning), which CUDA 13's nvcc no
  longer builds: refused, naming the arches to choose from.
- A CUDA arch is ``sm_<major><minor>`` with an optional ``a`` (arch-specific features: sm_90 and later) or ``f``
  (family: sm_100 and later) suffix, and its base must be one nvcc lists (``nvcc --list-gpu-code``). Anything else is
  refused here, before lowering, instead of at export with nvcc's "Unsupported gpu architecture" at the end of a
  long error.
- A target TVM cannot build is refused with the targets axe4j lowers for.
"""

from __future__ import annotations

import functools
import re
import subprocess

ARCH = re.compile(r"sm_(\d+)([af]?)")
# The CUDA 13 toolkit's list, used when nvcc is not installed (the check is then only as new as this list).
KNOWN_ARCHES = ("sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110",
                "sm_120", "sm_121")
EXAMPLES = "{'kind': 'cuda', 'arch': 'sm_90a'} (H100/H200), 'sm_80' (A100), 'sm_100a' (B200)"


def host_target():
    """The ``llvm`` target for this machine's CPU (``mcpu`` = LLVM's name for it, e.g. ``znver3``).

    Plain ``"llvm"`` is TVM's generic x86-64: SSE2 only, no FMA, so a 16-lane fp32 loop runs as four SSE
    operations and a GEMM reaches about a quarter of what the same plan does with AVX2 and FMA. Use this target
    for code that runs where it is compiled; use an explicit ``mcpu`` for a module exported to other machines."""
    import tvm

    return tvm.target.Target({"kind": "llvm", "mcpu": str(tvm.target.codegen.llvm_get_system_cpu())})


class TargetError(ValueError):
    """A target that axe4j refuses before lowering, with the reason and what to write instead."""


def checked(target):
    """``target`` as ``tvm.compile`` should get it: ``"cpu"`` becomes the host target, a CUDA target's arch is
    checked; a string or dict becomes a ``tvm.target.Target``. Raises ``TargetError`` naming the target."""
    import tvm

    if isinstance(target, str) and target.strip() == "cpu":
        return host_target()
    if isinstance(target, dict) and target.get("kind") == "cpu":
        return host_target()
    written = _arch_written(target)
    if written is not None:   # before TVM, which fills in sm_50 or refuses a malformed arch with its own words
        check_cuda_arch(target, written)
    try:
        built = target if isinstance(target, tvm.target.Target) else tvm.target.Target(target)
    except Exception as error:   # noqa: BLE001  (TVM's own ValueError/TVMError: restated with the way forward)
        raise TargetError(f"target {target!r}: TVM cannot build it ({_first_line(error)}); axe4j lowers for 'llvm', "
                          f"'cpu' (= axe4j.host_target()), {{'kind': 'llvm', 'mcpu': ...}} and CUDA targets such as "
                          f"{EXAMPLES}") from None
    if built.kind.name == "cuda" and written is None:
        check_cuda_arch(target, str(built.attrs.get("arch", "")))
    return built


def check_cuda_arch(target, arch: str) -> None:
    """Raises ``TargetError`` unless ``arch`` is one nvcc builds, with a suffix that arch has."""
    if not arch:
        raise TargetError(f"target {target!r} names no CUDA arch: TVM would compile for sm_50, which CUDA 13 no "
                          f"longer builds. Name the GPU's arch, e.g. {EXAMPLES}")
    match = ARCH.fullmatch(arch)
    if match is None:
        raise TargetError(f"target {target!r}: arch {arch!r} is not of the form sm_<major><minor>[a|f] "
                          f"(e.g. sm_80, sm_90a, sm_100a)")
    number, suffix = int(match.group(1)), match.group(2)
    base = f"sm_{number}"
    supported = nvcc_arches()
    if base not in supported:
        raise TargetError(f"target {target!r}: arch {arch} is not one the CUDA toolkit builds "
                          f"(nvcc lists {', '.join(supported)})")
    if suffix == "a" and number < 90:
        raise TargetError(f"target {target!r}: arch {arch}: the 'a' (arch-specific) suffix exists from sm_90a on; "
                          f"write {base}")
    if suffix == "f" and number < 100:
        raise TargetError(f"target {target!r}: arch {arch}: the 'f' (family) suffix exists from sm_100f on; "
                          f"write {base}")


@functools.lru_cache(maxsize=1)
def nvcc_arches() -> tuple[str, ...]:
    """``nvcc --list-gpu-code``'s sm_ entries (the wheel's nvcc, else the one on PATH), else ``KNOWN_ARCHES``."""
    from ._cuda import pip_nvcc

    try:
        nvcc = str(pip_nvcc())
    except Exception:   # noqa: BLE001  (no nvcc wheel: the one on PATH, if any)
        nvcc = "nvcc"
    try:
        out = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return KNOWN_ARCHES
    found = tuple(word for word in out.split() if ARCH.fullmatch(word))
    return found or KNOWN_ARCHES


def _arch_written(target) -> str | None:
    """The arch the caller wrote, when ``target`` is a string or dict (TVM fills ``sm_50`` in for a missing one)."""
    if isinstance(target, dict):
        return str(target.get("arch", "")) if target.get("kind") == "cuda" else None
    if isinstance(target, str) and target.strip() == "cuda":
        return ""
    return None


def _first_line(error) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
