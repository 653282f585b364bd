"""The plans Java rules hand to the emitters, checked where they enter Python.

Every accepted decision's plan (``axe4j.schedules.decide`` / ``explain``) passes ``validate`` before an emitter
reads it: its ``kind`` must be one of ``plan_schema.json``'s kinds, its ``schema`` the version written there, every
required field present with its type (recursively through lists, maps and nested records) and no field unknown.
A mismatch is a ``PlanError`` naming the kind, the field path (``access.dst.replicas[2]``) and what is wrong, so a
field renamed on one side fails at the boundary instead of deep in an emitter. The fields are checked while the plan is
read into its typed form (``plan_types``, generated from the schema by ``tools/gen_plan_types.py``): ``Plan.typed`` is
what the emitters read.

``plan_schema.json`` is generated from the Java plan records (``org.axe4j.schedules.plan``, ``make plan-schema``).
Types: ``"int"``/``"long"`` (a JSON integer), ``"float"``, ``"str"``, ``"bool"``, ``{"list": T}``, ``{"map": T}``
(string keys), ``{"record": name}``, and ``{"optional": T}`` for a field that may be left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import plan_types
from ._errors import PlanError

_SCHEMA = json.loads(Path(__file__).with_name("plan_schema.json").read_text())
SCHEMA_VERSION: int = _SCHEMA["schema"]
KINDS: dict[str, str] = _SCHEMA["kinds"]          # plan kind -> record name
RECORDS: dict[str, dict] = _SCHEMA["records"]     # record name -> {field: type}


class Plan(dict):
    """A validated plan as JSON: a read-only dict (``explain`` shows it; the Java rule wrote it). The emitters read
    ``typed``, the same plan as a frozen dataclass of ``plan_types`` (``CudaTmaPlan``, ...)."""

    def __init__(self, plan: dict, typed=None):
        super().__init__(plan)
        self.typed = typed if typed is not None else plan_types.parse(plan)

    def _read_only(self, *args, **kwargs):
        raise TypeError(f"plan kind {self.get('kind')!r} is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __reduce__(self):   # copy, deepcopy and pickle rebuild it whole instead of item by item
        return (Plan, (dict(self), self.typed))

    @property
    def kind(self) -> str:
        return self["kind"]


def validate(plan) -> Plan:
    """``plan`` (a parsed plan JSON object) as a ``Plan`` once it matches the schema; else ``PlanError``. The fields
    are checked by the typed plan's ``from_json`` (``plan_types``, generated from the same schema)."""
    if not isinstance(plan, dict):
        raise PlanError("?", "", f"expected a plan object, got {type(plan).__name__}")
    kind = plan.get("kind")
    if not isinstance(kind, str):
        raise PlanError(str(kind), "kind", "missing or not a string")
    record = KINDS.get(kind)
    if record is None:
        raise PlanError(kind, "kind", f"unknown kind (kinds: {', '.join(KINDS)})")
    version = plan.get("schema")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise PlanError(kind, "schema", f"is {version!r}, expected schema version {SCHEMA_VERSION} "
                                        "(the Java plans and plan_schema.json differ: rebuild, or make plan-schema)")
    return Plan(plan, plan_types.KIND_TYPES[kind].from_json(plan))


def validate_decision(decision: dict) -> dict:
    """``decision`` with its plan validated when it is accepted (a declined one carries no plan)."""
    if decision.get("accepted"):
        decision["plan"] = validate(decision.get("plan"))
    return decision
