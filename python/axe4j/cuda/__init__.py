"""CUDA: the emitters of the ``cuda-*`` plan kinds (``emit``, ``async_emit``, ``tma_emit``, ``emit_register``,
``register_fence``), the recorded choices of TVM's CUDA cases (``choices``), the CPU interpreter of CUDA kernels
(``interp``) and the CUDA kernels (``kernels``)."""

from . import async_emit, emit, emit_register, tma_emit  # noqa: F401  (the emitters register their plan kinds: axe4j._registry)
