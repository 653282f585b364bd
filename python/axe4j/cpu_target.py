"""Deprecated: moved to ``axe4j.cpu.target``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.cpu.target"
moved(__name__, MOVED_TO)
