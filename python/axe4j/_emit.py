"""What the emitters of every target share: plan entries to TIR (loop nests, flat views of the operands, affine and
digit addresses, replicas, run-time starts) and the values of the element-wise and reduce ops.

An emitter (``axe4j.cpu.emit``, ``axe4j.cuda.emit``, ...) turns one checked plan into a PrimFunc; it imports what it
needs from here, and registers itself for its plan kinds with ``axe4j._registry.emits``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from tvm import tirx
from tvm.script import tirx as T

# (buffer, data var) of the worker buffers of the function being compiled (set by axe4j.compile around the dispatch)
_worker_buffers: list = []


@dataclass(frozen=True)
class OperandBase:
    """Where an operand's accesses start once the call's run-time region starts are known (derived by the emitter,
    never part of the plan): ``base_expr`` = base + ``run_time_offset`` (an expression when a start is read at run
    time); ``span_base`` = base + ``run_time_reach``, the most the base can be, for the flat view's declared size."""

    base_expr: object
    span_base: int


def operand_bases(request, plan) -> Mapping[str, OperandBase]:
    """The ``OperandBase`` of each operand role of the plan's ``access`` (none for a plan without one)."""
    return {role: _operand_base(request, role, entry) for role, entry in (getattr(plan, "access", None) or {}).items()}


def _operand_base(request, role, entry) -> OperandBase:
    starts, extents = request.regions[role]
    shape = [int(n) for n in request.buffers[role].shape]
    return OperandBase(base_expr=entry.base + run_time_offset(entry, starts),
                       span_base=entry.base + run_time_reach(entry, shape, extents))


def run_time_offset(entry, starts):
    """Elements a plan entry's run-time starts add (Java's AffineAccess): ``start_d * stride`` per dim of its
    ``start_strides``; per dim of its ``start_terms``, ``(floor(start_d / divisor) mod modulus) * stride`` for each
    [divisor, modulus, stride] (modulus 0: no mod), the start's digits in a layout that splits the dim."""
    offset = 0
    for dim, stride in (getattr(entry, "start_strides", None) or {}).items():
        if stride:
            offset = offset + starts[int(dim)] * stride
    for dim, terms in (getattr(entry, "start_terms", None) or {}).items():
        for divisor, modulus, stride in terms:
            if stride:
                digit = tirx.floordiv(starts[int(dim)], divisor) if divisor > 1 else starts[int(dim)]
                offset = offset + (tirx.floormod(digit, modulus) if modulus else digit) * stride
    return offset


def run_time_reach(entry, shape, extents):
    """The most elements ``run_time_offset`` can add for a region of ``extents`` inside ``shape``."""
    reach = 0
    for dim, stride in (getattr(entry, "start_strides", None) or {}).items():
        reach += (int(shape[int(dim)]) - int(extents[int(dim)])) * abs(stride)
    for dim, terms in (getattr(entry, "start_terms", None) or {}).items():
        last = int(shape[int(dim)]) - int(extents[int(dim)])
        for divisor, modulus, stride in terms:
            reach += (min(last // divisor, modulus - 1) if modulus else last // divisor) * abs(stride)
    return reach


def _loop_frame(kind, extent):
    return {"serial": T.serial, "parallel": T.parallel, "vectorized": T.vectorized,
            "unroll": T.unroll}[kind](int(extent))


def _nest(loops, body, counters=(), tail=0):
    """Emits ``loops`` (outer first) around ``body(counters)``; with a ``tail``, the last two loops are
    serial(q), vectorized(lanes) and are followed by vectorized(tail) with the serial counter at q."""
    if not loops:
        body(list(counters))
        return
    if tail and len(loops) == 2:
        with _loop_frame(loops[0].kind, loops[0].extent) as outer:
            with _loop_frame(loops[1].kind, loops[1].extent) as inner:
                body(list(counters) + [outer, inner])
        with T.vectorized(int(tail)) as rest:
            body(list(counters) + [loops[0].extent, rest])
        return
    with _loop_frame(loops[0].kind, loops[0].extent) as v:
        _nest(loops[1:], body, counters + (v,), tail)


def _span(access, span_base, loops, role, tail=0):
    """Elements a flat view of ``role`` needs: its largest base, the loops' reach and its largest replica, plus 1."""
    reach = sum((l.extent - 1) * abs(l.strides[role]) for l in loops)
    if tail:
        reach += abs(loops[-2].strides[role]) + (tail - 1) * abs(loops[-1].strides[role]) \
            - (loops[-1].extent - 1) * abs(loops[-1].strides[role])
    return span_base + reach + max([0, *access.replicas]) + 1


def _spans(request, access, bases, loops, tail=0):
    """``_span`` of every operand of the call (``bases``: ``operand_bases``)."""
    return {role: _span(access[role], bases[role].span_base, loops, role, tail) for role in request.buffers}


# Buffers whose layout has a cpu iter, with the data their declaration views: (buffer, data) pairs set by
# axe4j.compile while it dispatches such kernels itself (see compile.py, "worker layouts").


def data_of(buffer):
    """The data a flat view of ``buffer`` should alias: the declared data of a worker-layout view (whose own
    declaration is dropped after dispatch), else ``buffer.data``."""
    for declared, data in _worker_buffers:
        if declared.same_as(buffer):
            return data
    return buffer.data


def _flat_views(request, spans):
    """A flat view of each operand's data over ``spans[role]`` elements."""
    views = {}
    for role, buffer in request.buffers.items():
        views[role] = T.decl_buffer((spans[role],), buffer.dtype, data=data_of(buffer), scope=buffer.scope(),
                                    layout=None)
    return views


def _address(base, loops, role, counters):
    """``base + sum_l counter_l * stride_l`` (base: the operand's ``OperandBase``)."""
    addr = base.base_expr
    for loop, c in zip(loops, counters):
        stride = loop.strides[role]
        if stride != 0:
            addr = addr + c * stride
    return addr


def _dtype(expr) -> str:
    return str(expr.ty)


# Maps whose result a 16-bit float cannot carry through its own arithmetic (an intermediate overflows, as exp(-x)
# in silu's x / (1 + exp(-x)) does for x <= -11.1 in float16, or each step rounds): for a float16 or bfloat16
# destination they compute in float32 and round once to the destination dtype. float32 carries more than twice
# the 16-bit precision plus 2 bits, so a correctly rounded float32 div or sqrt rounded again is the correctly
# rounded 16-bit result; the product of two 16-bit values is exact in float32.
WIDENED_MAPS = frozenset({"exp", "exp2", "log2", "sqrt", "reciprocal", "silu", "fdiv", "fma"})
NARROW_FLOATS = frozenset({"float16", "bfloat16"})


def compute_dtype(op, dtype) -> str:
    """The dtype map ``op`` computes in for a ``dtype`` destination (float32 for ``WIDENED_MAPS`` on 16 bits)."""
    return "float32" if op in WIDENED_MAPS and dtype in NARROW_FLOATS else dtype


def _value(op, dtype, sources, exp=None):
    """The element expression of a map op from its source values (already loaded or scalar). Each source is taken
    in the destination dtype; ``compute_dtype`` says in which dtype the op then computes (the result is cast back
    to ``dtype`` once). ``exp``: the target's e^x of an expression (default TVM's ``exp``)."""

    def as_dtype(v):
        return v if _dtype(v) == dtype else tirx.Cast(dtype, v)

    if op in ("copy",):
        return sources[0]
    if op in ("cast",):
        return tirx.Cast(dtype, sources[0])
    if op == "fill":
        return as_dtype(tirx.const(sources[0], dtype) if isinstance(sources[0], (int, float)) else sources[0])
    if op == "zero":
        return tirx.const(0, dtype)
    x = [as_dtype(s if not isinstance(s, (int, float)) else tirx.const(s, dtype)) for s in sources]
    wide = compute_dtype(op, dtype)
    if wide != dtype:
        x = [tirx.Cast(wide, v) for v in x]
    value = _computed(op, wide, x, exp)
    return value if wide == dtype else tirx.Cast(dtype, value)


def _computed(op, dtype, x, exp=None):
    """Map ``op`` of operands ``x``, all of ``dtype``, in ``dtype``."""
    def silu(v):
        if exp is None:
            return v * tirx.sigmoid(v)
        one = tirx.const(1, dtype)   # with the target's exp: v * 1 / (1 + e^-v), TVM's sigmoid form (0 on overflow)
        return v * (one / (one + exp(-v)))

    unary = {"exp": exp or tirx.exp, "exp2": tirx.exp2, "log2": tirx.log2, "sqrt": tirx.sqrt,
             "reciprocal": lambda v: tirx.const(1, dtype) / v, "silu": silu}
    if op in unary:
        return unary[op](x[0] if len(x) == 1 else x[0] * x[2] + x[1])   # f(src * scale + bias)
    if op == "fma":   # dst = src * scale + bias
        return x[0] * x[1] + x[2]
    binary = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "fdiv": lambda a, b: a / b, "maximum": tirx.max, "minimum": tirx.min}
    return binary[op](x[0], x[1])


def _sources(request, n):
    """Source slots in order: ('tensor', role) or ('scalar', expr)."""
    out = []
    for i in range(n):
        out.append(("scalar", request.scalars[i]) if i in request.scalars else ("tensor", f"src{i}"))
    return out


def _source_count(op, params=None):
    """Sources of a map op: 3 for a unary op with bias and scale, ``f(src * scale + bias)`` (``scaled_input``)."""
    if params and params.get("scaled_input"):
        return 3
    if op in ("zero",):
        return 0
    if op in ("add", "sub", "mul", "fdiv", "maximum", "minimum"):
        return 2
    if op == "fma":
        return 3
    return 1


def _base_last(replicas):
    """Replica displacements with 0 last: a stored value may read the base copy (an accumulation, an in-place op),
    so the base is overwritten only after every other copy got the value."""
    return sorted(replicas, key=lambda r: r == 0)


def _digit_address(entry, coordinate):
    """``base + sum_k ((x // below_k) % e_k) * s_k`` for the row-major flat index x of ``coordinate``."""
    flat = 0
    for c, row_stride in zip(coordinate, entry.row_strides):
        flat = flat + c * row_stride
    addr = entry.base
    for extent, stride, below in entry.iters:
        if stride != 0 and extent != 1:
            addr = addr + tirx.floormod(tirx.floordiv(flat, below), extent) * stride
    return addr


def _digit_views(request, operands):
    views = {}
    for role, buffer in request.buffers.items():
        entry = operands[role]
        reach = sum((e - 1) * abs(st) for e, st, _ in entry.iters)
        span = entry.base + reach + max([0, *entry.replicas]) + 1
        views[role] = T.decl_buffer((span,), buffer.dtype, data=data_of(buffer), scope=buffer.scope(), layout=None)
    return views


def _store_replicas(view, entry, value, addr):
    for r in _base_last(entry.replicas):
        T.buffer_store(view, value, [addr + r if r else addr])


def _combine(name, a, b):
    return {"sum": lambda: a + b, "max": lambda: tirx.max(a, b), "min": lambda: tirx.min(a, b)}[name]()


def _identity(name, dtype):
    return {"sum": tirx.const(0, dtype), "max": tirx.min_value(dtype), "min": tirx.max_value(dtype)}[name]


def guarded(condition, body) -> None:
    """``body()`` as it is where ``condition`` is None, else under ``T.If(condition)``."""
    if condition is None:
        body()
        return
    with T.If(condition):
        with T.Then():
            body()


def _is_zero(expr) -> bool:
    try:
        return float(expr.value) == 0.0
    except (AttributeError, TypeError, ValueError):
        return False
