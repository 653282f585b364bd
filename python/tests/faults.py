"""Bugs planted in the CUDA emitters and kernels, for tests only: each shows that the CPU interpreter of lowered
kernels (``axe4j.cuda.interp``), or the SASS check, catches that kind of bug.

A fault is a few edits to the source of one product module (``FAULTS``: the module, the edits, and the functions
that take the edited version's place). ``planted(kind)`` builds a copy of the module with the edits (each must match
the module's source exactly as often as stated, so a fault whose code moved fails loudly rather than planting
nothing), swaps the named functions of the real module for the copy's while the block runs, and yields the copy:
emitter faults act through the swapped functions, kernel faults through the copy's kernel builder
(``with planted("early-release") as faulty: faulty.hopper_gemm_pipelined(...)``). The product modules know nothing
of them.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from axe4j import _registry


@dataclass(frozen=True)
class Fault:
    description: str
    module: str                  # the product module whose source is edited
    edits: tuple                 # (old, new, count): old occurs count times in the source, each becomes new
    swap: tuple = ()             # functions of the module that the edited copy's replace while planted


_PEELED_LAST_K_TILE = """\
                # the last K tile, peeled: its call waits for every group (wait_group 0) and fences the
                # accumulator registers, so no read of them is scheduled before the wait (cuda_register_fence)
                last = j * k_tiles + k_tiles - 1
                final = T.meta_var(PipelineState(stages, last))
                T.cuda.mbarrier_wait(full.ptr_to([final.index()]), final.phase())
                Tx.wg.gemm_async(acc[:, :], A_smem[final.index(), part, :, :], B_smem[final.index(), 0, :, :],
                                 transA=False, transB=False, accum=True, wait=0, proxy_fence=False)
                if tid_in_wg == 0:
                    if k_tiles > 1:
                        release(empty, final.advance(-1), size)
                    release(empty, final, size)
"""
_UNPEELED_WAIT = """\
                T.ptx["wgmma.wait_group.sync.aligned"](0)
                if tid_in_wg == 0:
                    release(empty, PipelineState(stages, j * k_tiles + k_tiles - 1), size)
"""

FAULTS = {
    "wrong-swizzle": Fault(
        "TMA tensor maps get the next smaller swizzle mode than the plan's",
        "axe4j.cuda.tma_emit",
        (("    mode = plan.swizzle\n", "    mode = plan.swizzle\n    if mode > 1:\n        mode -= 1\n", 1),),
        ("_tensor_map",)),
    "missing-barrier": Fault(
        "the cross-warp tree reduction leaves out the barrier between its scratch writes and reads",
        "axe4j.cuda.emit",
        (("guarded(lane == 0, lambda: T.buffer_store(scratch, acc[0], [warp]))\n"
          "                T.evaluate(T.cuda.cta_sync())\n",
          "guarded(lane == 0, lambda: T.buffer_store(scratch, acc[0], [warp]))\n", 1),),
        ("_emit_tree_reduce",)),
    "lane-off-by-one": Fault(
        "ldmatrix/stmatrix row addresses come from lane + 1",
        "axe4j.cuda.emit",
        (("lane = tirx.floormod(request.sctx.launch_params[\"threadIdx.x\"].var, 32)",
          "lane = tirx.floormod(request.sctx.launch_params[\"threadIdx.x\"].var + 1, 32)", 1),),
        ("_emit_ldstmatrix",)),
    "ldmatrix-trans": Fault(
        "ldmatrix/stmatrix get .trans where the plan has none",
        "axe4j.cuda.emit",
        (("matrix.sync.aligned.m8n8.x{num}.shared.b16", "matrix.sync.aligned.m8n8.x{num}.trans.shared.b16", 1),),
        ("_emit_ldstmatrix",)),
    "wgmma-descriptor-stride": Fault(
        "wgmma shared-memory descriptors get twice the plan's stride byte offset",
        "axe4j.cuda.emit",
        (("                        entry.sbo,\n", "                        entry.sbo * 2,\n", 1),),
        ("_emit_wgmma",)),
    "missing-proxy-fence": Fault(
        "wgmma/tcgen05.mma rules leave out fence.proxy.async.shared::cta before reading operands that threads "
        "stored",
        "axe4j.cuda.emit",
        (("if plan.proxy_fence:", "if False:", 2),),
        ("_emit_wgmma", "_emit_tcgen05")),
    "unpeeled-k-loop": Fault(
        "the pipelined Hopper GEMM waits for its last K tile after the loop, with no register fence (ptxas then "
        "converts an accumulator pair before the wait)",
        "axe4j.cuda.kernels.hopper_gemm_pipelined",
        (("for kt in T.serial(k_tiles - 1):", "for kt in T.serial(k_tiles):", 1),
         (_PEELED_LAST_K_TILE, _UNPEELED_WAIT, 1)),
        ()),
    "early-release": Fault(
        "the pipelined Hopper GEMM releases a ring slot while the wgmma group reading it is in flight",
        "axe4j.cuda.kernels.hopper_gemm_pipelined",
        (("if kt >= 1:", "if kt >= 0:", 1),
         ("release(empty, state.advance(-1), size)", "release(empty, state, size)", 1),
         ("                    if k_tiles > 1:\n                        release(empty, final.advance(-1), size)\n", "",
          1)),
        ()),
    "moe-gather-unwaited": Fault(
        "the CUDA MoE layer's GEMM1 does not wait for the cp.async gather of the next K tile's rows before the "
        "barrier after the wgmma",
        "axe4j.moe.cuda_kernels",
        (("                T.ptx[\"cp.async.wait_group\"](0)                 # the next K tile's rows have landed "
          "...\n", "", 1),),
        ("_Gemm1",)),
    "cluster-local-release": Fault(
        "the clustered Hopper GEMM releases a ring slot only in its own CTA, though its peer's multicast loads "
        "write into it too",
        "axe4j.cuda.kernels.pipeline",
        (("    for rank in range(size):\n",
          "    for rank in range(size):\n"
          "        T.evaluate(T.ptx.mbarrier.arrive.shared.b64(bar, T.uint32(size)))   # own CTA only, counted as all\n"
          "        return\n", 1),),
        ("release_in_cluster",)),
}

KINDS = {kind: fault.description for kind, fault in FAULTS.items()}


def faulty_module(kind: str, folder: Path):
    """A copy of the fault's module with its edits, loaded from ``folder`` as a sibling of the module (its relative
    imports reach the real package)."""
    fault = FAULTS[kind]
    module = importlib.import_module(fault.module)
    source = inspect.getsource(module)
    for old, new, count in fault.edits:
        found = source.count(old)
        if found != count:
            raise AssertionError(f"fault {kind}: {old!r} occurs {found} times in {fault.module}, expected {count}")
        source = source.replace(old, new)
    name = f"{fault.module}__fault_{kind.replace('-', '_')}"
    path = folder / f"{name.rsplit('.', 1)[1]}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    copy = importlib.util.module_from_spec(spec)
    copy.__package__ = fault.module.rsplit(".", 1)[0]
    sys.modules[name] = copy
    # the copy's @emits must not register its emitters beside the real ones: they stand in only while planted
    registering = _registry.emits
    _registry.emits = lambda *kinds: (lambda fn: fn)
    try:
        spec.loader.exec_module(copy)
    finally:
        _registry.emits = registering
    return module, copy


@contextlib.contextmanager
def planted(kind: str):
    if kind not in FAULTS:
        raise ValueError(f"unknown planted fault {kind!r}; known: {', '.join(sorted(FAULTS))}")
    with tempfile.TemporaryDirectory(prefix="axe4j-fault-") as folder:
        module, copy = faulty_module(kind, Path(folder))
        saved = {name: getattr(module, name) for name in FAULTS[kind].swap}
        # a swapped emitter also stands in for the plan kinds it is registered for (axe4j._registry)
        registered = {k: fn for k, fn in _registry._EMITTERS.items() if fn in saved.values()}
        try:
            for name in saved:
                setattr(module, name, getattr(copy, name))
            for k, fn in registered.items():
                _registry._EMITTERS[k] = getattr(copy, fn.__name__)
            yield copy
        finally:
            for name, value in saved.items():
                setattr(module, name, value)
            _registry._EMITTERS.update(registered)
            sys.modules.pop(copy.__name__, None)
