"""Deprecated: moved to ``axe4j.cuda.emit_register``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.cuda.emit_register"
moved(__name__, MOVED_TO)
