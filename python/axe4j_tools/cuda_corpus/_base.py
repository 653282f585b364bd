"""One corpus entry: a TIRx CUDA kernel built from tile ops, with what it exercises and how to check it.

A kernel takes its inputs then its outputs as global tensors (row-major). ``reference(*inputs)`` returns the
outputs numpy expects; outputs start as zeros. ``expect`` lists the PTX instructions (or CUDA intrinsics) the
generated source must contain for the tile call the entry is about, e.g. ``cp.async.bulk.tensor``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

HOPPER = "sm_90a"
BLACKWELL = "sm_100a"
BOTH = (HOPPER, BLACKWELL)


@dataclass(frozen=True)
class Tensor:
    shape: tuple
    dtype: str
    low: float = -2.0   # random inputs are uniform in [low, high)
    high: float = 2.0


@dataclass(frozen=True)
class CorpusKernel:
    name: str
    op: str                     # the tile op the entry is about (copy, copy_async, fill, cast, exp, add, sum, ...)
    scope: str                  # exec scope of that call: thread, warp, warpgroup, cta
    storage: str                # storage scopes of its operands, "src->dst" (e.g. "global->shared")
    archs: tuple                # CUDA archs the kernel targets
    build: Callable             # () -> PrimFunc
    inputs: tuple               # Tensor per input argument
    outputs: tuple              # Tensor per output argument
    reference: Callable         # numpy: (*inputs) -> tuple of outputs
    expect: tuple               # regexes that the generated CUDA source must match, every arch
    atol: float = 1e-5
    rtol: float = 1e-5
    notes: str = ""
    layouts: dict = field(default_factory=dict)  # operand -> Axe layout text, for the report
    expect_by_arch: dict = field(default_factory=dict)  # arch -> further regexes for that arch only
    upstream_refuses: str = ""  # regex of the error TVM's own dispatch raises on this kernel ("" when it compiles)

    def expected(self, arch: str) -> tuple:
        return tuple(self.expect) + tuple(self.expect_by_arch.get(arch, ()))

    def random_inputs(self, rng: np.random.Generator) -> list:
        out = []
        for t in self.inputs:
            values = rng.uniform(t.low, t.high, size=t.shape)
            out.append(values.astype(_np_dtype(t.dtype)))
        return out

    def zero_outputs(self) -> list:
        return [np.zeros(t.shape, _np_dtype(t.dtype)) for t in self.outputs]


def _np_dtype(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(dtype)


REGISTRY: dict[str, CorpusKernel] = {}


def entry(**meta):
    """Registers ``build`` (the decorated function) as a corpus entry named after it."""

    def wrap(build):
        kernel = CorpusKernel(name=build.__name__, build=build, **meta)
        if kernel.name in REGISTRY:
            raise ValueError(f"corpus kernel {kernel.name} is defined twice")
        REGISTRY[kernel.name] = kernel
        return build

    return wrap
