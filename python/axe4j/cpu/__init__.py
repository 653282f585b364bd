"""The CPU (target kind ``llvm``): the target's description for the rules (``target``) and the emitters of the
CPU plan kinds (``gemm_blocked``)."""

from . import emit, gemm_blocked  # noqa: F401  (the emitters register their plan kinds: axe4j._registry)
