"""Deprecated: moved to ``axe4j.trn.allocation``; this name goes in the next release."""

from ._deprecated import moved

MOVED_TO = "axe4j.trn.allocation"
moved(__name__, MOVED_TO)
