"""Every plan kind of ``plan_schema.json`` has one emitter, found through ``axe4j._registry`` by the kind's target."""

import json
from pathlib import Path

import pytest

SCHEMA = Path(__file__).resolve().parents[1] / "axe4j" / "plan_schema.json"


def test_every_plan_kind_has_an_emitter_in_its_target_package():
    from axe4j import _registry

    for kind in json.loads(SCHEMA.read_text())["kinds"]:
        fn = _registry.emitter(kind)
        assert fn.__module__.startswith(_registry.target_package(kind) + "."), (kind, fn.__module__)


def test_unknown_kind_and_second_emitter_are_refused():
    from axe4j import _registry

    with pytest.raises(ValueError, match="unknown plan kind no-such-kind"):
        _registry.emitter("no-such-kind")
    with pytest.raises(ValueError, match="two emitters"):
        _registry.emits("affine")(lambda request, plan: None)
