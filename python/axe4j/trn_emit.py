"""Deprecated: moved to ``axe4j.trn.emit``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.trn.emit"
moved(__name__, MOVED_TO)
