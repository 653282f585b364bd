"""Corpus of TIRx CUDA kernels written with tile ops on Axe layouts (see ``_base.CorpusKernel``)."""

from . import copy_async, copy_matrix, copy_sync, elementwise, reduction  # noqa: F401  (each module registers its entries)
from ._base import BLACKWELL, HOPPER, REGISTRY, CorpusKernel, Tensor


def kernels() -> list[CorpusKernel]:
    return list(REGISTRY.values())


def get(name: str) -> CorpusKernel:
    if name not in REGISTRY:
        raise KeyError(f"no corpus kernel named {name}; known: {', '.join(REGISTRY)}")
    return REGISTRY[name]


__all__ = ["BLACKWELL", "HOPPER", "CorpusKernel", "Tensor", "get", "kernels"]
