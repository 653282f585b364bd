"""A ring of ``stages`` shared-memory slots fed by a producer and drained by consumers, as the kernels here write it
(CuTe's ``PipelineState``): iteration ``count`` of the ring uses slot ``count % stages``, and the mbarriers of a slot
flip their phase parity each time the ring wraps, ``(count // stages) % 2``. A producer waits on a slot's ``empty``
mbarrier with the opposite parity (``start_phase=1``): the ring starts with every slot free.

Plain Python evaluated while TVMScript parses a kernel: make a state with ``T.meta_var(PipelineState(stages, it))``
(the parser binds it as a Python value, not as a TIR variable) and use ``index()`` / ``phase()`` where the slot and
the parity go; ``count`` may be an int or a TIR expression, and the expressions are those written by hand before
(``it % stages``, ``(it // stages) % 2``), so the generated code is the same.
"""

from __future__ import annotations

from tvm.script import tirx as T


class PipelineState:
    """Position ``count`` of a ring of ``stages`` slots."""

    def __init__(self, stages: int, count=0, start_phase: int = 0):
        if stages < 1:
            raise ValueError(f"PipelineState: stages={stages} must be positive")
        if start_phase not in (0, 1):
            raise ValueError(f"PipelineState: start_phase={start_phase} must be 0 or 1")
        self.stages, self.count, self.start_phase = stages, count, start_phase

    def index(self):
        """The slot: ``count % stages``."""
        return self.count % self.stages

    def phase(self):
        """The parity to wait for on the slot's mbarrier: ``(count // stages + start_phase) % 2``."""
        wraps = self.count // self.stages
        return ((wraps + 1) if self.start_phase else wraps) % 2

    def advance(self, n: int = 1) -> "PipelineState":
        """The state ``n`` iterations later (earlier for negative ``n``)."""
        count = self.count + n if n >= 0 else self.count - (-n)
        return PipelineState(self.stages, count, self.start_phase)

    def __repr__(self):
        return f"PipelineState(stages={self.stages}, count={self.count}, start_phase={self.start_phase})"


def release_in_cluster(bar, size: int):
    """Releases a ring slot in every CTA of the cluster: ``mbarrier.arrive.shared::cluster`` on the slot's ``empty``
    mbarrier of rank 0 .. size - 1 (mapa gives each one's address), since the slot's multicast loads write into all
    of them. Plain Python: the mapa result register is declared in the caller's scope."""
    for rank in range(size):
        mapped = T.alloc_local([1], "uint32")
        T.evaluate(T.ptx.mapa.shared__cluster.u32(mapped[0], T.cuda.cvta_generic_to_shared(bar), T.uint32(rank)))
        T.evaluate(T.ptx.mbarrier.arrive.shared__cluster.b64(mapped[0]))


def release(empty, state, cluster_size: int = 1):
    """A consumer is done with ``state``'s slot (a ``PipelineState``, or the slot index itself): one arrival on its
    ``empty`` mbarrier, in this CTA
    (``mbarrier.arrive.shared.b64``) or, in a cluster of ``cluster_size`` CTAs whose multicast loads fill the slot in
    each, in every one of them (``release_in_cluster``). Plain Python, called where the arrival goes."""
    slot = state.index() if isinstance(state, PipelineState) else state
    if cluster_size == 1:
        T.evaluate(T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([slot]), T.uint32(1)))
    else:
        release_in_cluster(empty.ptr_to([slot]), cluster_size)
