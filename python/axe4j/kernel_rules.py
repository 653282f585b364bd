"""What a kernel builder asks before it hands a kernel out: does an axe4j rule lower every tile call of it?

A builder's parameters (tile sizes, stages) decide the layouts and regions of its tile calls; whether the rules take
them is the rules' business, so the builder asks them rather than repeating their conditions. ``require`` runs the
part of ``axe4j.compile`` that decides, and no code generation: on CUDA the layout passes and TVM's tile dispatch
with the dispatch cases watched (``axe4j.lowering``), so each call's case is known, thread counts included; on
Trainium each call is described and put to the Java rules (as ``axe4j.explain`` does). A call that no axe4j rule
lowers (TVM's own case took it, or nothing did) makes the builder refuse with ``ValueError``, naming the call and
each axe4j rule's reason.
"""

from __future__ import annotations


def require(kernel, target, what: str, upstream_on_purpose=()) -> list:
    """The ``axe4j.Lowering`` rows of ``kernel`` for ``target``; raises ``ValueError`` starting with ``what`` when a
    tile call is not lowered by an axe4j rule (TVM's cases named in ``upstream_on_purpose`` excepted)."""
    import tvm

    from . import dispatch, install, lowering

    install()
    dispatch.register()
    lowering.watch()
    target = tvm.target.Target(target) if isinstance(target, (str, dict)) else target
    if dispatch._kind_name(target) == dispatch.CUDA_KIND:
        rows, problems = _cuda(kernel, target, upstream_on_purpose)
    else:
        rows, problems = _by_explain(kernel, target)
    if problems:
        raise ValueError(f"{what}: axe4j's rules do not lower every tile call of the kernel, so it is refused:\n  "
                         + "\n  ".join(problems))
    return rows


def _cuda(kernel, target, upstream_on_purpose):
    from . import dispatch, lowering
    from .transform import run_layout_passes

    mod = run_layout_passes(kernel, target)
    with lowering.record() as rows:
        recorded, stopped = dispatch.recorded_requests(mod, target)
    requests = {_line(call): request for call, request in recorded}
    problems = []
    for row in rows:
        if not row.by_axe4j and row.variant not in upstream_on_purpose:
            problems.append(f"{row.call}: lowered by TVM's case {row.variant}; " + _reasons(requests.get(row.call)))
    if stopped:
        lowered = {row.call for row in rows}
        stuck = [line for line in requests if line not in lowered]
        problems.append((f"{stuck[0]}: " + _reasons(requests[stuck[0]]) + "; " if stuck else "")
                        + f"no case lowers it ({stopped})")
    return list(rows), problems


def _by_explain(kernel, target):
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    from . import dispatch
    from .compile import _tile_calls, _with_inferred_layouts

    funcs = [("main", kernel)] if not hasattr(kernel, "functions") else [(str(g.name_hint), f)
                                                                         for g, f in kernel.functions.items()]
    funcs, _ = _with_inferred_layouts(funcs, kernel, target, [])
    problems = []
    for _, func in funcs:
        calls = []
        _tile_calls(func.body, calls)
        for call in calls:
            call = TilePrimitiveCall.downcast(call)
            scope = call.scope.name if call.scope is not None else "thread"
            try:
                request = dispatch.describe(call, dispatch._kind_name(target), str(scope))
            except dispatch._NotDescribable as error:
                problems.append(f"{_line(call)}: {error}")
                continue
            if not any(d["accepted"] for d in dispatch.explain_call(request)):
                problems.append(f"{_line(call)}: " + _reasons(request))
    return [], problems


def _reasons(request) -> str:
    """Each axe4j rule's decision on the call, or why the call could not be put to them."""
    from . import dispatch

    if request is None:
        return "the call was not described to axe4j's rules"
    if isinstance(request, Exception):
        return f"not describable to axe4j's rules: {request}"
    decisions = dispatch.explain_call(request)
    return "; ".join(f"{d['variant']}: " + ("accepts it" if d["accepted"] else d["reason"]) for d in decisions)


def _line(call) -> str:
    return str(call.script()).strip().splitlines()[-1].strip()
