"""One ``Tx.cta.copy`` traced through the Java-decides / Python-emits seam (docs/architecture.md, "A worked trace").

Prints, for a global -> shared copy of a 32 x 32 float32 tile by a 128-thread CTA on sm_90a: the request Python
describes (``axe4j.dispatch.describe``, JSON), the Java rule's answer (``axe4j.schedules.decide`` for the variant
``axe4j-cuda-vector``, ``CudaRules.VECTOR``), the emitter the plan's kind selects (``axe4j._registry``), the TIR it
emits, and the row ``axe4j.explain`` shows. No GPU and no nvcc are needed: nothing is compiled to a cubin.

    PYTHONPATH=python AXE4J_CLASSPATH=... python tools/trace_copy.py
"""

from __future__ import annotations

import json

import tvm
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j import _registry, dispatch, plans

M, N, TT = 64, 64, 32
GN = N // TT


@T.prim_func
def load(A_ptr: T.handle, B_ptr: T.handle) -> None:
    A = T.match_buffer(A_ptr, (M, N), "float32")
    B = T.match_buffer(B_ptr, (M, N), "float32")
    T.device_entry()
    bid = T.cta_id([(M // TT) * GN])
    T.warp_id([4])
    T.lane_id([32])
    T.thread_id([128])
    i0 = T.meta_var((bid // GN) * TT)
    j0 = T.meta_var((bid % GN) * TT)
    tile = T.alloc_buffer((TT, TT), "float32", scope="shared", layout=TileLayout(S[TT, TT]))
    Tx.cta.copy(tile[:, :], A[i0:i0 + TT, j0:j0 + TT])
    T.cuda.cta_sync()
    Tx.cta.copy(B[i0:i0 + TT, j0:j0 + TT], tile[:, :])


def _show(obj: dict, indent: str = "") -> None:
    """One line per key, its value as compact JSON."""
    for key, value in obj.items():
        print(f"{indent}{key}: {json.dumps(value)}")


def main() -> None:
    axe4j.install()
    dispatch.register()
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    recorded, stopped = dispatch.recorded_requests(load, target)
    call, request = recorded[0]   # the first copy: global A -> shared tile
    print("== the call ==")
    print(str(call.script()).strip().splitlines()[-1].strip())
    print("== 1. the request Python describes (dispatch.describe) ==")
    _show(json.loads(request.json))
    print("== 2. the Java rule's answer (axe4j.schedules.decide, variant axe4j-cuda-vector) ==")
    decision = dispatch.decide("axe4j-cuda-vector", request)
    _show({k: v for k, v in decision.items() if k != "plan"})
    print("plan:")
    _show(decision["plan"], "  ")
    plan = decision["plan"]
    plans.validate(plan)   # decide already did: the plan's fields are those of plan_schema.json
    emitter = _registry.emitter(plan["kind"])
    print(f"== 3. the emitter of plan kind {plan['kind']!r} (axe4j._registry) ==")
    print(f"{emitter.__module__}.{emitter.__qualname__}")
    print("== 4. the PrimFunc it emits (dispatch.emit) ==")
    print(dispatch.emit(request, json.loads(json.dumps(plan))).script())
    print("== 5. axe4j.explain ==")
    axe4j.explain(load, target)   # prints the report


if __name__ == "__main__":
    main()
