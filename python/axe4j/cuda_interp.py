"""Deprecated: moved to ``axe4j.cuda.interp``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.cuda.interp"
moved(__name__, MOVED_TO)
