"""Distributed tensors on device meshes: Axe layouts with device axes, redistribution plans, MPI execution.

Planning is Java (``org.axe4j.mesh``, TVM globals ``axe4j.mesh.*``), done once in the launching process;
each rank executes the JSON plan with mpi4py and numpy (:mod:`axe4j.mesh.mpi_exec`), without a JVM. A request
names the mesh, the global shape and the two tensors, each by an Axe layout or by DTensor placements::

    import axe4j.mesh as mesh
    req = {"mesh": {"shape": [4]}, "global_shape": [16, 8], "element_bytes": 4,
           "src": {"placements": "[Partial()]"}, "dst": {"placements": "[Shard(0)]"}}
    print(mesh.explain(req))          # reduce_scatter over mesh dims [0] (groups of 4), bytes per rank
    plan = mesh.plan(req)             # dict in the axe4j.mesh.plan/2 format (docs/mesh.md)

Functions here start the JVM on first use (``axe4j.install()``); import ``tvm`` before them.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["explain", "layout", "local_shards", "plan", "plan_text"]

_FUNCTIONS: dict = {}


def _call(name: str, request: Any) -> str:
    function = _FUNCTIONS.get(name)
    if function is None:
        import tvm_ffi

        from .. import install

        install()
        function = _FUNCTIONS[name] = tvm_ffi.get_global_func("axe4j.mesh." + name)
    text = request if isinstance(request, str) else json.dumps(request)
    return str(function(text))


def plan_text(request: Any) -> str:
    """The JSON plan as text (what the launcher hands to the ranks)."""
    return _call("plan", request)


def plan(request: Any) -> dict:
    """The redistribution plan of ``request`` (``src`` to ``dst``) as a dict."""
    return json.loads(plan_text(request))


def explain(request: Any) -> str:
    """The plan in words: each rank's local shards, each step's collective, bytes received per rank, minimum."""
    return _call("explain", request)


def local_shards(request: Any) -> list:
    """Per rank: local shape, local layout (the memory iters), buffer size and the global region of ``tensor``."""
    return json.loads(_call("local_shards", request))


def layout(request: Any) -> str:
    """The Axe layout text of ``tensor`` (given by placements or by layout)."""
    return _call("layout", request)
