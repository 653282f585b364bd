"""The PTX instruction mix of a kernel: how many of each data-moving or arithmetic instruction its PTX holds, with
the spellings that do not change the instruction folded together, so that the two lanes' PTX compare.

Counted: ``ld``/``st`` of the global, shared and local spaces (as ``ld.global.v4.b32``: the space, the vector width
and the element's bit width; cache hints such as ``.nc`` and the type's kind, f32/u32/b32, dropped: nvcc moves a
float4 as ``.v4.u32`` where the explicit instruction says ``.v4.f32``, the same 16-byte access), ``cp.async``,
``cvt``, barriers, the data shuffles (``shfl.sync.bfly``, ``.down``, ``.up``), ``ldmatrix``/``stmatrix``, ``mma``,
``mbarrier`` operations, proxy fences, ``wgmma``, ``tcgen05`` (MMA, tensor-memory loads, stores, allocation, waits),
and the floating-point arithmetic (``add.f32``, ``ex2.approx.ftz.f32``, ...). Not counted: parameter loads, moves,
and the index arithmetic, each lane computing addresses its own way (integer ops, and 0.27's ``shfl.sync.idx`` that
makes the warp index uniform)."""

from __future__ import annotations

import re
from collections import Counter

# one statement's opcode: "{ cvt ...}" (inline asm), "@%p1 bra", "@ps0 wgmma..."
INSTRUCTION = re.compile(r"^\s*\{?\s*(?:@!?%?\w+\s+)?([a-z][\w.:]*)")
MEMORY = re.compile(r"^(ld|st)\.(.*)$")
FLOAT_TYPES = (".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64")
KEPT = ("cvt.", "cp.async", "bar.", "barrier.", "shfl.sync.bfly", "shfl.sync.down", "shfl.sync.up", "ldmatrix.",
        "stmatrix.", "mma.", "mbarrier.", "fence.proxy", "wgmma.", "tcgen05.")


def _memory(opcode: str):
    match = MEMORY.match(opcode)
    if match is None:
        return None
    parts = match.group(2).replace("shared::cta", "shared").split(".")
    space = next((p for p in parts if p in ("global", "shared", "local")), None)
    if space is None:
        return None   # ld.param and the generic space
    vector = next((p for p in parts if re.fullmatch(r"v\d", p)), None)
    bits = re.fullmatch(r"[a-z]+(\d+)", parts[-1])
    return ".".join(x for x in (match.group(1), space, vector, f"b{bits.group(1)}" if bits else parts[-1]) if x)


def mix(ptx: str) -> dict[str, int]:
    """{normalized opcode: count} of the PTX text."""
    counts: Counter = Counter()
    # an inline asm block may hold several statements on one line ("{ .reg .pred p; setp ...; wgmma ...; }")
    statements = (part for line in ptx.splitlines() for part in line.split("//")[0].split(";"))
    for opcode in (m.group(1) for m in map(INSTRUCTION.match, statements) if m):
        memory = _memory(opcode)
        if memory is not None:
            counts[memory] += 1
        elif opcode.startswith(KEPT) or opcode.endswith(FLOAT_TYPES) and not opcode.startswith(("mov.", "ld.", "st.")):
            counts[opcode] += 1
    return dict(sorted(counts.items()))
