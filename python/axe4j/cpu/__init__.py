"""The CPU (target kind ``llvm``): the target's description for the rules (``target``), the emitters of the
CPU plan kinds (``gemm_blocked``) and GEMM weights packed once for them (``packed_weight``)."""

from .packed_weight import PackedWeight, packed_weight, packed_weight_layout, weight_packer  # noqa: F401

# The modules whose emitters register their plan kinds; axe4j._registry imports them the first time a plan of
# this target is emitted (importing the package alone stays light).
EMITTER_MODULES = ("emit", "gemm_blocked")
