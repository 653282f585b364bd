"""Deprecated: moved to ``axe4j.kernel_rules``; this name goes in the next release."""

from .._deprecated import moved

MOVED_TO = "axe4j.kernel_rules"
moved(__name__, MOVED_TO)
