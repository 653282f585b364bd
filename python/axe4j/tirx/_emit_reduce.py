"""``cuda-reduce`` and ``cuda-tree-reduce`` plans (axe4j.cuda.emit's, the same Java records) as explicit tvm_tirx
tile calls. ``cuda-tree-reduce``: see ``emit_tree``.

Thread t of the scope's T threads takes the outputs ``o = t, t + T, ...`` (``rounds`` of them, guarded by
``o < outputs`` when T does not divide them); o's kept-loop counters are its digits ``(o / below_l) mod E_l``. Each
output folds the reduced loops (serial, in order) into a one-element register tile that starts from the identity
(``init``) or from the destination's value (``accum``), then writes the destination once. A memory term is loaded by
an ``apply`` of ``ld`` into a one-element register tile; the fold is an ``ewise`` (sum) or an ``apply`` of PTX
``max``/``min`` (``_emit_register._combined``); a memory destination is written by an ``apply`` of ``st``.
"""

from __future__ import annotations

from tvm_tirx.ir import Bind, Evaluate, For, ForKind, If, IntImm, LambdaExpr, PrimType, SeqStmt, Var
from tvm_tirx.script import tirx as T

from . import _values as values
from ._emit_affine import (MEMORY, NotOnThisLane, _flat_view, _reach, _register_tile, _run_time_offset, _thread_index,
                           ptx_type)
from ._emit_register import _IDENTITY, _combined, _seq


def _counters(flat, loops):
    """Counters (outer first) of the row-major flat index ``flat`` over ``loops``."""
    out, below = [], 1
    for loop in reversed(loops):
        out.append(T.floormod(T.floordiv(flat, below), loop.extent) if below > 1 else T.floormod(flat, loop.extent))
        below *= loop.extent
    return list(reversed(out))


def _at(role, loops, counters, base):
    for loop, c in zip(loops, counters):
        if loop.strides[role]:
            base = base + c * loop.strides[role]
    return base



def _operand_views(request, access, loops):
    """Each operand as a flat view over the elements the plan's loops reach, with its bind and its base (the
    plan's base plus the run-time start): (binds, views, bases)."""
    binds, views, bases = [], {}, {}
    for role, tensor in request.tensors.items():
        storage = request.storage[role]
        if storage not in MEMORY and storage != "local":
            raise NotOnThisLane(f"{role}: storage {storage} is not spelled on the new TIRx lane")
        entry = access[role]
        shape = [int(n) for n in tensor.ty.shape]
        span = (entry.base + _reach(entry, shape, request.extents[role])
                + sum((l.extent - 1) * abs(l.strides[role]) for l in loops) + max([0, *entry.replicas]) + 1)
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, span, storage)
        binds.append(bind)
        bases[role] = entry.base + _run_time_offset(entry, request.starts[role])
    return binds, views, bases

def emit(request, plan, scope: str, sctx):
    """The statement that replaces a reduction with a ``cuda-reduce`` plan."""
    kept, folded, access, combine = list(plan.kept), list(plan.folded), plan.access, plan.combine
    if combine not in _IDENTITY:
        raise NotOnThisLane(f"cuda-reduce: combine {combine!r}")
    dtype = str(request.tensors["dst"].ty.dtype.dtype)
    src_dtype = str(request.tensors["src0"].ty.dtype.dtype)
    binds, views, bases = _operand_views(request, access, kept + folded)
    acc, bind = _register_tile("axe4j_acc", 1, dtype)
    binds.append(bind)
    term = None
    if request.storage["src0"] != "local":
        term, bind = _register_tile("axe4j_term", 1, src_dtype)
        binds.append(bind)

    def memory(kind, role, regs, at):
        name = f"{kind}.{MEMORY[request.storage[role]]}.{ptx_type(str(request.tensors[role].ty.dtype.dtype))}"
        mem = views[role][at:at + 1]
        return Evaluate(T.cuda.tile.apply(T.ptx[name], *((regs, mem) if kind == "ld" else (mem, regs)),
                                          scope="thread"))

    def output(o):
        counters = _counters(o, kept) if kept else []
        d_addr = _at("dst", kept, counters, bases["dst"])
        s_base = _at("src0", kept, counters, bases["src0"])
        if plan.init:
            body = [Evaluate(T.cuda.tile.ewise(LambdaExpr([], lambda: _IDENTITY[combine](dtype),
                                                          ret_type=PrimType(dtype)), acc[0:1], scope="thread"))]
        elif request.storage["dst"] != "local":
            body = [memory("ld", "dst", acc[0:1], d_addr)]
        else:
            body = [Evaluate(T.cuda.tile.ewise(values.function("copy", dtype, [dtype]), acc[0:1],
                                               views["dst"][d_addr:d_addr + 1], scope="thread"))]
        loop_vars = [Var(f"axe4j_k{i}", "int32") for i in range(len(folded))]
        at = _at("src0", folded, loop_vars, s_base)
        if term is not None:
            fold = SeqStmt([memory("ld", "src0", term[0:1], at),
                            _combined(combine, dtype, acc[0:1], acc[0:1], term[0:1], src_dtype)])
        else:
            fold = _combined(combine, dtype, acc[0:1], acc[0:1], views["src0"][at:at + 1], src_dtype)
        for var, loop in reversed(list(zip(loop_vars, folded))):
            fold = For(var, 0, loop.extent, IntImm("int32", 1), ForKind.DEFAULT, fold)
        body.append(fold)
        if request.storage["dst"] != "local":
            body.append(memory("st", "dst", acc[0:1], d_addr))
        else:
            body.append(Evaluate(T.cuda.tile.ewise(values.function("copy", dtype, [dtype]),
                                                   views["dst"][d_addr:d_addr + 1], acc[0:1], scope="thread")))
        return _seq(body)

    threads, outputs, rounds = plan.threads, plan.outputs, plan.rounds
    f = Var("axe4j_round", "int32")
    o = f * threads + _thread_index(scope, sctx, threads)
    step = output(o) if outputs % threads == 0 else If(o < outputs, output(o), None)
    return SeqStmt([*binds, For(f, 0, rounds, IntImm("int32", 1), ForKind.DEFAULT, step)])


def _both(a, b):
    return b if a is None else a if b is None else T.And(a, b)


def emit_tree(request, plan, scope: str, sctx):
    """The statement that replaces a reduction with a ``cuda-tree-reduce`` plan: output ``t / G`` (``+ T / G`` per
    round) belongs to a group of G consecutive threads; each folds terms ``t % G, t % G + G, ...`` into a one-element
    register tile, log2(G) butterfly shuffles (``__shfl_xor_sync`` over the active lanes, width G) combine the group,
    and the group's first thread writes the output. A group wider than a warp (CTA scope only) meets through a
    shared scratch tile of a value per warp: lane 0 of each warp stores its warp's partial, a CTA barrier, the
    group's first warp loads its group's partials (lane l the partial of warp ``w + l``, the identity past the
    group), shuffles them together, and its lane 0 writes the output; a barrier ends the round, before the next
    round writes the scratch."""
    kept, folded, access, combine = list(plan.kept), list(plan.folded), plan.access, plan.combine
    if combine not in _IDENTITY:
        raise NotOnThisLane(f"cuda-tree-reduce: combine {combine!r}")
    dtype = str(request.tensors["dst"].ty.dtype.dtype)
    src_dtype = str(request.tensors["src0"].ty.dtype.dtype)
    binds, views, bases = _operand_views(request, access, kept + folded)
    acc, bind = _register_tile("axe4j_acc", 1, dtype)
    binds.append(bind)
    term, old = None, None
    if request.storage["src0"] != "local":
        term, bind = _register_tile("axe4j_term", 1, src_dtype)
        binds.append(bind)
    if request.storage["dst"] != "local" and not plan.init:
        old, bind = _register_tile("axe4j_old", 1, dtype)
        binds.append(bind)
    threads, outputs, rounds, group, terms = plan.threads, plan.outputs, plan.rounds, plan.group, plan.terms
    per_round, per_thread = threads // group, -(-terms // group)
    t = _thread_index(scope, sctx, threads)
    part, slot = T.floormod(t, group), T.floordiv(t, group)

    def memory(kind, role, regs, at):
        name = f"{kind}.{MEMORY[request.storage[role]]}.{ptx_type(str(request.tensors[role].ty.dtype.dtype))}"
        mem = views[role][at:at + 1]
        return Evaluate(T.cuda.tile.apply(T.ptx[name], *((regs, mem) if kind == "ld" else (mem, regs)),
                                          scope="thread"))

    f, i = Var("axe4j_round", "int32"), Var("axe4j_term", "int32")
    o = f * per_round + slot
    has_output = None if outputs % per_round == 0 else o < outputs
    counters = _counters(o, kept) if kept else []
    d_addr = _at("dst", kept, counters, bases["dst"])
    s_base = _at("src0", kept, counters, bases["src0"])
    k = i * group + part
    at = _at("src0", folded, _counters(k, folded), s_base)
    if term is not None:
        fold = SeqStmt([memory("ld", "src0", term[0:1], at),
                        _combined(combine, dtype, acc[0:1], acc[0:1], term[0:1], src_dtype)])
    else:
        fold = _combined(combine, dtype, acc[0:1], acc[0:1], views["src0"][at:at + 1], src_dtype)
    cond = _both(has_output, None if terms % group == 0 else k < terms)
    identity = LambdaExpr([], lambda: _IDENTITY[combine](dtype), ret_type=PrimType(dtype))
    body = [Evaluate(T.cuda.tile.ewise(identity, acc[0:1], scope="thread")),
            For(i, 0, per_thread, IntImm("int32", 1), ForKind.DEFAULT, fold if cond is None else If(cond, fold, None))]
    def butterfly(width):
        step = 1
        while step < width:   # every lane of the warp reaches the shuffles (lanes without an output: the identity)
            other = T.cuda.__shfl_xor_sync(T.cuda.__activemask(ty=PrimType("uint32")), acc[0], step, width,
                                           ty=PrimType(dtype))
            body.append(_combined(combine, dtype, acc[0:1], acc[0:1], other, dtype))
            step *= 2

    butterfly(min(group, 32))
    writer = part == 0
    if plan.warps_per_group > 1:
        warps, per = threads // 32, plan.warps_per_group
        scratch = Var("axe4j_partials", T.Tensor((warps,), dtype, scope="shared", layout="default"))
        binds.append(Bind(scratch, T.alloc_tensor(ty_args=[scratch.ty])))
        warp, lane = T.floordiv(t, 32), T.floormod(t, 32)
        shared = f"shared.{ptx_type(dtype)}"
        body.append(If(lane == 0, Evaluate(T.cuda.tile.apply(T.ptx["st." + shared], scratch[warp:warp + 1],
                                                             acc[0:1], scope="thread")), None))
        body.append(Evaluate(T.cuda.cta_sync()))
        body.append(Evaluate(T.cuda.tile.ewise(identity, acc[0:1], scope="thread")))
        peer = T.min(warp + lane, warps - 1)   # in bounds for tvm_tirx's prover; lanes past the group skip the load
        body.append(If(lane < per, Evaluate(T.cuda.tile.apply(T.ptx["ld." + shared], acc[0:1], scratch[peer:peer + 1],
                                                              scope="thread")), None))
        butterfly(per)
        writer = T.And(T.floormod(warp, per) == 0, lane == 0)
    if request.storage["dst"] == "local":
        target = views["dst"][d_addr:d_addr + 1]
        store = (Evaluate(T.cuda.tile.ewise(values.function("copy", dtype, [dtype]), target, acc[0:1], scope="thread"))
                 if plan.init else _combined(combine, dtype, target, target, acc[0:1], dtype))
    elif plan.init:
        store = memory("st", "dst", acc[0:1], d_addr)
    else:
        store = SeqStmt([memory("ld", "dst", old[0:1], d_addr),
                         _combined(combine, dtype, acc[0:1], old[0:1], acc[0:1], dtype),
                         memory("st", "dst", acc[0:1], d_addr)])
    body.append(If(_both(writer, has_output), store, None))
    if plan.warps_per_group > 1:
        body.append(Evaluate(T.cuda.cta_sync()))   # the scratch is read before the next round writes it
    return SeqStmt([*binds, For(f, 0, rounds, IntImm("int32", 1), ForKind.DEFAULT, SeqStmt(body))])
