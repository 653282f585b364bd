"""``compile(mod, target)`` and ``explain(mod, target)``: TVM's TIRx pipeline with the Java CPU rules installed."""

from __future__ import annotations

import json
import threading

_worker_lock = threading.Lock()


from .target_check import host_target  # noqa: F401  (axe4j.host_target, as before)

STRICT_ENV = "AXE4J_STRICT"


def strict_default() -> bool:
    """Strict mode when ``AXE4J_STRICT`` is ``1``, ``true`` or ``yes``."""
    import os

    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes")


def compile(mod, target="llvm", *, strict=None, **kwargs):  # noqa: A001  (mirrors tvm.compile)
    """``tvm.compile(mod, target, tir_pipeline="tirx")`` after ``axe4j.install()`` registered the Java cases.

    ``strict=True`` (default: ``AXE4J_STRICT``) refuses a kernel any tile call of which TVM's own dispatch case
    lowered instead of an axe4j rule, or an axe4j rule lowered with accesses narrower than the layouts allow (a plan
    note ``narrowed: ...``, e.g. a tile offset whose alignment a plain assignment hid), with a ``StrictError`` naming
    each such call. In the default mode a call no axe4j rule takes is lowered by one of TVM's own CUDA cases only where
    that case is proven right for it (``axe4j.upstream``); otherwise the compile fails with the rules' reasons.

    For ``tir_pipeline="tirx"`` and ``"trn"`` the layout passes run first (verify -> infer -> canonicalize,
    docs/passes.md): a layout violation raises one ``ValueError`` naming all of them, buffers without a layout get
    one (CPU, CUDA registers and shared tiles, Trainium SBUF/PSUM tiles). The executable's ``lowered`` lists, per
    tile call, the dispatch case that lowered it (``axe4j.lowering.Lowering``: axe4j's rule with its plan's notes, or
    TVM's own case); ``axe4j.lowered()`` returns the same for the last compile in this thread.

    The target is checked before any lowering (``axe4j.target_check``): ``"cpu"`` means ``host_target()``, a CUDA
    target must name an arch nvcc builds."""
    from . import dispatch, install, lowering, target_check, upstream

    target = target_check.checked(target)
    install()
    dispatch.register()
    lowering.watch()
    dispatch.take_rule_errors()
    strict = strict if strict is not None else strict_default()
    with lowering.record() as rows, lowering.guarded(None if strict else upstream.guard):
        try:
            executable = _compile(mod, target, **kwargs)
        except Exception as error:
            _raise_rule_errors(error)
            from . import _refusal
            from ._axes import explain_unknown_axis

            unknown_axis = explain_unknown_axis(error, mod)
            if unknown_axis is not None:
                raise unknown_axis from error
            refused = _refusal.clearer(error)
            if refused is not None:
                raise refused from error
            raise
    _raise_rule_errors(None)
    lowering.keep(rows)
    executable.lowered = list(rows)
    executable.functions = mod   # the PrimFuncs as written, and their target: export_library's manifest
    executable.target = target
    from ._arguments import ShapeCheckedExecutable
    from tvm.runtime import Executable

    if type(executable) is Executable:
        executable.__class__ = ShapeCheckedExecutable   # argument errors name the expected and given shapes
    if strict:
        _refuse_fallbacks(executable.lowered)
    return executable


def _refuse_fallbacks(rows):
    from ._errors import StrictError

    fallbacks = [row for row in rows if not row.by_axe4j]
    narrowed = [row for row in rows if row.by_axe4j and any(str(n).startswith("narrowed:") for n in row.notes)]
    problems = []
    if fallbacks:
        problems.append(f"{len(fallbacks)} tile call(s) lowered by TVM's own dispatch cases, not by an axe4j rule "
                        "(axe4j.explain shows why its rules declined):\n  "
                        + "\n  ".join(f"{row.call}: {row.variant} (prio={row.priority})" for row in fallbacks))
    if narrowed:
        problems.append(f"{len(narrowed)} tile call(s) with accesses narrower than the layouts allow:\n  "
                        + "\n  ".join(f"{row.call}: {next(n for n in row.notes if str(n).startswith('narrowed:'))}"
                                       for row in narrowed))
    if problems:
        raise StrictError("strict mode: " + "\n".join(problems))


def _raise_rule_errors(cause):
    """A Java rule that threw, a plan that breaks the contract or an emitter that raised on an accepted plan is a bug,
    not a decline (TVM's dispatcher would try its next case): the compile fails naming the rule, the call and the
    error."""
    from . import dispatch
    from ._errors import RuleError

    errors = dispatch.take_rule_errors()
    if errors:
        raise RuleError(f"{len(errors)} dispatch rule error(s) (bugs in axe4j's rules or emitters, not declines):\n  "
                        + "\n  ".join(errors)) from cause


def _compile(mod, target, **kwargs):
    import tvm

    kwargs.setdefault("tir_pipeline", "tirx")
    if kwargs["tir_pipeline"] in ("tirx", "trn"):
        from .transform import run_layout_passes  # verify -> infer -> canonicalize (docs/passes.md)

        def as_written():
            return tvm.compile(_dispatch_worker_layouts(mod, target), target=target, **kwargs)

        mod = _dispatch_worker_layouts(run_layout_passes(mod, target, late=as_written), target)
    from .cuda import interp as cuda_interp

    trn = kwargs["tir_pipeline"] == "trn"
    if trn:   # TVM's Trainium passes, unused private buffers dropped after dispatch (axe4j.trn.pipeline)
        from .trn import pipeline as trn_pipeline

        trn_pipeline.register()
        kwargs = dict(kwargs, tir_pipeline=trn_pipeline.NAME)
    with cuda_interp.capture() as record:  # the lowered modules, for the CPU interpreter of CUDA kernels
        executable = tvm.compile(mod, target=target, **kwargs)
    if trn:
        _check_trn_allocation(mod, executable)
    return cuda_interp.attach(executable, record)


def _check_trn_allocation(mod, executable):
    """SBUF addresses TVM chose against the layouts' spans (axe4j.trn.allocation): overlap or overflow is an error.
    Records ``executable.trn_layout_extents`` (``trn_allocation.layout_extents`` of every function)."""
    import tvm

    from .trn import allocation as trn_allocation

    source = executable.mod.imports[0].inspect_source()
    funcs = mod.functions.values() if isinstance(mod, tvm.IRModule) else [mod]
    executable.trn_layout_extents = {}   # what each buffer's (written or inferred) layout spans, for the executor
    for func in funcs:
        if isinstance(func, tvm.tirx.PrimFunc):
            trn_allocation.check(func, source)
            executable.trn_layout_extents.update(trn_allocation.layout_extents(func))


def _has_worker_axis(layout) -> bool:
    try:
        return any(str(it.axis.name) == "cpu" for it in layout.shard)
    except AttributeError:
        return False


def _dispatch_worker_layouts(mod, target):
    """Worker layouts: a buffer view whose layout has a ``cpu`` iter cannot pass TVM's TIRx cleanup, which asks
    every layout axis whether it is a thread axis and knows no ``cpu`` axis (it cannot be registered from Python).
    For a function with such top-level views, run the tile dispatch here (the Java rules address those views
    through flat views of the data they alias), then drop the views' declarations, which nothing uses any more,
    and hand the result to the ordinary pipeline (whose dispatch then finds no tile call left)."""
    import tvm
    from tvm import tirx

    from . import _emit

    single = isinstance(mod, tirx.PrimFunc)
    module = tvm.IRModule({_symbol(mod): mod}) if single else mod
    target = tvm.target.Target(target) if isinstance(target, str) else target
    changed = {}
    for gvar, func in module.functions.items():
        if not isinstance(func, tirx.PrimFunc) or not isinstance(func.body, tirx.SeqStmt):
            continue
        workers = [s for s in func.body.seq
                   if isinstance(s, tirx.DeclBuffer) and s.data is not None and _has_worker_axis(s.buffer.layout)]
        if not workers:
            continue
        with_target = func if func.attrs is not None and "target" in func.attrs else func.with_attr("target", target)
        with _worker_lock:  # the emitter reads the views' data from this process-wide list
            _emit._worker_buffers[:] = [(s.buffer, s.data) for s in workers]
            try:
                lowered = tirx.transform.TilePrimitiveDispatch()(tvm.IRModule({gvar: with_target}))[gvar]
            finally:
                _emit._worker_buffers[:] = []
        kept = [s for s in lowered.body.seq if not any(s.same_as(w) for w in workers)]
        # TVM refuses a SeqStmt of one statement (a loop around the one tile call, say)
        body = kept[0] if len(kept) == 1 else tirx.SeqStmt(kept) if kept else tirx.Evaluate(0)
        changed[gvar] = lowered.with_body(body)
    if not changed:
        return mod
    for gvar, func in changed.items():
        module[gvar] = func
    return module


def _symbol(func) -> str:
    attrs = func.attrs
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return "main"


def _tile_calls(node, out):
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    if isinstance(node, TilePrimitiveCall):
        out.append(node)
        return
    for field in ("body", "then_case", "else_case", "block", "seq"):
        child = getattr(node, field, None)
        if child is None:
            continue
        if isinstance(child, (list, tuple)) or type(child).__name__ == "Array":
            for c in child:
                _tile_calls(c, out)
        else:
            _tile_calls(child, out)


def _with_inferred_layouts(funcs, mod, target, lines):
    """The functions as ``compile`` dispatches them: InferLayouts' choices applied, each listed in ``lines`` (the
    ``axe4j.layout_choices`` notes). Returns the new (name, func) pairs and the module (or function) they form."""
    import tvm
    from tvm import tirx

    from . import transform

    out = []
    for name, func in funcs:
        if isinstance(func, tirx.PrimFunc):
            func, notes = transform.infer(func, target)
            if notes:
                lines.append(f"{name}: layout choices (InferLayouts):")
                lines.extend("  " + n for n in notes)
        out.append((name, func))
    if not hasattr(mod, "functions"):
        return out, out[0][1]
    return out, tvm.IRModule({name: func for name, func in out})


def explain(mod, target="llvm", *, file=None, verbose=False) -> str:
    """For every tile call of ``mod`` (a PrimFunc or IRModule), every Java rule's decision with its reason.

    A call no axe4j rule accepts is marked ``FALLBACK``: one of TVM's own cases lowers it. ``verbose=True`` also lists
    each of TVM's cases for the call (their predicates run only inside the compilation, so explain cannot say which
    one). Returns the report and prints it (to ``file`` if given, else stdout).
    """
    import sys

    import tvm
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    from . import dispatch, install, target_check

    target = target_check.checked(target)
    install()
    dispatch.register()
    funcs = [("main", mod)] if not hasattr(mod, "functions") else [(str(g.name_hint), f) for g, f in mod.functions.items()]
    lines = []
    funcs, mod = _with_inferred_layouts(funcs, mod, target, lines)
    cuda = dispatch._kind_name(target) == dispatch.CUDA_KIND
    recorded, stopped = dispatch.recorded_requests(mod, target) if cuda else ([], None)
    bonus = dispatch.cuda_priority_offset() if cuda else 0  # as register() ranked the CUDA rows
    for name, func in funcs:
        tuning = func.attrs.get("axe4j.tuning") if getattr(func, "attrs", None) is not None else None
        if tuning is not None:
            lines.append(f"{name}: {tuning}")
        calls = []
        _tile_calls(func.body, calls)
        for n, call in enumerate(calls):
            call = TilePrimitiveCall.downcast(call)
            scope = call.scope.name if call.scope is not None else "thread"
            lines.append(f"{name} #{n}: {str(call.script()).strip().splitlines()[-1].strip()}")
            forced = call.dispatch
            if forced is not None:
                lines.append(f"  forced dispatch={forced}")
            try:
                request = _request_for(call, recorded, target, str(scope), reached=not (cuda and stopped))
            except dispatch._NotDescribable as error:
                lines.append(f"  not describable: {error}")
                continue
            if request is None:   # the scope's threads are known only to a dispatch that reached the call
                lines.append("  not reached: TVM's dispatch stopped at an earlier call (the last line says why); "
                             "fix that call, then explain again")
                continue
            chosen = None
            others = _other_cases(call.op, request)
            if verbose:
                for variant, priority in others:
                    lines.append(f"  {variant} (prio={priority}): not an axe4j rule; its predicates need the pipeline's "
                                 f"dispatch context and are evaluated only during compilation")
            for d in dispatch.explain_call(request):
                if forced is not None and d["variant"] != forced:
                    status = "skipped (not the forced variant)"
                elif d["accepted"]:
                    outranked = forced is None and any(p > d["priority"] + bonus for _, p in others)
                    if chosen is not None:
                        status = "accepted (lower priority)"
                    elif outranked:
                        status = ('accepted <- chosen unless a higher-priority TVM case applies ('
                                  + ", ".join(v for v, p in others if p > d["priority"] + bonus) + ")")
                    else:
                        status = "accepted <- chosen"
                    chosen = chosen or d["variant"]
                else:
                    status = ("RULE ERROR (a bug in the rule; compile refuses the kernel): " + d["error"]
                              if d.get("error") else "declined: " + d["reason"])
                lines.append(f"  {d['variant']} (prio={d['priority'] + bonus}): {status}")
                if d["accepted"]:
                    lines.append("    plan: " + _plan_summary(d["plan"]))
            if chosen is None and forced is None:
                if others and cuda:
                    lines.extend(_upstream_verdicts(call, request, str(scope), others))
                elif others:
                    lines.append(f"  FALLBACK: no axe4j rule accepts this call; TVM's own cases lower it "
                                 f"({', '.join(v for v, _ in others)}); axe4j.compile(..., strict=True) refuses it")
                else:
                    lines.append("  NO CASE: no axe4j rule accepts this call and TVM has no case of its own for it: "
                                 "the compile fails (the reasons are above)")
    if stopped:
        lines.append(f"TVM's dispatch stops here: {stopped}")
    report = "\n".join(lines)
    print(report, file=file or sys.stdout)
    return report


def _upstream_verdicts(call, request, scope, others):
    """explain's lines for a CUDA call no axe4j rule accepts: which of TVM's cases are proven right for it
    (``axe4j.upstream``) and may lower it in the default mode, or that the default mode refuses it."""
    from . import upstream

    facts = upstream.describe(call, scope, int(request.params.get("threads", 0) or 0) > 0)
    verdicts = [(v, *upstream.verdict(str(call.op.name).split(".")[-1], v, facts)) for v, _ in others]
    proven = [(v, why) for v, runs, why in verdicts if runs]
    if proven:
        return [f"  FALLBACK: no axe4j rule accepts this call; of TVM's own cases only those proven right for it may "
                f"lower it: {', '.join(v for v, _ in proven)} ({proven[0][1]}); axe4j.compile(..., strict=True) "
                f"refuses it"]
    return [f"  REFUSED: no axe4j rule accepts this call, and none of TVM's own cases "
            f"({', '.join(v for v, _ in others)}) is proven right for it ({upstream.operands_text(facts)} at {scope} "
            f"scope): the default mode refuses it with the reasons above; naming a case (dispatch=\"...\") runs it"]


def _request_for(call, recorded, target, scope, reached=True):
    """The request the pipeline's dispatch saw for ``call`` (with the scope's threads), else one built here; None
    when the dispatch stopped before the call (``reached=False``): a request built here would have no threads."""
    from . import dispatch

    for seen, request in recorded:
        if seen.same_as(call) or str(seen.script()) == str(call.script()):
            if isinstance(request, Exception):
                raise request
            recorded.remove((seen, request))
            return request
    if not reached:
        return None
    return dispatch.describe(call, dispatch._kind_name(target), scope, target=target)


def _other_cases(op, request):
    """Cases in TVM's table for this op and target kind that axe4j did not register (upstream or third-party)."""
    from . import _tvm_internals, dispatch

    ours = {(o, v) for o, v, _ in dispatch.registered()}
    kind = json.loads(request.json)["target"]
    cases = _tvm_internals.dispatch_table().get((op, kind), [])
    return [(c.variant, c.priority) for c in sorted(cases, key=lambda c: (-c.priority, c.variant))
            if (request.op, c.variant) not in ours and c.variant != dispatch.PROBE_VARIANT]


def _plan_summary(plan) -> str:
    if plan["kind"].startswith("cuda-"):
        return f"{plan['kind']}: " + "; ".join(plan.get("notes", []))
    if plan["kind"] == "reduce-digits":
        kept = " ".join(f"serial({l['extent']})" for l in plan["spatial"])
        reduced = " ".join(f"serial({l['extent']})" for l in plan["reduced"])
        return f"reduce-digits kept loops: {kept or '-'}; reduced loops: {reduced or '-'}; " + "; ".join(plan["notes"])
    if "loops" in plan:
        loops = " ".join(f"{l['kind']}({l['extent']})" for l in plan["loops"])
        notes = "; ".join(plan.get("notes", []))
        return f"{plan['kind']} loops outer->inner: {loops}" + (f"; {notes}" if notes else "")
    if plan["kind"] == "gemm-blocked" and plan.get("kernel") == "rows":
        return (f"gemm M={plan['M']} N={plan['N']} K={plan['K']} row kernel, vector dim {plan['vector_dim']}, "
                f"{plan['tile']['v']}-column chunks, parallel={plan['parallel']}"
                + "".join(f"; {n}" for n in plan.get("notes", [])))
    if plan["kind"] == "gemm-blocked":
        sizes = {d: (f"<={plan[d]} (run time)" if plan.get("run_time_extent") == d.lower() else plan[d]) for d in "MNK"}
        return (f"gemm M={sizes['M']} N={sizes['N']} K={sizes['K']} register tile {plan['tile']['u']}x{plan['tile']['v']} "
                f"vector dim {plan['vector_dim']}, K block {plan['blocks']['k']}, {plan['blocks']['u']}-row blocks, "
                f"parallel={plan['parallel']}"
                + "".join(f"; {n}" for n in plan.get("notes", [])))
    if "M" in plan:
        return f"{plan['kind']} M={plan['M']} N={plan['N']} K={plan['K']}"
    return f"{plan['kind']}: " + "; ".join(plan.get("notes", []))
