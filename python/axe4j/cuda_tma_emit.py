"""Deprecated: moved to ``axe4j.cuda.tma_emit``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.cuda.tma_emit"
moved(__name__, MOVED_TO)
