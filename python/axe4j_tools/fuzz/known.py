"""Failure classes known to be open (issue 45's classes), each recognised from a program and its outcome, so a run
can count them apart from new failures. ``make fuzz`` and the test take the list of those still open
(``--known-open`` / ``AXE4J_FUZZ_KNOWN_OPEN``, comma-separated; ``none`` or empty: every failure counts).
"""

from __future__ import annotations

import os

from .execute import Outcome
from .spec import Program


def _dtypes(p: Program):
    return {p.dtype, p.dst.dtype}


def _registers(p: Program) -> bool:
    return any(t is not None and t.memory == "local" for t in p.tiles)


_TVM_REGISTER_ERRORS = ("Cannot lower direct BufferLoad/BufferStore on a buffer with thread-axis layout",
                        "Expected a single element offset")

CLASSES = {   # in the order they are tried: a silu program's copy may also have gone to TVM's case
    # 3: float16/bfloat16 silu computed in the narrow type (exp overflows: -0 for x <= -11.1)
    "f16-silu": lambda p, o: p.op == "silu" and o.klass == "wrong" and p.dtype in ("float16", "bfloat16"),
    # 1: a vector store of a broadcast bfloat16 value does not compile on the CPU
    "bf16-cpu": lambda p, o: p.target == "llvm" and "bfloat16" in _dtypes(p) and o.klass == "internal"
    and "dtype mismatch" in o.signature,
    # 2: a register-tile call axe4j's rules decline goes to one of TVM's own cases (copy's fallback and vec_auto,
    # the reductions' local, fill's reg), which computes wrong values, reads out of bounds or stops
    "register-fallback": lambda p, o: p.cuda and _registers(p) and (
        (o.klass == "internal" and any(m in o.detail for m in _TVM_REGISTER_ERRORS))
        or (o.klass == "wrong" and bool(o.tvm_cases))),
    # 5: the CUDA interpreter lacks extern functions (hlog2, ...)
    "interp-extern": lambda p, o: o.klass == "internal" and "NotModelled: extern function" in o.signature,
}


# refusals of legal programs (the program is right as written; the refusal is the defect)
WRONG_REFUSALS = {
    # 4: a view with its shared tile's own padded layout is checked against the shape's elements, not the tile's span
    "padded-view": lambda p, o: o.klass == "refused" and "[memory-span]" in o.signature
    and any(t is not None and t.view for t in p.tiles),
}


def wrong_refusal(p: Program, o: Outcome) -> str | None:
    return next((name for name, test in WRONG_REFUSALS.items() if test(p, o)), None)


def open_classes(text: str | None = None):
    """The known-open class names from ``text`` (or ``AXE4J_FUZZ_KNOWN_OPEN``); default: none."""
    text = os.environ.get("AXE4J_FUZZ_KNOWN_OPEN", "") if text is None else text
    names = [n.strip() for n in text.split(",") if n.strip() and n.strip() != "none"]
    if names == ["all"]:
        return list(CLASSES)
    unknown = [n for n in names if n not in CLASSES]
    if unknown:
        raise ValueError(f"unknown known-open class(es) {unknown}; known: {', '.join(CLASSES)}")
    return names


def known_class(p: Program, o: Outcome, names) -> str | None:
    """The first open class among ``names`` that explains a failing outcome, else None."""
    if o.klass in ("right", "refused"):
        return None
    for name in names:
        if CLASSES[name](p, o):
            return name
    return None
