"""The one exception type of the Python side of axe4j."""


class SetupError(RuntimeError):
    """``axe4j.install()`` could not bring the Java side into this TVM process; the message says why."""

    __module__ = "axe4j"
