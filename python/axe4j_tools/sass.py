"""What ptxas scheduled: CUDA C compiled to a cubin with the PyPI nvcc, disassembled with ``cuobjdump -sass``, and
a check that no instruction reads a wgmma accumulator register while its group may be in flight.

PTX orders reads of wgmma accumulators after ``wgmma.wait_group``, but ptxas schedules SASS: ``HGMMA ... Rb`` (``QGMMA``
for FP8 operands) writes
registers Rb .. Rb + N/2 - 1 asynchronously and ``WARPGROUP.DEPBAR.LE gsb0, 0x0`` is where they are final
(``0x1`` leaves the latest group in flight). ``accumulator_reads_in_flight`` walks the instructions in address order
and reports every non-HGMMA instruction that reads such a register before the next ``DEPBAR.LE gsb0, 0x0``.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from axe4j._cuda import pip_nvcc

_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_HGMMA = re.compile(r"[HQ]GMMA\.64x(\d+)x\d+\S*\s+R(\d+),")   # HGMMA: 16-bit operands; QGMMA: FP8
_REGISTER = re.compile(r"\bR(\d+)\b")


def tool(name: str) -> Path | None:
    """cuobjdump or nvdisasm beside the PyPI nvcc (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm), None if absent."""
    path = pip_nvcc().parent / name
    return path if path.is_file() else None


def cubin(source: str, arch: str) -> tuple[bytes, str]:
    """The cubin nvcc makes of ``source`` for ``arch`` (-O3), and ptxas's -v report."""
    with tempfile.TemporaryDirectory() as folder:
        cu, out = Path(folder) / "kernel.cu", Path(folder) / "kernel.cubin"
        cu.write_text(source)
        done = subprocess.run([str(pip_nvcc()), "-cubin", "-O3", f"-arch={arch}", "-Xptxas", "-v", "-w",
                               "-o", str(out), str(cu)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nvcc -cubin for {arch} failed: {done.stderr[-2000:]}")
        return out.read_bytes(), done.stderr


def disassemble(binary: bytes) -> list[tuple[int, str]]:
    """(address, instruction text without the trailing ';') in address order."""
    cuobjdump = tool("cuobjdump")
    if cuobjdump is None or tool("nvdisasm") is None:
        raise FileNotFoundError("cuobjdump/nvdisasm are not beside the PyPI nvcc; ci/requirements.txt pins them")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.cubin"
        path.write_bytes(binary)
        done = subprocess.run([str(cuobjdump), "-sass", str(path)], capture_output=True, text=True,
                              env={"PATH": str(cuobjdump.parent)})
        if done.returncode != 0:
            raise RuntimeError(f"cuobjdump -sass failed: {done.stderr[-2000:]}")
    return [(int(m.group(1), 16), m.group(2)) for m in map(_INSTRUCTION.search, done.stdout.splitlines()) if m]


def _reads(text: str) -> set[int]:
    """Registers an instruction reads: every register after the destination, and the destination too when it is an
    address (stores) or the instruction writes no register (``ST*``, ``RED``, ``ATOM``, ``BRA``...)."""
    body = re.sub(r"^@!?U?P\w+\s+", "", text)
    opcode, _, operands = body.partition(" ")
    parts = [p.strip() for p in operands.split(",")] if operands else []
    if not parts:
        return set()
    stores = opcode.split(".")[0] in ("ST", "STS", "STG", "STL", "STSM", "RED", "ATOM", "ATOMS", "BRA", "SYNCS")
    read = parts if stores or parts[0].startswith("[") else parts[1:]
    return {int(r) for p in read for r in _REGISTER.findall(p)}


def accumulator_reads_in_flight(instructions: list[tuple[int, str]]) -> list[str]:
    """Instructions (as '/*addr*/ text') reading an accumulator register of an HGMMA not yet waited for."""
    in_flight: set[int] = set()
    found = []
    for address, text in instructions:
        hgmma = _HGMMA.search(text)
        if hgmma:
            n, base = int(hgmma.group(1)), int(hgmma.group(2))
            in_flight |= set(range(base, base + n // 2))
            continue
        if "WARPGROUP.DEPBAR.LE" in text and text.rstrip().endswith("0x0"):
            in_flight.clear()
            continue
        if in_flight and _reads(text) & in_flight:
            found.append(f"/*{address:04x}*/ {text}")
    return found
