"""Java dispatch rules for TIRx tile primitives on the CPU (target kind ``llvm``).

``register()`` adds one case to TVM's dispatch table (``tvm.tirx.operator.tile_primitive.dispatcher``)
for every (op, variant, priority) that Java lists through the global ``axe4j.schedules.table``; the
upstream cases and their priorities stay as they are. Each case:

1. describes the call (op, target kind, scope, tensor operands with their regions, the op's
   parameters) as JSON, with the operands' ``tirx.TileLayout`` objects alongside;
2. asks Java ``axe4j.schedules.decide(variant, json, layouts)``; Java checks the rule's applicability
   from the layouts and answers a loop plan or a reason to decline;
3. declines with that reason (``DispatchFail``), or turns the plan into a PrimFunc whose body replaces
   the call (``emit``); the plan is checked against ``plan_schema.json`` first (``axe4j.plans``), so the
   emitter reads a plan whose fields are known. The emitter makes no decision of its own: loop order,
   loop kinds, strides, bases and replica displacements all come from the plan.

A forced variant works as upstream: ``Tx.copy(dst, src, dispatch="axe4j-cpu-scalar")``.
"""

from __future__ import annotations

import json
import threading

from tvm import tirx
from tvm.script import tirx as T

from . import lowering, plans
from ._errors import PlanError

TARGET_KIND = "llvm"
CUDA_KIND = "cuda"
CUDA_PRIORITY_ENV = "AXE4J_CUDA_PRIORITY_OFFSET"
_lock = threading.Lock()
_registered: list[tuple[str, str, int]] = []

_MAP_OPS = {"copy", "cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
            "add", "sub", "mul", "fdiv", "maximum", "minimum"}
_BINARY_OPS = {"add", "sub", "mul", "fdiv", "maximum", "minimum"}
_UNARY_WITH_BIAS_SCALE = {"exp", "exp2", "log2", "sqrt"}  # (dst, src, bias, scale); bias/scale are trn-only
_REDUCE_OPS = {"sum", "max", "min"}


def register() -> list[tuple[str, str, int]]:
    """Adds the Java cases to TVM's dispatch table once per process; returns (op, variant, priority) rows.

    CPU rows keep Java's priority. CUDA rows get ``cuda_priority_offset()`` added (default 100), which puts them
    above every upstream CUDA case (upstream uses 0-20); a negative offset puts them below. Every case of the table
    is then watched (``axe4j.lowering``): which one lowered each call is recorded, and an mbarrier copy_async goes to
    a TMA case or fails to compile."""
    import tvm

    from . import _tvm_internals

    with _lock:
        if _registered:
            return list(_registered)
        _tvm_internals.require()   # a TVM that changed what axe4j relies on fails here, naming it
        table = tvm.get_global_func("axe4j.schedules.table", allow_missing=True)
        if table is None:
            raise RuntimeError("the Java global axe4j.schedules.table is missing: build the schedules jar "
                               "(mvn -B -o -q package -DskipTests) and call axe4j.install()")
        offset = cuda_priority_offset()
        for row in table():
            target = str(row["target"]) if "target" in row else TARGET_KIND
            op, variant, priority = str(row["op"]), str(row["variant"]), int(row["priority"])
            if target == CUDA_KIND:
                priority += offset
            _tvm_internals.register_case(op, target, variant, priority, _case(variant))
            _registered.append((op, variant, priority))
            if target == CUDA_KIND and op not in _probed:
                _tvm_internals.register_case(op, target, PROBE_VARIANT, PROBE_PRIORITY, _probe)
                _probed.add(op)
        lowering.watch()
        return list(_registered)


def cuda_priority_offset() -> int:
    """``AXE4J_CUDA_PRIORITY_OFFSET`` (an integer, default 100): added to Java's CUDA rule priorities."""
    import os

    text = os.environ.get(CUDA_PRIORITY_ENV, "100")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{CUDA_PRIORITY_ENV}={text!r} is not an integer") from None


# explain() on CUDA needs each call's DispatchContext (thread counts), which exists only inside the pipeline: a
# case above all others records the described call while a recording is on, then declines.
PROBE_VARIANT = "axe4j-explain-probe"
PROBE_PRIORITY = 1 << 30
_probed: set = set()
_recording = threading.local()


def _probe(op_call, sctx):
    from tvm.tirx.operator.tile_primitive.dispatcher import DispatchFail
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    sink = getattr(_recording, "sink", None)
    if sink is not None:
        call = TilePrimitiveCall.downcast(op_call)
        try:
            sink.append((call, describe(call, _kind_name(sctx.target), str(sctx.scope_kind), sctx)))
        except _NotDescribable as error:
            sink.append((call, error))
    raise DispatchFail("records calls for axe4j.explain; never implements one")


def recorded_requests(mod, target) -> tuple[list, str | None]:
    """(call, Described or the reason it is not describable) for every tile call TVM's dispatch meets in ``mod``,
    and the error that stopped the dispatch (no case applies to a call), if one did."""
    import tvm
    from tvm import tirx

    module = tvm.IRModule({"main": mod}) if isinstance(mod, tirx.PrimFunc) else mod
    module = tvm.IRModule({g: (f.with_attr("target", target) if isinstance(f, tirx.PrimFunc) else f)
                           for g, f in module.functions.items()})
    _recording.sink = []
    try:
        with target:
            tirx.transform.TilePrimitiveDispatch()(module)
        return list(_recording.sink), None
    except Exception as error:  # noqa: BLE001  (reported by explain, raised again by compile)
        return list(_recording.sink), str(error).strip().splitlines()[0]
    finally:
        _recording.sink = None


def registered() -> list[tuple[str, str, int]]:
    return list(_registered)


def _case(variant: str):
    def impl(op_call, sctx):
        from tvm.tirx.operator.tile_primitive.dispatcher import DispatchFail
        from tvm.tirx.tile_primitive import TilePrimitiveCall

        call = TilePrimitiveCall.downcast(op_call)
        try:
            request = describe(call, _kind_name(sctx.target), str(sctx.scope_kind), sctx)
        except _NotDescribable as error:
            raise DispatchFail(str(error)) from None
        try:
            decision = decide(variant, request)
        except PlanError as error:   # Java and Python disagree about a plan: a bug, never a decline
            # TVM's dispatcher goes on to the next case after any exception, so it is recorded for compile too
            _rule_errors.append(f"{variant}: plan contract broken ({request.op} call): {error}")
            raise
        except Exception as error:  # a layout Java cannot read (e.g. a swizzled one) is a decline, not a crash
            raise DispatchFail(f"{variant}: the operands cannot be planned: {error}") from None
        if decision.get("error"):
            _rule_errors.append(f"{variant}: {decision['error']}")
        if not decision["accepted"]:
            raise DispatchFail(decision["reason"])
        try:
            body = emit(request, decision["plan"])
        except DispatchFail:
            raise
        except Exception as error:  # an accepted plan the emitter cannot lower: a bug, not a decline
            _rule_errors.append(f"{variant}: the emitter of plan kind {decision['plan'].get('kind')!r} raised on the "
                                f"{request.op} call: {type(error).__name__}: {error}")
            raise
        lowering.note_plan(decision["plan"].get("notes", []))
        return body

    impl.__name__ = "axe4j_" + variant.replace("-", "_")
    return impl


_rule_errors: list = []   # rule errors (exceptions in a Java rule) met by dispatch since the last take


def take_rule_errors() -> list:
    """The rule errors dispatch met since the last call, cleared."""
    errors = list(_rule_errors)
    _rule_errors.clear()
    return errors


def decide(variant: str, request: "Described") -> dict:
    import tvm

    answer = tvm.get_global_func("axe4j.schedules.decide")(variant, request.json, request.layouts)
    return plans.validate_decision(json.loads(str(answer)))


def explain_call(request: "Described") -> list[dict]:
    import tvm

    answers = tvm.get_global_func("axe4j.schedules.explain")(request.json, request.layouts)
    return [plans.validate_decision(json.loads(str(d))) for d in answers]


def _kind_name(target) -> str:
    kind = getattr(target, "kind", None)
    return str(getattr(kind, "name", kind))


class _NotDescribable(Exception):
    pass


class Described:
    """A call as Java sees it (``json``, ``layouts``) plus what the emitter needs (buffers, scalars)."""

    def __init__(self, op, call, json_text, layouts, buffers, regions, scalars, params, scope="thread", sctx=None):
        self.op = op
        self.scope = scope
        self.sctx = sctx            # TVM's DispatchContext during compilation (thread indices), else None
        self.call = call
        self.json = json_text
        self.layouts = layouts
        self.buffers = buffers      # role -> buffer
        self.regions = regions      # role -> (start list, extent list)
        self.scalars = scalars      # position -> scalar PrimExpr (non-tensor sources)
        self.params = params
        self.run_time_extents = {}  # role -> {dim: extent expression} for extents known only at run time


def _is_region(x) -> bool:
    from tvm.ir import TensorRegion

    return isinstance(x, TensorRegion)


def _ints(values, what):
    out = []
    for v in values:
        try:
            out.append(int(v))
        except (TypeError, ValueError):
            raise _NotDescribable(f"{what} {v} is symbolic; CPU rules need constant regions") from None
    return out


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _modulus(expr):
    """[c, b] with the run-time value of ``expr`` always ``c * n + b`` (TVM's modular-set analysis; [1, 0] when
    nothing is known): lets a rule prove that a run-time start keeps an alignment."""
    from tvm.sym import Analyzer

    try:
        m = Analyzer().modular_set(expr)
        return [int(m.coeff), int(m.base)]
    except Exception:  # noqa: BLE001  (an expression the analysis does not take)
        return [1, 0]


def _constant(expr):
    """The value of a numeric constant expression (a float), None when it is not one."""
    from tvm import tirx as _tirx

    if isinstance(expr, (int, float)):
        return float(expr)
    if isinstance(expr, _tirx.Cast):
        return _constant(expr.value)
    if isinstance(expr, (_tirx.IntImm, _tirx.FloatImm)):
        return float(expr.value)
    return None


def _layout_of(buffer):
    from tvm.tirx.layout import S, TileLayout

    layout = buffer.layout
    if layout is None:
        return TileLayout(S[tuple(_ints(buffer.shape, "shape"))])
    return layout


def threads_of(sctx) -> tuple[int, bool]:
    """Threads of the execution scope (the product of its intra-scope axis extents) and whether every one of
    them is active (no axis starts at an offset)."""
    threads, full = 1, True
    for extent, offset in dict(sctx.intra).values():
        threads *= int(extent)
        full = full and int(offset) == 0
    return threads, full


def describe(call, target_kind: str, scope_kind: str, sctx=None, target=None) -> Described:
    """Builds the request for Java from a ``TilePrimitiveCall`` (downcast); ``sctx`` gives CUDA thread counts and
    the target, else ``target`` (explain) does: a CPU gemm gets the target's ISA, caches and cores (``cpu``)."""
    op = call.op.name.split(".")[-1]
    args = list(call.args)
    roles: list[tuple[str, object]] = []
    scalars: dict[int, object] = {}
    params: dict[str, object] = {}
    if op in _MAP_OPS:
        srcs = args[1:3] if op in _BINARY_OPS else args[1:2]
        if op in _UNARY_WITH_BIAS_SCALE:
            params["bias_scale"] = any(a is not None for a in args[2:4])
        roles.append(("dst", args[0]))
        for i, s in enumerate(srcs):
            if _is_region(s):
                roles.append((f"src{i}", s))
            else:
                scalars[i] = s
        if op in _UNARY_WITH_BIAS_SCALE and target_kind == "trn":
            from .trn import emit as trn_emit

            trn_emit.describe_bias_scale(args, roles, scalars, params, _constant)
    elif op in _REDUCE_OPS:
        roles += [("dst", args[0]), ("src0", args[1])]
        rank = len(args[1].source.shape)
        params["axes"] = sorted({a % rank for a in _ints(args[2], "axis")})
        params["accum"] = bool(int(args[3]))
    elif op == "copy_async":
        roles += [("dst", args[0]), ("src0", args[1])]
        params["config"] = sorted(str(k) for k in call.config.keys())   # the rules decline what they do not do
    elif op == "gemm":
        roles += [("D", args[0]), ("A", args[1]), ("B", args[2]), ("C", args[3])]
        params["trans_a"] = bool(int(args[4]))
        params["trans_b"] = bool(int(args[5]))
        scalars["alpha"], scalars["beta"] = args[6], args[7]
        params["alpha"], params["beta"] = _constant(args[6]), _constant(args[7])
        if "parallel" in call.config:   # Tx.gemm(..., parallel=False): the call runs inside a parallel loop
            params["parallel"] = bool(int(call.config["parallel"]))
    elif op == "gemm_async" and len(args) == 6:   # (C, A, B, transA, transB, accum); block-scaled forms have 8
        roles += [("C", args[0]), ("A", args[1]), ("B", args[2])]
        params["trans_a"] = bool(int(args[3]))
        params["trans_b"] = bool(int(args[4]))
        params["accum"] = bool(int(args[5]))
        params["config"] = sorted(str(k) for k in call.config.keys())   # the rules decline what they do not do
        for key in ("wait", "proxy_fence", "cta_group"):
            if key in call.config:
                params[key] = _constant(call.config[key])
    else:
        raise _NotDescribable(f"op {op} has no CPU description")
    operands, layouts, buffers, regions, run_time_extents = [], [], {}, {}, {}
    for role, region in roles:
        if not _is_region(region):
            raise _NotDescribable(f"{op}: operand {role} is {region}, not a buffer region")
        buffer = region.source
        start = [_int_or_none(r.min) for r in region.region]   # None: a run-time start (a loop variable)
        if any(s is None for s in start):
            params.setdefault("start_modulus", {})[role] = [
                _modulus(r.min) if s is None else None for r, s in zip(region.region, start)]
            params.setdefault("start_text", {})[role] = [   # as written: rules name it when it narrows a plan
                str(r.min) if s is None else None for r, s in zip(region.region, start)]
        extent, ragged = _extents(region, buffer)
        if ragged:
            params.setdefault("run_time_extent", {})[role] = sorted(ragged)
            run_time_extents[role] = ragged
        (elem_offset,) = _ints([buffer.elem_offset], "elem_offset")
        operands.append({"role": role, "name": str(buffer.name), "dtype": str(buffer.dtype),
                         "shape": _ints(buffer.shape, "shape"), "start": start, "extent": extent,
                         "elem_offset": elem_offset})
        layouts.append(_layout_of(buffer))
        buffers[role] = buffer
        regions[role] = ([r.min if s is None else s for r, s in zip(region.region, start)], extent)
    if target_kind == "trn":
        from .trn import emit as trn_emit

        trn_emit.describe_workspace(call, operands, layouts, buffers, regions, _layout_of)
        params["storage"] = {role: str(b.scope()) for role, b in buffers.items()}
    target = sctx.target if sctx is not None else target
    if target_kind == TARGET_KIND and op == "gemm" and target is not None:
        from .cpu import target as cpu_target

        params["cpu"] = cpu_target.describe(target)
    if target_kind == CUDA_KIND:
        params["storage"] = {role: str(b.scope()) for role, b in buffers.items()}
        params["align"] = {role: int(b.data_alignment) for role, b in buffers.items()}
        if sctx is not None:
            params["arch"] = str(sctx.target.attrs.get("arch", ""))
        if sctx is not None:
            threads, full = threads_of(sctx)
            params["threads"] = threads if full else 0
        else:
            params["threads"] = 1 if scope_kind == "thread" else 0
    text = json.dumps({"op": op, "target": target_kind, "scope": scope_kind, "operands": operands,
                       "params": params})
    described = Described(op, call, text, layouts, buffers, regions, scalars, params, scope_kind, sctx)
    described.run_time_extents = run_time_extents
    return described


def _extents(region, buffer):
    """The region's extents, each a constant or, for one known only at run time (a ragged group of rows), the
    largest value TVM's bound analysis gives it; and {dim: extent expression} for the run-time ones."""
    from tvm.sym import Analyzer

    extents, ragged = [], {}
    for d, r in enumerate(region.region):
        value = _int_or_none(r.extent)
        if value is None:
            bound = Analyzer().const_int_bound(r.extent)
            top, size = int(bound.max_value), _int_or_none(buffer.shape[d])
            if size is None or top <= 0 or top > size:
                raise _NotDescribable(f"region extent {r.extent} of dim {d} of {buffer.name} is symbolic and not "
                                      f"bounded by the dim's size {buffer.shape[d]} (bound {top}); write it as "
                                      f"T.min(extent, {buffer.shape[d]})")
            value = top
            ragged[d] = r.extent
        extents.append(value)
    return extents, ragged


# ---- emission: plan -> PrimFunc ----------------------------------------------------------------

def emit(request: Described, plan: dict):
    for role, entry in plan.get("access", {}).items():
        _bind_run_time_starts(request, role, entry)
    kind = plan["kind"]
    if kind == "trn":
        from .trn import emit as trn_emit

        return trn_emit.emit(request, plan)
    if kind == "affine":
        return _emit_affine(request, plan)
    if kind == "logical":
        return _emit_logical(request, plan)
    if kind == "digits":
        return _emit_digits(request, plan)
    if kind == "reduce":
        return _emit_reduce(request, plan)
    if kind == "reduce-digits":
        return _emit_reduce_digits(request, plan)
    if kind == "gemm-blocked":
        from .cpu import gemm_blocked

        return gemm_blocked.emit(request, plan, data_of, _base_last, _is_zero)
    if kind == "gemm-naive":
        return _emit_gemm_naive(request, plan)
    if kind in ("cuda-register", "cuda-shuffle-reduce"):
        from .cuda import emit_register as cuda_emit_register

        return cuda_emit_register.emit(request, plan, _EmitHelpers)
    if kind in ("cuda-cp-async", "cuda-tma"):
        from .cuda import async_emit as cuda_async_emit

        return cuda_async_emit.emit(request, plan, _EmitHelpers)
    if kind in ("cuda-affine", "cuda-digits", "cuda-reduce", "cuda-tree-reduce", "cuda-ldstmatrix", "cuda-mma",
                "cuda-wgmma", "cuda-tcgen05"):
        from .cuda import emit as cuda_emit

        return cuda_emit.emit(request, plan, _EmitHelpers)
    raise ValueError(f"unknown plan kind {kind}")


def _bind_run_time_starts(request, role, entry):
    """Adds what the run-time starts add to the operand's base (``base_expr``, see ``run_time_offset``); ``span_base``
    bounds the base over every start the dim allows, for the flat view's declared size."""
    starts, extents = request.regions[role]
    shape = [int(n) for n in request.buffers[role].shape]
    entry["base_expr"] = int(entry["base"]) + run_time_offset(entry, starts)
    entry["span_base"] = int(entry["base"]) + run_time_reach(entry, shape, extents)


def run_time_offset(entry, starts):
    """Elements a plan entry's run-time starts add (Java's AffineAccess): ``start_d * stride`` per dim of its
    ``start_strides``; per dim of its ``start_terms``, ``(floor(start_d / divisor) mod modulus) * stride`` for each
    [divisor, modulus, stride] (modulus 0: no mod), the start's digits in a layout that splits the dim."""
    offset = 0
    for dim, stride in entry.get("start_strides", {}).items():
        if int(stride):
            offset = offset + starts[int(dim)] * int(stride)
    for dim, terms in entry.get("start_terms", {}).items():
        for divisor, modulus, stride in ((int(x) for x in t) for t in terms):
            if stride:
                digit = tirx.floordiv(starts[int(dim)], divisor) if divisor > 1 else starts[int(dim)]
                offset = offset + (tirx.floormod(digit, modulus) if modulus else digit) * stride
    return offset


def run_time_reach(entry, shape, extents):
    """The most elements ``run_time_offset`` can add for a region of ``extents`` inside ``shape``."""
    reach = 0
    for dim, stride in entry.get("start_strides", {}).items():
        reach += (int(shape[int(dim)]) - int(extents[int(dim)])) * abs(int(stride))
    for dim, terms in entry.get("start_terms", {}).items():
        last = int(shape[int(dim)]) - int(extents[int(dim)])
        for divisor, modulus, stride in ((int(x) for x in t) for t in terms):
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
        with _loop_frame(loops[0]["kind"], loops[0]["extent"]) as outer:
            with _loop_frame(loops[1]["kind"], loops[1]["extent"]) as inner:
                body(list(counters) + [outer, inner])
        with T.vectorized(int(tail)) as rest:
            body(list(counters) + [int(loops[0]["extent"]), rest])
        return
    with _loop_frame(loops[0]["kind"], loops[0]["extent"]) as v:
        _nest(loops[1:], body, counters + (v,), tail)


def _span(access, loops, role, tail=0):
    reach = sum((int(l["extent"]) - 1) * abs(int(l["strides"][role])) for l in loops)
    if tail:
        reach += abs(int(loops[-2]["strides"][role])) + (tail - 1) * abs(int(loops[-1]["strides"][role])) \
            - (int(loops[-1]["extent"]) - 1) * abs(int(loops[-1]["strides"][role]))
    return int(access["span_base"]) + reach + max([0] + [int(r) for r in access["replicas"]]) + 1


# Buffers whose layout has a cpu iter, with the data their declaration views: (buffer, data) pairs set by
# axe4j.compile while it dispatches such kernels itself (see compile.py, "worker layouts").
_worker_buffers: list = []


def data_of(buffer):
    """The data a flat view of ``buffer`` should alias: the declared data of a worker-layout view (whose own
    declaration is dropped after dispatch), else ``buffer.data``."""
    for declared, data in _worker_buffers:
        if declared.same_as(buffer):
            return data
    return buffer.data


def _flat_views(request, plan, loops, extra_span=None):
    views = {}
    for role, buffer in request.buffers.items():
        span = extra_span[role] if extra_span else _span(plan["access"][role], loops, role, int(plan.get("tail", 0)))
        views[role] = T.decl_buffer((span,), buffer.dtype, data=data_of(buffer), scope=buffer.scope(), layout=None)
    return views


def _address(access, loops, role, counters):
    addr = access["base_expr"]
    for loop, c in zip(loops, counters):
        stride = int(loop["strides"][role])
        if stride != 0:
            addr = addr + c * stride
    return addr


def _dtype(expr) -> str:
    return str(expr.ty)


def _value(op, dtype, sources):
    """The element expression of a map op from its source values (already loaded or scalar)."""

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
    unary = {"exp": tirx.exp, "exp2": tirx.exp2, "log2": tirx.log2, "sqrt": tirx.sqrt,
             "reciprocal": lambda v: tirx.const(1, dtype) / v, "silu": lambda v: v * tirx.sigmoid(v)}
    if op in unary:
        return unary[op](x[0])
    binary = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "fdiv": lambda a, b: a / b, "maximum": tirx.max, "minimum": tirx.min}
    return binary[op](x[0], x[1])


def _sources(request, n):
    """Source slots in order: ('tensor', role) or ('scalar', expr)."""
    out = []
    for i in range(n):
        out.append(("scalar", request.scalars[i]) if i in request.scalars else ("tensor", f"src{i}"))
    return out


def _source_count(op):
    if op in ("zero",):
        return 0
    if op in ("add", "sub", "mul", "fdiv", "maximum", "minimum"):
        return 2
    return 1


def _emit_affine(request, plan):
    loops = plan["loops"]
    access = plan["access"]
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))

    def body(counters, views):
        values = []
        for kind, what in slots:
            if kind == "scalar":
                values.append(what)
            else:
                values.append(views[what][_address(access[what], loops, what, counters)])
        value = _value(request.op, str(dst.dtype), values)
        addr = _address(access["dst"], loops, "dst", counters)
        for r in _base_last(access["dst"]["replicas"]):
            T.buffer_store(views["dst"], value, [addr + int(r) if int(r) else addr])

    def whole():
        views = _flat_views(request, plan, loops)
        _nest(loops, lambda c: body(c, views), tail=int(plan.get("tail", 0)))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_logical(request, plan):
    loops = plan["loops"]
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))

    def index(role, counters):
        start, _ = request.regions[role]
        idx = list(start)
        for loop, c in zip(loops, counters):
            d = int(loop["dims"][role])
            idx[d] = idx[d] + c
        return idx

    def body(counters):
        values = [what if kind == "scalar" else request.buffers[what][tuple(index(what, counters))]
                  for kind, what in slots]
        T.buffer_store(dst, _value(request.op, str(dst.dtype), values), index("dst", counters))

    @T.prim_func(check_well_formed=False)
    def impl():
        _nest(loops, body)

    return impl


def _base_last(replicas):
    """Replica displacements with 0 last: a stored value may read the base copy (an accumulation, an in-place op),
    so the base is overwritten only after every other copy got the value."""
    return sorted((int(r) for r in replicas), key=lambda r: r == 0)


def _digit_address(entry, coordinate):
    """``base + sum_k ((x // below_k) % e_k) * s_k`` for the row-major flat index x of ``coordinate``."""
    flat = 0
    for c, row_stride in zip(coordinate, entry["row_strides"]):
        flat = flat + c * int(row_stride)
    addr = int(entry["base"])
    for extent, stride, below in entry["iters"]:
        if int(stride) != 0 and int(extent) != 1:
            addr = addr + tirx.floormod(tirx.floordiv(flat, int(below)), int(extent)) * int(stride)
    return addr


def _digit_views(request, operands):
    views = {}
    for role, buffer in request.buffers.items():
        entry = operands[role]
        reach = sum((int(e) - 1) * abs(int(st)) for e, st, _ in entry["iters"])
        span = int(entry["base"]) + reach + max([0] + [int(r) for r in entry["replicas"]]) + 1
        views[role] = T.decl_buffer((span,), buffer.dtype, data=data_of(buffer), scope=buffer.scope(), layout=None)
    return views


def _store_replicas(view, entry, value, addr):
    for r in _base_last(entry["replicas"]):
        T.buffer_store(view, value, [addr + int(r) if int(r) else addr])


def _emit_digits(request, plan):
    loops = plan["loops"]
    operands = plan["operands"]
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))

    def coordinate(role, counters):
        start, _ = request.regions[role]
        idx = list(start)
        for loop, c in zip(loops, counters):
            d = int(loop["dims"][role])
            idx[d] = idx[d] + c
        return idx

    def address(role, counters):
        return _digit_address(operands[role], coordinate(role, counters))

    def body(counters, views):
        values = [what if kind == "scalar" else views[what][address(what, counters)] for kind, what in slots]
        value = _value(request.op, str(dst.dtype), values)
        addr = address("dst", counters)
        for r in _base_last(operands["dst"]["replicas"]):
            T.buffer_store(views["dst"], value, [addr + int(r) if int(r) else addr])

    def whole():
        views = _digit_views(request, operands)
        _nest(loops, lambda c: body(c, views))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_reduce(request, plan):
    loops = plan["loops"]
    access = plan["access"]
    dtype = str(request.buffers["dst"].dtype)
    combine = plan["combine"]
    spatial = [l for l in loops if not l["reduces"]]
    identity = {"sum": tirx.const(0, dtype), "max": tirx.min_value(dtype), "min": tirx.max_value(dtype)}[combine]

    def init(counters, views):
        T.buffer_store(views["dst"], identity, [_address(access["dst"], spatial, "dst", counters)])

    def op(a, b):
        return {"sum": lambda: a + b, "max": lambda: tirx.max(a, b), "min": lambda: tirx.min(a, b)}[combine]()

    def load_src(counters, views):
        x = views["src0"][_address(access["src0"], loops, "src0", counters)]
        return x if _dtype(x) == dtype else tirx.Cast(dtype, x)

    def body(counters, views):
        addr = _address(access["dst"], loops, "dst", counters)
        T.buffer_store(views["dst"], op(views["dst"][addr], load_src(counters, views)), [addr])

    def lanes_tree(acc, lo, hi):
        """combine(acc[lo], ..., acc[hi - 1]) as a balanced tree."""
        if hi - lo == 1:
            return acc[lo]
        mid = (lo + hi) // 2
        return op(lanes_tree(acc, lo, mid), lanes_tree(acc, mid, hi))

    def vector_body(spatial_counters, views, reduced, lanes, tail):
        # one partial result per lane over the reduced loops, then the lanes combined into the destination
        acc = T.decl_buffer((lanes,), dtype, scope="local", layout=None)
        with T.vectorized(lanes) as j:
            T.buffer_store(acc, identity, [j])

        def accumulate(counters):
            lane = counters[-1]
            T.buffer_store(acc, op(acc[lane], load_src(list(spatial_counters) + list(counters), views)), [lane])

        _nest(reduced, accumulate, tail=tail)
        addr = _address(access["dst"], spatial, "dst", spatial_counters)
        T.buffer_store(views["dst"], op(views["dst"][addr], lanes_tree(acc, 0, lanes)), [addr])

    def whole():
        views = _flat_views(request, plan, loops)
        tail = int(plan.get("tail", 0))
        if plan.get("vector_reduce"):
            reduced = loops[len(spatial):]
            if plan["init"]:
                _nest(spatial, lambda c: init(c, views))
            _nest(spatial, lambda c: vector_body(c, views, reduced, int(reduced[-1]["extent"]), tail))
            return
        if plan["init"]:
            _nest(spatial, lambda c: init(c, views), tail=tail)
        _nest(loops, lambda c: body(c, views), tail=tail)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _combine(name, a, b):
    return {"sum": lambda: a + b, "max": lambda: tirx.max(a, b), "min": lambda: tirx.min(a, b)}[name]()


def _identity(name, dtype):
    return {"sum": tirx.const(0, dtype), "max": tirx.min_value(dtype), "min": tirx.max_value(dtype)}[name]


def _emit_reduce_digits(request, plan):
    operands = plan["operands"]
    dtype = str(request.buffers["dst"].dtype)
    combine = plan["combine"]

    def coordinate(role, loops, counters, base=None):
        idx = list(base) if base is not None else list(request.regions[role][0])
        for loop, c in zip(loops, counters):
            if role in loop["dims"]:
                d = int(loop["dims"][role])
                idx[d] = idx[d] + c
        return idx

    def kept(spatial_counters, views):
        dst_addr = _digit_address(operands["dst"], coordinate("dst", plan["spatial"], spatial_counters))
        src_base = coordinate("src0", plan["spatial"], spatial_counters)
        if plan["init"]:
            _store_replicas(views["dst"], operands["dst"], _identity(combine, dtype), dst_addr)

        def reduce(counters):
            x = views["src0"][_digit_address(operands["src0"], coordinate("src0", plan["reduced"], counters,
                                                                          src_base))]
            x = x if _dtype(x) == dtype else tirx.Cast(dtype, x)
            _store_replicas(views["dst"], operands["dst"], _combine(combine, views["dst"][dst_addr], x), dst_addr)

        _nest([dict(l, kind="serial") for l in plan["reduced"]], reduce)

    def whole():
        views = _digit_views(request, operands)
        _nest([dict(l, kind="serial") for l in plan["spatial"]], lambda c: kept(c, views))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _emit_gemm_naive(request, plan):
    operands = plan["operands"]
    M, N, K = int(plan["M"]), int(plan["N"]), int(plan["K"])
    dtype = str(request.buffers["D"].dtype)
    alpha, beta = request.scalars["alpha"], request.scalars["beta"]

    def cast(v):
        return v if _dtype(v) == dtype else tirx.Cast(dtype, v)

    def scalar(v):
        return tirx.const(float(v.value), dtype) if hasattr(v, "value") else cast(v)

    def address(role, **index):
        entry = operands[role]
        coord = list(request.regions[role][0])
        for name, value in index.items():
            d = int(entry["dims"][name])
            coord[d] = coord[d] + value
        return _digit_address(entry, coord)

    def whole():
        views = _digit_views(request, operands)
        with T.serial(M) as m:
            with T.serial(N) as n:
                acc = T.decl_buffer((1,), dtype, scope="local", layout=None)
                T.buffer_store(acc, tirx.const(0, dtype), [0])
                with T.serial(K) as k:
                    T.buffer_store(acc, acc[0] + cast(views["A"][address("A", m=m, k=k)])
                                   * cast(views["B"][address("B", k=k, n=n)]), [0])
                value = scalar(alpha) * acc[0]
                if not _is_zero(beta):
                    value = value + scalar(beta) * cast(views["C"][address("C", m=m, n=n)])
                _store_replicas(views["D"], operands["D"], value, address("D", m=m, n=n))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _is_zero(expr) -> bool:
    try:
        return float(expr.value) == 0.0
    except (AttributeError, TypeError, ValueError):
        return False


class _EmitHelpers:
    """What the CUDA emitter shares with the CPU one."""

    sources = staticmethod(_sources)
    source_count = staticmethod(_source_count)
    value = staticmethod(_value)
    base_last = staticmethod(_base_last)
    flat_views = staticmethod(_flat_views)
    digit_views = staticmethod(_digit_views)
    digit_address = staticmethod(_digit_address)
    store_replicas = staticmethod(_store_replicas)
    combine = staticmethod(_combine)
    span = staticmethod(_span)
    identity = staticmethod(_identity)
