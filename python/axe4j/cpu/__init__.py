"""The CPU (target kind ``llvm``): the target's description for the rules (``target``) and the emitters of the
CPU plan kinds (``gemm_blocked``)."""
