"""A redistribution request as XLA's SPMD partitioner (GSPMD, through JAX) compiles it: the peer of axe4j's plans.

The source is a ``jax.Array`` with a ``NamedSharding`` over a ``Mesh`` of the request's shape (axes ``m0``, ``m1``,
...; devices in row-major rank order), and the program ``jax.jit(lambda x: x, out_shardings=dst)`` reshards it.
``Shard(d)`` on mesh dims j1, j2, ... becomes ``PartitionSpec`` entry ``("m<j1>", "m<j2>", ...)`` at d (mesh order is
DTensor's nesting order, outer first).

Partial sources: an array has no "partial" sharding in JAX; a partial sum is what XLA sees after a local
contraction, a value to be summed over the partial mesh dims. So the source is the stack of the p summands
(leading axis of length p, sharded over the partial mesh dims: device at partial coordinates k holds summand k,
k row-major as in axe4j's plans), and the program is ``jnp.sum(stack, axis=0)`` with the destination sharding:
the partitioner sums each device's own slice locally and inserts the reduce-scatter or all-reduce over the
partial dims that the destination needs. One holder of a replicated dim (``held_at [[j, c]]``) is likewise a stack
of mesh[j] slots sharded over mesh dim j, of which the program takes slot c.

The JAX process must have ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` set before importing jax
(N >= the mesh size); this module imports jax only inside its functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import per_dim


def partition_spec(places: tuple, ndim: int, lead: tuple = ()) -> tuple:
    """The ``PartitionSpec`` entries of placements: per tensor dim the mesh axes sharding it (None if none);
    ``lead`` entries (for a stacked leading axis) come first."""
    spec = [[] for _ in range(ndim)]
    for j, pl in enumerate(places):
        if pl[0] == "S":
            if pl[1] >= ndim:
                raise ValueError(f"placement Shard({pl[1]}) on mesh dim {j}: the tensor has {ndim} dims")
            spec[pl[1]].append(f"m{j}")
    entries = [None if not axes else axes[0] if len(axes) == 1 else tuple(axes) for axes in spec]
    return tuple(lead) + tuple(entries)


@dataclass(frozen=True)
class Program:
    """What runs in JAX: the host input (stacked for partial / one-holder sources), its sharding, the function and
    the destination sharding (``PartitionSpec`` entries over axes m0, m1, ...)."""

    mesh_shape: tuple
    input_spec: tuple
    output_spec: tuple
    kind: str  # "reshard", "sum" (partial source), "slot" (one holder)
    slot: int = 0


def program(request: dict) -> Program:
    mesh = tuple(request["mesh"]["shape"])
    ndim = len(request["global_shape"])
    src, dst = per_dim.parse(request["src"]["placements"]), per_dim.parse(request["dst"]["placements"])
    if per_dim.PARTIAL in dst:
        raise ValueError(f"destination {request['dst']['placements']}: a partial destination has no GSPMD array")
    out = partition_spec(dst, ndim)
    partial = [j for j, pl in enumerate(src) if pl == per_dim.PARTIAL]
    held = request["src"].get("held_at") or []
    if partial and held:
        raise ValueError("a source both partial and held at one coordinate")
    if partial:
        lead = f"m{partial[0]}" if len(partial) == 1 else tuple(f"m{j}" for j in partial)
        return Program(mesh, partition_spec(src, ndim, (lead,)), out, "sum")
    if held:
        if len(held) != 1:
            raise ValueError(f"held_at {held}: one held mesh dim is supported")
        j, c = held[0]
        return Program(mesh, partition_spec(src, ndim, (f"m{j}",)), out, "slot", c)
    return Program(mesh, partition_spec(src, ndim), out, "reshard")


def host_input(prog: Program, request: dict, values: np.ndarray, summands: np.ndarray | None) -> np.ndarray:
    """The global input array of ``prog``: the values, the stack of summands, or the slots (zeros but slot c)."""
    if prog.kind == "sum":
        return summands
    if prog.kind == "slot":
        j = request["src"]["held_at"][0][0]
        slots = np.zeros((prog.mesh_shape[j],) + values.shape, values.dtype)
        slots[prog.slot] = values
        return slots
    return values


def compiled(prog: Program, host: np.ndarray):
    """(compiled executable, device input) of ``prog`` on the first prod(mesh) devices."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    n = int(np.prod(prog.mesh_shape))
    devices = jax.devices()
    if len(devices) < n:
        raise RuntimeError(f"{len(devices)} JAX devices for a mesh of {n}: set "
                           f"XLA_FLAGS=--xla_force_host_platform_device_count={n} before importing jax")
    mesh = Mesh(np.array(devices[:n]).reshape(prog.mesh_shape), tuple(f"m{j}" for j in range(len(prog.mesh_shape))))
    x = jax.device_put(host, NamedSharding(mesh, PartitionSpec(*prog.input_spec)))
    dst = NamedSharding(mesh, PartitionSpec(*prog.output_spec))
    if prog.kind == "sum":
        fn = jax.jit(lambda s: jnp.sum(s, axis=0), out_shardings=dst)
    elif prog.kind == "slot":
        fn = jax.jit(lambda s: s[prog.slot], out_shardings=dst)
    else:
        fn = jax.jit(lambda v: v, out_shardings=dst)
    return fn.lower(x).compile(), x
