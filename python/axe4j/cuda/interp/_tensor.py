"""Tensor-core and tensor-copy instructions: TMA boxes, ldmatrix/stmatrix, mma.sync, wgmma, tcgen05.

Every fragment and descriptor here is written from the PTX ISA's own tables (sections named at each function),
not from axe4j's ``MatrixFragments``/``CudaFragments``: when the two disagree, a kernel computes wrong numbers here.
"""

from __future__ import annotations

import numpy as np

from . import _values as V
from ._errors import KernelFault, NotModelled, thread_name
from ._exec import Until, loaded
from ._memory import Pointer

# ---- tensor maps (CUDA driver API cuTensorMapEncodeTiled) ---------------------------------------------------------


class TensorMap:
    """A tiled tensor map: element type, global pointer, dims and byte strides (innermost first), box, swizzle."""

    SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}

    def __init__(self, dtype, pointer, dims, strides, box, element_strides, swizzle, oob_fill, interleave):
        self.dtype, self.pointer = np.dtype(dtype), pointer
        self.dims, self.strides, self.box = list(dims), [self.dtype.itemsize] + list(strides), list(box)
        self.element_strides, self.swizzle, self.oob_fill = list(element_strides), int(swizzle), int(oob_fill)
        if interleave:
            raise NotModelled("interleaved tensor maps")
        if any(s != 1 for s in self.element_strides):
            raise NotModelled(f"tensor map element strides {self.element_strides}")
        reach = int(pointer.offset.reshape(-1)[0]) + sum((n - 1) * s for n, s in zip(self.dims, self.strides)) \
            + self.dtype.itemsize
        if reach > pointer.space.size:
            raise KernelFault(f"tensor map over {pointer.space} (dims {self.dims}, byte strides {self.strides}) reaches "
                              f"byte {reach}; the argument holds {pointer.space.size} bytes")
        span = self.SWIZZLE_BYTES[self.swizzle]
        if span and self.box[0] * self.dtype.itemsize > span:
            raise KernelFault(f"tensor map: inner box of {self.box[0] * self.dtype.itemsize} bytes exceeds the "
                              f"{span}-byte swizzle span")

    def box_bytes(self):
        return int(np.prod(self.box)) * self.dtype.itemsize


def tensor_map(g, value):
    if not isinstance(value, TensorMap):
        raise KernelFault(f"kernel '{g.cta.kernel}': a bulk tensor copy's map operand is not a tensor map")
    return value


def swizzle_bytes(addr, span):
    """PTX ISA "Tensor swizzling modes": bits [4, 4 + b) of a shared byte address XOR bits [7, 7 + b)."""
    if not span:
        return addr
    b = {32: 1, 64: 2, 128: 3}[span]
    return addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)


def _box(m, smem_start):
    """index[d] (box coordinate of dim d, innermost first) of every box element, and its swizzled shared address."""
    grids = np.meshgrid(*[np.arange(b) for b in reversed(m.box)], indexing="ij")
    index = [gr.ravel() for gr in reversed(grids)]
    linear = np.zeros_like(index[0])
    scale = 1
    for d, b in enumerate(m.box):
        linear = linear + index[d] * scale
        scale *= b
    return index, linear, swizzle_bytes(smem_start + linear * m.dtype.itemsize, TensorMap.SWIZZLE_BYTES[m.swizzle])


def box_shared_bytes(m, smem_start):
    _, _, smem = _box(m, smem_start)
    return (smem[:, None] + np.arange(m.dtype.itemsize)).ravel()


def tensor_copy(cta, op):
    m = op.tmap
    if op.smem % 128:
        raise KernelFault(f"kernel '{cta.kernel}': bulk tensor copy at shared byte {op.smem}, not 128-byte aligned")
    index, linear, smem = _box(m, op.smem)
    coord = [op.coords[d] + index[d] for d in range(len(m.box))]
    inside = np.ones(linear.shape, dtype=bool)
    gaddr = np.zeros(linear.shape, dtype=np.int64)
    for d, c in enumerate(coord):
        inside &= (c >= 0) & (c < m.dims[d])
        gaddr += c * m.strides[d]
    gspace = m.pointer.space
    base = int(m.pointer.offset.reshape(-1)[0])
    shared = cta.shared.space
    item = m.dtype.itemsize
    if op.direction == "load":
        values = np.zeros(linear.shape, dtype=m.dtype)
        if m.oob_fill:
            values[:] = np.nan
        where = np.flatnonzero(inside)
        src = base + gaddr[where]
        _check_range(cta, gspace, src, item, "bulk tensor load")
        values[where] = gspace.data.view(m.dtype)[src // item]
        _check_range(cta, shared, smem, item, "bulk tensor load")
        shared.data.view(m.dtype)[smem // item] = values
        return
    where = np.flatnonzero(inside)
    _check_range(cta, shared, smem, item, "bulk tensor store")
    dst = base + gaddr[where]
    _check_range(cta, gspace, dst, item, "bulk tensor store")
    gspace.data.view(m.dtype)[dst // item] = shared.data.view(m.dtype)[smem[where] // item]


def _check_range(cta, space, addr, item, who):
    if len(addr) and (addr.min() < 0 or addr.max() + item > space.size):
        raise KernelFault(f"kernel '{cta.kernel}': {who} reaches byte {int(addr.max())} of {space} (size "
                          f"{space.size})")


# ---- shared-memory matrix descriptors ----------------------------------------------------------------------------

# TVM's encoders (tirx.cuda.{wgmma,tcgen05}_encode_matrix_descriptor) take the swizzle as CUtensorMapSwizzle
# (0 none, 1 32B, 2 64B, 3 128B) and store the layout field of each instruction's descriptor format:
_WGMMA_LAYOUT = {0: 0, 1: 3, 2: 2, 3: 1}      # PTX ISA "Matrix Descriptor Format" (wgmma): bits 62-63
_TCGEN05_LAYOUT = {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}  # PTX ISA "Shared Memory Descriptor" (tcgen05): bits 61-63


def encode_descriptor(interp, g, args, family):
    desc = interp.eval(g, args[0])
    addr = interp.eval(g, args[1])
    if not isinstance(addr, Pointer) or addr.space.kind != "shared":
        raise KernelFault(f"kernel '{g.cta.kernel}': a matrix descriptor's address is not in shared memory")
    ldo, sdo, swz = (interp.eval(g, a).astype(np.uint64) for a in args[2:5])
    start = (addr.offset.astype(np.uint64) >> np.uint64(4)) & np.uint64(0x3FFF)
    value = start | ((ldo & np.uint64(0x3FFF)) << np.uint64(16)) | ((sdo & np.uint64(0x3FFF)) << np.uint64(32))
    table = _WGMMA_LAYOUT if family == "wgmma" else _TCGEN05_LAYOUT
    layout = np.array([table[int(s)] for s in swz], dtype=np.uint64)
    if family == "wgmma":
        value |= layout << np.uint64(62)
    else:
        value |= (np.uint64(1) << np.uint64(46)) | (layout << np.uint64(61))
    g.cta.access.store(desc.space, g.tids, desc.offset, value, np.uint64)
    return None


def _decode(desc, family):
    d = int(desc)
    start = (d & 0x3FFF) << 4
    lbo = ((d >> 16) & 0x3FFF) << 4
    sbo = ((d >> 32) & 0x3FFF) << 4
    if family == "wgmma":
        span = {0: 0, 1: 128, 2: 64, 3: 32}[(d >> 62) & 3]
    else:
        code = (d >> 61) & 7
        if code not in (0, 2, 4, 6):
            raise NotModelled(f"tcgen05 descriptor swizzle mode {code}")
        span = {0: 0, 2: 128, 4: 64, 6: 32}[code]
    return start, lbo, sbo, span


def operand_bytes(desc, family, rows, k, dtype):
    """Every shared byte a (rows x k) operand read through ``desc`` touches."""
    addr = _operand_addresses(desc, family, rows, k, dtype)
    return (addr.ravel()[:, None] + np.arange(np.dtype(dtype).itemsize)).ravel()


def _operand_addresses(desc, family, rows, k, dtype):
    """A K-major (rows x k) operand through a descriptor (PTX ISA "Shared Memory Matrix Layout", K-major canonical
    layouts): no swizzle, 8x16-byte core matrices, LBO between K-adjacent core matrices and SBO between 8-row groups;
    swizzled, 8 rows of ``span`` bytes per 8-row group (SBO apart) and the swizzle on the byte address."""
    start, lbo, sbo, span = _decode(desc, family)
    item = np.dtype(dtype).itemsize
    r = np.arange(rows)[:, None]
    kb = np.arange(k)[None, :] * item
    if span == 0:
        addr = start + (r // 8) * sbo + (kb // 16) * lbo + (r % 8) * 16 + kb % 16
    else:
        if k * item > span:
            raise NotModelled(f"a K slice of {k * item} bytes under a {span}-byte swizzle")
        addr = swizzle_bytes(start + (r // 8) * sbo + (r % 8) * span + kb, span)
    return addr


def read_operand(cta, desc, family, rows, k, dtype):
    addr = _operand_addresses(desc, family, rows, k, dtype)
    item = np.dtype(dtype).itemsize
    shared = cta.shared.space
    _check_range(cta, shared, addr.ravel(), item, f"{family} operand read")
    if np.any(addr % item):
        raise KernelFault(f"kernel '{cta.kernel}': {family} operand misaligned")
    return shared.data.view(dtype)[addr // item].astype(np.float32)


# ---- ldmatrix / stmatrix (PTX ISA "ldmatrix", "stmatrix": m8n8, .b16) ---------------------------------------------

def _whole_warps(g, what):
    warps = np.unique(g.tids // 32)
    for w in warps:
        if np.sum(g.tids // 32 == w) != 32:
            raise KernelFault(f"kernel '{g.cta.kernel}': {what} executed by part of warp {int(w)} "
                              f"({thread_name(g.cta.block, g.tids[g.tids // 32 == w][0])} and others)")
    return warps


def ldstmatrix(interp, g, family, ops, tokens):
    from ._operands import LValue, _as_bits, shared_address

    num = int(next(t for t in tokens if t in ("x1", "x2", "x4"))[1:])
    trans = "trans" in tokens
    _whole_warps(g, family)
    if family == "ldmatrix":
        regs, addr_op = ops[:num], ops[num]
    else:
        addr_op, regs = ops[0], ops[1:1 + num]
    addr = shared_address(interp, g, addr_op)
    if np.any(addr % 16):
        raise KernelFault(f"kernel '{g.cta.kernel}': {family} row address {int(addr[np.flatnonzero(addr % 16)[0]])} "
                          "is not 16-byte aligned")
    lane = g.tids % 32
    base = g.tids - lane
    order = np.searchsorted(g.tids, base[:, None] + np.arange(32)[None, :])  # position of each lane of my warp
    shared = g.cta.shared.space
    access = g.cta.access
    for j in range(num):
        row_addr = addr[order[:, 8 * j:8 * j + 8]]  # (n, 8): row r of matrix j, supplied by lane 8j + r
        if not trans:
            r, c = lane // 4, 2 * (lane % 4)
            cells = row_addr[np.arange(g.n), r][:, None] + (c[:, None] + np.arange(2)) * 2
        else:
            r, c = 2 * (lane % 4), lane // 4
            cells = np.stack([row_addr[np.arange(g.n), r] + c * 2, row_addr[np.arange(g.n), r + 1] + c * 2], axis=1)
        if family == "ldmatrix":
            halves = access.load(shared, g.tids, cells, np.uint16).astype(np.uint32)
            LValue(interp, g, regs[j]).write_bits(halves[:, 0] | (halves[:, 1] << np.uint32(16)))
        else:
            word = _as_bits(interp.eval(g, regs[j]))
            halves = np.stack([word & np.uint32(0xFFFF), word >> np.uint32(16)], axis=1).astype(np.uint16)
            access.store(shared, g.tids, cells, halves, np.uint16)
    return None


# ---- mma.sync (PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type") -----------------------------

def mma_sync(interp, g, ops, tokens):
    from ._operands import LValue, _as_bits

    if "m16n8k16" not in tokens or tokens[-4] != "f32" or tokens[-1] != "f32":
        raise NotModelled("mma." + ".".join(tokens))
    src = V.numpy_dtype({"f16": "float16", "bf16": "bfloat16"}[tokens[-3]])
    _whole_warps(g, "mma.sync")
    d = [LValue(interp, g, o) for o in ops[0:4]]
    a = [_as_bits(interp.eval(g, o)) for o in ops[4:8]]
    b = [_as_bits(interp.eval(g, o)) for o in ops[8:10]]
    c = [interp.eval(g, o).astype(np.float32) for o in ops[10:14]]
    lane = g.tids % 32
    group, tig = lane // 4, lane % 4

    def halves(words):
        w = np.stack(words, axis=1)  # (n, regs)
        lo = (w & np.uint32(0xFFFF)).astype(np.uint16).view(src)
        hi = (w >> np.uint32(16)).astype(np.uint16).view(src)
        return np.stack([lo, hi], axis=2).reshape(len(w), -1).astype(np.float32)  # element i = 2*reg + half

    av, bv = halves(a), halves(b)
    out = np.zeros((g.n, 4), dtype=np.float32)
    for warp in np.unique(g.tids // 32):
        sel = np.flatnonzero(g.tids // 32 == warp)
        A = np.zeros((16, 16), np.float32)
        B = np.zeros((16, 8), np.float32)
        C = np.zeros((16, 8), np.float32)
        for i in range(8):  # a_i: row groupID + 8 * (i / 2 % 2), col 2 * tig + i % 2 + 8 * (i / 4)
            A[group[sel] + 8 * ((i // 2) % 2), 2 * tig[sel] + i % 2 + 8 * (i // 4)] = av[sel, i]
        for i in range(4):  # b_i: row (k) 2 * tig + i % 2 + 8 * (i / 2), col (n) groupID
            B[2 * tig[sel] + i % 2 + 8 * (i // 2), group[sel]] = bv[sel, i]
            # c_i: row groupID + 8 * (i / 2), col 2 * tig + i % 2
            C[group[sel] + 8 * (i // 2), 2 * tig[sel] + i % 2] = c[i][sel]
        D = A @ B + C
        for i in range(4):
            out[sel, i] = D[group[sel] + 8 * (i // 2), 2 * tig[sel] + i % 2]
    for i in range(4):
        d[i].write(out[:, i])
    return None


# ---- wgmma (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate": wgmma.mma_async, register
# fragment D of m64nNk16 (.f16/.bf16) or m64nNk32 (.e4m3/.e5m2, each operand its own) with .f32 accumulators,
# descriptors, wgmma.commit_group / wait_group) -------------------------------------------------------------------

WGMMA_TYPES = {"f16": "float16", "bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


class WgmmaOp:
    def __init__(self, wg, regs, desc_a, desc_b, scale_d, n, dtype, group, dtype_b=None, k=16):
        self.wg, self.regs, self.desc_a, self.desc_b, self.scale_d = wg, regs, desc_a, desc_b, scale_d
        self.n, self.dtype, self.group, self.kind = n, dtype, group, "wgmma"
        self.dtype_b, self.k = dtype_b if dtype_b is not None else dtype, k
        self.async_proxy = True   # wgmma reads its shared operands through the async proxy
        self.shared_reads = np.concatenate([operand_bytes(desc_a, "wgmma", 64, k, dtype),
                                            operand_bytes(desc_b, "wgmma", n, k, self.dtype_b)])

    def describe(self):
        return f"a wgmma.mma_async of warpgroup {self.wg} (reading A and B from shared memory)"

    def complete(self, cta):
        space, addr, tids = self.regs  # accumulator registers: (128, n/2) byte addresses of the warpgroup's threads
        acc = cta.access.load(space, tids, addr, np.float32)
        t = tids % 128
        w, lane = t // 32, t % 32
        i = np.arange(self.n // 2)[None, :]
        rows = 16 * w[:, None] + lane[:, None] // 4 + 8 * ((i // 2) % 2)
        cols = 8 * (i // 4) + 2 * (lane[:, None] % 4) + i % 2
        D = np.zeros((64, self.n), np.float32)
        D[rows, cols] = acc
        A = read_operand(cta, self.desc_a, "wgmma", 64, self.k, self.dtype)
        B = read_operand(cta, self.desc_b, "wgmma", self.n, self.k, self.dtype_b)
        D = A @ B.T + (D if self.scale_d else 0)
        cta.access.store(space, tids, addr, D[rows, cols], np.float32)


def wgmma(interp, g, ops, tokens):
    from ._operands import _uniform

    state = g.cta.async_state.setdefault("wgmma", {"committed": {}})
    head = tokens[0]
    if head == "fence":
        return None
    warpgroups = np.unique(g.tids // 128)
    for wg in warpgroups:
        if np.sum(g.tids // 128 == wg) != 128:
            raise KernelFault(f"kernel '{g.cta.kernel}': wgmma.{head} by part of warpgroup {int(wg)}")
    if head == "commit_group":
        for wg in warpgroups:
            count = state["committed"].get(int(wg), 0)
            for op in g.cta.pending:
                if op.kind == "wgmma" and op.wg == int(wg) and op.group is None:
                    op.group = count
            state["committed"][int(wg)] = count + 1
        return None
    if head == "wait_group":
        keep = int(_uniform(g, interp.eval(g, ops[0]), "wait_group's count"))
        mine = {int(w) for w in warpgroups}
        g.cta.complete(lambda op: op.kind == "wgmma" and op.wg in mine and op.group is not None
                       and op.group < state["committed"].get(op.wg, 0) - keep)
        return None
    if head != "mma_async":
        raise NotModelled("wgmma." + ".".join(tokens))
    shape = next(t for t in tokens if t.startswith("m64n"))
    n, k = int(shape[4:shape.index("k")]), int(shape[shape.index("k") + 1:])
    if tokens[tokens.index(shape) + 1] != "f32":
        raise NotModelled(f"wgmma accumulator {tokens[tokens.index(shape) + 1]}")
    type_a, type_b = tokens[tokens.index(shape) + 2], tokens[tokens.index(shape) + 3]
    if type_a not in WGMMA_TYPES or type_b not in WGMMA_TYPES:
        raise NotModelled(f"wgmma operand types .{type_a}.{type_b}")
    eight = ("e4m3", "e5m2")
    if not ((type_a in ("f16", "bf16") and type_b == type_a and k == 16)
            or (type_a in eight and type_b in eight and k == 32)):
        raise KernelFault(f"kernel '{g.cta.kernel}': wgmma {shape}.f32.{type_a}.{type_b} is not a PTX shape/type "
                          "combination (k16 for f16/bf16 pairs, k32 for e4m3/e5m2)")
    dtype = V.numpy_dtype(WGMMA_TYPES[type_a])
    dtype_b = V.numpy_dtype(WGMMA_TYPES[type_b])
    regs = ops[:n // 2]
    desc_a, desc_b = interp.eval(g, ops[n // 2]), interp.eval(g, ops[n // 2 + 1])
    scale_d = np.asarray(interp.eval(g, ops[n // 2 + 2]), dtype=bool)
    # scale-a, scale-b, and for 16-bit types the transpose flags (8-bit operands are K-major, without them)
    rest = [int(_uniform(g, interp.eval(g, o), "wgmma's immediates")) for o in ops[n // 2 + 3:n // 2 + 7]]
    if rest[0] != 1 or rest[1] != 1:
        raise NotModelled(f"wgmma with scale-a/scale-b {rest[0]}, {rest[1]}")
    if any(rest[2:]):
        raise NotModelled("wgmma with transposed (MN-major) operands")
    addrs = []
    space = None
    for r in regs:
        ptr, addr, _ = interp.address(g, loaded(r), r.indices, None)
        space = ptr.space
        addrs.append(addr)
    addrs = np.stack(addrs, axis=1)
    for wg in warpgroups:
        sel = np.flatnonzero(g.tids // 128 == wg)
        da = int(_uniform(g.subset(g.tids // 128 == wg), desc_a[sel], "wgmma's A descriptor"))
        db = int(_uniform(g.subset(g.tids // 128 == wg), desc_b[sel], "wgmma's B descriptor"))
        g.cta.issue(WgmmaOp(int(wg), (space, addrs[sel], g.tids[sel]), da, db, bool(scale_d[sel][0]), n, dtype,
                            None, dtype_b, k))
    return None


# ---- tcgen05 (PTX ISA "TensorCore 5th Generation Family Instructions": tcgen05.alloc/dealloc, mma .kind::f16,
# commit, ld/st .32x32b, wait; tensor memory of 128 lanes x 512 columns of 32 bits) -------------------------------

def _tmem(cta):
    state = cta.async_state.setdefault("tcgen05", {})
    if "memory" not in state:
        state["memory"] = np.full((128, 512), 0xFFFFFFFF, dtype=np.uint32)
        state["allocated"] = []
    return state


class Tcgen05Mma:
    """One tcgen05.mma; with ``pair`` (cta_group::2) it runs over the CTA pair ``pair`` = (even rank, odd rank): M =
    256, each CTA's 128 rows of A give its 128 tensor-memory lanes of D, and B is the even CTA's N/2 rows followed by
    the odd CTA's, all at the same shared and tensor-memory addresses in both."""

    def __init__(self, column, desc_a, desc_b, idesc, accumulate, issuer, pair=None):
        self.column, self.desc_a, self.desc_b, self.idesc = column, desc_a, desc_b, idesc
        self.accumulate, self.issuer, self.kind, self.pair = accumulate, issuer, "tcgen05", pair
        n, m = ((idesc >> 17) & 0x3F) << 3, ((idesc >> 24) & 0x1F) << 4
        rows, cols = (m // 2, n // 2) if pair else (m, n)
        item = np.float16 if (idesc >> 7) & 7 == 0 else V.numpy_dtype("bfloat16")
        self.async_proxy = True   # so does tcgen05.mma
        self.shared_reads = np.concatenate([operand_bytes(desc_a, "tcgen05", rows, 16, item),
                                            operand_bytes(desc_b, "tcgen05", cols, 16, item)])

    def describe(self):
        where = " over the CTA pair" if self.pair else ""
        return f"a tcgen05.mma{where} issued by thread {self.issuer} (reading A and B from shared memory)"

    def track_in_peer(self, issuing):
        """The pair's other CTA: its shared bytes are read too (an unfinished MMA there blocks its loads)."""
        if self.pair:
            peer = self.pair[1] if self.pair[0] is issuing else self.pair[0]
            peer.shared.track(self, peer.kernel)

    def complete(self, cta):
        if self.pair:
            self._complete_pair(cta)
            return
        self._complete_one(cta)

    def _complete_pair(self, cta):
        d = self.idesc
        n, m = ((d >> 17) & 0x3F) << 3, ((d >> 24) & 0x1F) << 4
        if m != 256:
            raise NotModelled(f"tcgen05.mma.cta_group::2 with M = {m}")
        types = {0: np.float16, 1: V.numpy_dtype("bfloat16")}
        even, odd = self.pair
        peer = odd if cta is even else even
        peer.shared.untrack(self)
        B = np.concatenate([read_operand(c, self.desc_b, "tcgen05", n // 2, 16, types[(d >> 10) & 7])
                            for c in (even, odd)])
        for c in (even, odd):
            A = read_operand(c, self.desc_a, "tcgen05", 128, 16, types[(d >> 7) & 7])
            mem = _tmem(c)["memory"]
            if self.column + n > 512:
                raise KernelFault(f"kernel '{c.kernel}': tcgen05.mma writes columns up to {self.column + n} of 512")
            D = mem[:128, self.column:self.column + n].view(np.float32)
            result = A @ B.T + (D if self.accumulate else 0)
            mem[:128, self.column:self.column + n] = result.astype(np.float32).view(np.uint32)

    def _complete_one(self, cta):
        d = self.idesc  # PTX ISA "Instruction descriptor" (.kind::f16): D format bits 4-5, A/B 7-9/10-12, N 17-22, M 24-28
        if (d >> 4) & 3 != 1:
            raise NotModelled("tcgen05.mma with a non-f32 accumulator")
        a_type, b_type = (d >> 7) & 7, (d >> 10) & 7
        if (d >> 15) & 1 or (d >> 16) & 1:
            raise NotModelled("tcgen05.mma with transposed (MN-major) operands")
        if (d >> 13) & 3:
            raise NotModelled("tcgen05.mma with negated operands")
        n, m = ((d >> 17) & 0x3F) << 3, ((d >> 24) & 0x1F) << 4
        if m != 128:
            raise NotModelled(f"tcgen05.mma with M = {m}")
        types = {0: np.float16, 1: V.numpy_dtype("bfloat16")}
        A = read_operand(cta, self.desc_a, "tcgen05", m, 16, types[a_type])
        B = read_operand(cta, self.desc_b, "tcgen05", n, 16, types[b_type])
        mem = _tmem(cta)["memory"]
        if self.column + n > 512:
            raise KernelFault(f"kernel '{cta.kernel}': tcgen05.mma writes columns up to {self.column + n} of 512")
        D = mem[:m, self.column:self.column + n].view(np.float32)
        result = A @ B.T + (D if self.accumulate else 0)
        mem[:m, self.column:self.column + n] = result.astype(np.float32).view(np.uint32)


class Tcgen05Commit:
    """tcgen05.commit: once the issuer's earlier tcgen05 operations completed, one arrival on the mbarrier at
    ``mbar`` in each CTA of ``targets`` (the issuing CTA, or those of a .multicast::cluster mask)."""

    def __init__(self, mbar, issuer, targets=None):
        self.mbar, self.issuer, self.kind, self.targets = mbar, issuer, "tcgen05-commit", targets

    def describe(self):
        return f"a tcgen05.commit by thread {self.issuer}"

    def complete(self, cta):
        from ._operands import complete_tx

        cta.complete(lambda op: op.kind == "tcgen05" and op.issuer == self.issuer)
        for target in self.targets or [cta]:
            bar = target.mbarriers.get(self.mbar)
            if bar is None:
                raise KernelFault(f"kernel '{cta.kernel}': tcgen05.commit to shared byte {self.mbar} of block "
                                  f"{target.block}, no mbarrier there")
            bar.pending -= 1
            complete_tx(target, self.mbar, 0)


def _pair(g, what):
    """(even-rank CTA, odd-rank CTA) of the issuing CTA's pair in its cluster."""
    cluster = g.cta.cluster
    if cluster is None:
        raise KernelFault(f"kernel '{g.cta.kernel}': {what} outside a cluster (it needs the CTA pair)")
    rank = cluster.rank(g.cta)
    return cluster.cta(rank & ~1, what), cluster.cta(rank | 1, what)


def _no_mma_in_flight(cta, head, first, end):
    """A tcgen05.ld/st of columns [first, end) while a tcgen05.mma that writes any of them is not known complete (no
    tcgen05.commit of it waited on through its mbarrier) races with it: the MMA may land before or after."""
    for op in cta.pending:
        if isinstance(op, Tcgen05Mma):
            n = ((op.idesc >> 17) & 0x3F) << 3
            if op.column < end and first < op.column + n:
                raise KernelFault(f"kernel '{cta.kernel}': race: tcgen05.{head} of tensor-memory columns {first}-"
                                  f"{end - 1} while {op.describe()} writing columns {op.column}-{op.column + n - 1} "
                                  "is in flight (wait for its tcgen05.commit's mbarrier first)")


def tcgen05(interp, g, ops, tokens):
    from ._operands import LValue, _as_bits, _uniform, shared_address

    cta = g.cta
    state = _tmem(cta)
    head = tokens[0]
    if head in ("wait::ld", "wait::st", "relinquish_alloc_permit", "fence::before_thread_sync",
                "fence::after_thread_sync"):
        return None
    if head == "alloc":
        dst = shared_address(interp, g, ops[0])
        cols = int(_uniform(g, interp.eval(g, ops[1]), "tcgen05.alloc's column count"))
        used = sum(c for _, c in state["allocated"])
        if used + cols > 512:
            raise KernelFault(f"kernel '{cta.kernel}': tcgen05.alloc of {cols} columns with {used} of 512 in use")
        state["allocated"].append((used, cols))
        a = int(_uniform(g, dst, "tcgen05.alloc's destination"))
        cta.access.store(cta.shared.space, g.tids[:1], np.array([a]), np.array([used], np.uint32), np.uint32)
        return None
    if head == "dealloc":
        state["allocated"] = []
        return None
    if head == "mma":
        if not ({"cta_group::1", "cta_group::2"} & set(tokens)) or "kind::f16" not in tokens:
            raise NotModelled("tcgen05." + ".".join(tokens))
        pair = _pair(g, "tcgen05.mma.cta_group::2") if "cta_group::2" in tokens else None
        taddr = _as_bits(interp.eval(g, ops[0]))
        da, db = interp.eval(g, ops[1]), interp.eval(g, ops[2])
        idesc = _as_bits(interp.eval(g, ops[3]))
        enable = np.asarray(interp.eval(g, ops[-1]), dtype=bool)
        for i in range(g.n):
            op = Tcgen05Mma(int(taddr[i]) & 0xFFFF, int(da[i]), int(db[i]), int(idesc[i]), bool(enable[i]),
                            int(g.tids[i]), pair)
            cta.issue(op)
            op.track_in_peer(cta)
        return None
    if head == "commit":
        from . import _cluster as CL

        mbar = shared_address(interp, g, ops[0])
        multicast = "multicast::cluster" in tokens
        masks = interp.eval(g, ops[1]).astype(np.int64) if multicast else None
        for i in range(g.n):
            targets = None
            if multicast:
                ranks = CL.mask_ranks(g, masks[i], "tcgen05.commit's multicast")
                targets = [cta.cluster.cta(r, "tcgen05.commit") if cta.cluster is not None else cta for r in ranks]
            cta.issue(Tcgen05Commit(int(mbar[i]), int(g.tids[i]), targets))
        return None
    if head in ("ld", "st"):
        shape = next(t for t in tokens if "x" in t and t[0].isdigit())
        rep = int(next(t for t in tokens if t.startswith("x") and t[1:].isdigit())[1:])
        if shape != "32x32b":
            raise NotModelled(f"tcgen05.{head}.{shape}")
        _whole_warps(g, f"tcgen05.{head}")
        if head == "ld":
            regs, taddr_op = ops[:rep], ops[rep]
        else:
            taddr_op, regs = ops[0], ops[1:1 + rep]
        taddr = _as_bits(interp.eval(g, taddr_op))
        lane_base, column = (taddr >> np.uint32(16)).astype(np.int64), (taddr & np.uint32(0xFFFF)).astype(np.int64)
        warp = (g.tids // 32) % 4
        if np.any(lane_base != 32 * warp) and np.any(lane_base != 0):
            raise KernelFault(f"kernel '{cta.kernel}': tcgen05.{head} lane base does not match the warp's lanes")
        row = 32 * warp + g.tids % 32  # PTX: warp w of a warpgroup accesses lanes [32 (w % 4), 32 (w % 4) + 32)
        _no_mma_in_flight(cta, head, int(column.min()), int(column.max()) + rep)
        mem = state["memory"]
        for j in range(rep):
            if head == "ld":
                LValue(interp, g, regs[j]).write_bits(mem[row, column + j])
            else:
                mem[row, column + j] = _as_bits(interp.eval(g, regs[j]))
        return None
    raise NotModelled("tcgen05." + ".".join(tokens))
