"""A ``cuda-cp-async`` plan (axe4j.cuda.async_emit's, the same Java record) as explicit tvm_tirx tile calls, and the
wait that completes it.

Thread t of the scope's T threads takes chunks ``c = t, t + T, ...`` as in ``_emit_affine`` (the same digits of c,
the same flat views). Each chunk and destination replica is one
``T.cuda.tile.apply(T.ptx[<the plan's instruction>], shared_chunk, global_chunk, chunk_bytes=<the plan's bytes>)``
(``cp.async.cg.shared.global`` for 16 bytes, ``.ca`` for 4 or 8). After the chunks the call commits them as one
group: ``cp.async.commit_group``. ``wait`` is ``cp.async.wait_group n``. tvm_tirx's ``apply`` has no pattern for
commit and wait (they have no operands to view), so those two are raw ``T.ptx`` calls.
"""

from __future__ import annotations

from tvm_tirx.ir import Evaluate, For, ForKind, If, IntImm, SeqStmt, Var
from tvm_tirx.script import tirx as T

from ._emit_affine import (NotOnThisLane, _base_last, _counters, _flat_view, _reach, _run_time_offset, _thread_index,
                           swizzled, swizzled_span)


def emit(request, plan, scope: str, sctx):
    """The statement that replaces a ``copy_async`` call: the chunks' cp.async calls, then one commit."""
    vec, loops, access = plan.vec, plan.loops, plan.access
    threads, chunks, rounds, size = plan.threads, plan.chunks, plan.rounds, plan.bytes
    for role, entry in access.items():
        if any(loop.strides[role] < 0 for loop in loops):
            raise NotOnThisLane(f"{role}: negative strides in {entry.layout}")
    if vec > 1 and (not loops or loops[-1].extent % vec):
        raise ValueError(f"cuda-cp-async plan: vec {vec} does not divide the innermost extent")
    binds, views, bases = [], {}, {}
    for role, tensor in request.tensors.items():
        entry = access[role]
        shape = [int(n) for n in tensor.ty.shape]
        span = (entry.base + _reach(entry, shape, request.extents[role])
                + sum((l.extent - 1) * l.strides[role] for l in loops) + max([0, *entry.replicas]) + 1)
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, swizzled_span(span, entry.swizzle),
                                       request.storage[role])
        binds.append(bind)
        bases[role] = entry.base + _run_time_offset(entry, request.starts[role])

    def address(role, counters, replica=0):
        addr = bases[role]
        for loop, counter in zip(loops, counters):
            if loop.strides[role]:
                addr = addr + counter * loop.strides[role]
        return swizzled(addr + replica if replica else addr, access[role].swizzle, vec)

    def chunk(c):
        counters = _counters(c, loops, vec)
        src = address("src0", counters)
        body = [Evaluate(T.cuda.tile.apply(T.ptx[plan.instruction], views["dst"][at:at + vec],
                                           views["src0"][src:src + vec], scope="thread", chunk_bytes=size))
                for at in (address("dst", counters, r) for r in _base_last(access["dst"].replicas))]
        return SeqStmt(body) if len(body) > 1 else body[0]

    f = Var("axe4j_round", "int32")
    c = f * threads + _thread_index(scope, sctx, threads)
    step = chunk(c) if chunks % threads == 0 else If(c < chunks, chunk(c), None)
    loop = For(f, 0, rounds, IntImm("int32", 1), ForKind.DEFAULT, step)
    return SeqStmt([*binds, loop, Evaluate(T.ptx["cp.async.commit_group"]())])
