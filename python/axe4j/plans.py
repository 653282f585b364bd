"""The plans Java rules hand to the emitters, checked where they enter Python.

Every accepted decision's plan (``axe4j.schedules.decide`` / ``explain``) passes ``validate`` before an emitter
reads it: its ``kind`` must be one of ``plan_schema.json``'s kinds, its ``schema`` the version written there, every
required field present with its type (recursively through lists, maps and nested records) and no field unknown.
A mismatch is a ``PlanError`` naming the kind, the field path (``access.dst.replicas[2]``) and what is wrong, so a
field renamed on one side fails at the boundary instead of deep in an emitter.

``plan_schema.json`` is generated from the Java plan records (``org.axe4j.schedules.plan``, ``make plan-schema``).
Types: ``"int"``/``"long"`` (a JSON integer), ``"float"``, ``"str"``, ``"bool"``, ``{"list": T}``, ``{"map": T}``
(string keys), ``{"record": name}``, and ``{"optional": T}`` for a field that may be left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._errors import PlanError

_SCHEMA = json.loads(Path(__file__).with_name("plan_schema.json").read_text())
SCHEMA_VERSION: int = _SCHEMA["schema"]
KINDS: dict[str, str] = _SCHEMA["kinds"]          # plan kind -> record name
RECORDS: dict[str, dict] = _SCHEMA["records"]     # record name -> {field: type}


class Plan(dict):
    """A validated plan: a read-only dict (the emitters read it; the Java rule wrote it). The objects inside stay
    plain dicts and lists: the emitters note derived values in an operand's access entry (``base_expr``)."""

    def _read_only(self, *args, **kwargs):
        raise TypeError(f"plan kind {self.get('kind')!r} is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __reduce__(self):   # copy, deepcopy and pickle rebuild it whole instead of item by item
        return (Plan, (dict(self),))

    @property
    def kind(self) -> str:
        return self["kind"]


def validate(plan) -> Plan:
    """``plan`` (a parsed plan JSON object) as a ``Plan`` once it matches the schema; else ``PlanError``."""
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
    _record({k: v for k, v in plan.items() if k not in ("kind", "schema")}, record, kind, "")
    return Plan(plan)


def validate_decision(decision: dict) -> dict:
    """``decision`` with its plan validated when it is accepted (a declined one carries no plan)."""
    if decision.get("accepted"):
        decision["plan"] = validate(decision.get("plan"))
    return decision


def _record(value: dict, name: str, kind: str, path: str) -> None:
    fields = RECORDS[name]
    for key in value:
        if key not in fields:
            raise PlanError(kind, path + key, f"unknown field (fields of {name}: {', '.join(fields)})")
    for field, spec in fields.items():
        optional = isinstance(spec, dict) and "optional" in spec
        if field not in value or value[field] is None:
            if optional:
                continue
            raise PlanError(kind, path + field, f"missing (required by {name})")
        _value(value[field], spec["optional"] if optional else spec, kind, path + field)


_SCALARS = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "long": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
}


def _value(value, spec, kind: str, path: str) -> None:
    if isinstance(spec, str):
        if not _SCALARS[spec](value):
            raise PlanError(kind, path, f"expected {spec}, got {_shown(value)}")
    elif "list" in spec:
        if not isinstance(value, list):
            raise PlanError(kind, path, f"expected a list, got {_shown(value)}")
        for i, item in enumerate(value):
            _value(item, spec["list"], kind, f"{path}[{i}]")
    elif "map" in spec:
        if not isinstance(value, dict):
            raise PlanError(kind, path, f"expected an object (map), got {_shown(value)}")
        for key, item in value.items():
            _value(item, spec["map"], kind, f"{path}.{key}")
    else:
        if not isinstance(value, dict):
            raise PlanError(kind, path, f"expected an object ({spec['record']}), got "
                                        f"{_shown(value)}")
        _record(value, spec["record"], kind, path + ".")


def _shown(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 80 else text[:77] + '...'}"
