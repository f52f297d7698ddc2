"""Procedural memory, the same on every surface: versions are drafted, approved once, activated
per scope and rolled back; only the approved, active version is ever served, tenants are walled
apart, and a bad draft, approval, scope or version is refused whole naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.surfaces import Json, Refused, Surface
from tests.conftest import ts
from tests.procedure_helpers import (
    ACTIVATED_AT,
    APPROVAL,
    APPROVED_AT,
    CREATED_AT,
    ROLLED_BACK_AT,
    approved,
    draft,
)


def _create(surface: Surface, body: Json) -> Json:
    surface.clock.set(ts(CREATED_AT))
    return surface.create_procedure(body).model_dump(mode="json")


def _approve(surface: Surface, name: str, version: int, approval: Json = APPROVAL) -> Json:
    surface.clock.set(ts(APPROVED_AT))
    return surface.approve_procedure(name, version, approval).model_dump(mode="json")


def _activate(surface: Surface, name: str, version: int, scope: str | None = None) -> Json:
    surface.clock.set(ts(ACTIVATED_AT))
    return surface.activate_procedure(name, version, scope).model_dump(mode="json")


def _rollback(surface: Surface, name: str, scope: str | None = None) -> Json:
    surface.clock.set(ts(ROLLED_BACK_AT))
    return surface.roll_back_procedure(name, scope).model_dump(mode="json")


def _active(surface: Surface, name: str, scope: str | None = None) -> Json:
    return surface.active_procedure(name, scope).model_dump(mode="json")


def _ready(surface: Surface, name: str, versions: int) -> None:
    """``versions`` approved versions of ``name``, none active."""
    for n in range(1, versions + 1):
        assert _create(surface, {"name": name, "steps": f"step {n}"})["version"] == n
        _approve(surface, name, n)


def _refused(call: Any, *args: Any) -> tuple[str, str | None]:
    with pytest.raises(Refused) as refused:
        call(*args)
    return refused.value.fault


def test_a_version_goes_from_draft_to_approved_to_active_and_back(surface: Surface) -> None:
    steps = "1. check the passport\n2. book the appointment"
    definition = {"tool": "calendar", "args": {"days": [1, 2]}}
    first = _create(surface, {"name": "renew-passport", "steps": steps})
    assert first == draft("renew-passport", 1, steps, None)
    assert _approve(surface, "renew-passport", 1) == approved(first)
    serving_first = {
        **approved(first),
        "scope": "default",
        "activated_at": ACTIVATED_AT,
        "rollback_target": None,
    }
    assert _activate(surface, "renew-passport", 1) == serving_first
    assert _active(surface, "renew-passport") == serving_first

    second = _create(surface, {"name": "renew-passport", "definition": definition})
    assert second == draft("renew-passport", 2, None, definition)
    _approve(surface, "renew-passport", 2)
    serving_second = {
        **approved(second),
        "scope": "default",
        "activated_at": ACTIVATED_AT,
        "rollback_target": 1,
    }
    assert _activate(surface, "renew-passport", 2, "default") == serving_second
    assert _active(surface, "renew-passport", "default") == serving_second

    rolled_back = {**serving_first, "activated_at": ROLLED_BACK_AT}
    assert _rollback(surface, "renew-passport") == rolled_back
    assert _active(surface, "renew-passport") == rolled_back


def test_only_the_approved_active_version_is_served(surface: Surface) -> None:
    _create(surface, {"name": "triage", "steps": "v1"})
    assert _refused(_active, surface, "triage")[0] == "not_found"
    _approve(surface, "triage", 1)
    assert _refused(_active, surface, "triage")[0] == "not_found"
    _activate(surface, "triage", 1)
    _create(surface, {"name": "triage", "steps": "v2, a draft"})
    served = _active(surface, "triage")
    assert (served["version"], served["status"], served["steps"]) == (1, "approved", "v1")


def test_activating_an_unapproved_version_is_a_conflict_and_changes_nothing(
    surface: Surface,
) -> None:
    _ready(surface, "triage", 1)
    before = _activate(surface, "triage", 1)
    _create(surface, {"name": "triage", "steps": "v2, a draft"})
    assert _refused(_activate, surface, "triage", 2)[0] == "conflict"
    assert _refused(_activate, surface, "triage", 2, "eu")[0] == "conflict"
    assert _active(surface, "triage") == before
    assert _refused(_active, surface, "triage", "eu")[0] == "not_found"
    # Approved later, it activates on top of the same history.
    _approve(surface, "triage", 2)
    assert _activate(surface, "triage", 2)["rollback_target"] == 1


def test_approving_twice_is_a_conflict_and_keeps_the_first_approval(surface: Surface) -> None:
    _create(surface, {"name": "triage", "steps": "v1"})
    first = _approve(surface, "triage", 1, {"approver": "a", "policy": "p"})
    assert (first["approver"], first["policy"], first["evaluation_ref"]) == ("a", "p", None)
    assert _refused(_approve, surface, "triage", 1)[0] == "conflict"
    assert _activate(surface, "triage", 1)["approver"] == "a"


def test_rollback_walks_back_through_earlier_activations(surface: Surface) -> None:
    _ready(surface, "triage", 3)
    assert _refused(_rollback, surface, "triage")[0] == "conflict"
    for version in (1, 2, 3):
        _activate(surface, "triage", version)
    # Activating the active version again changes nothing, its rollback target included.
    assert _activate(surface, "triage", 3)["rollback_target"] == 2
    back = _rollback(surface, "triage")
    assert (back["version"], back["rollback_target"]) == (2, 1)
    back = _rollback(surface, "triage")
    assert (back["version"], back["rollback_target"]) == (1, None)
    assert _refused(_rollback, surface, "triage")[0] == "conflict"
    assert _active(surface, "triage")["version"] == 1


def test_scopes_are_independent(surface: Surface) -> None:
    _ready(surface, "triage", 2)
    _activate(surface, "triage", 1, "eu")
    _activate(surface, "triage", 2, "eu")
    _activate(surface, "triage", 2, "us")
    assert _refused(_active, surface, "triage")[0] == "not_found"
    assert _refused(_rollback, surface, "triage", "us")[0] == "conflict"
    assert _rollback(surface, "triage", "eu")["version"] == 1
    us = _active(surface, "triage", "us")
    assert (us["scope"], us["version"], us["rollback_target"]) == ("us", 2, None)
    assert _active(surface, "triage", "eu")["version"] == 1


def test_another_tenant_can_neither_see_nor_change_a_procedure(surface: Surface) -> None:
    other = surface.other()
    _ready(surface, "triage", 2)
    _activate(surface, "triage", 1)
    assert [
        _refused(_active, other, "triage")[0],
        _refused(_approve, other, "triage", 2)[0],
        _refused(_activate, other, "triage", 2)[0],
        _refused(_rollback, other, "triage")[0],
    ] == ["not_found"] * 4
    # The same name is another procedure there, numbered from 1.
    assert _create(other, {"name": "triage", "steps": "theirs"})["version"] == 1
    assert _active(surface, "triage")["version"] == 1


def test_an_unknown_procedure_or_version_is_not_found(surface: Surface) -> None:
    _ready(surface, "triage", 1)
    assert [
        _refused(_approve, surface, "nope", 1)[0],
        _refused(_approve, surface, "triage", 2)[0],
        _refused(_activate, surface, "nope", 1)[0],
        _refused(_activate, surface, "triage", 2)[0],
        _refused(_rollback, surface, "nope")[0],
        _refused(_active, surface, "nope")[0],
    ] == ["not_found"] * 6


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"steps": "x"}, "name"),
        ({"name": "bad name", "steps": "x"}, "name"),
        ({"name": "triage"}, None),
        ({"name": "triage", "steps": None}, "steps"),
        ({"name": "triage", "steps": ""}, "steps"),
        ({"name": "triage", "steps": "a\x00b"}, "steps"),
        ({"name": "triage", "steps": "x" * 100_001}, "steps"),
        ({"name": "triage", "definition": [1, 2]}, "definition"),
        ({"name": "triage", "definition": {"k": "a\x00b"}}, "definition"),
        ({"name": "triage", "steps": "x", "owner": "me"}, "owner"),
    ],
)
def test_a_bad_draft_is_refused_whole_naming_the_field(
    surface: Surface, body: Json, field: str | None
) -> None:
    assert _refused(_create, surface, body) == ("invalid", field)
    # Nothing was written: the first good draft is still version 1.
    assert _create(surface, {"name": "triage", "steps": "x"})["version"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"policy": "p"}, "approver"),
        ({"approver": "a"}, "policy"),
        ({"approver": "a b", "policy": "p"}, "approver"),
        ({"approver": "a", "policy": "p", "evaluation_ref": ""}, "evaluation_ref"),
        ({"approver": "a", "policy": "p", "extra": 1}, "extra"),
    ],
)
def test_a_bad_approval_is_refused_whole_naming_the_field(
    surface: Surface, body: Json, field: str
) -> None:
    _create(surface, {"name": "triage", "steps": "x"})
    assert _refused(_approve, surface, "triage", 1, body) == ("invalid", field)
    assert _refused(_activate, surface, "triage", 1)[0] == "conflict"  # still a draft
    assert _approve(surface, "triage", 1)["status"] == "approved"


def test_a_bad_scope_or_version_is_refused_naming_it(surface: Surface) -> None:
    _ready(surface, "triage", 1)
    assert _refused(_activate, surface, "triage", 1, "a scope") == ("invalid", "scope")
    assert _refused(_rollback, surface, "triage", "") == ("invalid", "scope")
    assert _refused(_active, surface, "triage", "a/b") == ("invalid", "scope")
    for version in (0, 2**31):
        assert _refused(_activate, surface, "triage", version) == ("invalid", "version")
    assert _refused(_active, surface, "triage")[0] == "not_found"
