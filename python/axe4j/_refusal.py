"""The error ``axe4j.compile`` raises when no dispatch case lowers a tile call (``axe4j.DispatchRefused``).

TVM's own error starts ``TIRx schedule dispatch failed: op=tirx.tile.min target=cuda`` and holds a table of every
case's reason with the call printed below each. This one starts with the call, its scope and target, and each tensor
operand with its storage scope and layout; then every case's reason, axe4j's rules first (each reason that has a way
forward says it: the region to use, the tile to reduce into, ``T.meta_var``, the shape to declare), then TVM's; then
TVM's first line. The reasons come from ``axe4j.lowering``, which notes each case's decline while TVM dispatches.
"""

from __future__ import annotations

import re

from . import lowering

TVM_MARK = "TIRx schedule dispatch failed"


LAYOUT_REPORT = "VerifyLayouts:"   # axe4j.transform.run_layout_passes' report, which appends the pipeline's failure
LATE_CONTEXT = "\n\nTVM's pipeline, run on the kernel as written, fails as well:\n"


def clearer(error):
    """A ``DispatchRefused`` for TVM's dispatch failure ``error``; for a layout report (``VerifyLayouts: ...``) whose
    appended failure is one, the same ``ValueError`` report with that failure made clearer; None when it is another
    error or no reasons were noted."""
    from ._errors import DispatchRefused

    text = str(error)
    if TVM_MARK not in text:
        return None
    if text.startswith(LAYOUT_REPORT):   # the layout violations stay first; the failure they lead to follows, clearer
        head, _, tail = text.partition(LATE_CONTEXT)
        refused = clearer(RuntimeError(tail)) if tail else None
        return None if refused is None else ValueError(head + LATE_CONTEXT + str(refused))
    noted = lowering.last_declines()
    if noted is None or not noted[2]:
        return None
    op_call, scope, declines = noted
    tvm_line = next((line.strip() for line in text.splitlines() if TVM_MARK in line), TVM_MARK)
    op = re.search(r"op=(\S+)", tvm_line)
    if op is not None and str(op_call.op.name) != op.group(1):   # the notes are of another call
        return None
    target = re.search(r"target=(\S+)", tvm_line)
    seen = {d.variant for d in declines}
    declines = list(declines) + [d for d in _tvm_table(text) if d.variant not in seen]
    ours = [d for d in declines if d.variant.startswith(lowering.AXE4J_PREFIX)]
    theirs = [d for d in declines if not d.variant.startswith(lowering.AXE4J_PREFIX)]
    lines = [headline(op_call, scope, target.group(1) if target else "")]
    if ours:
        lines.append("axe4j's rules declined it:")
        lines += [f"  {d.variant} (prio={d.priority}): {d.reason}" for d in _by_priority(ours)]
    if theirs:
        lines.append("TVM's cases declined it:")
        lines += [f"  {d.variant} (prio={d.priority}): {_first_line(d.reason)}" for d in _by_priority(theirs)]
    lines.append(f"({tvm_line})")
    return DispatchRefused("\n".join(lines))


def headline(op_call, scope: str, target: str) -> str:
    """``no dispatch case lowers T.warp.copy(r[0:32], At[4:36]) (warp scope, cuda): r local S[32:1@laneid], At
    global S[(8,8):(1,8)]``."""
    call_text = lowering._one_line(op_call)
    try:
        from tvm.tirx.tile_primitive import TilePrimitiveCall

        call = TilePrimitiveCall.downcast(op_call)
        buffers = []
        for arg in call.args:
            source = getattr(arg, "source", None)
            if source is not None and str(source.name) not in [b[0] for b in buffers]:
                buffers.append((str(source.name), str(source.scope()), _layout_text(source)))
        where = f" ({scope} scope{', ' + target if target else ''})" if scope else ""
        return (f"no dispatch case lowers {call_text}{where}: "
                + ", ".join(f"{name} {storage} {layout}" for name, storage, layout in buffers))
    except Exception:  # noqa: BLE001  (the headline is a courtesy; the reasons below stand without it)
        return f"no dispatch case lowers {call_text}"


def _layout_text(buffer) -> str:
    layout = buffer.layout
    if layout is None:
        return "(row-major " + "x".join(str(n) for n in buffer.shape) + ")"
    try:
        from . import layout as axe_layout

        return str(axe_layout.to_text(layout))
    except Exception:  # noqa: BLE001  (a layout the Java side cannot print: TVM's own text)
        return str(layout)


def _tvm_table(text: str):
    """The rows of TVM's table that name a case and its reason: cases whose predicates declined before their
    implementation ran (so ``axe4j.lowering`` noted nothing for them)."""
    out = []
    for line in text.splitlines():
        row = re.match(r"^\|\s*(\S+) \(prio=(-?\d+)\)\s*\|\s*(?:declined\s*\S\s*)?(.*?)\s*\|$", line)
        if row:
            out.append(lowering.Decline(row.group(1), int(row.group(2)), row.group(3)))
    return [d for d in out if not d.variant.startswith(lowering.AXE4J_PREFIX + "explain")]


def _by_priority(declines):
    return sorted(declines, key=lambda d: -d.priority)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
