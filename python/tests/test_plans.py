"""The plan contract at the Java -> Python boundary (``axe4j.plans``): every plan a rule answers is checked against
``plan_schema.json`` (generated from the Java plan records) before an emitter reads it.

The boundary cases build plans by hand from a schema-valid base and break one thing each: a missing field, a wrong
type, an unknown field, an unknown kind, a wrong schema version; each error must name the kind and the field. The
compile cases run a real CPU compile and check that its plans went through the boundary and came out read-only.
"""

import copy

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j import plans
from axe4j._errors import PlanError

AFFINE = {
    "kind": "affine",
    "schema": plans.SCHEMA_VERSION,
    "loops": [{"extent": 8, "kind": "serial", "reduces": False, "strides": {"dst": 12, "src0": 12}},
              {"extent": 12, "kind": "vectorized", "reduces": False, "strides": {"dst": 1, "src0": 1}}],
    "access": {role: {"base": 0, "start_strides": {}, "replicas": [0], "layout": "S[(8, 12):(12, 1)]"}
               for role in ("dst", "src0")},
    "tail": 0,
    "notes": ["a note"],
}


def broken(change):
    plan = copy.deepcopy(AFFINE)
    change(plan)
    return plan


def test_a_plan_matching_the_schema_passes_and_becomes_read_only():
    plan = plans.validate(copy.deepcopy(AFFINE))
    assert isinstance(plan, plans.Plan) and plan.kind == "affine" and plan == AFFINE
    with pytest.raises(TypeError, match="read-only"):
        plan["tail"] = 3
    with pytest.raises(TypeError, match="read-only"):
        plan.pop("notes")
    assert copy.deepcopy(plan) == plan and isinstance(copy.deepcopy(plan), plans.Plan)


def test_an_optional_field_may_be_left_out_or_given():
    with_swizzle = broken(lambda p: p["access"]["dst"].update(swizzle=[3, 4, 3]))
    plans.validate(with_swizzle)
    with pytest.raises(PlanError, match=r"field 'access\.dst\.swizzle\[1\]': expected long, got str"):
        plans.validate(broken(lambda p: p["access"]["dst"].update(swizzle=[3, "4", 3])))


@pytest.mark.parametrize("change, field, problem", [
    (lambda p: p.pop("tail"), "tail", "missing (required by CpuPlans.Affine)"),
    (lambda p: p["access"]["src0"].pop("layout"), "access.src0.layout", "missing (required by PlanParts.Access)"),
    (lambda p: p.update(tail="0"), "tail", "expected long, got str '0'"),
    (lambda p: p.update(tail=True), "tail", "expected long, got bool True"),
    (lambda p: p["loops"][1].update(reduces=0), "loops[1].reduces", "expected bool, got int 0"),
    (lambda p: p["loops"][0]["strides"].update(dst=1.5), "loops[0].strides.dst", "expected long, got float 1.5"),
    (lambda p: p.update(notes="a note"), "notes", "expected a list, got str 'a note'"),
    (lambda p: p["access"].update(dst=[0]), "access.dst", "expected an object (PlanParts.Access), got list [0]"),
    (lambda p: p.update(vector_dim="m"), "vector_dim", "unknown field (fields of CpuPlans.Affine: loops,"),
    (lambda p: p["loops"][0].update(stride=1), "loops[0].stride", "unknown field (fields of PlanParts.NestLoop"),
])
def test_a_broken_field_is_named_with_the_kind(change, field, problem):
    with pytest.raises(PlanError) as error:
        plans.validate(broken(change))
    assert error.value.kind == "affine" and error.value.field == field
    assert str(error.value).startswith(f"plan kind 'affine': field {field!r}: {problem}")


def test_an_unknown_kind_is_named():
    with pytest.raises(PlanError, match=r"plan kind 'affine-2': field 'kind': unknown kind \(kinds: affine, "):
        plans.validate(broken(lambda p: p.update(kind="affine-2")))


@pytest.mark.parametrize("version", [plans.SCHEMA_VERSION + 1, None, str(plans.SCHEMA_VERSION)])
def test_a_wrong_schema_version_is_named(version):
    plan = broken(lambda p: p.update(schema=version) if version is not None else p.pop("schema"))
    with pytest.raises(PlanError, match=rf"plan kind 'affine': field 'schema': is {version!r}, expected schema "
                                        rf"version {plans.SCHEMA_VERSION}"):
        plans.validate(plan)


def test_a_declined_decision_carries_no_plan_to_check():
    declined = {"variant": "v", "accepted": False, "reason": "no", "plan": {}, "error": ""}
    assert plans.validate_decision(dict(declined)) == declined
    with pytest.raises(PlanError, match="field 'kind'"):
        plans.validate_decision({**declined, "accepted": True})


def test_the_schema_names_a_record_for_every_kind_and_every_record_it_refers_to():
    assert len(plans.KINDS) >= 19 and set(plans.KINDS.values()) <= set(plans.RECORDS)
    referred = []

    def walk(spec):
        if isinstance(spec, dict):
            if "record" in spec:
                referred.append(spec["record"])
            for inner in spec.values():
                walk(inner)
    for fields in plans.RECORDS.values():
        walk(fields)
    assert referred and set(referred) <= set(plans.RECORDS)


# ---- plans of a real compile -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed():
    axe4j.install()


@T.prim_func
def copy_and_sum(A: T.Buffer((8, 12), "float32"), B: T.Buffer((8, 12), "float32"), C: T.Buffer((8,), "float32")):
    Tx.copy(B[:, :], A[:, :])
    Tx.sum(C[:], A[:, :], axes=[1])


def test_the_plans_of_a_cpu_compile_pass_the_boundary(installed, monkeypatch):
    seen = []
    check = plans.validate

    def recording(plan):
        seen.append(check(plan))
        return seen[-1]

    monkeypatch.setattr(plans, "validate", recording)
    lib = axe4j.compile(copy_and_sum, "llvm")
    a = np.random.default_rng(7).standard_normal((8, 12)).astype("float32")
    b, c = tvm.runtime.tensor(np.zeros((8, 12), "float32")), tvm.runtime.tensor(np.zeros(8, "float32"))
    lib(tvm.runtime.tensor(a), b, c)
    np.testing.assert_array_equal(b.numpy(), a)
    np.testing.assert_allclose(c.numpy(), a.sum(axis=1), rtol=1e-5)
    assert {"affine", "reduce"} <= {p.kind for p in seen}
    assert all(isinstance(p, plans.Plan) and p["schema"] == plans.SCHEMA_VERSION for p in seen)


def test_a_plan_that_does_not_match_fails_the_compile_naming_kind_and_field(installed, monkeypatch):
    monkeypatch.setattr(plans, "SCHEMA_VERSION", plans.SCHEMA_VERSION + 1)
    with pytest.raises(Exception, match=r"plan kind 'affine': field 'schema'"):
        axe4j.compile(copy_and_sum, "llvm")
