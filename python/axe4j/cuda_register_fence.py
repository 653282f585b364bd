"""Deprecated: moved to ``axe4j.cuda.register_fence``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.cuda.register_fence"
moved(__name__, MOVED_TO)
