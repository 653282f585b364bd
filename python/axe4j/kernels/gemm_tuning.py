"""Deprecated: moved to ``axe4j.cuda.kernels.gemm_tuning``; this name goes in the next release."""

from .._deprecated import moved

MOVED_TO = "axe4j.cuda.kernels.gemm_tuning"
moved(__name__, MOVED_TO)
