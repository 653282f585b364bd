"""Semantics of the calls a lowered CUDA kernel makes: TIR builtins, CUDA intrinsics and the ``T.ptx`` instructions.

Each instruction's meaning is written from the PTX ISA (the section is named next to its code), independently of
axe4j's own fragment tables (``MatrixFragments``, ``CudaFragments``): the interpreter is a second source of truth for them.
A ``T.ptx`` call carries its operands first and its modifier tokens (strings) last; the tokens joined with dots give
the PTX spelling that selects the semantics here.
"""

from __future__ import annotations

import numpy as np

from . import _math
from . import _values as V
from ._errors import KernelFault, NotModelled, thread_name
from ._exec import _MATH, AllOf, BarrierWait, Until, key, loaded
from ._memory import Pointer
from . import _tensor as TC
from . import _cluster as CL
from ._operands import LValue, MBarrier, _as_bits, _uniform, complete_tx, shared_address  # noqa: F401


def _is_string(e) -> bool:
    return type(e).__name__ == "StringImm"


def split_operands(call):
    args = list(call.args)
    cut = len(args)
    while cut > 0 and _is_string(args[cut - 1]):
        cut -= 1
    tokens = [str(a.value) for a in args[cut:] if str(a.value)]
    return args[:cut], tokens


# ---- mbarriers (PTX ISA: "Parallel Synchronization and Communication Instructions: mbarrier") --------------------

def mbarrier_at(g, addr):
    addr = int(_uniform(g, addr, "the mbarrier address"))
    bar = g.cta.mbarriers.get(addr)
    if bar is None:
        raise KernelFault(f"kernel '{g.cta.kernel}': mbarrier at shared byte {addr} used before mbarrier.init by "
                          f"{thread_name(g.cta.block, g.tids[0])}")
    return addr, bar


def mbarrier(interp, g, ops, tokens):
    chain = ".".join(tokens)
    addr = shared_address(interp, g, ops[0])
    if tokens[0] == "init":
        count = int(_uniform(g, interp.eval(g, ops[1]), "the mbarrier count"))
        for a in np.unique(addr):
            if a % 8:
                raise KernelFault(f"kernel '{g.cta.kernel}': mbarrier at shared byte {a} is not 8-byte aligned")
            g.cta.mbarriers[int(a)] = MBarrier(count)
        return None
    if tokens[0] == "arrive":
        remote = "shared::cluster" in tokens
        for a in np.unique(addr):
            threads = int(np.sum(addr == a))
            # shared::cluster: the barrier may be another CTA's of the cluster (an address mapa gave)
            cta, offset = CL.resolve(g, a, "mbarrier.arrive.shared::cluster") if remote else (g.cta, int(a))
            bar = cta.mbarriers.get(offset)
            if bar is None:
                raise KernelFault(f"kernel '{g.cta.kernel}': mbarrier at shared byte {offset}{_of_block(g, cta)} used "
                                  f"before mbarrier.init (arrive by {thread_name(g.cta.block, g.tids[0])})")
            value = int(_uniform(g, interp.eval(g, ops[1]), "the mbarrier operand")) if len(ops) > 1 else 1
            if "expect_tx" in tokens:
                bar.tx += value * threads
                bar.pending -= threads
            else:
                bar.pending -= value * threads
            if bar.pending < 0:
                raise KernelFault(f"kernel '{g.cta.kernel}': more arrivals than the {bar.count} expected on the "
                                  f"mbarrier at shared byte {offset}{_of_block(g, cta)}")
            bar.settle(cta)
        return None
    raise NotModelled(f"mbarrier.{chain}")


def _of_block(g, cta) -> str:
    return "" if cta is g.cta else f" of block {cta.block}"


def mbarrier_wait(interp, g, ptr, parity):
    """try_wait.parity: the phase of parity P has completed when the completed-phase count's parity differs from P."""
    addr = shared_address(interp, g, ptr)
    a, bar = mbarrier_at(g, addr)
    p = int(_uniform(g, interp.eval(g, parity), "the mbarrier parity")) & 1
    return Until(f"mbarrier at shared byte {a} to complete its phase of parity {p}", lambda: bar.phase % 2 != p)


# ---- loads, stores, moves (PTX ISA: "Data Movement and Conversion Instructions: ld, st, mov") -------------------

_TYPES = {"u32": np.uint32, "b32": np.uint32, "s32": np.int32, "f32": np.float32, "u16": np.uint16, "b16": np.uint16,
          "f16": np.float16, "u64": np.uint64, "b64": np.uint64, "s64": np.int64, "u8": np.uint8, "b8": np.uint8,
          "s8": np.int8, "s16": np.int16, "f64": np.float64}


def _memory_of(interp, g, e, space_token):
    value = interp.eval(g, e)
    if isinstance(value, Pointer):
        return value.space, value.offset
    if space_token == "shared":
        return g.cta.shared.space, np.asarray(value).astype(np.int64)
    raise NotModelled(f"an address operand {e} in state space {space_token}")


def ld_st(interp, g, family, ops, tokens):
    vec = next((int(t[1:]) for t in tokens if t in ("v2", "v4", "v8")), 1)
    ty = np.dtype(next(_TYPES[t] for t in reversed(tokens) if t in _TYPES))
    space = next((t for t in tokens if t in ("global", "shared", "local", "shared::cta")), "generic")
    space = "shared" if space == "shared::cta" else space
    access = g.cta.access
    if family == "ld":
        outs = [LValue(interp, g, o) for o in ops[:vec]]
        mem, addr = _memory_of(interp, g, ops[vec], space)
        words = access.load(mem, g.tids, addr[:, None] + np.arange(vec) * ty.itemsize, ty)
        for j, out in enumerate(outs):
            out.write_bits(words[:, j].view(np.uint32) if ty.itemsize == 4 else words[:, j]) if out.dtype != ty \
                else out.write(words[:, j])
        return None
    mem, addr = _memory_of(interp, g, ops[0], space)
    values = np.stack([_as_bits(interp.eval(g, o), ty.itemsize).view(ty) for o in ops[1:1 + vec]], axis=1)
    access.store(mem, g.tids, addr[:, None] + np.arange(vec) * ty.itemsize, values, ty)
    return None


def mov(interp, g, ops, tokens):
    """mov.b64 d, {a, b} packs two 32-bit registers (a low); mov.b64 {a, b}, d unpacks."""
    first = LValue(interp, g, ops[0])
    if first.dtype.itemsize == 8 and len(ops) == 3:
        lo, hi = (_as_bits(interp.eval(g, o)).astype(np.uint64) for o in ops[1:3])
        first.write_bits(lo | (hi << np.uint64(32)))
        return None
    if len(ops) == 3:
        word = _as_bits(interp.eval(g, ops[2]), 8)
        first.write_bits(word & np.uint64(0xFFFFFFFF))
        LValue(interp, g, ops[1]).write_bits(word >> np.uint64(32))
        return None
    raise NotModelled("mov." + ".".join(tokens))


def arith(interp, g, family, ops, tokens):
    """add/mul/max with .f32 or packed .f32x2 (two f32 in a 64-bit register; PTX ISA: "Floating Point Instructions")."""
    out = LValue(interp, g, ops[0])
    fn = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[family]
    if "f32x2" in tokens:
        pairs = [_as_bits(interp.eval(g, o), 8).view(np.float32).reshape(g.n, 2) for o in ops[1:]]
        result = pairs[0]
        for p in pairs[1:]:
            result = fn(result, p)
        out.write_bits(np.ascontiguousarray(result.astype(np.float32)).view(np.uint64).reshape(g.n))
        return None
    values = [interp.eval(g, o).astype(np.float32) for o in ops[1:]]
    result = values[0]
    for v in values[1:]:
        result = fn(result, v)
    out.write(result)
    return None


# ---- cp.async (PTX ISA: "Data Movement: cp.async, cp.async.commit_group, cp.async.wait_group") ------------------

class CpAsync:
    def __init__(self, tids, src_space, src, dst, size, fill, group):
        self.tids, self.src_space, self.src, self.dst, self.size, self.fill = tids, src_space, src, dst, size, fill
        self.group = group
        self.kind = "cp.async"
        self.shared_writes = (dst[:, None] + np.arange(size)).ravel()

    def describe(self):
        return (f"a cp.async of {self.size} bytes to shared bytes [{int(self.dst.min())}, {int(self.dst.max()) + self.size})"
                f" issued by thread {int(self.tids[0])}")

    def complete(self, cta):
        access = cta.access
        data = access.load(self.src_space, self.tids, self.src[:, None] + np.arange(self.size), np.uint8)
        if self.fill is not None:
            data = np.where(np.arange(self.size)[None, :] < self.fill[:, None], data, 0).astype(np.uint8)
        cta.shared.space.data[(self.dst[:, None] + np.arange(self.size)).ravel()] = data.ravel()
        cta.shared.wrote_generic(self.dst[:, None] + np.arange(self.size), self.tids[:, None])  # generic proxy


def cp_async(interp, g, ops, tokens):
    state = g.cta.async_state.setdefault("cp.async", {"open": np.zeros(g.cta.threads, np.int64)})
    if tokens[1:2] == ["commit_group"]:
        state["open"][g.tids] += 1
        return None
    if tokens[1:2] in (["wait_group"], ["wait_all"]):
        keep = int(_uniform(g, interp.eval(g, ops[0]), "wait_group's count")) if ops else 0
        committed = state["open"][g.tids]
        mine = set(int(t) for t in g.tids)

        def due(op):
            return op.kind == "cp.async" and any(int(t) in mine for t in op.tids) and \
                op.group < int(committed.max()) - keep
        g.cta.complete(due)
        return None
    dst = shared_address(interp, g, ops[0])
    src = interp.eval(g, ops[1])
    size = int(_uniform(g, interp.eval(g, ops[2]), "cp.async's size"))
    if size not in (4, 8, 16):
        raise KernelFault(f"kernel '{g.cta.kernel}': cp.async of {size} bytes (4, 8 or 16)")
    fill = interp.eval(g, ops[3]).astype(np.int64) if len(ops) > 3 else None
    for what, a in (("destination", dst), ("source", src.offset)):
        if np.any(a % size):
            bad = int(a[np.flatnonzero(a % size)[0]])
            raise KernelFault(f"kernel '{g.cta.kernel}': cp.async {what} byte {bad} is not {size}-byte aligned")
    g.cta.access.raw(g.cta.shared.space, int(dst.min()), int(dst.max() - dst.min()) + size, "cp.async")
    g.cta.issue(CpAsync(g.tids.copy(), src.space, src.offset.copy(), dst.copy(), size, fill,
                        int(state["open"][g.tids].max())))
    return None


# ---- bulk tensor copies (TMA) -------------------------------------------------------------------------------------

class TensorCopy:
    """cp.async.bulk.tensor (PTX ISA: "cp.async.bulk.tensor"; tensor maps as cuTensorMapEncodeTiled defines them;
    the swizzle as PTX ISA "Tensor swizzling modes" gives it: 16-byte chunk bits [4, 4+b) of the shared byte address
    XOR bits [7, 7+b), b = 1, 2, 3 for the 32, 64 and 128-byte modes)."""

    def __init__(self, direction, tmap, coords, smem, mbar, tids):
        self.direction, self.tmap, self.coords, self.smem, self.mbar = direction, tmap, coords, smem, mbar
        self.tids, self.kind = tids, "tma"
        self.async_proxy = True
        smem_bytes = TC.box_shared_bytes(tmap, smem)
        if direction == "load":
            self.shared_writes = smem_bytes
        else:
            self.shared_reads = smem_bytes

    def describe(self):
        by = f"thread {int(self.tids[0])}"
        if getattr(self, "source", None) is not None:
            by = f"{by} of block {self.source} (multicast)"
        return f"a TMA {self.direction} (box {self.tmap.box} at {self.coords}, shared byte {self.smem}) issued by {by}"

    def complete(self, cta):
        TC.tensor_copy(cta, self)
        if self.mbar is not None:
            # .cta_group::2: the mbarrier may be the pair's other CTA's (an address in the cluster window)
            target = getattr(self, "mbar_cta", None) or cta
            complete_tx(target, self.mbar, self.tmap.box_bytes())


def cp_bulk(interp, g, ops, tokens):
    state = g.cta.async_state.setdefault("bulk", {"open": 0})
    if "commit_group" in tokens:
        for op in g.cta.pending:
            if op.kind == "tma-store" and op.group is None:
                op.group = state["open"]
        state["open"] += 1
        return None
    if "wait_group" in tokens or "wait_group.read" in ".".join(tokens):
        keep = int(_uniform(g, interp.eval(g, ops[0]), "wait_group's count")) if ops else 0
        g.cta.complete(lambda op: op.kind == "tma-store" and op.group is not None and op.group < state["open"] - keep)
        return None
    if "tensor" not in tokens:
        raise NotModelled("cp." + ".".join(tokens))
    rank = int(next(t for t in tokens if t.endswith("d") and t[:-1].isdigit())[:-1])
    if tokens.index("global") > tokens.index(next(t for t in tokens if t.startswith("shared"))):
        # load: dst smem, tensor map, coordinates (innermost first), mbarrier
        smem = shared_address(interp, g, ops[0])
        tmap = interp.eval(g, ops[1])
        coords = [interp.eval(g, c).astype(np.int64) for c in ops[2:2 + rank]]
        mbar = shared_address(interp, g, ops[2 + rank])
        multicast = any(t.startswith("multicast::cluster") for t in tokens)
        masks = interp.eval(g, ops[3 + rank]).astype(np.int64) if multicast else None
        for i in range(g.n):
            bar_cta, bar = g.cta, int(mbar[i])
            if bar >= CL.CLUSTER_WINDOW:
                if "cta_group::2" not in tokens:
                    raise KernelFault(f"kernel '{g.cta.kernel}': a TMA load signals an mbarrier of another CTA "
                                      "without .cta_group::2 (by " + thread_name(g.cta.block, g.tids[i]) + ")")
                bar_cta, bar = CL.resolve(g, bar, "a TMA load's mbarrier")
                pair = {r ^ 1 for r in [g.cta.cluster.rank(g.cta)]} | {g.cta.cluster.rank(g.cta)}
                if g.cta.cluster.rank(bar_cta) not in pair:
                    raise KernelFault(f"kernel '{g.cta.kernel}': a .cta_group::2 TMA load signals block "
                                      f"{bar_cta.block}, which is not in the issuing CTA's pair")
            copy = (TC.tensor_map(g, tmap), [int(c[i]) for c in coords], int(smem[i]), bar, g.tids[i:i + 1])
            if not multicast:
                op = TensorCopy("load", *copy)
                op.mbar_cta = bar_cta if bar_cta is not g.cta else None
                g.cta.issue(op)
                continue
            # .multicast::cluster: the same box at the same offset in every CTA of the mask, each completing its
            # bytes on its own mbarrier at the same offset
            for r in CL.mask_ranks(g, masks[i], "a multicast TMA load"):
                target = g.cta.cluster.cta(r, "a multicast TMA load") if g.cta.cluster is not None else g.cta
                op = TensorCopy("load", *copy)
                op.source = g.cta.block
                target.issue(op)
        return None
    tmap = interp.eval(g, ops[0])
    coords = [interp.eval(g, c).astype(np.int64) for c in ops[1:1 + rank]]
    smem = shared_address(interp, g, ops[1 + rank])
    for i in range(g.n):
        op = TensorCopy("store", TC.tensor_map(g, tmap), [int(c[i]) for c in coords], int(smem[i]), None,
                        g.tids[i:i + 1])
        op.kind, op.group = "tma-store", None
        g.cta.issue(op)
    return None


# ---- dispatch -----------------------------------------------------------------------------------------------------

def call(interp, g, e, name):
    """Calls inside expressions (they return a value)."""
    args = e.args
    if name in _MATH and _MATH[name] is not None:
        x = interp.eval(g, args[0])
        wide = x.dtype in (np.dtype(np.float16), V.numpy_dtype("bfloat16"))
        return V.convert(_MATH[name](x.astype(np.float32) if wide else x), str(e.ty))  # 16-bit: float32, round once
    if name in ("tirx.call_pure_extern", "tirx.call_extern"):
        return _math.call(str(args[0].value), [interp.eval(g, a) for a in args[1:]], e.ty)
    if name == "tirx.if_then_else":
        cond = np.asarray(interp.eval(g, args[0]), dtype=bool)
        if cond.all():
            return interp.eval(g, args[1])
        if not cond.any():
            return interp.eval(g, args[2])
        out = None
        for mask, arg in ((cond, args[1]), (~cond, args[2])):
            if not mask.any():
                continue
            part = interp.eval(g.subset(mask), arg)
            if out is None:
                out = np.empty((g.n,) + np.shape(part)[1:], dtype=np.asarray(part).dtype)
            out[mask] = part
        return out
    if name == "tirx.reinterpret":
        value = interp.eval(g, args[0])
        if isinstance(value, (Pointer, TC.TensorMap)) or not isinstance(value, np.ndarray):
            return value
        if "handle" in str(e.ty):
            return value
        if "tmem" in str(e.ty):   # tvm_tirx's tmem tensor: its data pointer is the 32-bit tensor-memory address
            return np.asarray(value).astype(np.uint64)
        target = V.numpy_dtype(e.ty)
        lanes = V.lanes(e.ty)
        bits = np.ascontiguousarray(value).reshape(len(value), -1).view(target)   # one row of bits per thread
        return bits.reshape(len(value), lanes) if lanes > 1 else bits.reshape(len(value))
    if name == "tirx.address_of":
        load = args[0]
        if type(load).__name__ in ("Var", "SizeVar"):  # a tensor map parameter
            value = interp.eval(g, load)
            return value.value if hasattr(value, "value") and not isinstance(value, np.ndarray) else value
        if type(load).__name__ in ("BufferLoad", "TensorLoad"):
            ptr, addr, _ = interp.address(g, loaded(load), load.indices, None)
            return Pointer(ptr.space, addr)
        raise NotModelled(f"address_of {load} ({type(load).__name__})")
    if name == "tirx.cuda.cvta_generic_to_shared":
        value = interp.eval(g, args[0])
        if isinstance(value, Pointer):
            if value.space.kind != "shared":
                raise KernelFault(f"kernel '{g.cta.kernel}': cvta to shared of a pointer into {value.space}")
            return value.offset.astype(np.uint32)
        return value
    if name == "tirx.cuda.func_call":
        return _func_call(interp, g, e)
    if name == "tirx.cuda.mov_sreg":
        register = str(args[1].value)
        value = CL.special_register(g, register)
        if value is None:
            raise NotModelled(f"special register %{register}")
        return value
    if name in ("tirx.tvm_warp_shuffle", "tirx.tvm_warp_shuffle_xor", "tirx.tvm_warp_shuffle_down",
                "tirx.tvm_warp_shuffle_up"):
        return _shuffle(interp, g, name.rsplit("_", 1)[-1], args)
    if name in ("tirx.cuda.__shfl_sync", "tirx.cuda.__shfl_xor_sync", "tirx.cuda.__shfl_down_sync",
                "tirx.cuda.__shfl_up_sync"):
        kind = {"sync": "shuffle", "xor": "xor", "down": "down", "up": "up"}[name.split("_")[-2] if
                                                                            name.count("_") > 3 else "sync"]
        return _shuffle(interp, g, kind, args)
    if name in ("tirx.cuda.any_sync", "tirx.cuda.ballot_sync"):
        return _vote(interp, g, name.rsplit(".", 1)[1], args)
    if name == "tirx.tvm_warp_activemask":
        return np.full(g.n, 0xFFFFFFFF, np.uint32)
    if name == "tirx.cuda.elect_sync":
        lanes = g.tids % 32
        first = np.zeros(g.n, dtype=np.uint32)
        for warp in np.unique(g.tids // 32):
            where = np.flatnonzero(g.tids // 32 == warp)
            first[where[np.argmin(lanes[where])]] = 1
        return first
    if name == "tirx.cuda.warp_reduce":
        return _warp_reduce(interp, g, args)
    if name == "tirx.cuda.get_tmem_addr":
        # (address, row, column) -> the address moved by row lanes and column columns: lane << 16 | column, each
        # 16 bits (tvm_tirx's get_tmem_addr helper; 0.27 adds the column to the allocated address instead)
        address, row, column = (np.asarray(interp.eval(g, a)).astype(np.int64) for a in args)
        lanes = ((address >> 16) + row) & 0xFFFF
        return ((lanes << 16) | (((address & 0xFFFF) + column) & 0xFFFF)).astype(np.uint32)
    if name == "tirx.isnullptr":
        return np.zeros(g.n, dtype=bool)
    if name == "tirx.handle_add_byte_offset":
        return interp.eval(g, args[0]).add(interp.eval(g, args[1]))
    if name == "tirx.buffer_data":
        value = g.env.get(key(args[0]))
        if value is None:
            raise NotModelled(f"storage {args[0]} has no value here")
        return value
    if name == "tirx.type_annotation":
        return None
    if name == "tirx.cuda.atomic_add":
        return _atomic_add(interp, g, e)
    raise NotModelled(f"call {name}")


def _atomic_add(interp, g, e):
    """atomicAdd(address, value) -> the old value, for each thread of the group in the order of their ids (the
    order is one of those the hardware may pick; each read-modify-write is whole)."""
    pointer, value = interp.eval(g, e.args[0]), interp.eval(g, e.args[1])
    if not isinstance(pointer, Pointer):
        raise NotModelled(f"atomic_add on {e.args[0]}, which is not an address")
    dtype = V.numpy_dtype(e.ty)
    addresses = np.broadcast_to(np.asarray(pointer.offset, np.int64), (g.n,))
    values = np.broadcast_to(np.asarray(value).astype(dtype), (g.n,))
    old = np.empty(g.n, dtype)
    for j in range(g.n):
        tid, address = g.tids[j:j + 1], addresses[j:j + 1]
        current = g.cta.access.load(pointer.space, tid, address, dtype)
        old[j] = current[0]
        g.cta.access.store(pointer.space, tid, address, current + values[j], dtype)
    return old


def statement(interp, g, e, name):
    """Calls as statements: may return a Wait (barriers, mbarrier waits) for the scheduler."""
    if name == "tirx.cuda.cta_sync":
        return BarrierWait(g.cta, 0, g.cta.threads, g)
    if name == "tirx.cuda.warpgroup_sync":  # bar.sync id, 128 (threads naming different ids sync apart)
        ids = np.asarray(interp.eval(g, e.args[0])).astype(np.int64)
        waits = [BarrierWait(g.cta, int(i), 128, g.subset(ids == i)) for i in np.unique(ids)]
        return waits[0] if len(waits) == 1 else AllOf(waits)
    if name == "tirx.cuda.warp_sync":
        g.cta.shared.publish(g.tids)
        return None
    if name == "tirx.cuda.thread_fence":   # orders this thread's global accesses; CTAs run one after another here
        return None
    if name == "tirx.cuda.mbarrier_wait":
        return mbarrier_wait(interp, g, e.args[0], e.args[1])
    if name == "tirx.cuda.cluster_sync":
        return CL.ClusterBarrierWait(g)
    if name in ("tirx.cuda.wgmma_encode_matrix_descriptor", "tirx.cuda.tcgen05_encode_matrix_descriptor"):
        return TC.encode_descriptor(interp, g, e.args, "wgmma" if "wgmma" in name else "tcgen05")
    if name.startswith("tirx.ptx."):
        family = name[len("tirx.ptx."):].split("_")[0]  # table entries are <family>_<shape>
        ops, tokens = split_operands(e)
        if family == "mbarrier":
            return mbarrier(interp, g, ops, tokens)
        if family == "fence" and "proxy" in tokens and any(t.startswith("async") for t in tokens):
            g.cta.shared.fence_proxy_async(g.tids)
            return None
        if family in ("fence", "setmaxnreg"):  # other fences order what barriers order here; no register budgets
            return None
        if family in ("ld", "st"):
            return ld_st(interp, g, family, ops, tokens)
        if family == "mov":
            return mov(interp, g, ops, tokens)
        if family == "shfl" and "idx" in tokens:   # shfl.sync.idx.b32 d, a, lane, clamp, membermask
            if int(_uniform(g, interp.eval(g, ops[3]), "shfl.sync's clamp")) != 31:
                raise NotModelled("shfl.sync.idx with a clamp other than 31 (segments narrower than the warp)")
            LValue(interp, g, ops[0]).write(_shuffle_values(g, "shuffle", interp.eval(g, ops[1]),
                                                            interp.eval(g, ops[2]).astype(np.int64), 32))
            return None
        if family == "mapa" and "shared::cluster" in tokens:   # mapa.shared::cluster.u32 d, a, rank
            LValue(interp, g, ops[0]).write_bits(
                CL.map_address(g, shared_address(interp, g, ops[1]), interp.eval(g, ops[2])))
            return None
        if family.rstrip("0123456789") in ("add", "mul", "max", "min"):   # max3: the three-input form
            return arith(interp, g, family.rstrip("0123456789"), ops, tokens)
        if family == "cp":
            if "bulk" in tokens:
                return cp_bulk(interp, g, ops, tokens)
            return cp_async(interp, g, ops, tokens)
        if family in ("ldmatrix", "stmatrix"):
            return TC.ldstmatrix(interp, g, family, ops, tokens)
        if family == "mma":
            return TC.mma_sync(interp, g, ops, tokens)
        if family == "wgmma":
            return TC.wgmma(interp, g, ops, tokens)
        if family == "tcgen05":
            return TC.tcgen05(interp, g, ops, tokens)
        raise NotModelled(f"ptx {family}." + ".".join(tokens))
    call(interp, g, e, name)
    return None


def _func_call(interp, g, e):
    fn = str(e.args[0].value)
    if fn == "axe4j_fence_register_f32":   # a compiler fence (axe4j.cuda.register_fence): no effect on values
        return None
    if fn == "tvm_builtin_pointer_offset":
        ptr = interp.eval(g, e.args[1])
        elem = V.numpy_dtype(loaded(e.args[1].args[0]).dtype) if type(e.args[1]).__name__ == "Call" else np.uint8
        return ptr.add(interp.eval(g, e.args[2]).astype(np.int64) * np.dtype(elem).itemsize)
    if fn.startswith("tvm_builtin_cast_") and "x2_" in fn:
        # tvm_builtin_cast_<src>x2_<dst>x2(dst, src): two elements converted with round to nearest
        src_type, dst_type = fn[len("tvm_builtin_cast_"):].split("x2_")
        dst, src = interp.eval(g, e.args[1]), interp.eval(g, e.args[2])
        values = g.cta.access.load(src.space, g.tids, src.offset[:, None] + np.arange(2) * V.numpy_dtype(src_type)
                                   .itemsize, V.numpy_dtype(src_type))
        out_type = V.numpy_dtype(dst_type.rstrip("x2"))
        g.cta.access.store(dst.space, g.tids, dst.offset[:, None] + np.arange(2) * out_type.itemsize,
                           V.convert(values, dst_type.rstrip("x2")), out_type)
        return None
    raise NotModelled(f"device function {fn}")


def _shuffle(interp, g, kind, args):
    """shfl.sync (PTX ISA "shfl.sync"): idx/bfly/down/up within segments of ``width`` lanes; a source lane outside
    the segment (down/up) returns the caller's own value."""
    value = interp.eval(g, args[1])
    delta = interp.eval(g, args[2]).astype(np.int64)
    width = int(_uniform(g, interp.eval(g, args[3]), "the shuffle width"))
    return _shuffle_values(g, kind, value, delta, width)


def _shuffle_values(g, kind, value, delta, width):
    lane = g.tids % 32
    seg = lane - lane % width
    if kind == "shuffle":
        src = seg + delta % width
    elif kind == "xor":
        src = lane ^ delta
        src = np.where(src // width == lane // width, src, lane)
    elif kind == "down":
        src = np.where(lane % width + delta < width, lane + delta, lane)
    else:
        src = np.where(lane % width - delta >= 0, lane - delta, lane)
    src_tid = g.tids - lane + src
    where = np.searchsorted(g.tids, src_tid)
    where = np.minimum(where, g.n - 1)
    missing = g.tids[where] != src_tid
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise KernelFault(f"kernel '{g.cta.kernel}': shfl.sync by {thread_name(g.cta.block, g.tids[i])} reads lane "
                          f"{int(src[i])}, which is not executing the shuffle with it")
    return value[where]


def _vote(interp, g, kind, args):
    """vote.sync (PTX ISA "vote.sync"): any / ballot over the lanes of the member mask, all of which must be
    executing the vote with the caller."""
    mask = np.asarray(interp.eval(g, args[0])).astype(np.uint64)
    pred = np.asarray(interp.eval(g, args[1])) != 0
    lane = (g.tids % 32).astype(np.uint64)
    out = np.zeros(g.n, dtype=np.uint32 if kind == "ballot_sync" else np.int32)
    for warp in np.unique(g.tids // 32):
        sel = np.flatnonzero(g.tids // 32 == warp)
        members = int(_uniform(g.subset(g.tids // 32 == warp), mask[sel], "vote's member mask"))
        present = 0
        for lane_bit in lane[sel]:
            present |= 1 << int(lane_bit)
        if members & ~present & 0xFFFFFFFF:
            raise KernelFault(f"kernel '{g.cta.kernel}': vote.sync in warp {int(warp)} names lanes "
                              f"{members & ~present:#010x} that are not executing it")
        bits = 0
        for lane_bit, p in zip(lane[sel], pred[sel]):
            if p and (members >> int(lane_bit)) & 1:
                bits |= 1 << int(lane_bit)
        out[sel] = bits if kind == "ballot_sync" else int(bits != 0)
    return out


def _warp_reduce(interp, g, args):
    value = interp.eval(g, args[0])
    op = str(args[1].value)
    width = int(args[2].value) if type(args[2]).__name__ == "IntImm" else int(interp.eval(g, args[2])[0])
    fn = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
    out = value.copy()
    step = 1
    while step < width:
        lane = g.tids % 32
        src_tid = g.tids - lane + (lane ^ step)
        where = np.searchsorted(g.tids, src_tid)
        if np.any(g.tids[np.minimum(where, g.n - 1)] != src_tid):
            raise KernelFault(f"kernel '{g.cta.kernel}': warp reduction over lanes that are not converged")
        out = fn(out, out[where])
        step *= 2
    return out
