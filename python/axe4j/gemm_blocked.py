"""Deprecated: moved to ``axe4j.cpu.gemm_blocked``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.cpu.gemm_blocked"
moved(__name__, MOVED_TO)
