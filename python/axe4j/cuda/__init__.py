"""CUDA: the emitters of the ``cuda-*`` plan kinds (``emit``, ``async_emit``, ``tma_emit``, ``emit_register``,
``register_fence``), the recorded choices of TVM's CUDA cases (``choices``), the CPU interpreter of CUDA kernels
(``interp``) and the CUDA kernels (``kernels``)."""

# The modules whose emitters register their plan kinds; axe4j._registry imports them the first time a plan of
# this target is emitted (importing the package alone stays light).
EMITTER_MODULES = ("emit", "async_emit", "tma_emit", "emit_register", "tmem_emit")
