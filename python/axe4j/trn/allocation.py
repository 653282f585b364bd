"""Trainium SBUF allocation checked against layouts: TVM's ``trn`` pipeline gives every SBUF buffer a per-partition
byte address (``ncc.sbuf.mod_alloc(base_addr=...)`` in the NKI it emits) sized by the buffer's element count, but a
layout may reach further: ``S[(128,128):(1@P,2@F)]`` holds 128 elements per partition and reaches 255 (its span on
``F``). So after compiling, each SBUF buffer's bytes per partition are taken from its layout's span on ``F``
(``axe4j.layout.image_span``) and the buffers live at the same time must not overlap; every buffer, those TVM adds
privately included, must end within SBUF's bytes per partition. A violation is a compile error (``ValueError``)
naming the buffers, their addresses and spans. Liveness comes from the emitted NKI: a buffer lives from its
declaration to the end of the block it is declared in. The PSUM banks of the whole kernel, those the pipeline
reserves for itself included, must fit the 8 banks of 2 KiB per partition.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..targets import TRN

# First line of an NKI source that carries each buffer's layout extents (trn_gemm.nki_source writes it).
EXTENTS_LINE = "# axe4j layout extents: "
SBUF_BYTES = TRN["sbuf_bytes_per_partition"]   # per partition (org.axe4j.targets.Trainium, via axe4j.targets)
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
    """Raises ValueError naming every overlap of live SBUF buffers, every buffer past SBUF's bytes, and PSUM bank
    demands past the 8 banks."""
    sbuf = buffers(func, nki_source)
    problems = [*_overlaps(sbuf), *_past_the_end(sbuf)]
    if problems:
        raise ValueError("Trainium SBUF allocation: " + "; ".join(problems))
    over = psum_over_budget(func, nki_source)
    if over:
        raise ValueError("Trainium PSUM budget: " + over)


PSUM_BANKS, PSUM_BANK_BYTES = TRN["psum_banks"], TRN["psum_bank_bytes"]   # per partition
_PSUM = re.compile(r"^(?P<indent>\s*)(?P<name>\w+) = nl\.ndarray\(shape=\[(?P<shape>.*?)\], dtype=np\.(?P<dtype>\w+), "
                   r"buffer=(?P<buffer>nl\.psum|ncc\.psum\.mod_alloc\((?P<alloc>[^)]*\)?)\))\)")


def psum_over_budget(func, nki_source: str) -> str | None:
    """The PSUM banks the kernel holds at once, when more than 8, as a message with each buffer's figure: a buffer
    the pipeline placed itself (``ncc.psum.mod_alloc(base_bank=b, num_bank_tiles=(n,))``) holds banks [b, b + n),
    and buffers placed on the same banks count them once; a layout-placed one (``nl.psum``) needs banks of its own,
    as many as its layout's span needs (bytes per partition / 2 KiB, rounded up)."""
    spans = _layout_spans(func, "trn.psum")
    demands, placed, own = [], set(), 0
    for line in nki_source.splitlines():
        m = _PSUM.match(line)
        if m is None:
            continue
        name = m["name"][:-4] if m["name"].endswith("_ptr") else m["name"]
        if m["alloc"] is not None:
            tiles = re.search(r"num_bank_tiles=\(([^)]*)\)", m["alloc"])
            base = re.search(r"base_bank=(\d+)", m["alloc"])
            banks = math.prod(int(x) for x in re.findall(r"\d+", tiles.group(1))) if tiles else 1
            first = int(base.group(1)) if base else max(placed, default=-1) + 1
            placed |= set(range(first, first + banks))
            demands.append((name, banks, f"placed by the trn pipeline on banks {first}-{first + banks - 1}"))
        elif m["name"] in spans:
            banks, why = _banks(spans[m["name"]], _ITEMSIZE.get(m["dtype"], 4))
            own += banks
            demands.append((name, banks, why))
    total = len(placed) + own
    if total <= PSUM_BANKS:
        return None
    each = ", ".join(f"{name} {banks} ({why})" for name, banks, why in demands)
    return f"{total} banks in use > {PSUM_BANKS}: {each}"


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
            span, source = spans[name][0] * itemsize, f"layout {spans[name][1]}"   # the layout's script text
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


def _banks(span_and_layout, itemsize):
    """(banks, why) of a PSUM layout: its span on the Bank axis when it has one (as VerifyLayouts counts), else its
    bytes per partition over 2 KiB, rounded up."""
    from .. import layout as axe_layout

    span, layout = span_and_layout
    if any(str(it.axis.name) == "Bank" for it in layout.shard):
        return int(axe_layout.image_span(layout, "Bank")), "its layout's Bank axis"
    nbytes = span * itemsize
    return -(-nbytes // PSUM_BANK_BYTES), f"{nbytes} bytes per partition"


def layout_extents(func) -> dict:
    """{NKI tensor name: (partitions, free elements per partition)} of every SBUF and PSUM buffer with a layout: its
    span on P, and its span on F (times the bank's elements over the Bank axis for a PSUM layout with banks)."""
    from .. import layout as axe_layout

    extents = {}
    for scope in ("trn.sbuf", "trn.psum"):
        for name, (free, layout) in _layout_spans(func, scope).items():
            partitions = int(axe_layout.image_span(layout, "P"))
            if scope == "trn.psum" and "Bank" in str(layout):
                banks = int(axe_layout.image_span(layout, "Bank"))
                free = banks * PSUM_BANK_BYTES // 4 if banks > 1 else free   # float32 bank elements
            extents[name] = (partitions, int(free))
    return extents


def _layout_spans(func, scope: str = "trn.sbuf") -> dict:
    """NKI name -> (elements per partition the layout reaches, the layout) for the buffers of ``scope`` with
    layouts."""
    from .. import layout as axe_layout

    spans = {}

    def visit(node):
        kind = type(node).__name__
        buffer = getattr(node, "buffer", None)
        if kind in ("AllocBuffer", "DeclBuffer") and buffer is not None:
            if str(buffer.scope()) == scope and buffer.layout is not None:
                spans[f"{buffer.name}_ptr"] = (int(axe_layout.image_span(buffer.layout, "F")), buffer.layout)
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
