"""A ``cuda-affine`` plan (axe4j.cuda.emit's, the same Java record) as explicit tvm_tirx tile calls.

Thread t of the scope's T threads takes chunks ``c = t, t + T, ...`` (``rounds`` of them, guarded by ``c < chunks``
when T does not divide them). A chunk is ``vec`` consecutive elements of the innermost loop. Its loop counters are
digits of c in chunk units: the innermost is ``(c mod E_inner/vec) * vec``, an outer loop l's is
``(c div (below_l/vec)) mod E_l`` (below_l: the product of the extents inside l, a multiple of vec), so each address
``base + sum_l counter_l * stride_l`` is visibly a multiple of vec to tvm_tirx's alignment checks and bounded by the
operand's span. Each access is one ``T.cuda.tile.apply`` of the PTX ``ld``/``st`` whose width is ``vec`` elements,
at thread scope on a flat view of the operand; a memory-to-memory copy passes through a register tile, and an op
other than copy maps its register tiles with ``T.cuda.tile.ewise``. The plan decides everything: which elements,
how wide, which thread; this module only spells it."""

from __future__ import annotations

import tvm_ffi
from tvm_tirx.ir import Bind, Evaluate, For, ForKind, If, IntImm, SeqStmt, Var
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx.layout import S, TileLayout

from . import _values as values

MEMORY = {"global": "global", "shared": "shared", "shared.dyn": "shared"}
# threads of a scope as a divisor of the CTA's flat thread index (a warp's lane is tx % 32), as on 0.27
_SCOPE_THREADS = {"warp": 32, "warpgroup": 128}


class NotOnThisLane(ValueError):
    """An accepted plan that the new TIRx lane does not spell yet (named, with what is missing)."""


def _bits(dtype: str) -> int:
    return int(tvm_ffi.dtype(dtype).bits)


def ptx_type(dtype: str) -> str:
    """The PTX type of a scalar in ld/st: f32/f64 for those floats, else its bit width (``b16`` for float16)."""
    if dtype in ("float32", "float64"):
        return "f" + dtype[5:]
    if _bits(dtype) not in (8, 16, 32, 64):
        raise NotOnThisLane(f"dtype {dtype} ({_bits(dtype)} bits) has no PTX ld/st type")
    return f"b{_bits(dtype)}"


def _register_tile(name: str, vec: int, dtype: str):
    var = Var(name, T.Tensor((vec,), dtype, scope="local", layout="default"))
    return var, Bind(var, T.alloc_tensor(ty_args=[var.ty]))


def _flat_view(name: str, tensor, span: int, storage: str):
    layout = TileLayout(S[span]) if storage == "local" else "default"
    var = Var(name, T.Tensor((span,), str(tensor.ty.dtype.dtype), scope=storage, layout=layout))
    return var, Bind(var, T.decl_tensor(tensor.data, ty_args=[var.ty]))


def _word_view(name: str, tensor, span: int, storage: str, ratio: int):
    """The operand's data as uint32 words (``ratio`` elements each), over the words its span touches."""
    var = Var(name, T.Tensor((-(-span // ratio),), "uint32", scope=storage, layout="default"))
    return var, Bind(var, T.decl_tensor(tensor.data, ty_args=[var.ty]))


def _words_fit(request, access, vec) -> bool:
    """Whether every operand's chunks start on whole words: the plan's vec already keeps the loops' and run-time
    starts' steps vec-aligned; a base or replica off a multiple of vec would not be."""
    return all(entry.base % vec == 0 and all(r % vec == 0 for r in entry.replicas) for entry in access.values())


def _thread_index(scope: str, sctx, threads: int):
    if threads == 1 or scope == "thread":
        return IntImm("int32", 0)
    tx = sctx.launch_params["threadIdx.x"][0]
    width = _SCOPE_THREADS.get(scope)
    return tx if width is None else T.floormod(tx, width)


def _counters(c, loops, vec):
    """Loop counters (outer first) of chunk c: digits of c * vec in the loops' mixed radix, in chunk units."""
    out, below = [], 1
    for i, loop in enumerate(reversed(loops)):
        if i == 0:
            out.append(T.floormod(c, loop.extent // vec) * vec if vec > 1 else T.floormod(c, loop.extent))
        else:
            out.append(T.floormod(T.floordiv(c, below // vec), loop.extent))
        below *= loop.extent
    return list(reversed(out))


def _run_time_offset(entry, starts):
    """Elements the run-time starts add (as axe4j._emit.run_time_offset): start_d * stride, and per start term
    ((start_d div divisor) mod modulus) * stride."""
    offset = 0
    for dim, stride in (entry.start_strides or {}).items():
        if stride:
            offset = offset + starts[int(dim)] * stride
    for dim, terms in (entry.start_terms or {}).items():
        for divisor, modulus, stride in terms:
            if stride:
                digit = T.floordiv(starts[int(dim)], divisor) if divisor > 1 else starts[int(dim)]
                offset = offset + (T.floormod(digit, modulus) if modulus else digit) * stride
    return offset


def _reach(entry, shape, extents):
    reach = 0
    for dim, stride in (entry.start_strides or {}).items():
        reach += (int(shape[int(dim)]) - int(extents[int(dim)])) * abs(stride)
    for dim, terms in (entry.start_terms or {}).items():
        last = int(shape[int(dim)]) - int(extents[int(dim)])
        for divisor, modulus, stride in terms:
            reach += (min(last // divisor, modulus - 1) if modulus else last // divisor) * abs(stride)
    return reach


def swizzled(addr, swizzle, vec):
    """CuTe's Swizzle<B,M,S> of an element address (org.axe4j.layout.Swizzle), written so that tvm_tirx's analyzer
    can bound it and see its alignment: the swizzle flips only bits below the block 2^(M+|S|+B), so
    ``swz(a) = (a div block) * block + (swz(a) mod block)``; and the plan keeps each chunk inside one 2^M unit, so a
    chunk's swizzled start stays a multiple of vec: ``((swz(a) mod block) div vec) * vec``."""
    if swizzle is None:
        return addr
    bits, base, shift = (int(x) for x in swizzle)
    mask = ((1 << bits) - 1) << base
    if shift >= 0:
        flipped = T.bitwise_xor(addr, T.bitwise_and(T.shift_right(addr, shift), mask))
    else:
        flipped = T.bitwise_xor(addr, T.shift_left(T.bitwise_and(addr, mask), -shift))
    block = 1 << (base + abs(shift) + bits)
    return T.floordiv(addr, block) * block + T.floordiv(T.floormod(flipped, block), vec) * vec


def swizzled_span(span, swizzle):
    """A swizzled view covers whole swizzle blocks."""
    if swizzle is None:
        return span
    bits, base, shift = (int(x) for x in swizzle)
    block = 1 << (base + abs(shift) + bits)
    return -(-span // block) * block


def _check(request, plan):
    vec, loops = plan.vec, plan.loops
    for role, entry in plan.access.items():
        if any(loop.strides[role] < 0 for loop in loops):
            raise NotOnThisLane(f"{role}: negative strides in {entry.layout}")
    if vec > 1 and (not loops or loops[-1].extent % vec):
        raise ValueError(f"cuda-affine plan: vec {vec} does not divide the innermost extent")
    for role, storage in request.storage.items():
        if storage not in MEMORY and storage != "local":
            raise NotOnThisLane(f"{role}: storage {storage} is not spelled on the new TIRx lane")
    if vec > 4 and vec % 4:
        raise NotOnThisLane(f"{vec} elements per access do not split into accesses of 4")


def emit(request, plan, scope: str, sctx):
    """The statement that replaces the call: binds of the flat views and register tiles, then the rounds."""
    _check(request, plan)
    vec, loops, access = plan.vec, plan.loops, plan.access
    threads, chunks, rounds = plan.threads, plan.chunks, plan.rounds
    op = request.op
    dst_dtype = str(request.tensors["dst"].ty.dtype.dtype)
    binds, views, bases = [], {}, {}
    for role, tensor in request.tensors.items():
        entry = access[role]
        shape = [int(n) for n in tensor.ty.shape]
        extents = request.extents[role]
        span = (entry.base + _reach(entry, shape, extents) + sum((l.extent - 1) * l.strides[role] for l in loops)
                + max([0, *entry.replicas]) + 1)
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, swizzled_span(span, entry.swizzle),
                                       request.storage[role])
        binds.append(bind)
        bases[role] = entry.base + _run_time_offset(entry, request.starts[role])
    sources = values.sources(op, request.scalars)
    dst_local = request.storage["dst"] == "local"
    tensor_sources = [what for kind, what in sources if kind == "tensor"]
    # a copy moves words without a map, unless both ends are registers; every other op maps register tiles
    mapped = op != "copy" or dst_local and request.storage[tensor_sources[0]] == "local"
    load_into_dst = op == "copy" and dst_local and not mapped   # ld straight into the destination's registers
    # a copy between memories of elements narrower than 32 bits moves whole 32-bit words
    src_bits = _bits(str(request.tensors[tensor_sources[0]].ty.dtype.dtype)) if tensor_sources else 32
    packed = (op == "copy" and not mapped and not dst_local and request.storage[tensor_sources[0]] != "local"
              and src_bits < 32 and vec * src_bits % 32 == 0 and _words_fit(request, access, vec))
    words = {}
    if packed:
        for role in ("dst", tensor_sources[0]):
            words[role], bind = _word_view(f"axe4j_{role}_words", request.tensors[role],
                                           int(views[role].ty.shape[0]), request.storage[role], 32 // src_bits)
            binds.append(bind)
    stage = {}   # role -> the register tile a memory operand passes through
    for what in tensor_sources:
        if request.storage[what] != "local" and what not in stage and not load_into_dst:
            dtype = "uint32" if packed else str(request.tensors[what].ty.dtype.dtype)
            stage[what], bind = _register_tile(f"axe4j_{what}_regs", vec * src_bits // 32 if packed else vec, dtype)
            binds.append(bind)
    if not dst_local and mapped:
        stage["dst"], bind = _register_tile("axe4j_dst_regs", vec, dst_dtype)
        binds.append(bind)

    def access_of(role, counters, replica=0):
        """Where the chunk of ``counters`` starts in ``role`` (its ``replica``'s copy for the destination)."""
        addr = bases[role]
        for loop, counter in zip(loops, counters):
            if loop.strides[role]:
                addr = addr + counter * loop.strides[role]
        return swizzled(addr + replica if replica else addr, access[role].swizzle, vec)

    def region(view, start):
        return view[start:start + vec]

    def memory_ops(kind, role, regs, regs_start, start):
        """``ld``/``st`` of the chunk's ``vec`` elements of ``role`` at ``start``, into/from the registers
        ``regs[regs_start:]``: one access where it fits 16 bytes and 4 elements, else consecutive accesses of at
        most 4 elements each (as nvcc splits a wider vector)."""
        dtype = str(request.tensors[role].ty.dtype.dtype)
        per = min(vec, 4)
        out = []
        for k in range(0, vec, per):
            name = f"{kind}.{MEMORY[request.storage[role]]}{'.v%d' % per if per > 1 else ''}.{ptx_type(dtype)}"
            mem = views[role][start + k:start + k + per]
            reg = regs[regs_start + k:regs_start + k + per]
            out.append(Evaluate(T.cuda.tile.apply(T.ptx[name], *((reg, mem) if kind == "ld" else (mem, reg)),
                                                  scope="thread")))
        return out

    def word_ops(kind, role, regs, start):
        """A copy of elements narrower than 32 bits moved as 32-bit words (``ld.shared.v4.b32`` for 8 halves, as
        nvcc moves a 16-byte vector of them): the same bytes, viewed as uint32."""
        ratio = 32 // _bits(str(request.tensors[role].ty.dtype.dtype))
        mem = words[role][T.floordiv(start, ratio):T.floordiv(start, ratio) + vec // ratio]
        reg = regs[0:vec // ratio]
        name = f"{kind}.{MEMORY[request.storage[role]]}{'.v%d' % (vec // ratio) if vec > ratio else ''}.b32"
        return [Evaluate(T.cuda.tile.apply(T.ptx[name], *((reg, mem) if kind == "ld" else (mem, reg)),
                                           scope="thread"))]

    def chunk(c):
        counters = _counters(c, loops, vec)
        targets = [access_of("dst", counters, r) for r in _base_last(access["dst"].replicas)]
        body, inputs, loaded = [], [], set()
        if load_into_dst:
            what = tensor_sources[0]
            start = access_of(what, counters)
            return _seq([o for t in targets for o in memory_ops("ld", what, views["dst"], t, start)])
        for kind, what in sources:
            if kind == "scalar":
                inputs.append(what)
            elif what in stage:
                if what not in loaded:
                    start = access_of(what, counters)
                    body += (word_ops("ld", what, stage[what], start) if packed
                             else memory_ops("ld", what, stage[what], 0, start))
                    loaded.add(what)
                inputs.append(stage[what][0:vec])
            else:
                inputs.append(region(views[what], access_of(what, counters)))
        if mapped:
            function = values.function(op, dst_dtype, [_dtype_of(x) for x in inputs])
            outs = [stage["dst"][0:vec]] if "dst" in stage else [region(views["dst"], t) for t in targets]
            body += [Evaluate(T.cuda.tile.ewise(function, out, *inputs, scope="thread")) for out in outs]
        if not dst_local:
            regs = stage["dst"] if mapped else stage[tensor_sources[0]] if tensor_sources[0] in stage else None
            for t in targets:
                if packed:
                    body += word_ops("st", "dst", regs, t)
                elif regs is not None:
                    body += memory_ops("st", "dst", regs, 0, t)
                else:   # registers -> memory: straight from the source's registers
                    body += memory_ops("st", "dst", views[tensor_sources[0]], access_of(tensor_sources[0], counters), t)
        return _seq(body)

    f = Var("axe4j_round", "int32")
    c = f * threads + _thread_index(scope, sctx, threads)
    step = chunk(c) if chunks % threads == 0 else If(c < chunks, chunk(c), None)
    loop = For(f, 0, rounds, IntImm("int32", 1), ForKind.DEFAULT, step)
    return SeqStmt([*binds, loop])


def _seq(body):
    return SeqStmt(body) if len(body) > 1 else body[0]


def _dtype_of(value):
    source = getattr(value, "source", None)
    if source is not None:
        return str(source.ty.dtype.dtype)
    return str(value.ty.dtype) if hasattr(value.ty, "dtype") else str(value.ty)


def _base_last(replicas):
    """Replica displacements with 0 last (a stored value may read the base copy)."""
    return sorted(replicas, key=lambda r: r == 0)
