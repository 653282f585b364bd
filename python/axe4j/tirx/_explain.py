"""``explain`` and strict mode on the new TIRx lane.

``explain(func, target)`` compiles ``func`` with tvm_tirx while recording each axe4j tile call's lowering: the call
and its scope, every Java CUDA rule for its op with its priority and decision (the first that accepts is chosen, as
on 0.27), the chosen plan's notes, and the explicit tile calls the plan was spelled as (the PTX instruction or
``ewise`` and the tensor views handed to it). A call no rule lowers, or whose plan this lane does not spell yet, is
reported with the compile's error. Unlike 0.27, no TVM case ever lowers an axe4j op on this lane: there is no
fallback to report.

Strict mode (``compile(func, target, strict=True)``, or ``AXE4J_STRICT=1``) refuses a kernel holding tile calls that
no axe4j rule lowers: explicit ``T.cuda.tile.apply``/``ewise`` or other tvm_tirx tile instructions written by hand.
axe4j's own ops need no strict mode here: tvm_tirx has no generic op to fall back to, so a call that no rule lowers
already fails the compile (``axe4j.DispatchRefused``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from .._errors import StrictError

AXE4J_OPS = "tirx.cuda.axe4j_"
_SHOWN_CALLS = 8   # explicit calls listed per axe4j call; the rest are counted


@dataclass
class Record:
    """One axe4j call met while explaining: its text and scope, the rules' decisions, what it was spelled as."""

    call: str
    scope: str
    decisions: list = field(default_factory=list)   # (priority, variant, decision dict)
    emitted: list = field(default_factory=list)      # the explicit tile calls' text, in order


RECORDING: list | None = None   # the records of the explain in progress, else None


def tile_calls(func) -> list:
    """Every call of a tvm_tirx tile instruction in ``func`` (axe4j's and tvm_tirx's), in order."""
    import tvm_ffi
    from tvm_tirx.ir import Call
    from tvm_tirx.tirx.tile.instruction import SPECS

    found = []

    def visit(call):
        name = getattr(call.op, "name", None)
        if name is not None and str(name) in SPECS:
            found.append(call)

    tvm_ffi.structural_walk(func, (Call, visit), order="pre")
    return found


def emitted_calls(stmt) -> list[str]:
    """The ``T.cuda.tile.apply``/``ewise`` calls of a lowered statement, as text."""
    return [str(call) for call in tile_calls(stmt)]


def strict_default() -> bool:
    return os.environ.get("AXE4J_STRICT", "") == "1"


def check_strict(func) -> None:
    """Raises ``axe4j.StrictError`` naming each tile call of ``func`` that no axe4j rule lowers."""
    others = [c for c in tile_calls(func) if not str(c.op.name).startswith(AXE4J_OPS)]
    if others:
        raise StrictError("strict mode: these tile calls are explicit tvm_tirx instructions, not lowered by an axe4j "
                          "rule:\n" + "\n".join(f"  {c}" for c in others))


def compile(func, target, *, strict=None):  # noqa: A001  (mirrors tvm_tirx.tirx.compile)
    """``tvm_tirx.tirx.compile(func, target=target)``, refusing in strict mode a kernel with tile calls no axe4j
    rule lowers (``check_strict``)."""
    import tvm_tirx

    if strict if strict is not None else strict_default():
        check_strict(func)
    return tvm_tirx.tirx.compile(func, target=target)


def explain(func, target, *, file=None) -> str:
    """The report described above; printed (to ``file`` if given, else stdout) and returned."""
    global RECORDING
    import tvm_tirx

    records: list[Record] = []
    RECORDING, failure = records, None
    try:
        tvm_tirx.tirx.compile(func, target=target)
    except Exception as error:  # noqa: BLE001  (reported: a refusal, or a plan this lane does not spell yet)
        failure = error
    finally:
        RECORDING = None
    lines = []
    for n, record in enumerate(records):
        lines.append(f"#{n}: {record.call} ({record.scope} scope)")
        chosen = None
        for priority, variant, decision in record.decisions:
            if decision.get("error"):
                status = "RULE ERROR: " + decision["error"]
            elif decision["accepted"]:
                status = "accepted <- chosen" if chosen is None else "accepted (lower priority)"
                chosen = chosen or variant
            else:
                status = "declined: " + decision["reason"]
            lines.append(f"  {variant} (prio={priority}): {status}")
            if decision["accepted"] and chosen == variant:
                plan = decision["plan"]
                lines.append(f"    plan: {plan['kind']}: " + "; ".join(plan.get("notes", [])))
        if chosen is None:
            lines.append("  NO RULE: no axe4j rule accepts this call, and the new TIRx lane has no TVM case to fall "
                         "back to: the compile fails")
        for text in record.emitted[:_SHOWN_CALLS]:
            lines.append(f"  emits {text}")
        if len(record.emitted) > _SHOWN_CALLS:
            lines.append(f"  ... and {len(record.emitted) - _SHOWN_CALLS} more explicit calls")
    if failure is not None:
        lines.append("the compile failed: " + str(failure).strip().splitlines()[0])
        lines += ["  " + line for line in str(failure).strip().splitlines()[1:]]
    report = "\n".join(lines)
    print(report, file=file or sys.stdout)
    return report
