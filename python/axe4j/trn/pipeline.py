"""``tir_pipeline="trn"`` as ``axe4j.compile`` runs it: TVM's Trainium passes, plus one that drops the private
buffers nothing uses after dispatch.

TVM's ``TrnPrivateBufferAlloc`` runs before dispatch and gives every tile call the workspace TVM's own case for it
would need: a transposing copy gets an SBUF ``identity`` (built by ``nl.shared_constant``) and an 8-bank PSUM
``acc_psum``, whoever lowers the call. When axe4j's rule lowers that copy with a strided DMA instead, both stay
allocated and unused; the 8 banks of ``acc_psum`` then leave no PSUM for a result that spans two banks (a 128 x
1024 float32 GEMM result), and the kernel is refused by the whole-kernel budget (``axe4j.trn.allocation``).

``PrunePrivateBuffers`` runs right after ``TilePrimitiveDispatch``: a buffer the private allocator added (allocated
after it ran, not before) that no statement reads or writes any more, except its own initialisation (the
``identity`` fill), is removed with that initialisation. Buffers the kernel declares are never touched; a private
buffer TVM's own case did use stays. The pipeline is registered as ``axe4j-trn`` and ``axe4j.compile`` uses it for
``tir_pipeline="trn"``.
"""

from __future__ import annotations

NAME = "axe4j-trn"
INIT_CALLS = ("tirx.nki.identity",)   # calls that only fill a private buffer (its initialisation, not a use)


def _allocations(func) -> set[str]:
    import tvm_ffi
    from tvm.tirx.stmt import AllocBuffer

    names = set()

    def visit(node):
        names.add(node.buffer.name)

    tvm_ffi.structural_walk(func.body, [(AllocBuffer, visit)], order="pre")
    return names


def _is_init(node) -> bool:
    """An AttrStmt ``tensorized_nki_instruction`` whose only calls are initialisations (INIT_CALLS)."""
    import tvm_ffi
    from tvm.ir import Op
    from tvm.ir.expr import Call

    if node.attr_key != "tensorized_nki_instruction":
        return False
    calls = []

    def visit(call):
        if isinstance(call.op, Op):
            calls.append(str(call.op.name))

    tvm_ffi.structural_walk(node.body, [(Call, visit)], order="pre")
    return bool(calls) and all(name in INIT_CALLS for name in calls)


def _used(body) -> set[str]:
    """Names of the buffers loaded or stored anywhere outside initialisation blocks."""
    import tvm_ffi
    from tvm.ir.expr import TensorLoad
    from tvm.tirx.stmt import AttrStmt, BufferStore

    used = set()

    def attr(node):
        return tvm_ffi.WalkResult.SKIP if _is_init(node) else None

    def load(node):
        used.add(node.source.name)

    def store(node):
        used.add(node.buffer.name)

    tvm_ffi.structural_walk(body, [(AttrStmt, attr), (TensorLoad, load), (BufferStore, store)], order="pre")
    return used


def prune(func, declared: set[str]):
    """``func`` without the allocations (and initialisations) of unused buffers whose names are not in
    ``declared`` (the buffers allocated before the private allocator ran)."""
    import tvm_ffi
    from tvm.ir.expr import TensorLoad
    from tvm.tirx.stmt import AllocBuffer, AttrStmt, Evaluate

    unused = _allocations(func) - declared - _used(func.body)
    if not unused:
        return func, []

    def init_buffers(node) -> set[str]:
        found = set()
        tvm_ffi.structural_walk(node.body, [(TensorLoad, lambda load: found.add(load.source.name))], order="pre")
        return found

    def alloc(node):
        return Evaluate(0) if node.buffer.name in unused else node

    def attr(node):
        return Evaluate(0) if _is_init(node) and init_buffers(node) <= unused else node

    body = tvm_ffi.structural_map(func.body, [(AllocBuffer, alloc), (AttrStmt, attr)], order="pre")
    return func.with_body(body), sorted(unused)


def pipeline():
    """(pipeline, finalize host passes, finalize device passes) of ``axe4j-trn``: TVM's Trainium passes with
    ``PrunePrivateBuffers`` after ``TilePrimitiveDispatch``, the buffers each function declared before
    ``TrnPrivateBufferAlloc`` remembered by a pass in front of it."""
    import tvm

    from .. import _tvm_internals

    passes, finalize_host, finalize_device = _tvm_internals.trn_passes()
    declared: dict[str, set[str]] = {}

    @tvm.transform.module_pass(opt_level=0, name="axe4j.RememberDeclaredBuffers")
    def remember(mod, _ctx):
        for gvar, func in mod.functions.items():
            if isinstance(func, tvm.tirx.PrimFunc):
                declared[gvar.name_hint] = _allocations(func)
        return mod

    @tvm.transform.module_pass(opt_level=0, name="axe4j.PrunePrivateBuffers")
    def prune_pass(mod, _ctx):
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, tvm.tirx.PrimFunc) and gvar.name_hint in declared:
                pruned, removed = prune(func, declared[gvar.name_hint])
                if removed:
                    mod[gvar] = pruned.with_attr("axe4j.pruned_private_buffers", removed)
        return mod

    names = [p.info.name for p in passes]
    private, dispatch = names.index("TrnPrivateBufferAlloc"), names.index("tirx.TilePrimitiveDispatch")
    ordered = passes[:private] + [remember] + passes[private:dispatch + 1] + [prune_pass] + passes[dispatch + 1:]

    @tvm.transform.module_pass(opt_level=0, name="axe4j.TrnPipeline")
    def run(mod, _ctx):
        declared.clear()
        return tvm.ir.transform.Sequential(ordered)(mod)

    return run, finalize_host, finalize_device


def register() -> None:
    """Registers ``axe4j-trn`` with TVM's public pipeline registry (again is harmless)."""
    import tvm

    tvm.tirx.compilation_pipeline.register_tir_pipeline(NAME, pipeline)
