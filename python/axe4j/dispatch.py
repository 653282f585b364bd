"""Java dispatch rules for TIRx tile primitives as cases of TVM's dispatch table (target kinds llvm, cuda, trn).

``register()`` adds one case to TVM's dispatch table (``tvm.tirx.operator.tile_primitive.dispatcher``)
for every (op, variant, priority) that Java lists through the global ``axe4j.schedules.table``; the
upstream cases and their priorities stay as they are. Each case:

1. describes the call (op, target kind, scope, tensor operands with their regions, the op's
   parameters) as JSON, with the operands' ``tirx.TileLayout`` objects alongside;
2. asks Java ``axe4j.schedules.decide(variant, json, layouts)``; Java checks the rule's applicability
   from the layouts and answers a loop plan or a reason to decline;
3. declines with that reason (``DispatchFail``), or turns the plan into a PrimFunc whose body replaces
   the call (``emit``); the plan is checked against ``plan_schema.json`` first (``axe4j.plans``), so the
   emitter reads a typed plan (``axe4j.plan_types``) whose fields are known. The emitter is the one registered for
   the plan's kind (``axe4j._registry``: ``axe4j.cpu.emit``, ``axe4j.cuda.emit``, ``axe4j.trn.emit``, ...); this
   module imports none. The emitter makes no decision of its own: loop order, loop kinds, strides, bases and replica
   displacements all come from the plan; what it derives (an operand's base with the run-time starts,
   ``axe4j._emit.OperandBase``) stays out of the plan.

A forced variant works as upstream: ``Tx.copy(dst, src, dispatch="axe4j-cpu-scalar")``.
"""

from __future__ import annotations

import json
import threading

from tvm import tirx
from tvm.script import tirx as T

from . import _registry, lowering, plans
from ._emit import data_of, run_time_offset, run_time_reach  # noqa: F401  (dispatch.run_time_offset, as before)
from ._errors import PlanError
from ._scope import threads_of

TARGET_KIND = "llvm"
CUDA_KIND = "cuda"
CUDA_PRIORITY_ENV = "AXE4J_CUDA_PRIORITY_OFFSET"
_lock = threading.Lock()
_registered: list[tuple[str, str, int]] = []

_MAP_OPS = {"copy", "cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
            "add", "sub", "mul", "fdiv", "maximum", "minimum", "fma"}
_BINARY_OPS = {"add", "sub", "mul", "fdiv", "maximum", "minimum"}
_TERNARY_OPS = {"fma"}  # fma(dst, src, scale, bias): dst = src * scale + bias
_UNARY_WITH_BIAS_SCALE = {"exp", "exp2", "log2", "sqrt"}  # (dst, src, bias, scale): f(src * scale + bias); trn, llvm
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
        lowering.explain_tma_refusals_with(_tma_reason)
        lowering.watch()
        return list(_registered)


def _tma_reason(op_call, sctx) -> str:
    """axe4j-cuda-tma's reason for declining the call, when the Java rules are installed."""
    if ("copy_async", "axe4j-cuda-tma") not in {(o, v) for o, v, _ in registered()}:
        return ""
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    try:
        request = describe(TilePrimitiveCall.downcast(op_call), _kind_name(sctx.target), str(sctx.scope_kind), sctx)
        decision = decide("axe4j-cuda-tma", request)
    except Exception as error:  # noqa: BLE001  (the reason is a courtesy; the refusal stands without it)
        return f" (axe4j-cuda-tma cannot plan it: {error})"
    if decision["accepted"]:
        return " (axe4j-cuda-tma accepts it; a forced dispatch= chose another case)"
    return f" (axe4j-cuda-tma declined: {decision['reason']})"


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
    from . import upstream

    _recording.sink = []
    try:
        with target, lowering.guarded(upstream.guard):   # as the default mode dispatches
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
            body = emit(request, decision["plan"].typed)
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


def _cpu_bias_scale_sources(op, args):
    """[src, bias, scale] of ``op(dst, src, bias, scale)`` = ``op(src * scale + bias)``; bias 0 and scale 1 where
    absent. The scale must be a scalar (TVM's op takes a ``FloatImm``)."""
    dst, src, bias, scale = (list(args) + [None, None])[:4]
    dtype = str(dst.source.dtype)
    if scale is not None and _is_region(scale):
        raise ValueError(f"{op}: scale must be a scalar, not the tile {scale}; bias may be a tile")
    return [src, tirx.const(0, dtype) if bias is None else bias, tirx.const(1, dtype) if scale is None else scale]


def describe(call, target_kind: str, scope_kind: str, sctx=None, target=None) -> Described:
    """Builds the request for Java from a ``TilePrimitiveCall`` (downcast); ``sctx`` gives CUDA thread counts and
    the target, else ``target`` (explain) does: a CPU gemm gets the target's ISA, caches and cores (``cpu``)."""
    op = call.op.name.split(".")[-1]
    args = list(call.args)
    roles: list[tuple[str, object]] = []
    scalars: dict[int, object] = {}
    params: dict[str, object] = {}
    if op in _MAP_OPS:
        srcs = args[1:4] if op in _TERNARY_OPS else args[1:3] if op in _BINARY_OPS else args[1:2]
        if op in _UNARY_WITH_BIAS_SCALE:
            params["bias_scale"] = any(a is not None for a in args[2:4])
            if params["bias_scale"] and target_kind == TARGET_KIND:
                # f(src * scale + bias) on the CPU: bias (a tile, per-row stride-0 included, or a scalar) and scale
                # become sources 1 and 2 of an ordinary map (``_emit.source_count``)
                srcs = _cpu_bias_scale_sources(op, args)
                params["bias_scale"] = False
                params["scaled_input"] = True
        roles.append(("dst", args[0]))
        for i, s in enumerate(srcs):
            if _is_region(s):
                roles.append((f"src{i}", s))
            else:
                scalars[i] = s
        if op in _UNARY_WITH_BIAS_SCALE and target_kind == "trn":
            from .trn import describe as trn_describe

            trn_describe.describe_bias_scale(args, roles, scalars, params, _constant)
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
        from .trn import describe as trn_describe

        trn_describe.describe_workspace(call, operands, layouts, buffers, regions, _layout_of)
        params["storage"] = {role: str(b.scope()) for role, b in buffers.items()}
    target = sctx.target if sctx is not None else target
    if target_kind == TARGET_KIND and (op == "gemm" or op in _MAP_OPS or op in _REDUCE_OPS) and target is not None:
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

def emit(request: Described, plan):
    """The PrimFunc of a checked plan (typed: a ``plan_types`` class, ``Plan.typed``), by the emitter registered for
    its kind (``axe4j._registry``). An emitter derives what the call adds to the plan (an operand's base with the
    run-time starts: ``axe4j._emit.operand_bases``) without writing it into the plan."""
    return _registry.emitter(plan.kind)(request, plan)



