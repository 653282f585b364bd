"""Writes ``python/axe4j/plan_types.py`` from ``python/axe4j/plan_schema.json``: one frozen dataclass per Java plan
record, with ``from_json`` (the schema check ``axe4j.plans`` makes at the boundary, field by field) and ``to_json``.

    python tools/gen_plan_types.py [--schema plan_schema.json] [--out plan_types.py]   (``make plan-types``)

Class names: a record that is a plan kind is ``<Family><Name>Plan`` (``CudaPlans.Tma`` -> ``CudaTmaPlan``,
``CpuPlans.GemmBlocked`` -> ``CpuGemmBlockedPlan``; ``TrnPlan`` stays ``TrnPlan``); any other record is
``<Family><Name>`` with the ``PlanParts`` family dropped (``PlanParts.Access`` -> ``Access``, ``CudaPlans.TmaDim`` ->
``CudaTmaDim``, ``TrnPlan.Tile`` -> ``TrnPlanTile``). A field whose JSON name is a Python keyword gets a trailing
underscore (``global`` -> ``global_``); ``to_json`` writes the JSON name back.

Types: int/long -> ``int``, float -> ``float``, str, bool, ``{"list": T}`` -> ``tuple[T, ...]``, ``{"map": T}`` ->
``Mapping[str, T]`` (a ``MappingProxyType``), ``{"record": R}`` -> R's class, ``{"optional": T}`` -> ``Optional[T]``
defaulting to ``None`` (the classes are keyword-only, so an optional field keeps its place in the schema order).
"""

from __future__ import annotations

import argparse
import json
import keyword
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "python" / "axe4j" / "plan_schema.json"
OUT = ROOT / "python" / "axe4j" / "plan_types.py"

_FAMILIES = {"CpuPlans": "Cpu", "CudaPlans": "Cuda", "PlanParts": ""}
_SCALAR_TYPES = {"int": "int", "long": "int", "float": "float", "str": "str", "bool": "bool"}

# The runtime part of the generated module: converters that check one JSON value against its schema type and
# return its typed value, raising the PlanError axe4j.plans always raised (same kind, field path and wording).
_RUNTIME = '''
def _shown(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 80 else text[:77] + '...'}"


def _scalar(name: str, accepts):
    def convert(value, kind: str, path: str):
        if not accepts(value):
            raise PlanError(kind, path, f"expected {name}, got {_shown(value)}")
        return value
    return convert


_int = _scalar("int", lambda v: isinstance(v, int) and not isinstance(v, bool))
_long = _scalar("long", lambda v: isinstance(v, int) and not isinstance(v, bool))
_float = _scalar("float", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
_str = _scalar("str", lambda v: isinstance(v, str))
_bool = _scalar("bool", lambda v: isinstance(v, bool))


def _list_of(item):
    def convert(value, kind: str, path: str) -> tuple:
        if not isinstance(value, list):
            raise PlanError(kind, path, f"expected a list, got {_shown(value)}")
        return tuple(item(x, kind, f"{path}[{i}]") for i, x in enumerate(value))
    return convert


def _map_of(item):
    def convert(value, kind: str, path: str) -> Mapping:
        if not isinstance(value, dict):
            raise PlanError(kind, path, f"expected an object (map), got {_shown(value)}")
        return MappingProxyType({key: item(x, kind, f"{path}.{key}") for key, x in value.items()})
    return convert


def _record_of(class_name: str):
    def convert(value, kind: str, path: str):
        return globals()[class_name].from_json(value, path, kind)   # by name: a record may refer to a later one
    return convert


def _fields_known(obj: dict, record: str, fields: tuple, kind: str, prefix: str, skipped=()) -> None:
    for key in obj:
        if key not in fields and key not in skipped:
            raise PlanError(kind, prefix + key, f"unknown field (fields of {record}: {', '.join(fields)})")


def _field(obj: dict, name: str, convert, record: str, kind: str, prefix: str, optional: bool):
    value = obj.get(name)
    if value is None:   # left out, or null: the same to the schema
        if optional:
            return None
        raise PlanError(kind, prefix + name, f"missing (required by {record})")
    return convert(value, kind, prefix + name)


def _json(value):
    """A typed value back as JSON: records through to_json, tuples as lists, mappings as dicts."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, tuple):
        return [_json(x) for x in value]
    if isinstance(value, Mapping):
        return {key: _json(x) for key, x in value.items()}
    return value


def _rebuilt(cls, obj):
    return cls.from_json(obj)


def _plan_header(plan, expected_kind: str | None):
    """The checks before a plan's fields: an object, a known kind (the expected one, for a plan class), the schema
    version this module was generated for. Returns the kind."""
    if not isinstance(plan, dict):
        raise PlanError("?", "", f"expected a plan object, got {type(plan).__name__}")
    kind = plan.get("kind")
    if not isinstance(kind, str):
        raise PlanError(str(kind), "kind", "missing or not a string")
    if kind not in KIND_TYPES:
        raise PlanError(kind, "kind", f"unknown kind (kinds: {', '.join(KIND_TYPES)})")
    if expected_kind is not None and kind != expected_kind:
        raise PlanError(kind, "kind", f"is {kind!r}, expected {expected_kind!r}")
    version = plan.get("schema")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise PlanError(kind, "schema", f"is {version!r}, expected schema version {SCHEMA_VERSION} "
                                        "(the Java plans and plan_schema.json differ: rebuild, or make plan-schema)")
    return kind
'''


def class_name(record: str, kinds_by_record: dict) -> str:
    family, _, name = record.rpartition(".")
    if not family:
        return record
    if family in _FAMILIES:
        prefix = _FAMILIES[family]
    else:   # a record nested in a top-level one: TrnPlan.Tile -> TrnPlanTile
        prefix = family.replace(".", "")
    return prefix + name + ("Plan" if record in kinds_by_record else "")


def attribute(field: str) -> str:
    return field + "_" if keyword.iskeyword(field) else field


def python_type(spec, names: dict) -> str:
    if isinstance(spec, str):
        return _SCALAR_TYPES[spec]
    if "list" in spec:
        return f"tuple[{python_type(spec['list'], names)}, ...]"
    if "map" in spec:
        return f"Mapping[str, {python_type(spec['map'], names)}]"
    if "record" in spec:
        return names[spec["record"]]
    raise ValueError(f"unknown schema type {spec!r}")


def converter(spec, names: dict) -> str:
    if isinstance(spec, str):
        return "_" + spec
    if "list" in spec:
        return f"_list_of({converter(spec['list'], names)})"
    if "map" in spec:
        return f"_map_of({converter(spec['map'], names)})"
    if "record" in spec:
        return f"_record_of({names[spec['record']]!r})"
    raise ValueError(f"unknown schema type {spec!r}")


def record_class(record: str, fields: dict, names: dict, kind: str | None) -> str:
    name = names[record]
    lines = ["", "", "@dataclass(frozen=True, slots=True, kw_only=True)", f"class {name}:"]
    lines.append(f'    """{"Plan kind " + repr(kind) + ": " if kind else ""}Java record {record}."""')
    lines.append("")
    for field, spec in fields.items():
        optional = isinstance(spec, dict) and "optional" in spec
        inner = spec["optional"] if optional else spec
        typed = python_type(inner, names)
        lines.append(f"    {attribute(field)}: Optional[{typed}] = None" if optional else
                     f"    {attribute(field)}: {typed}")
    lines.append("")
    lines.append(f"    RECORD: ClassVar[str] = {record!r}")
    if kind:
        lines.append(f"    KIND: ClassVar[str] = {kind!r}")
    lines.append(f"    FIELDS: ClassVar[tuple[str, ...]] = {tuple(fields)!r}")
    lines.append("")
    if kind:
        lines.append("    @property")
        lines.append("    def kind(self) -> str:")
        lines.append("        return self.KIND")
        lines.append("")
        lines.append("    @classmethod")
        lines.append(f"    def from_json(cls, obj, path: str = \"\", kind: str | None = None) -> {name}:")
        lines.append('        """``obj`` (a parsed plan JSON object of this kind) checked against the schema; else '
                     'PlanError."""')
        lines.append("        kind = _plan_header(obj, cls.KIND)")
        lines.append("        prefix = \"\"")
        lines.append("        _fields_known(obj, cls.RECORD, cls.FIELDS, kind, prefix, skipped=(\"kind\", \"schema\"))")
    else:
        lines.append("    @classmethod")
        lines.append(f"    def from_json(cls, obj, path: str = \"\", kind: str = \"?\") -> {name}:")
        lines.append('        """``obj`` (the JSON object at ``path`` in a plan of ``kind``) checked against the '
                     'schema; else PlanError."""')
        lines.append("        if not isinstance(obj, dict):")
        lines.append("            raise PlanError(kind, path, f\"expected an object ({cls.RECORD}), got "
                     "{_shown(obj)}\")")
        lines.append("        prefix = path + \".\" if path else \"\"")
        lines.append("        _fields_known(obj, cls.RECORD, cls.FIELDS, kind, prefix)")
    if fields:
        lines.append("        return cls(")
        for field, spec in fields.items():
            optional = isinstance(spec, dict) and "optional" in spec
            inner = spec["optional"] if optional else spec
            lines.append(f"            {attribute(field)}=_field(obj, {field!r}, {converter(inner, names)}, "
                         f"cls.RECORD, kind, prefix, {optional}),")
        lines.append("        )")
    else:
        lines.append("        return cls()")
    lines.append("")
    lines.append("    def to_json(self) -> dict:")
    lines.append('        """The JSON object this was read from (optional fields left out when None)."""')
    lines.append("        out = " + ('{"kind": self.KIND, "schema": SCHEMA_VERSION}' if kind else "{}"))
    for field, spec in fields.items():
        if isinstance(spec, dict) and "optional" in spec:
            lines.append(f"        if self.{attribute(field)} is not None:")
            lines.append(f"            out[{field!r}] = _json(self.{attribute(field)})")
        else:
            lines.append(f"        out[{field!r}] = _json(self.{attribute(field)})")
    lines.append("        return out")
    lines.append("")
    lines.append("    def __reduce__(self):   # copy, deepcopy and pickle rebuild it from its JSON")
    lines.append("        return (_rebuilt, (type(self), self.to_json()))")
    return "\n".join(lines)


def generate(schema: dict) -> str:
    kinds = schema["kinds"]                         # plan kind -> record name
    records = schema["records"]                     # record name -> {field: type}
    kinds_by_record = {record: kind for kind, record in kinds.items()}
    names = {record: class_name(record, kinds_by_record) for record in records}
    clashes = {n for n in names.values() if list(names.values()).count(n) > 1}
    if clashes:
        raise SystemExit(f"gen_plan_types: records share a class name: {sorted(clashes)}")
    for kind, record in kinds.items():
        for reserved in ("kind", "schema"):
            if reserved in records[record]:
                raise SystemExit(f"gen_plan_types: plan record {record} has a field {reserved!r} (the plan's own)")
    plan_names = [names[record] for record in kinds.values()]
    parts = [
        "# generated by tools/gen_plan_types.py from plan_schema.json; do not edit (make plan-types)",
        '"""Typed plans: one frozen dataclass per Java plan record (``org.axe4j.schedules.plan``), read from a plan\'s',
        "JSON by ``parse`` with the schema check of ``axe4j.plans`` (a ``PlanError`` naming the kind, the field path and",
        'what is wrong) and written back by ``to_json``."""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        "from types import MappingProxyType",
        "from typing import ClassVar, Mapping, Optional, Union",
        "",
        "from ._errors import PlanError",
        "",
        f"SCHEMA_VERSION: int = {schema['schema']!r}",
        _RUNTIME.rstrip(),
    ]
    for record, fields in records.items():
        parts.append(record_class(record, fields, names, kinds_by_record.get(record)))
    parts += [
        "",
        "",
        "# plan kind -> its class",
        "KIND_TYPES: dict[str, type] = {",
        *(f"    {kind!r}: {names[record]}," for kind, record in kinds.items()),
        "}",
        "",
        "AnyPlan = Union[",
        *(f"    {n}," for n in plan_names),
        "]",
        "",
        "",
        "def parse(plan_json) -> AnyPlan:",
        '    """``plan_json`` (a parsed plan JSON object) as its kind\'s typed plan once it matches the schema; else',
        '    PlanError."""',
        "    return KIND_TYPES[_plan_header(plan_json, None)].from_json(plan_json)",
        "",
    ]
    return "\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", type=Path, default=SCHEMA)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.write_text(generate(json.loads(args.schema.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
