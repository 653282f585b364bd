"""The interpreter of one lowered CUDA kernel (the device PrimFunc TVM hands to its CUDA code generator).

Execution model
---------------
A CTA runs at a time, or, when the kernel is launched in thread-block clusters, the CTAs of one cluster together
(their tasks interleave, so one CTA's waits on another's barriers, multicast copies and remote arrivals resolve;
distributed shared memory in ``_cluster.py``). Inside a
CTA, a *group* is a set of threads that execute in lock step: every value is a numpy array over the group's threads
(shape (n,) or (n, lanes)), so one statement runs for all of them at once. A task is a group with an explicit stack
of frames (statement sequences, loops), so it can be split: a branch (or loop bound) whose value differs between
threads splits the task into one task per value, each continuing with the rest of the program. Below the branch
both stacks hold a join marker: tasks whose threads share a warp wait there for each other and merge again
(reconvergence, so warp-collective instructions see whole warps); tasks of different warps run on independently,
as the warps of a warp-specialised kernel do. At a barrier, an mbarrier wait or an async-group wait a task returns a
``Wait`` and the scheduler runs another one, so producer and consumer warps make progress together. When every task waits, pending asynchronous
operations (TMA, cp.async, bulk stores) complete one at a time, oldest first: data lands as late as the hardware
could let it, so a read that is not ordered after its copy's completion sees stale (poisoned) data. When nothing is
pending either, the kernel is deadlocked: that is an error naming each waiting group and what it waits for.
"""

from __future__ import annotations

import numpy as np

from . import _values as V
from ._errors import KernelFault, NotModelled, thread_name
from ._memory import POISON, Access, Pointer, SharedWindow, Space


def op_name(call) -> str:
    """The call's operator, with TVM's ``prim.`` builtins spelled as ``tirx.``."""
    name = str(call.op.name)
    return "tirx." + name[5:] if name.startswith("prim.") else name


def key(var) -> int:
    """Identity of a variable (its object's address; the IR keeps it alive)."""
    return var.__chandle__()


def loaded(load):
    """The buffer a load reads (``TensorLoad.source`` in this TVM, ``BufferLoad.buffer`` in others)."""
    source = getattr(load, "source", None)
    return source if source is not None else load.buffer


def buffer_key(buffer) -> int:
    """Identity of a buffer's storage: ``buffer.data`` reads as ``buffer_data(var)``; the var is the identity."""
    data = buffer.data
    if type(data).__name__ == "Call":
        data = data.args[0]
    return key(data)


class Group:
    """Threads of one CTA executing together: ``tids`` (sorted thread indices) and their variable bindings."""

    __slots__ = ("cta", "tids", "env")

    def __init__(self, cta, tids, env):
        self.cta, self.tids, self.env = cta, tids, env

    @property
    def n(self):
        return len(self.tids)

    def subset(self, mask):
        index = np.flatnonzero(mask)
        env = {}
        for k, v in self.env.items():
            if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == self.n:
                env[k] = v[index]
            elif isinstance(v, Pointer):
                env[k] = v.take(index)
            else:
                env[k] = v
        return Group(self.cta, self.tids[index], env)

    def full(self, value, dtype):
        return np.full(self.n, value, dtype=V.numpy_dtype(dtype))


# ---- waits ---------------------------------------------------------------------------------------------------------

class Wait:
    what = "?"

    def ready(self) -> bool:
        raise NotImplementedError


class Barrier:
    """bar.sync / __syncthreads: completes when ``expected`` threads arrived; publishes shared writes."""

    def __init__(self, ident, expected):
        self.ident, self.expected, self.arrived, self.generation = ident, expected, 0, 0
        self.threads: list = []


class BarrierWait(Wait):
    def __init__(self, cta, ident, expected, group):
        bar = cta.barriers.get(ident)
        if bar is None or bar.arrived == 0:
            bar = cta.barriers[ident] = Barrier(ident, expected)
        elif bar.expected != expected:
            raise KernelFault(f"kernel '{cta.kernel}': barrier {ident} used with {expected} threads by "
                              f"{thread_name(cta.block, group.tids[0])} while {bar.expected} are expected")
        self.bar, self.generation, self.cta = bar, bar.generation, cta
        self.what = f"barrier {ident} ({bar.expected} threads)"
        bar.arrived += group.n
        bar.threads.append(group.tids)
        if bar.arrived > bar.expected:
            raise KernelFault(f"kernel '{cta.kernel}': {bar.arrived} threads arrived at barrier {ident}, which "
                              f"expects {bar.expected}")
        if bar.arrived == bar.expected:
            bar.arrived = 0
            bar.generation += 1
            # the participants' shared-memory writes become visible (all threads' for __syncthreads)
            cta.shared.publish(None if bar.expected == cta.threads else np.concatenate(bar.threads))
            bar.threads = []

    def ready(self):
        return self.bar.generation != self.generation


class AllOf(Wait):
    def __init__(self, waits):
        self.waits = waits
        self.what = " and ".join(w.what for w in waits)

    def ready(self):
        return all(w.ready() for w in self.waits)


class Until(Wait):
    def __init__(self, what, predicate):
        self.what, self.predicate = what, predicate

    def ready(self):
        return self.predicate()


class Task:
    """A group of threads and its stack of frames (see the module docstring)."""

    __slots__ = ("group", "stack", "wait", "done", "at_join")

    def __init__(self, group, stack):
        self.group, self.stack, self.wait, self.done, self.at_join = group, stack, None, False, None

    def warps(self):
        return set(int(w) for w in np.unique(self.group.tids // 32))

    def joins(self):
        return {f.ident for f in self.stack if isinstance(f, JoinFrame)}


class StmtFrame:
    __slots__ = ("stmt",)

    def __init__(self, stmt):
        self.stmt = stmt


class SeqFrame:
    __slots__ = ("stmts", "i")

    def __init__(self, stmts, i=0):
        self.stmts, self.i = stmts, i


class ForFrame:
    __slots__ = ("var", "dtype", "current", "end", "step", "body")

    def __init__(self, var, dtype, current, end, step, body):
        self.var, self.dtype, self.current, self.end, self.step, self.body = var, dtype, current, end, step, body


class WhileFrame:
    __slots__ = ("stmt",)

    def __init__(self, stmt):
        self.stmt = stmt


class JoinFrame:
    __slots__ = ("ident",)

    def __init__(self, ident):
        self.ident = ident


def _copy_frame(frame):
    if isinstance(frame, SeqFrame):
        return SeqFrame(frame.stmts, frame.i)
    if isinstance(frame, ForFrame):
        return ForFrame(frame.var, frame.dtype, frame.current, frame.end, frame.step, frame.body)
    return frame


class JoinWait(Wait):
    def __init__(self, cta, task, ident):
        self.cta, self.task, self.ident = cta, task, ident
        self.what = "the other threads of its warps to reach the end of a branch"

    def ready(self):
        return all(p.at_join == self.ident for p in self.cta.join_peers(self.task, self.ident))


# ---- one CTA -------------------------------------------------------------------------------------------------------

class Cta:
    def __init__(self, launch, block):
        self.launch, self.kernel, self.block = launch, launch.kernel_name, block
        self.threads = launch.threads
        self.access = Access(self.kernel, block)
        self.shared = SharedWindow(launch.static_shared + launch.dynamic_shared)
        self.access.shared = self.shared
        self.static_next = 0
        self.allocations: dict[int, Pointer | Space] = {}
        self.barriers: dict = {}
        self.mbarriers: dict[int, object] = {}
        self.pending: list = []      # asynchronous operations not yet completed, in issue order
        self.async_state: dict = {}  # per-instruction-family bookkeeping (commit groups, tensor memory, ...)
        self.cluster = None          # the Cluster it runs in (_cluster.py), when launched in clusters

    # asynchronous operations ---------------------------------------------------------------------------------------
    def issue(self, op):
        op.sequence = self.launch.next_sequence()
        op.shared_writes = np.unique(np.asarray(getattr(op, "shared_writes", []), dtype=np.int64))
        op.shared_reads = np.unique(np.asarray(getattr(op, "shared_reads", []), dtype=np.int64))
        self.shared.track(op, self.kernel)
        self.pending.append(op)

    def complete(self, predicate):
        """Complete, in issue order, every pending operation for which ``predicate(op)`` holds."""
        keep = []
        done = []
        for op in self.pending:
            (done if predicate(op) else keep).append(op)
        self.pending = keep
        for op in done:
            self.shared.untrack(op)
            op.complete(self)

    def complete_oldest(self) -> bool:
        if not self.pending:
            return False
        op = self.pending.pop(0)
        self.shared.untrack(op)
        op.complete(self)
        return True

    def start(self, body, env):
        root = Group(self, np.arange(self.threads, dtype=np.int64), env)
        self.tasks = [Task(root, [StmtFrame(body)])]
        self.spawned = []

    def step(self) -> bool:
        """Runs every task that is not waiting up to its next wait; True when any ran."""
        progressed = False
        for task in list(self.tasks):
            if task.done:
                continue
            if task.wait is not None and not task.wait.ready():
                continue
            progressed = True
            task.wait = self.launch.interp.run_task(task)
            if task.wait is None:
                task.done = True
            if self.spawned:
                self.tasks.extend(self.spawned)
                self.spawned = []
        self.tasks = [t for t in self.tasks if not t.done]
        return progressed

    def waiting(self) -> str:
        return "; ".join(f"threads {_ranges(t.group.tids)} wait for {t.wait.what}" for t in self.tasks)

    def run(self, body, env):
        run_together([self], body, [env])

    def join_peers(self, task, ident):
        """Live tasks holding join marker ``ident`` whose threads share a warp with ``task`` (transitively)."""
        candidates = [t for t in self.tasks + self.spawned if t is not task and not t.done and ident in t.joins()]
        warps, peers, grew = task.warps(), [], True
        while grew:
            grew = False
            for t in candidates:
                if t not in peers and t.warps() & warps:
                    peers.append(t)
                    warps |= t.warps()
                    grew = True
        return peers


def run_together(ctas, body, envs):
    """Runs CTAs whose threads may wait on each other (one CTA, or the CTAs of a cluster) to completion. When every
    task waits, the oldest pending asynchronous operation of any of them completes; when none is pending, the CTAs
    are deadlocked."""
    for cta, env in zip(ctas, envs):
        cta.start(body, env)
    while True:
        progressed = False
        for cta in ctas:
            progressed |= cta.step()
        if not any(cta.tasks for cta in ctas):
            break
        if not progressed and not _complete_oldest(ctas):
            if len(ctas) == 1:
                raise KernelFault(f"kernel '{ctas[0].kernel}' deadlocks in block {ctas[0].block}: {ctas[0].waiting()}")
            waits = " | ".join(f"block {c.block}: {c.waiting()}" for c in ctas if c.tasks)
            raise KernelFault(f"kernel '{ctas[0].kernel}' deadlocks in the cluster of blocks "
                              f"{', '.join(str(c.block) for c in ctas)}: {waits}")
    while _complete_oldest(ctas):
        pass


def _complete_oldest(ctas) -> bool:
    owners = [c for c in ctas if c.pending]
    if not owners:
        return False
    return min(owners, key=lambda c: c.pending[0].sequence).complete_oldest()


def _ranges(tids) -> str:
    tids = [int(t) for t in tids]
    out, start, prev = [], tids[0], tids[0]
    for t in tids[1:] + [None]:
        if t is not None and t == prev + 1:
            prev = t
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if t is not None:
            start = prev = t
    return ",".join(out)


# ---- the interpreter -----------------------------------------------------------------------------------------------

_BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum,
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
    "And": np.logical_and, "Or": np.logical_or, "BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor, "LShift": np.left_shift, "RShift": np.right_shift,
}


def _truncdiv(a, b):
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        _nonzero(b)
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))
    return a / b


def _nonzero(b):
    if np.any(np.asarray(b) == 0):
        raise KernelFault("integer division by zero")


def _floordiv(a, b):
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        _nonzero(b)
        return np.floor_divide(a, b)
    return np.floor(a / b)


def _floormod(a, b):
    _nonzero(b)
    return np.mod(a, b)


def _truncmod(a, b):
    _nonzero(b)
    return np.fmod(a, b)


_BINARY.update({"Div": _truncdiv, "FloorDiv": _floordiv, "FloorMod": _floormod, "Mod": _truncmod})

_MATH = {
    "tirx.exp": np.exp, "tirx.exp2": np.exp2, "tirx.log": np.log, "tirx.log2": np.log2, "tirx.sqrt": np.sqrt,
    "tirx.rsqrt": lambda x: 1 / np.sqrt(x), "tirx.fabs": np.abs, "tirx.tanh": np.tanh, "tirx.sin": np.sin,
    "tirx.cos": np.cos, "tirx.floor": np.floor, "tirx.ceil": np.ceil, "tirx.round": np.rint,
    "tirx.trunc": np.trunc, "tirx.sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tirx.erf": None,
}


class Interpreter:
    """Executes statements and expressions of one launch for groups of threads (see the module docstring)."""

    def __init__(self, launch, instructions):
        self.launch = launch
        self.instructions = instructions  # the _ptx module's dispatcher

    # ---- expressions --------------------------------------------------------------------------------------------
    def eval(self, g: Group, e):
        kind = type(e).__name__
        method = getattr(self, "e_" + kind, None)
        if method is not None:
            return method(g, e)
        op = _BINARY.get(kind)
        if op is not None:
            a, b = self.eval(g, e.a), self.eval(g, e.b)
            out = op(a, b)
            dtype = str(e.ty)
            if dtype != "bool" and not dtype.startswith("bool"):
                out = np.asarray(out).astype(V.numpy_dtype(dtype), copy=False)
            return out
        raise NotModelled(f"expression {kind} is not modelled: {e}")

    def e_IntImm(self, g, e):
        return g.full(int(e.value), e.ty)

    def e_FloatImm(self, g, e):
        return g.full(float(e.value), e.ty)

    def e_StringImm(self, g, e):
        return str(e.value)

    def e_Var(self, g, e):
        try:
            return g.env[key(e)]
        except KeyError:
            raise NotModelled(f"variable {e.name} has no value here") from None

    e_SizeVar = e_Var

    def e_Not(self, g, e):
        return np.logical_not(self.eval(g, e.a))

    def e_BitwiseNot(self, g, e):
        return np.invert(self.eval(g, e.a))

    def e_Select(self, g, e):
        c = self.eval(g, e.condition)
        a, b = self.eval(g, e.true_value), self.eval(g, e.false_value)
        if np.ndim(a) > np.ndim(c):
            c = c.reshape(c.shape + (1,) * (np.ndim(a) - np.ndim(c)))
        return np.where(c, a, b)

    def e_Cast(self, g, e):
        return V.convert(self.eval(g, e.value), e.ty)

    def e_Ramp(self, g, e):
        base, stride = self.eval(g, e.base), self.eval(g, e.stride)
        lanes = int(e.lanes)
        return base[:, None] + stride[:, None] * np.arange(lanes, dtype=base.dtype)[None, :]

    def e_Broadcast(self, g, e):
        value = self.eval(g, e.value)
        return np.repeat(value[:, None], int(e.lanes), axis=1)

    def e_Let(self, g, e):
        g.env[key(e.var)] = self.eval(g, e.value)
        return self.eval(g, e.body)

    def e_Shuffle(self, g, e):
        vectors = [self.eval(g, v) for v in e.vectors]
        flat = np.concatenate([v if v.ndim == 2 else v[:, None] for v in vectors], axis=1)
        index = [int(i) for i in e.indices]
        out = flat[:, index]
        return out[:, 0] if len(index) == 1 else out

    def e_BufferLoad(self, g, e):
        ptr, addr, dtype = self.address(g, loaded(e), e.indices, e.ty)
        if isinstance(ptr, Space):
            return self.launch.tmem_load(g, ptr, addr, dtype)
        return g.cta.access.load(ptr.space, g.tids, addr, dtype)

    e_TensorLoad = e_BufferLoad

    def e_Call(self, g, e):
        name = op_name(e)
        return self.instructions.call(self, g, e, name)

    # ---- addresses ----------------------------------------------------------------------------------------------
    def buffer_pointer(self, g, buffer):
        data = g.env.get(buffer_key(buffer))
        if data is None:
            raise NotModelled(f"buffer {buffer.name} has no storage here")
        return data

    def address(self, g, buffer, indices, access_dtype):
        """(pointer, byte addresses (n,) or (n, lanes), numpy dtype of one element) of ``buffer[indices]``."""
        ptr = self.buffer_pointer(g, buffer)
        elem = V.numpy_dtype(buffer.dtype)
        if len(indices) != 1:
            index = 0
            for i, extent in zip(indices, buffer.shape):
                index = index * self.eval(g, extent).astype(np.int64) + self.eval(g, i).astype(np.int64)
        else:
            index = self.eval(g, indices[0]).astype(np.int64)
        offset = self.eval(g, buffer.elem_offset).astype(np.int64) if buffer.elem_offset is not None else 0
        if np.ndim(index) == 2:
            offset = np.asarray(offset).reshape(-1, 1) if np.ndim(offset) else offset
        blanes = V.lanes(buffer.dtype)
        if blanes > 1 and np.ndim(index) == 1:  # a buffer of vectors: one element is ``blanes`` scalars
            index = index[:, None] * blanes + np.arange(blanes)[None, :]
            offset = np.asarray(offset).reshape(-1, 1) * blanes if np.ndim(offset) else offset * blanes
        if isinstance(ptr, Space):  # tensor memory: addresses are columns, not bytes
            return ptr, index + offset, elem
        base = ptr.offset if np.ndim(index) == 1 else ptr.offset[:, None]
        return ptr, base + (index + offset) * elem.itemsize, elem

    def store(self, g, buffer, indices, values):
        ptr, addr, dtype = self.address(g, buffer, indices, None)
        if isinstance(ptr, Space):
            return self.launch.tmem_store(g, ptr, addr, values, dtype)
        values = np.asarray(values)
        if values.ndim == 1 and addr.ndim == 2:
            values = values[:, None]
        g.cta.access.store(ptr.space, g.tids, addr, values, dtype)

    # ---- statements: an explicit stack per task, so tasks can split ---------------------------------------------
    def run_task(self, task):
        """Runs ``task`` until it waits (returns the Wait) or finishes (returns None)."""
        stack = task.stack
        while stack:
            frame = stack[-1]
            if isinstance(frame, StmtFrame):
                stack.pop()
                wait = self.execute(task, frame.stmt)
                if wait is not None:
                    return wait
            elif isinstance(frame, SeqFrame):
                if frame.i < len(frame.stmts):
                    frame.i += 1
                    stack.append(StmtFrame(frame.stmts[frame.i - 1]))
                else:
                    stack.pop()
            elif isinstance(frame, ForFrame):
                if frame.current < frame.end:
                    task.group.env[frame.var] = np.full(task.group.n, frame.current, dtype=frame.dtype)
                    frame.current += frame.step
                    stack.append(StmtFrame(frame.body))
                else:
                    stack.pop()
            elif isinstance(frame, WhileFrame):
                cond = np.asarray(self.eval(task.group, frame.stmt.condition), dtype=bool)
                if cond.all():
                    stack.append(StmtFrame(frame.stmt.body))
                elif not cond.any():
                    stack.pop()
                else:   # the threads still looping go on in a task of their own
                    stack.pop()
                    self.split(task, [(cond, [WhileFrame(frame.stmt)]), (~cond, [])])
            elif isinstance(frame, JoinFrame):
                wait = self.join(task, frame.ident)
                if wait is not None:
                    return wait
        return None

    def join(self, task, ident):
        cta = task.group.cta
        peers = cta.join_peers(task, ident)
        if not peers:
            task.stack.pop()
            task.at_join = None
            return None
        if not all(p.at_join == ident for p in peers):
            task.at_join = ident
            return JoinWait(cta, task, ident)
        groups = [task.group] + [p.group for p in peers]
        task.group = _merge(groups)
        for p in peers:
            p.done = True
            p.stack = []
        task.stack.pop()
        task.at_join = None
        return None

    def split(self, task, parts):
        """Continue ``task``'s threads as one task per (mask, frames to push) part, all with the rest of its stack
        and a join marker below the pushed frames."""
        cta = task.group.cta
        cta.next_join = getattr(cta, "next_join", 0) + 1
        join = JoinFrame(cta.next_join)
        base = list(task.stack) + [join]
        group = task.group
        parts = [(mask, frames) for mask, frames in parts if np.any(mask)]
        for n, (mask, frames) in enumerate(parts):
            sub = group.subset(mask)
            if n == 0:   # in place: run_task holds this list
                task.group = sub
                task.stack[:] = list(base) + frames
            else:
                cta.spawned.append(Task(sub, [_copy_frame(f) for f in base] + frames))

    def execute(self, task, s):
        kind = type(s).__name__
        method = getattr(self, "s_" + kind, None)
        if method is None:
            raise NotModelled(f"statement {kind} is not modelled")
        return method(task, s)

    def s_Return(self, task, s):
        task.stack.clear()

    def s_SeqStmt(self, task, s):
        task.stack.append(SeqFrame(list(s.seq)))

    def s_Bind(self, task, s):
        task.group.env[key(s.var)] = self.eval(task.group, s.value)

    def s_LetStmt(self, task, s):
        task.group.env[key(s.var)] = self.eval(task.group, s.value)
        task.stack.append(StmtFrame(s.body))

    def s_AttrStmt(self, task, s):
        if s.attr_key == "thread_extent":
            self.launch.bind_thread(task.group, s.node.var, str(s.node.thread_tag), int(s.value))
        task.stack.append(StmtFrame(s.body))

    def s_AssertStmt(self, task, s):
        ok = self.eval(task.group, s.condition)
        if not np.all(ok):
            where = self.launch.kernel_name if self.launch else "host"
            raise KernelFault(f"kernel '{where}': {getattr(s.error_kind, 'value', s.error_kind)}: "
                              f"{self._assert_message(task, s)}")
        self._body(task, s)

    def _assert_message(self, task, s) -> str:
        """TVM 0.27's message of an assertion: its parts, strings as they are and expressions evaluated (the values
        an argument check names, such as the shape it was given)."""
        words = []
        for part in s.message_parts:
            if hasattr(part, "value") and isinstance(part.value, str):
                words.append(part.value)
            else:
                try:
                    value = self.eval(task.group, part)
                    words.append(str(value.item() if hasattr(value, "item") else value))
                except Exception:  # noqa: BLE001  (a part the interpreter cannot evaluate is shown as written)
                    words.append(str(part))
        return "".join(words)

    def _body(self, task, s):
        body = getattr(s, "body", None)
        if body is not None:
            task.stack.append(StmtFrame(body))

    def s_Evaluate(self, task, s):
        value = s.value
        if type(value).__name__ != "Call":
            self.eval(task.group, value)
            return None
        return self.instructions.statement(self, task.group, value, op_name(value))

    def s_BufferStore(self, task, s):
        self.store(task.group, s.buffer, s.indices, self.eval(task.group, s.value))

    s_TensorStore = s_BufferStore

    def s_DeclBuffer(self, task, s):
        g, buffer = task.group, s.buffer
        if s.data is not None:
            value = g.env[buffer_key(buffer)] = self.eval(g, s.data)
            if self.launch is None and isinstance(value, Pointer) and value.space.name.startswith("argument "):
                value.space.name = f"{buffer.name} ({value.space.name})"   # the host names its arguments
        elif buffer_key(buffer) not in g.env:
            raise NotModelled(f"buffer {buffer.name} is declared without storage")
        self._body(task, s)

    def s_AllocBuffer(self, task, s):
        task.group.env[buffer_key(s.buffer)] = self.launch.allocate(task.group, s.buffer)
        self._body(task, s)

    def s_For(self, task, s):
        g = task.group
        start, extent = self.eval(g, s.min), self.eval(g, s.extent)
        step = 1 if s.step is None else int(self.eval(g, s.step)[0])
        dtype = V.numpy_dtype(s.loop_var.ty)
        if np.all(start == start[0]) and np.all(extent == extent[0]):
            begin, count = int(start[0]), int(extent[0])
            task.stack.append(ForFrame(key(s.loop_var), dtype, begin, begin + count * step, step, s.body))
            return
        bounds = np.stack([start, extent], axis=1)
        parts = []
        for b, c in np.unique(bounds, axis=0):
            mask = np.all(bounds == (b, c), axis=1)
            parts.append((mask, [ForFrame(key(s.loop_var), dtype, int(b), int(b) + int(c) * step, step, s.body)]))
        self.split(task, parts)

    def s_IfThenElse(self, task, s):
        cond = np.asarray(self.eval(task.group, s.condition), dtype=bool)
        if cond.all():
            task.stack.append(StmtFrame(s.then_case))
        elif not cond.any():
            if s.else_case is not None:
                task.stack.append(StmtFrame(s.else_case))
        else:
            other = [StmtFrame(s.else_case)] if s.else_case is not None else []
            self.split(task, [(cond, [StmtFrame(s.then_case)]), (~cond, other)])

    def s_While(self, task, s):
        task.stack.append(WhileFrame(s))


def _merge(groups):
    """One group of the threads of ``groups`` (sorted), with the bindings they all have."""
    tids = np.concatenate([g.tids for g in groups])
    order = np.argsort(tids, kind="stable")
    env = {}
    keys = set(groups[0].env)
    for g in groups[1:]:
        keys &= set(g.env)
    for k in keys:
        values = [g.env[k] for g in groups]
        first = values[0]
        if isinstance(first, np.ndarray) and first.ndim >= 1 and first.shape[0] == groups[0].n:
            env[k] = np.concatenate(values)[order]
        elif isinstance(first, Pointer):
            env[k] = Pointer(first.space, np.concatenate([v.offset for v in values])[order])
        else:
            env[k] = first
    return Group(groups[0].cta, tids[order], env)


class Launch:
    """One kernel launch: grid and block sizes, the argument bindings, and CTA-independent state."""

    def __init__(self, kernel_name, func, args, grid, threads, dynamic_shared, instructions):
        self.kernel_name, self.func, self.args = kernel_name, func, args
        self.grid, self.threads, self.dynamic_shared = grid, threads, dynamic_shared
        self.static_shared = _static_shared_bytes(func.body)
        self.interp = Interpreter(self, instructions)
        self.cta: Cta | None = None
        self.block = (0, 0, 0)
        self.instructions = instructions
        self.cluster_dims = _cluster_dims(func.body)
        self.cluster = None
        self.sequence = 0

    def next_sequence(self) -> int:
        """Issue order of asynchronous operations across the CTAs that run together."""
        self.sequence += 1
        return self.sequence

    def bind_thread(self, g, var, tag, extent):
        axis = "xyz".index(tag[-1])
        if tag.startswith("threadIdx"):
            if axis != 0 and extent != 1:
                raise NotModelled(f"{tag} of extent {extent}: the interpreter launches 1-D CTAs (threadIdx.x)")
            if axis == 0 and extent != self.threads:
                raise KernelFault(f"kernel '{self.kernel_name}': threadIdx.x extent {extent} differs from the "
                                  f"launch's {self.threads} threads")
            value = g.tids.astype(np.int32) if axis == 0 else np.zeros(g.n, np.int32)
        elif tag.startswith("blockIdx"):
            value = np.full(g.n, g.cta.block[axis], dtype=np.int32)
        elif tag.startswith("clusterCtaIdx"):
            if extent != self.cluster_dims[axis]:
                raise KernelFault(f"kernel '{self.kernel_name}': {tag} extent {extent} differs from the cluster's "
                                  f"{self.cluster_dims}")
            value = np.full(g.n, g.cta.block[axis] % extent, dtype=np.int32)
        else:
            raise NotModelled(f"thread tag {tag}")
        g.env[key(var)] = value

    def allocate(self, g, buffer):
        cta = g.cta
        handle = buffer_key(buffer)
        existing = cta.allocations.get(handle)
        scope = str(buffer.scope())
        elem = V.numpy_dtype(buffer.dtype)
        count = 1
        for extent in buffer.shape:
            count *= int(extent)
        nbytes = count * elem.itemsize * V.lanes(buffer.dtype)
        if existing is None:
            if scope == "local":
                size = max(16, -(-nbytes // 16) * 16)
                existing = Space("local", buffer.name, np.full((self.threads, size), POISON, dtype=np.uint8))
                existing = Pointer(existing, 0)
            elif scope == "shared.dyn":
                start = -(-self.static_shared // 16) * 16 if self.static_shared else 0
                existing = Pointer(cta.shared.space, start)
            elif scope == "shared":
                align = 16
                start = -(-cta.static_next // align) * align
                cta.static_next = start + nbytes
                existing = Pointer(cta.shared.space, start)
            else:
                raise NotModelled(f"buffer {buffer.name} in scope {scope}")
            cta.allocations[handle] = existing
        return Pointer(existing.space, np.full(g.n, int(np.asarray(existing.offset).reshape(-1)[0]), np.int64))

    def tmem_load(self, g, space, addr, dtype):
        raise NotModelled("tensor-memory buffer accessed as a buffer")

    def tmem_store(self, g, space, addr, values, dtype):
        raise NotModelled("tensor-memory buffer accessed as a buffer")

    def run(self, body, env):
        gx, gy, gz = self.grid
        cx, cy, cz = self.cluster_dims
        if cx * cy * cz == 1:
            for bz in range(gz):
                for by in range(gy):
                    for bx in range(gx):
                        self.block = (bx, by, bz)
                        self.cta = Cta(self, self.block)
                        self.cta.run(body, dict(env))
            return
        from ._cluster import Cluster

        if gx % cx or gy % cy or gz % cz:
            raise KernelFault(f"kernel '{self.kernel_name}': grid {self.grid} is not a whole number of clusters "
                              f"{self.cluster_dims} (cudaLaunchKernelEx refuses it)")
        for qz in range(gz // cz):
            for qy in range(gy // cy):
                for qx in range(gx // cx):
                    # rank = x + y cx + z cx cy (PTX %cluster_ctarank)
                    blocks = [(qx * cx + x, qy * cy + y, qz * cz + z)
                              for z in range(cz) for y in range(cy) for x in range(cx)]
                    ctas = [Cta(self, b) for b in blocks]
                    self.cluster = Cluster(self, (qx, qy, qz), ctas)
                    for cta in ctas:
                        cta.cluster = self.cluster
                    run_together(ctas, body, [dict(env) for _ in ctas])
                    self.cluster = None


def statements(node):
    """Every statement under ``node``, ``node`` first, then (each in turn, recursively) its body, then- and
    else-case, and a ``SeqStmt``'s items: the order TVM's statements run in, for the scans that read a kernel."""
    yield node
    for field in ("body", "then_case", "else_case"):
        child = getattr(node, field, None)
        if child is not None:
            yield from statements(child)
    if type(node).__name__ == "SeqStmt":
        for child in node.seq:
            yield from statements(child)


def _cluster_dims(body):
    """The cluster shape from the kernel's ``clusterCtaIdx`` thread extents ((1, 1, 1) without clusters)."""
    dims = [1, 1, 1]
    for node in statements(body):
        if type(node).__name__ == "AttrStmt" and node.attr_key == "thread_extent":
            tag = str(node.node.thread_tag)
            if tag.startswith("clusterCtaIdx"):
                dims["xyz".index(tag[-1])] = int(node.value)
    return tuple(dims)


def _static_shared_bytes(body) -> int:
    """Bytes of static shared allocations (``scope='shared'``) in the kernel, each rounded up to 16."""
    total = 0
    for node in statements(body):
        if type(node).__name__ == "AllocBuffer" and str(node.buffer.scope()) == "shared":
            count = 1
            for extent in node.buffer.shape:
                count *= int(extent)
            nbytes = count * V.numpy_dtype(node.buffer.dtype).itemsize * V.lanes(node.buffer.dtype)
            total += -(-nbytes // 16) * 16
    return total
