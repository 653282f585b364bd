"""The exception types of the Python side of axe4j."""


class SetupError(RuntimeError):
    """``axe4j.install()`` could not bring the Java side into this TVM process; the message says why."""

    __module__ = "axe4j"


class RuleError(RuntimeError):
    """A Java dispatch rule threw while planning a tile call (a bug in the rule, not a decline): ``axe4j.compile``
    refuses the kernel, naming the rule, the call and the exception."""

    __module__ = "axe4j"
