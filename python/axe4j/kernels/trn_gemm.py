"""Deprecated: moved to ``axe4j.trn.kernels.gemm``; this name goes in the next release."""

from .._deprecated import moved

MOVED_TO = "axe4j.trn.kernels.gemm"
moved(__name__, MOVED_TO)
