"""Bytes each device receives in a compiled XLA module, counted from its HLO text with the model of axe4j's plans.

XLA's SPMD partitioner (GSPMD) lowers a resharding to collectives; this reads them back from
``compiled.as_text()``: each ``all-gather``, ``all-reduce``, ``reduce-scatter``, ``all-to-all`` and
``collective-permute`` (and the ``-start`` half of their asynchronous forms; ``-done`` moves nothing new), the
byte sizes of its operands (from the instructions that define them) and its device groups. Replica groups come in
three spellings: explicit ``{{0,1},{2,3}}`` (``{}``: all devices), iota ``[2,4]<=[4,2]T(1,0)`` and mesh axes
``mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(0,2,1)) {'axis_0':(2)2}`` (a group varies the listed axes
or sub-axes, ``(pre)size`` being the sub-axis of size ``size`` after ``pre`` major ones).

Bytes received by member k of a group of p (docs/mesh.md, the same as the planner's and the MPI executor's):
all-gather (p-1) x operand, reduce-scatter (p-1) x operand/p, all-reduce (p-1) b_k + n - b_k (ring; n the
operand's elements, b_k = n/p split with the remainder on the first members), all-to-all the p-1 blocks from the
others, collective-permute the operand at each target of a pair whose source differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

COUNTED = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute")
# Collectives that move data but have no model here: refused rather than silently counted as 0.
UNCOUNTED = ("collective-broadcast", "ragged-all-to-all", "all-reduce-scatter", "send", "recv")

ELEMENT_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
                 "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16, "token": 0}

_SHAPE = re.compile(r"\b([a-z]+[0-9a-z]*)\[([0-9,]*)\]")
_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")


@dataclass(frozen=True)
class Operand:
    elements: int
    element_bytes: int

    @property
    def bytes(self) -> int:
        return self.elements * self.element_bytes


@dataclass(frozen=True)
class Collective:
    """One collective instruction: its kind (without ``-start``), operands, and groups or source-target pairs."""

    name: str
    kind: str
    operands: tuple
    groups: tuple = ()
    pairs: tuple = ()

    def received(self, devices: int) -> list:
        """Bytes each of ``devices`` devices receives from the others in this instruction."""
        out = [0] * devices
        if self.kind == "collective-permute":
            for s, t in self.pairs:
                if s != t:
                    out[t] += sum(o.bytes for o in self.operands)
            return out
        for group in self.groups:
            p = len(group)
            for k, device in enumerate(group):
                out[device] += self._member_bytes(p, k)
        return out

    def _member_bytes(self, p: int, k: int) -> int:
        total = sum(o.bytes for o in self.operands)
        if self.kind == "all-gather":
            return (p - 1) * total
        if self.kind == "reduce-scatter":
            return (p - 1) * total // p
        if self.kind == "all-reduce":
            got = 0
            for o in self.operands:
                n = o.elements
                bk = n // p + (1 if k < n % p else 0)
                got += ((p - 1) * bk + n - bk) * o.element_bytes
            return got
        if self.kind == "all-to-all":
            if len(self.operands) == p:  # tuple form: operand j goes to member j; each peer sends me its k-th
                return (p - 1) * self.operands[k].bytes
            return (p - 1) * total // p  # array form: split along `dimensions` into p blocks
        raise ValueError(f"HLO instruction %{self.name}: no byte model for {self.kind}")


def _matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start``."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = []
    for i in range(start, len(text)):
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i
    raise ValueError(f"unbalanced brackets in HLO text: {text[start:start + 120]!r}")


def _operands_of_type(type_text: str) -> tuple:
    found = []
    for dtype, dims in _SHAPE.findall(type_text):
        if dtype not in ELEMENT_BYTES:
            raise ValueError(f"HLO element type {dtype!r} has no byte size (known: {sorted(ELEMENT_BYTES)})")
        n = int(np.prod([int(d) for d in dims.split(",") if d] or [1]))
        found.append(Operand(n, ELEMENT_BYTES[dtype]))
    return tuple(found)


@dataclass(frozen=True)
class _Instruction:
    name: str
    type_text: str
    opcode: str
    args: str
    attrs: str


def _parse_line(line: str):
    m = _DEF.match(re.sub(r"/\*.*?\*/", "", line))
    if not m:
        return None
    name, rest = m.group(1), m.group(2)
    if rest.startswith("("):
        end = _matching(rest, 0)
        type_text, rest = rest[:end + 1], rest[end + 1:].lstrip()
    else:
        type_text, _, rest = rest.partition(" ")
    op = re.match(r"([\w\-]+)\(", rest)
    if not op:
        return None
    end = _matching(rest, op.end() - 1)
    return _Instruction(name, type_text, op.group(1), rest[op.end():end], rest[end + 1:])


def _iota(dims: list, perm: list | None) -> np.ndarray:
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    return (ids if perm is None else ids.transpose(perm)).reshape(-1)


def _ints(text: str) -> list:
    return [int(t) for t in re.findall(r"-?\d+", text)]


def _attr(attrs: str, key: str) -> str | None:
    """The text of ``key=...`` up to its end (a balanced bracket run, then any mesh-axes tail)."""
    at = attrs.find(key + "=")
    if at < 0:
        return None
    i = at + len(key) + 1
    if attrs.startswith("mesh", i):
        # mesh['a'=4,...][, device_ids=(...)] {axes}
        j = _matching(attrs, attrs.index("[", i))
        tail = attrs[j + 1:]
        m = re.match(r"\s*,\s*device_ids=", tail)
        if m:
            k = j + 1 + m.end()
            j = _matching(attrs, k)
        k = attrs.index("{", j)
        return attrs[i:_matching(attrs, k) + 1]
    if attrs[i] == "[":  # iota: [G,S]<=[dims]T(perm)
        m = re.match(r"\[[\d,]*\]<=\[[\d,]*\](T\([\d,]*\))?", attrs[i:])
        return m.group(0)
    return attrs[i:_matching(attrs, i) + 1]


def replica_groups(text: str, devices: int) -> tuple:
    """The groups (tuples of device ids, member order) a ``replica_groups=`` value spells."""
    text = text.strip()
    if text.startswith("{"):
        inner = text[1:-1].strip()
        if not inner:
            return (tuple(range(devices)),)
        return tuple(tuple(_ints(g)) for g in re.findall(r"\{([^{}]*)\}", inner))
    if text.startswith("["):
        m = re.match(r"\[([\d,]*)\]<=\[([\d,]*)\](?:T\(([\d,]*)\))?$", text)
        if not m:
            raise ValueError(f"replica_groups {text!r}: not an iota list [G,S]<=[dims]T(perm)")
        shape = _ints(m.group(1))
        ids = _iota(_ints(m.group(2)), _ints(m.group(3)) if m.group(3) else None)
        return tuple(tuple(int(d) for d in row) for row in ids.reshape(shape))
    if text.startswith("mesh"):
        return _mesh_groups(text)
    raise ValueError(f"replica_groups {text!r}: unknown spelling")


def _mesh_groups(text: str) -> tuple:
    m = re.match(r"mesh\[(.*?)\](?:\s*,\s*device_ids=(.*))?\s*(\{[^{}]*\})$", text)
    if not m:
        raise ValueError(f"replica_groups {text!r}: not a mesh-axes list mesh[...] [device_ids=...] {{axes}}")
    axes = [(a, int(n)) for a, n in re.findall(r"'([^']+)'\s*=\s*(\d+)", m.group(1))]
    sizes = [n for _, n in axes]
    total = int(np.prod(sizes))
    ids_text = (m.group(2) or "").strip().rstrip(",").strip()
    if not ids_text:
        ids = np.arange(total)
    else:
        it = re.match(r"\(?\[([\d,]*)\](?:T\(([\d,]*)\))?\)?$", ids_text)
        if it and int(np.prod(_ints(it.group(1)))) == total and (it.group(2) or ids_text.startswith("(")):
            ids = _iota(_ints(it.group(1)), _ints(it.group(2)) if it.group(2) else None)
        else:
            ids = np.asarray(_ints(ids_text))
    if ids.size != total:
        raise ValueError(f"replica_groups {text!r}: {ids.size} device ids for a mesh of {total}")
    index = {a: j for j, (a, _) in enumerate(axes)}
    refs = []  # (mesh axis, pre, size): a group varies these (sub-)axes, major first
    for name, pre, size in re.findall(r"'([^']+)'(?::\((\d+)\)(\d+))?", m.group(3)):
        if name not in index:
            raise ValueError(f"replica_groups {text!r}: group axis {name!r} is not a mesh axis")
        n = sizes[index[name]]
        refs.append((index[name], int(pre) if pre else 1, int(size) if size else n))
    groups: dict = {}
    for flat in range(total):
        coord = list(np.unravel_index(flat, sizes))
        position = []
        for j, pre, size in refs:
            post = sizes[j] // (pre * size)
            sub = (coord[j] // post) % size
            position.append(sub)
            coord[j] -= sub * post
        groups.setdefault(tuple(coord), []).append((tuple(position), int(ids[flat])))
    return tuple(tuple(d for _, d in sorted(members)) for _, members in sorted(groups.items()))


def collectives(hlo_text: str, devices: int) -> list:
    """Every counted collective of the module, in text order (all computations)."""
    types: dict = {}
    found = []
    instructions = [i for i in (_parse_line(l) for l in hlo_text.splitlines()) if i is not None]
    for ins in instructions:
        types[ins.name] = ins.type_text
    for ins in instructions:
        op = ins.opcode
        if op.endswith("-done"):
            continue
        base = op[:-len("-start")] if op.endswith("-start") else op
        if base in UNCOUNTED:
            raise ValueError(f"HLO instruction %{ins.name}: collective {op} has no byte model here")
        if base not in COUNTED:
            continue
        operands = []
        for ref in re.finditer(r"(?:((?:\([^()]*\)|[a-z]+[0-9a-z]*\[[0-9,]*\])(?:\{[^{}]*\})?)\s+)?%([\w.\-]+)",
                               ins.args):
            if ref.group(1):
                operands.extend(_operands_of_type(ref.group(1)))
            elif ref.group(2) in types:
                operands.extend(_operands_of_type(types[ref.group(2)]))
            else:
                raise ValueError(f"HLO instruction %{ins.name}: operand %{ref.group(2)} is defined nowhere")
        if base == "collective-permute":
            pairs_text = _attr(ins.attrs, "source_target_pairs")
            if pairs_text is None:
                raise ValueError(f"HLO instruction %{ins.name}: collective-permute without source_target_pairs")
            pairs = tuple(tuple(_ints(p)) for p in re.findall(r"\{([^{}]*)\}", pairs_text[1:-1]))
            found.append(Collective(ins.name, base, tuple(operands), pairs=pairs))
        else:
            groups_text = _attr(ins.attrs, "replica_groups")
            groups = (tuple(range(devices)),) if groups_text is None else replica_groups(groups_text, devices)
            found.append(Collective(ins.name, base, tuple(operands), groups=groups))
    return found


def bytes_per_device(hlo_text: str, devices: int) -> list:
    """Bytes each device receives over the whole module."""
    total = [0] * devices
    for c in collectives(hlo_text, devices):
        for d, b in enumerate(c.received(devices)):
            total[d] += b
    return total
