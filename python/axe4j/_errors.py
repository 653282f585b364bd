"""The exception types of the Python side of axe4j."""


class SetupError(RuntimeError):
    """``axe4j.install()`` could not bring the Java side into this TVM process; the message says why."""

    __module__ = "axe4j"


class RuleError(RuntimeError):
    """A Java dispatch rule threw while planning a tile call (a bug in the rule, not a decline): ``axe4j.compile``
    refuses the kernel, naming the rule, the call and the exception."""

    __module__ = "axe4j"


class PlanError(ValueError):
    """A plan from a Java rule does not match ``plan_schema.json`` where it enters Python (``axe4j.plans``): the
    message names the plan kind, the field path and what is wrong. The Java side and the Python side disagree
    about a plan's fields (rebuild the jars, or ``make plan-schema``)."""

    __module__ = "axe4j"

    def __init__(self, kind: str, field: str, problem: str):
        super().__init__(f"plan kind {kind!r}: field {field!r}: {problem}")
        self.kind = kind
        self.field = field
        self.problem = problem


class StrictError(ValueError):
    """``axe4j.compile(..., strict=True)`` (or ``AXE4J_STRICT=1``): a tile call was lowered by one of TVM's own dispatch
    cases, not by an axe4j rule (a fallback). The message names each such call and its case; ``axe4j.explain`` shows
    why axe4j's rules declined it."""

    __module__ = "axe4j"


class DispatchRefused(RuntimeError):
    """``axe4j.compile``: no dispatch case lowers a tile call. The first line names the call, its scope and target, and
    each tensor operand with its storage scope and layout; below it every case's reason, axe4j's rules first, each
    with its way forward where it has one; the last line is TVM's own (``TIRx schedule dispatch failed: ...``)."""

    __module__ = "axe4j"
