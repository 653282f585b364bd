"""Memory of the interpreter: global, shared and local spaces as byte arrays, pointers into them, and the shadow that
finds data races on shared memory.

Every access is checked: an address outside its allocation, or not a multiple of the access size, raises
``KernelFault`` naming the kernel, the first offending thread and the address. Shared and local memory start filled
with 0xFF bytes (NaN in every float type), so reading what nothing wrote shows up in the results.
"""

from __future__ import annotations

import numpy as np

from ._errors import KernelFault, thread_name

POISON = 0xFF
UNWRITTEN, PUBLISHED = -1, -2


class Space:
    """One allocation: ``data`` is uint8, shape (size,) for global and shared, (threads, size) for local."""

    def __init__(self, kind: str, name: str, data: np.ndarray, base: int = 0):
        self.kind, self.name, self.data, self.base = kind, name, data, base
        self.size = data.shape[-1]

    def __repr__(self):
        return f"{self.kind} '{self.name}'"


class Pointer:
    """A generic pointer: a space and one byte offset per thread of the group (shape (n,))."""

    __slots__ = ("space", "offset")

    def __init__(self, space: Space, offset):
        self.space, self.offset = space, np.asarray(offset, dtype=np.int64)

    def take(self, index):
        return Pointer(self.space, self.offset[index])

    def add(self, byte_offset):
        return Pointer(self.space, self.offset + np.asarray(byte_offset, dtype=np.int64))


class SharedWindow:
    """The shared memory of one CTA: one byte array holding static allocations and the dynamic window; a shadow of the
    last writer of each byte since the last synchronisation finds races."""

    def __init__(self, size: int):
        self.space = Space("shared", "shared memory", np.full(size, POISON, dtype=np.uint8))
        self.writer = np.full(size, -1, dtype=np.int32)
        # bytes that issued, unfinished asynchronous operations will write / read (counts per byte)
        self.async_writes = np.zeros(size, dtype=np.int32)
        self.async_reads = np.zeros(size, dtype=np.int32)
        self.inflight: list = []   # those operations, to name them in errors
        # proxies (PTX ISA "Memory Consistency Model: Proxies"): bytes written through the generic proxy (st,
        # stmatrix, cp.async) that the async proxy (wgmma, tcgen05.mma, TMA store) may not read until a
        # fence.proxy.async orders them: the writing thread's id, PUBLISHED once a barrier made the write visible
        # to others (then any thread's fence orders it), UNWRITTEN when ordered or never written.
        self.generic = np.full(size, UNWRITTEN, dtype=np.int32)

    def owner(self, byte, write):
        for op in self.inflight:
            if byte in op.shared_writes or (write and byte in op.shared_reads):
                return op.describe()
        return "an asynchronous operation"

    def track(self, op, kernel):
        """An asynchronous operation is issued: it must not write bytes another unfinished one reads or writes, nor
        read bytes another unfinished one writes (a race whatever the order they land in)."""
        writes, reads = op.shared_writes, op.shared_reads
        size = len(self.async_writes)
        for verb, touched in (("writes", writes), ("reads", reads)):
            outside = touched[(touched < 0) | (touched >= size)] if len(touched) else touched
            if len(outside):   # a descriptor or tensor map that reaches past the CTA's shared memory
                raise KernelFault(f"kernel '{kernel}': {op.describe()} {verb} shared byte {int(outside[0])}, outside "
                                  f"the CTA's {size} bytes of shared memory")
        clash = None
        if len(writes) and (self.async_writes[writes].any() or self.async_reads[writes].any()):
            clash = writes[(self.async_writes[writes] > 0) | (self.async_reads[writes] > 0)][0]
        elif len(reads) and self.async_writes[reads].any():
            clash = reads[self.async_writes[reads] > 0][0]
        if clash is not None:
            raise KernelFault(f"kernel '{kernel}': {op.describe()} touches shared byte {int(clash)} while "
                              f"{self.owner(int(clash), True)} is unfinished")
        if getattr(op, "async_proxy", False) and len(reads):
            unordered = reads[self.generic[reads] != UNWRITTEN]
            if len(unordered):
                byte = int(unordered[0])
                writer = int(self.generic[byte])
                who = f"thread {writer}" if writer >= 0 else "a thread"
                raise KernelFault(f"kernel '{kernel}': {op.describe()} reads shared byte {byte} through the async "
                                  f"proxy, but {who} wrote it through the generic proxy with no "
                                  "fence.proxy.async.shared::cta ordering the two (PTX ISA, memory consistency "
                                  "model: proxies); on a GPU it may read stale bytes")
        if getattr(op, "async_proxy", False) and len(writes):
            self.generic[writes] = UNWRITTEN
        np.add.at(self.async_writes, writes, 1)
        np.add.at(self.async_reads, reads, 1)
        self.inflight.append(op)

    def untrack(self, op):
        if op in self.inflight:
            self.inflight.remove(op)
            np.add.at(self.async_writes, op.shared_writes, -1)
            np.add.at(self.async_reads, op.shared_reads, -1)

    def publish(self, threads=None):
        """A barrier: writes so far are visible to every thread (or only those of ``threads``, a warp's sync)."""
        if threads is None:
            self.writer.fill(-1)
            self.generic[self.generic >= 0] = PUBLISHED
        else:
            self.writer[np.isin(self.writer, threads)] = -1
            self.generic[np.isin(self.generic, threads)] = PUBLISHED

    def wrote_generic(self, byte_addresses, tids):
        """Generic-proxy writes of ``byte_addresses`` (any shape) by the threads ``tids`` (broadcast to it)."""
        self.generic[np.ravel(byte_addresses)] = np.ravel(np.broadcast_to(tids, np.shape(byte_addresses)))

    def fence_proxy_async(self, tids):
        """fence.proxy.async by the threads ``tids``: their own generic writes, and those a barrier published to
        them, are ordered before later async-proxy accesses."""
        self.generic[np.isin(self.generic, tids) | (self.generic == PUBLISHED)] = UNWRITTEN


class Access:
    """Checked gathers and scatters of ``dtype`` values at byte addresses (one row per thread of a group)."""

    def __init__(self, kernel: str, block):
        self.kernel, self.block = kernel, block
        self.shared: SharedWindow | None = None

    def _fault(self, what, space, tids, addr, bad):
        i = int(np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0])
        a = np.asarray(addr).reshape(len(tids), -1)[i]
        first = int(a[np.asarray(bad).reshape(len(tids), -1)[i]][0])
        raise KernelFault(f"kernel '{self.kernel}': {what} of {space} at byte {first} (size {space.size}) by "
                          f"{thread_name(self.block, tids[i])}")

    def _check(self, space, tids, addr, itemsize, write):
        verb = "write" if write else "read"
        bad = (addr < 0) | (addr + itemsize > space.size)
        if bad.any():
            self._fault(f"out-of-bounds {itemsize}-byte {verb}", space, tids, addr, bad)
        bad = (addr % itemsize) != 0
        if bad.any():
            self._fault(f"misaligned {itemsize}-byte {verb}", space, tids, addr, bad)

    def load(self, space: Space, tids, addr, dtype):
        """addr: int64 (n,) or (n, lanes) byte addresses; returns values of the same shape."""
        dtype = np.dtype(dtype)
        addr = np.asarray(addr, dtype=np.int64)
        self._check(space, tids, addr, dtype.itemsize, False)
        if space.kind == "shared" and self.shared is not None:
            self._race(space, tids, addr, dtype.itemsize)
            self._against_async(tids, addr, dtype.itemsize, False)
        if space.kind == "local":
            view = space.data.view(dtype)
            rows = tids.reshape((-1,) + (1,) * (addr.ndim - 1))
            return view[rows, addr // dtype.itemsize]
        return space.data.view(dtype)[addr // dtype.itemsize]

    def store(self, space: Space, tids, addr, values, dtype):
        dtype = np.dtype(dtype)
        addr = np.asarray(addr, dtype=np.int64)
        values = np.broadcast_to(np.asarray(values).astype(dtype, copy=False), addr.shape)
        self._check(space, tids, addr, dtype.itemsize, True)
        if space.kind == "local":
            rows = tids.reshape((-1,) + (1,) * (addr.ndim - 1))
            space.data.view(dtype)[rows, addr // dtype.itemsize] = values
            return
        if space.kind == "shared" and self.shared is not None:
            self._against_async(tids, addr, dtype.itemsize, True)
        space.data.view(dtype)[addr // dtype.itemsize] = values
        if space.kind == "shared" and self.shared is not None:
            rows = np.broadcast_to(tids.reshape((-1,) + (1,) * (addr.ndim - 1)), addr.shape)
            for b in range(dtype.itemsize):
                self.shared.writer[(addr + b).ravel()] = rows.ravel()
                self.shared.wrote_generic(addr + b, rows)

    def _against_async(self, tids, addr, itemsize, write):
        """A thread's access to shared bytes that an issued, unfinished asynchronous operation writes (or, for a
        write, reads): the hardware may land it at any time, so the access races with it."""
        shared = self.shared
        if not shared.inflight:
            return
        for b in range(itemsize):
            hit = shared.async_writes[addr + b] > 0
            if write:
                hit |= shared.async_reads[addr + b] > 0
            if hit.any():
                i = np.argwhere(hit)[0]
                byte = int(np.asarray(addr)[tuple(i)] + b)
                rows = np.broadcast_to(tids.reshape((-1,) + (1,) * (np.ndim(addr) - 1)), np.shape(addr))
                raise KernelFault(f"kernel '{self.kernel}': {thread_name(self.block, rows[tuple(i)])} "
                                  f"{'writes' if write else 'reads'} shared byte {byte} while "
                                  f"{shared.owner(byte, write)} is unfinished")

    def _race(self, space, tids, addr, itemsize):
        rows = np.broadcast_to(tids.reshape((-1,) + (1,) * (addr.ndim - 1)), addr.shape)
        for b in range(itemsize):
            writer = self.shared.writer[addr + b]
            bad = (writer >= 0) & (writer != rows)
            if bad.any():
                i = np.argwhere(bad)[0]
                raise KernelFault(
                    f"kernel '{self.kernel}': data race on shared memory byte {int(addr[tuple(i)] + b)}: "
                    f"{thread_name(self.block, rows[tuple(i)])} reads what {thread_name(self.block, writer[tuple(i)])} "
                    "wrote with no barrier between")

    def raw(self, space: Space, start: int, nbytes: int, who: str):
        """A byte range for bulk copies (TMA, cp.async), bounds-checked."""
        if start < 0 or start + nbytes > space.size:
            raise KernelFault(f"kernel '{self.kernel}': {who} touches bytes [{start}, {start + nbytes}) of {space} "
                              f"(size {space.size})")
        return space.data[start:start + nbytes]
