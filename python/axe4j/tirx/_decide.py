"""The Java rules' decision for a described call, reached as on the 0.27 lane: the CUDA rows of
``axe4j.schedules.table`` for the op, highest priority first, each asked ``axe4j.schedules.decide``; the first that
accepts is chosen (0.27's dispatch table tries its cases in the same order, axe4j's CUDA rules above TVM's). When
none accepts, ``axe4j.DispatchRefused`` says so in the 0.27 lane's words (``axe4j._refusal``): the call, its scope and
target, each operand's storage and layout, then every rule with its reason."""

from __future__ import annotations

import json
import os

from .. import plans
from .._errors import DispatchRefused

# 0.27 adds this offset to Java's CUDA priorities when it registers them (axe4j.dispatch.cuda_priority_offset);
# the same numbers here keep refusals and explanations alike on both lanes
CUDA_PRIORITY_ENV = "AXE4J_CUDA_PRIORITY_OFFSET"


def _offset() -> int:
    text = os.environ.get(CUDA_PRIORITY_ENV, "100")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{CUDA_PRIORITY_ENV}={text!r} is not an integer") from None


def rules(op: str) -> list[tuple[int, str]]:
    """(priority, variant) of the Java CUDA rules for ``op``, highest priority first."""
    import tvm_ffi

    table = tvm_ffi.get_global_func("axe4j.schedules.table", allow_missing=True)
    if table is None:
        raise RuntimeError("the Java global axe4j.schedules.table is missing: build the schedules jar and call "
                           "axe4j.install() first")
    offset = _offset()
    rows = [(int(r["priority"]) + offset, str(r["variant"])) for r in table()
            if str(r["op"]) == op and "target" in r and str(r["target"]) == "cuda"]
    return sorted(rows, key=lambda row: -row[0])


def every(request) -> list[tuple[int, str, dict]]:
    """(priority, variant, decision) of every CUDA rule for the op, highest priority first (for explain)."""
    import tvm_ffi

    ask = tvm_ffi.get_global_func("axe4j.schedules.decide")
    out = []
    for priority, variant in rules(request.op):
        decision = plans.validate_decision(json.loads(str(ask(variant, request.json, list(request.layouts)))))
        out.append((priority, variant, decision))
    return out


def decide(request, headline: str) -> tuple[str, int, object]:
    """(variant, priority, typed plan) of the first rule that accepts ``request``; ``headline`` starts the refusal."""
    import tvm_ffi

    ask = tvm_ffi.get_global_func("axe4j.schedules.decide")
    declined = []
    for priority, variant in rules(request.op):
        decision = plans.validate_decision(json.loads(str(ask(variant, request.json, list(request.layouts)))))
        if decision.get("error"):
            raise RuntimeError(f"{variant}: rule error on the {request.op} call: {decision['error']}")
        if decision["accepted"]:
            return variant, priority, decision["plan"].typed
        declined.append(f"  {variant} (prio={priority}): {decision['reason']}")
    lines = [headline, "axe4j's rules declined it:" if declined else f"axe4j has no CUDA rule for {request.op}"]
    raise DispatchRefused("\n".join(lines + declined))
