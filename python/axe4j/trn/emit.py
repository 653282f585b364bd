"""TIR for the Java Trainium plans (``kind: trn``): loops around one tensorized NKI instruction per tile.

A plan names its loops (outer, serial) and its instruction dims (``P``/``F``, or ``P``/``lhs_F``/``rhs_F`` for a
matmul); each dim advances, per operand role, logical dims by a stride. The emitter indexes every operand at
``start + sum(counter * stride)`` in logical coordinates and wraps the instruction dims in the
``tensorized_nki_instruction`` attribute with ``nki_dim`` annotations, as TVM's trn pipeline expects; its
LowerTrainiumLayout pass then maps the logical indices through the layouts to (P, F) (or (bank, P, F)).
The emitter decides nothing: tile sizes, loop order and the instruction come from the plan.
"""

from __future__ import annotations

from tvm.script import tirx as T

from .._registry import emits

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "maximum": "max", "minimum": "min"}
_REDUCE = {"sum": "add", "max": "max", "min": "min"}


def _index(request, role, dims, counters):
    start, _ = request.regions[role]
    idx = list(start)
    for dim, c in zip(dims, counters):
        for d, stride in dim.index.get(role, {}).items():
            idx[int(d)] = idx[int(d)] + c * stride
    return tuple(idx)


def _serial(dims, body, counters=()):
    if not dims:
        body(list(counters))
        return
    with T.serial(dims[0].extent) as v:
        _serial(dims[1:], body, counters + (v,))


def _instruction(inst, body):
    """The tensorized instruction: its dims as annotated loops (outermost P) inside the attribute."""

    def nest(dims, counters):
        if not dims:
            body(list(counters))
            return
        with T.serial(0, dims[0].extent, annotations={"nki_dim": dims[0].name}) as v:
            nest(dims[1:], counters + (v,))

    with T.attr(0, "tensorized_nki_instruction", 1):
        nest(inst, ())


def _at(request, role, dims, counters):
    return request.buffers[role][_index(request, role, dims, counters)]


def _map_body(request, plan):
    op = request.op
    instruction = plan.instruction
    loops, inst = list(plan.loops), list(plan.inst)

    def body(outer, inner):
        dims, counters = loops + inst, list(outer) + list(inner)

        def at(role):
            return _at(request, role, dims, counters)

        dst = at("dst")
        if instruction == "load":
            T.evaluate(T.nki.load(dst, at("src0")))
        elif instruction == "store":
            T.evaluate(T.nki.store(dst, at("src0")))
        elif instruction == "tensor_copy":
            T.evaluate(T.nki.tensor_copy(dst, at("src0")))
        elif instruction == "memset":
            value = 0.0 if op == "zero" else request.scalars[0]
            T.evaluate(T.nki.memset(dst, value))
        elif instruction == "reciprocal":
            T.evaluate(T.nki.reciprocal(dst, at("src0")))
        elif instruction == "activation":
            bias = at("bias") if "bias" in request.buffers else request.scalars.get("bias", 0.0)
            scale = request.scalars.get("scale", 1.0)
            T.evaluate(T.nki.activation(dst, at("src0"), "exp", bias=bias, scale=scale))
        elif instruction == "tensor_tensor":
            T.evaluate(T.nki.tensortensor(dst, at("src0"), at("src1"), _BINARY[op]))
        elif instruction == "tensor_scalar":
            other = at("src1") if "src1" in request.buffers else request.scalars[1]
            T.evaluate(T.nki.tensorscalar(dst, at("src0"), other, _BINARY[op], False))
        elif instruction == "tensor_reduce":
            T.evaluate(T.nki.tensorreduce(dst, at("src0"), _REDUCE[plan.combine], False, -1))
        else:
            raise ValueError(f"unknown trn instruction {instruction}")

    def whole():
        _serial(loops, lambda outer: _instruction(inst, lambda inner: body(outer, inner)))

    return whole


def _matmul_body(request, plan):
    """Per output tile: memset (beta = 0), the K loop of nc_matmul += into ``out`` (D, or a PSUM workspace), then
    the tensor_copy of ``copy`` (PSUM workspace -> SBUF destination) when the plan has one."""
    loops, k_loop, inst, memset = list(plan.loops), plan.k_loop, list(plan.inst), list(plan.memset or ())
    st, mv, out, copy = plan.stationary, plan.moving, plan.out or "D", list(plan.copy or ())

    def tile(outer):
        if memset:
            def zero(inner):
                T.evaluate(T.nki.memset(_at(request, out, loops + memset, list(outer) + inner), 0.0))

            _instruction(memset, zero)
        with T.serial(k_loop.extent) as k:
            def mac(inner):
                dims, counters = loops + [k_loop] + inst, list(outer) + [k] + inner
                T.evaluate(T.nki.matmul(_at(request, out, dims, counters), _at(request, st, dims, counters),
                                        _at(request, mv, dims, counters), True))

            _instruction(inst, mac)
        if copy:
            def move(inner):
                dims, counters = loops + copy, list(outer) + inner
                T.evaluate(T.nki.tensor_copy(_at(request, "dst", dims, counters),
                                             _at(request, "acc_psum", dims, counters)))

            _instruction(copy, move)

    def whole():
        _serial(loops, tile)

    return whole


def _transpose_body(request, plan):
    loops, memset, inst, copy, out = (list(plan.loops), list(plan.memset or ()), list(plan.inst),
                                      list(plan.copy or ()), plan.out)

    def tile(outer):
        def at(role, dims, inner):
            return _at(request, role, loops + dims, list(outer) + inner)

        _instruction(memset, lambda inner: T.evaluate(T.nki.memset(at(out, memset, inner), 0.0)))
        _instruction(inst, lambda inner: T.evaluate(T.nki.matmul(at(out, inst, inner), at("src0", inst, inner),
                                                                 at("identity", inst, inner), True)))
        if copy:
            _instruction(copy, lambda inner: T.evaluate(T.nki.tensor_copy(at("dst", copy, inner),
                                                                          at("acc_psum", copy, inner))))

    def whole():
        _serial(loops, tile)

    return whole


@emits("trn")
def emit(request, plan):
    """The PrimFunc of a typed ``trn`` plan."""
    bodies = {"matmul": _matmul_body, "transpose": _transpose_body}
    whole = bodies.get(plan.instruction, _map_body)(request, plan)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl
