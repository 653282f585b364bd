"""Deprecated: moved to ``axe4j.cuda.kernels.hopper_gemm_pipelined``; this name goes in the next release."""

from .._deprecated import moved

MOVED_TO = "axe4j.cuda.kernels.hopper_gemm_pipelined"
moved(__name__, MOVED_TO)
