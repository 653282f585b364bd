"""The CPU (target kind ``llvm``): the target's description for the rules (``target``) and the emitters of the
CPU plan kinds (``gemm_blocked``)."""

# The modules whose emitters register their plan kinds; axe4j._registry imports them the first time a plan of
# this target is emitted (importing the package alone stays light).
EMITTER_MODULES = ("emit", "gemm_blocked")
