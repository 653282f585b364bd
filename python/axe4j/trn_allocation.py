"""Trainium SBUF allocation checked against layouts: TVM's ``trn`` pipeline gives every SBUF buffer a per-partition
byte address (``ncc.sbuf.mod_alloc(base_addr=...)`` in the NKI it emits) sized by the buffer's element count, but a
layout may reach further: ``S[(128,128):(1@P,2@F)]`` holds 128 elements per partition and reaches 255 (its span on
``F``). So after compiling, each SBUF buffer's bytes per partition are taken from its layout's span on ``F``
(``axe4j.layout.span``) and the buffers live at the same time must not overlap; every buffer, those TVM adds
privately included, must end within SBUF's bytes per partition. A violation is a compile error (``ValueError``)
naming the buffers, their addresses and spans. Liveness comes from the emitted NKI: a buffer lives from its
declaration to the end of the block it is declared in.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

SBUF_BYTES = 192 * 1024   # per partition (trn1/trn2), as axe4j.nki_executor and the Java rules use
_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int8": 1, "uint8": 1, "float8_e4m3": 1,
             "float8_e5m2": 1, "int16": 2, "uint16": 2, "uint32": 4}
_DECL = re.compile(r"^(?P<indent>\s*)(?P<name>\w+) = nl\.ndarray\(shape=\[(?P<shape>[^\]]*)\], dtype=np\.(?P<dtype>\w+), "
                   r"buffer=ncc\.sbuf\.mod_alloc\(base_addr=(?P<addr>\d+)\)\)")


@dataclass(frozen=True)
class SbufBuffer:
    name: str        # as the NKI names it (TIR name + "_ptr")
    address: int     # bytes per partition
    span: int        # bytes per partition the layout reaches
    source: str      # where the span comes from
    first: int       # NKI lines [first, last] it lives in
    last: int

    @property
    def end(self) -> int:
        return self.address + self.span


def check(func, nki_source: str) -> None:
    """Raises ValueError naming every overlap of live SBUF buffers and every buffer past SBUF's bytes."""
    problems = [*_overlaps(buffers(func, nki_source)), *_past_the_end(buffers(func, nki_source))]
    if problems:
        raise ValueError("Trainium SBUF allocation: " + "; ".join(problems))


def buffers(func, nki_source: str) -> list[SbufBuffer]:
    spans = _layout_spans(func)
    lines = nki_source.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = _DECL.match(line)
        if m is None:
            continue
        indent, name = len(m["indent"]), m["name"]
        itemsize = _ITEMSIZE.get(m["dtype"], 4)
        if name in spans:
            span, source = spans[name][0] * itemsize, f"layout {spans[name][1]}"
        else:   # a buffer the pipeline added: its declared free extent
            dims = [int(d) for d in re.findall(r"\d+", m["shape"])]
            span, source = math.prod(dims[1:]) * itemsize, f"declared shape {dims}"
        last = i
        for j in range(i + 1, len(lines)):
            if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) < indent:
                break
            last = j
        found.append(SbufBuffer(name, int(m["addr"]), span, source, i, last))
    return found


def _layout_spans(func) -> dict:
    """NKI name -> (elements per partition the layout reaches, layout text) for the SBUF buffers with layouts."""
    from . import layout as axe_layout

    spans = {}

    def visit(node):
        kind = type(node).__name__
        buffer = getattr(node, "buffer", None)
        if kind in ("AllocBuffer", "DeclBuffer") and buffer is not None:
            if str(buffer.scope()) == "trn.sbuf" and buffer.layout is not None:
                spans[f"{buffer.name}_ptr"] = (int(axe_layout.span(buffer.layout, "F")), str(buffer.layout))
        for field in ("body", "then_case", "else_case"):
            child = getattr(node, field, None)
            if child is not None:
                visit(child)
        if kind == "SeqStmt":
            for child in node.seq:
                visit(child)

    visit(func.body)
    return spans


def _overlaps(found):
    problems = []
    for i, a in enumerate(found):
        for b in found[i + 1:]:
            live_together = b.first <= a.last and a.first <= b.last
            if live_together and a.address < b.end and b.address < a.end:
                problems.append(f"{_describe(a)} and {_describe(b)} overlap while both live")
    return problems


def _past_the_end(found):
    return [f"{_describe(b)} ends past SBUF's {SBUF_BYTES} bytes per partition" for b in found if b.end > SBUF_BYTES]


def _describe(b: SbufBuffer) -> str:
    return f"{b.name[:-4] if b.name.endswith('_ptr') else b.name} (bytes [{b.address}, {b.end}) per partition, {b.source})"
