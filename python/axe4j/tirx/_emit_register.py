"""Register plans (``cuda-register``, ``cuda-register-boxes``, ``cuda-register-digits``, ``cuda-shuffle-reduce``;
axe4j.cuda.emit_register's, the same Java records) as explicit tvm_tirx tile calls.

``cuda-register``: thread t of the scope (lane ``tx % 32``, warpgroup thread ``tx % 128``, CTA thread ``tx``) holds
``slots`` elements of each register operand. A thread term ``[tau, mod, lo, below, count, stride]`` adds
``((((t / tau) % mod) - lo) / below) % count * stride`` to a memory operand's base; a guard ``[tau, mod, lo, count]``
keeps the threads with ``lo <= (t / tau) % mod < lo + count``; ``write_once`` ``[tau, count]`` keeps
``(t / tau) % count == 0``. The slot loops are unrolled here (constant register indices); the innermost loop of
``vec`` elements is one chunk: a ``T.cuda.tile.apply`` of ``ld``/``st`` ``vec`` elements wide on the memory side
(16-bit elements moved as 32-bit words, as nvcc moves a 16-byte vector of halves) and the registers' own slots on
the other; an op other than copy maps register chunks with ``T.cuda.tile.ewise``. ``cuda-register-boxes``: one
register plan per box of a region cut at digit boundaries, one after the other. ``cuda-register-digits`` (a region
that crosses digits in too many places to cut): see ``emit_digits``.

``cuda-shuffle-reduce``: per kept slot, the thread folds its own reduced slots into a one-element register tile,
then combines it with the value of lane ``lane ^ mask`` for every butterfly mask (``__shfl_xor_sync``, which nvcc
writes as ``shfl.sync.bfly.b32``; tvm_tirx's ``apply`` has no pattern for shfl, so it is tvm_tirx's CUDA intrinsic
inside the ``ewise`` that combines), then writes the destination (``accum``: combined with its old value).
"""

from __future__ import annotations

import itertools

from tvm_tirx.ir import Bind, Evaluate, If, LambdaExpr, PrimType, SeqStmt, Var
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx.layout import S, TileLayout

from . import _values as values
from ._emit_affine import (MEMORY, NotOnThisLane, _base_last, _bits, _flat_view, _register_tile, _run_time_offset,
                           _thread_index, ptx_type, swizzled, swizzled_span)

FULL_WARP = 0xFFFFFFFF   # every lane takes part in the shuffles: Java declines regions that leave lanes out


def _digit(t, tau, mod):
    """``(t / tau) % mod``."""
    return T.floormod(t if tau == 1 else T.floordiv(t, tau), mod)


def _term_value(t, term):
    tau, mod, lo, below, count = (int(x) for x in term[:5])
    value = _digit(t, tau, mod)
    if lo:
        value = value - lo
    if below != 1:
        value = T.floordiv(value, below)
    if below * count < mod or lo:
        value = T.floormod(value, count)
    return value


def _condition(t, guards, write_once):
    parts = []
    for tau, mod, lo, count in ([int(x) for x in g] for g in guards):
        d = _digit(t, tau, mod)
        if count == 1:
            parts.append(d == lo)
        elif lo:
            parts += [lo <= d, d < lo + count]
        else:
            parts.append(d < count)
    parts += [_digit(t, int(tau), int(count)) == 0 for tau, count in ([int(x) for x in w] for w in write_once)]
    cond = None
    for part in parts:
        cond = part if cond is None else T.And(cond, part)
    return cond


def _guarded(cond, body):
    return body if cond is None else If(cond, body, None)


def _seq(body):
    return SeqStmt(body) if len(body) > 1 else body[0]


def _word_view(name, tensor, span, storage, ratio):
    """The operand's data as uint32 words (``ratio`` elements each); a register operand's words stay registers."""
    words = -(-span // ratio)
    var = Var(name, T.Tensor((words,), "uint32", scope=storage,
                             layout=TileLayout(S[words]) if storage == "local" else "default"))
    return var, Bind(var, T.decl_tensor(tensor.data, ty_args=[var.ty]))


def _span(request, plans, role):
    """Elements a flat view of ``role`` must cover over every box: base + run-time reach + loops + thread terms +
    replicas, or the register slots."""
    from ._emit_affine import _reach

    tensor = request.tensors[role]
    shape = [int(n) for n in tensor.ty.shape]
    span = 0
    for plan in plans:
        entry = plan.access[role]
        reach = sum((l.extent - 1) * abs(l.strides[role]) for l in plan.loops)
        reach += sum((int(term[4]) - 1) * abs(int(term[5])) for term in entry.thread_terms)
        reach += _reach(entry, shape, request.extents[role])
        one = entry.base + reach + max([0, *entry.replicas]) + 1
        if entry.slots is not None:
            one = max(one, entry.slots)
        span = max(span, swizzled_span(one, entry.swizzle))
    return span


def emit(request, plan, scope: str, sctx):
    """The statement that replaces a call with a ``cuda-register`` or ``cuda-register-boxes`` plan."""
    plans = list(plan.boxes) if plan.kind == "cuda-register-boxes" else [plan]
    op = request.op
    dst_dtype = str(request.tensors["dst"].ty.dtype.dtype)
    sources = values.sources(op, request.scalars)
    tensor_sources = [what for kind, what in sources if kind == "tensor"]
    binds, views, words, stage = [], {}, {}, {}
    for role, tensor in request.tensors.items():
        if request.storage[role] not in MEMORY and request.storage[role] != "local":
            raise NotOnThisLane(f"{role}: storage {request.storage[role]} is not spelled on the new TIRx lane")
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, _span(request, plans, role), request.storage[role])
        binds.append(bind)
    vecs = {p.vec for p in plans}
    for p in plans:
        for l, loop in enumerate(p.loops):
            if loop.kind == "vectorized" and (l != len(p.loops) - 1 or loop.extent != p.vec):
                raise NotOnThisLane(f"a vectorized slot loop of extent {loop.extent} that is not the innermost "
                                    f"chunk of {p.vec}")
            if any(s < 0 for s in loop.strides.values()) and loop.kind == "vectorized":
                raise NotOnThisLane(f"a vector of {p.vec} with a negative stride")
    dst_local = request.storage["dst"] == "local"
    mapped = op != "copy" or dst_local and request.storage[tensor_sources[0]] == "local"
    # 16-bit elements between registers and memory as 32-bit words: one word view per operand
    src_bits = _bits(str(request.tensors[tensor_sources[0]].ty.dtype.dtype)) if tensor_sources else 32
    packed = op == "copy" and src_bits < 32 and all(v * src_bits % 32 == 0 and v > 1 for v in vecs)
    if packed:
        for role in ("dst", tensor_sources[0]):
            words[role], bind = _word_view(f"axe4j_{role}_words", request.tensors[role],
                                           int(views[role].ty.shape[0]), request.storage[role], 32 // src_bits)
            binds.append(bind)
    vec_max = max(vecs)
    for what in tensor_sources:
        if request.storage[what] != "local" and what not in stage and mapped:
            stage[what], bind = _register_tile(f"axe4j_{what}_regs", vec_max, str(request.tensors[what].ty.dtype.dtype))
            binds.append(bind)
    if not dst_local and mapped:
        stage["dst"], bind = _register_tile("axe4j_dst_regs", vec_max, dst_dtype)
        binds.append(bind)
    bodies = [_box(request, p, scope, sctx, views, words, stage, sources, mapped, packed) for p in plans]
    return SeqStmt([*binds, *bodies])


def _box(request, plan, scope, sctx, views, words, stage, sources, mapped, packed):
    vec, loops, access = plan.vec, list(plan.loops), plan.access
    t = _thread_index(scope, sctx, plan.threads)
    bases = {}
    for role, entry in access.items():
        base = entry.base + _run_time_offset(entry, request.starts[role])
        for term in entry.thread_terms:
            base = base + _term_value(t, term) * int(term[5])
        bases[role] = base
    unrolled = loops[:-1] if loops and loops[-1].kind == "vectorized" else loops

    def address(role, counters, replica=0):
        addr = bases[role] + replica if replica else bases[role]
        for loop, c in zip(unrolled, counters):
            if loop.strides[role]:
                addr = addr + c * loop.strides[role]
        return swizzled(addr, access[role].swizzle, vec) if request.storage[role] != "local" else addr

    chunks = [_chunk(request, views, words, stage, sources, mapped, packed, vec,
                     lambda role, c=counters: address(role, c),
                     [address("dst", counters, r) for r in _base_last(access["dst"].replicas)])
              for counters in itertools.product(*(range(l.extent) for l in unrolled))]
    return _guarded(_condition(t, plan.guards, plan.write_once), _seq(chunks))


def _memory(request, views, words, packed, vec, kind, role, regs, start):
    """``ld``/``st`` of ``vec`` elements of memory ``role`` at ``start`` into/from the register region ``regs`` (a
    view and its start), at most 4 elements or 16 bytes an access (16-bit elements as 32-bit words when packed)."""
    view, at = regs
    if packed:
        ratio = 32 // _bits(str(request.tensors[role].ty.dtype.dtype))
        reg_role = "dst" if kind == "ld" else next(w for w in words if w != "dst")
        mem = words[role][T.floordiv(start, ratio):T.floordiv(start, ratio) + vec // ratio]
        reg = words[reg_role][T.floordiv(at, ratio):T.floordiv(at, ratio) + vec // ratio]
        name = f"{kind}.{MEMORY[request.storage[role]]}{'.v%d' % (vec // ratio) if vec > ratio else ''}.b32"
        return [Evaluate(T.cuda.tile.apply(T.ptx[name], *((reg, mem) if kind == "ld" else (mem, reg)),
                                           scope="thread"))]
    dtype = str(request.tensors[role].ty.dtype.dtype)
    per = min(vec, 4)
    out = []
    for k in range(0, vec, per):
        name = f"{kind}.{MEMORY[request.storage[role]]}{'.v%d' % per if per > 1 else ''}.{ptx_type(dtype)}"
        mem = views[role][start + k:start + k + per]
        reg = view[at + k:at + k + per]
        out.append(Evaluate(T.cuda.tile.apply(T.ptx[name], *((reg, mem) if kind == "ld" else (mem, reg)),
                                              scope="thread")))
    return out


def _chunk(request, views, words, stage, sources, mapped, packed, vec, address, targets):
    """One chunk of ``vec`` elements: ``address(role)`` its start in a source, ``targets`` in the destination (one
    per replica). A copy between registers and memory loads into / stores from the registers themselves; any other
    op loads memory sources into register tiles, maps with ``ewise``, and stores a memory destination."""
    op = request.op
    dst_dtype = str(request.tensors["dst"].ty.dtype.dtype)
    body, inputs = [], []
    if not mapped:
        what = next(w for k, w in sources if k == "tensor")
        start = address(what)
        if request.storage["dst"] == "local":
            return _seq([o for at in targets
                         for o in _memory(request, views, words, packed, vec, "ld", what, (views["dst"], at), start)])
        return _seq([o for at in targets
                     for o in _memory(request, views, words, packed, vec, "st", "dst", (views[what], start), at)])
    for kind, what in sources:
        if kind == "scalar":
            inputs.append(what)
        elif what in stage:
            body += _memory(request, views, words, packed, vec, "ld", what, (stage[what], 0), address(what))
            inputs.append(stage[what][0:vec])
        else:
            start = address(what)
            inputs.append(views[what][start:start + vec])
    function = values.function(op, dst_dtype, [_dtype_of(x) for x in inputs])
    outs = [stage["dst"][0:vec]] if "dst" in stage else [views["dst"][at:at + vec] for at in targets]
    body += [Evaluate(T.cuda.tile.ewise(function, out, *inputs, scope="thread")) for out in outs]
    if "dst" in stage:
        body += [o for at in targets
                 for o in _memory(request, views, words, packed, vec, "st", "dst", (stage["dst"], 0), at)]
    return _seq(body)


def emit_digits(request, plan, scope: str, sctx):
    """The statement that replaces a call with a ``cuda-register-digits`` plan: each thread visits its slots
    (register digit counters, unrolled); the partition's flat index ``sum c_k below_k + sum ((t / tau_k) % e_k)
    below_k`` gives its coordinate in the partition's shape, a guard keeps those inside the region, and every operand
    is at the same offset in its region (memory: ``base + sum ((x / below) % e) * s`` of the row-major index x of
    its coordinate; registers: the same slot), one element a chunk."""
    shape = [int(n) for n in plan.shape]
    rows = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        rows[d] = rows[d + 1] * shape[d + 1]
    p_start, p_extent = request.starts[plan.partition], request.extents[plan.partition]
    digits = [(int(e), int(s), int(b)) for e, s, b in plan.register_digits]
    op = request.op
    sources = values.sources(op, request.scalars)
    tensor_sources = [what for kind, what in sources if kind == "tensor"]
    binds, views, stage = [], {}, {}
    for role, tensor in request.tensors.items():
        if role in plan.memory:
            entry = plan.memory[role]
            if request.storage[role] not in MEMORY:
                raise NotOnThisLane(f"{role}: storage {request.storage[role]} is not spelled on the new TIRx lane")
            span = entry.base + sum((e - 1) * abs(st) for e, st, _ in entry.iters) + max([0, *entry.replicas]) + 1
        else:
            span = plan.slots
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, span, request.storage[role])
        binds.append(bind)
    dst_local = "dst" not in plan.memory
    mapped = op != "copy" or dst_local and tensor_sources[0] not in plan.memory
    for what in tensor_sources:
        if what in plan.memory and what not in stage and mapped:
            stage[what], bind = _register_tile(f"axe4j_{what}_regs", 1, str(request.tensors[what].ty.dtype.dtype))
            binds.append(bind)
    if not dst_local and mapped:
        stage["dst"], bind = _register_tile("axe4j_dst_regs", 1, str(request.tensors["dst"].ty.dtype.dtype))
        binds.append(bind)
    t = _thread_index(scope, sctx, plan.threads)
    held = 0
    for extent, tau, below in plan.thread_digits:
        held = held + _digit(t, int(tau), int(extent)) * int(below)

    def element(counters):
        slot = plan.slot_base + sum(c * s for c, (_, s, _) in zip(counters, digits))
        flat = held + sum(c * b for c, (_, _, b) in zip(counters, digits))
        coord = [T.floormod(T.floordiv(flat, rows[d]), shape[d]) if rows[d] * shape[d] != 1 else 0
                 for d in range(len(shape))]
        inside = []
        for d in range(len(shape)):
            if p_extent[d] < shape[d]:
                inside += ([p_start[d] <= coord[d], coord[d] < p_start[d] + p_extent[d]] if p_extent[d] > 1
                           else [coord[d] == p_start[d]])
        offsets = [coord[d] - p_start[d] for d in plan.dims]

        def address(role, replica=0):
            if role not in plan.memory:
                return slot
            entry = plan.memory[role]
            at = list(request.starts[role])
            for k, d in enumerate(entry.dims):
                at[d] = at[d] + offsets[k]
            return _digit_address(entry, at) + replica

        targets = ([address("dst", r) for r in _base_last(plan.memory["dst"].replicas)] if not dst_local
                   else [slot])
        body = _chunk(request, views, {}, stage, sources, mapped, False, 1, address, targets)
        cond = _condition(t, [], plan.write_once)
        for part in inside:
            cond = part if cond is None else T.And(cond, part)
        return _guarded(cond, body)

    elements = [element(counters) for counters in itertools.product(*(range(e) for e, _, _ in digits))]
    return SeqStmt([*binds, *elements])


def _digit_address(entry, coordinate):
    """``base + sum_k ((x // below_k) % e_k) * s_k`` for the row-major flat index x of ``coordinate``."""
    flat = 0
    for c, row_stride in zip(coordinate, entry.row_strides):
        flat = flat + c * row_stride
    addr = entry.base
    for extent, stride, below in entry.iters:
        if stride != 0 and extent != 1:
            addr = addr + T.floormod(T.floordiv(flat, below), extent) * stride
    return addr


def _dtype_of(value):
    source = getattr(value, "source", None)
    if source is not None:
        return str(source.ty.dtype.dtype)
    return str(value.ty.dtype) if hasattr(value.ty, "dtype") else str(value.ty)


_IDENTITY = {"sum": lambda dtype: T.cast(0, dtype), "max": lambda dtype: T.min_value(ty=dtype),
             "min": lambda dtype: T.max_value(ty=dtype)}


def _sum(dtype, input_dtypes):
    """acc' = acc + value per element (each input taken in ``dtype``)."""
    def expression(*inputs):
        x = [v if d == dtype else T.cast(v, dtype) for v, d in zip(inputs, input_dtypes)]
        return x[0] + x[1]

    return LambdaExpr([PrimType(d) for d in input_dtypes], expression, ret_type=PrimType(dtype))


_PTX_MINMAX = {"float32": "ftz.f32", "float16": "f16", "bfloat16": "bf16", "int32": "s32", "uint32": "u32"}


def _combined(combine, dtype, out, a, b, b_dtype):
    """out = combine(a, b): a sum by ``ewise``; max and min by PTX ``max``/``min`` (``.ftz`` for float32, what
    fmaxf/fminf compile to under the 0.27 lane's fast math: the non-NaN operand when one is NaN), as ``apply``."""
    if combine == "sum" or b_dtype != dtype:
        if combine != "sum":
            raise NotOnThisLane(f"cuda-shuffle-reduce: {combine} of {b_dtype} into {dtype}")
        return Evaluate(T.cuda.tile.ewise(_sum(dtype, [dtype, b_dtype]), out, a, b, scope="thread"))
    if dtype not in _PTX_MINMAX:
        raise NotOnThisLane(f"cuda-shuffle-reduce: {combine} of {dtype} has no PTX {combine} here")
    return Evaluate(T.cuda.tile.apply(T.ptx[f"{combine}.{_PTX_MINMAX[dtype]}"], out, a, b, scope="thread"))


def emit_shuffle_reduce(request, plan, scope: str, sctx):
    """The statement that replaces a reduction with a ``cuda-shuffle-reduce`` plan."""
    combine, masks, access = plan.combine, [int(m) for m in plan.masks], plan.access
    if combine not in _IDENTITY:
        raise NotOnThisLane(f"cuda-shuffle-reduce: combine {combine!r}")
    dtype = str(request.tensors["dst"].ty.dtype.dtype)
    src_dtype = str(request.tensors["src0"].ty.dtype.dtype)
    kept = [l for l in plan.loops if not l.reduces]
    folded = [l for l in plan.loops if l.reduces]
    binds, views = [], {}
    for role, tensor in request.tensors.items():
        entry = access[role]
        span = entry.base + sum((l.extent - 1) * abs(l.strides[role]) for l in plan.loops) + 1
        span = max(span, entry.slots or 0, max([0, *entry.replicas]) + 1)
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, span, request.storage[role])
        binds.append(bind)
    acc, bind = _register_tile("axe4j_acc", 1, dtype)
    binds.append(bind)
    t = _thread_index(scope, sctx, plan.threads)
    bases = {role: access[role].base + _run_time_offset(access[role], request.starts[role]) for role in access}

    def address(role, loops, counters, base):
        for loop, c in zip(loops, counters):
            if loop.strides[role]:
                base = base + c * loop.strides[role]
        return base

    def one(x):
        return x[0:1]

    def output(counters):
        d_addr = address("dst", kept, counters, bases["dst"])
        s_base = address("src0", kept, counters, bases["src0"])
        body = [Evaluate(T.cuda.tile.ewise(LambdaExpr([], lambda: _IDENTITY[combine](dtype), ret_type=PrimType(dtype)),
                                           one(acc), scope="thread"))]
        for inner in itertools.product(*(range(l.extent) for l in folded)):
            at = address("src0", folded, inner, s_base)
            body.append(_combined(combine, dtype, one(acc), one(acc), views["src0"][at:at + 1], src_dtype))
        for mask in masks:
            other = T.cuda.__shfl_xor_sync(T.uint32(FULL_WARP), acc[0], mask, 32, ty=PrimType(dtype))
            body.append(_combined(combine, dtype, one(acc), one(acc), other, dtype))
        target = views["dst"][d_addr:d_addr + 1]
        if request.storage["dst"] != "local":
            raise NotOnThisLane(f"cuda-shuffle-reduce into {request.storage['dst']} memory")
        if plan.init:
            body.append(Evaluate(T.cuda.tile.ewise(values.function("copy", dtype, [dtype]), target, one(acc),
                                                   scope="thread")))
        else:
            body.append(_combined(combine, dtype, target, one(acc), target, dtype))
        return _seq(body)

    outputs = [output(counters) for counters in itertools.product(*(range(l.extent) for l in kept))]
    return SeqStmt([*binds, _guarded(_condition(t, plan.guards, []), _seq(outputs))])

