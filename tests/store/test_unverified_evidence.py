"""Evidence not found in its episode: stored and labelled unverified by default; refused as
``invalid`` (writing nothing) where the attribute, or else the tenant, declares ``refuse``. The
write path and the bulk import apply the one rule."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from store.errors import InvalidInput, NotFound
from store.service import MemoryStore
from tests.helpers import declare, record

_numbers = itertools.count(1)

TEXT = "Mira: my passport deadline is 2026-09-09."
QUOTED = "my passport deadline is 2026-09-09"
NOT_QUOTED = "the deadline moved to September"


def _tenant(store: MemoryStore, policy: str | None = None) -> str:
    name = f"unverified-{next(_numbers)}"
    if policy is None:
        store.admin.create_tenant(name)
    else:
        store.admin.create_tenant(name, on_unverified_evidence=policy)  # type: ignore[arg-type]
    return name


def _candidate(evidence: str, value: str = "2026-09-09") -> dict[str, Any]:
    return {
        "evidence": evidence,
        "subject": "mira",
        "attribute": "passport_deadline",
        "change": "new",
        "value": value,
    }


def _write(store: MemoryStore, tenant: str, evidence: str) -> tuple[str, str | None, str | None]:
    record(store, tenant, "x4", "2026-05-31T09:00:00Z", TEXT)
    [result] = store.facts.apply_candidates(tenant, "x4", [_candidate(evidence)])
    return result.status, result.field, result.reason


def _held(store: MemoryStore, tenant: str) -> list[tuple[object, bool, str]]:
    history = store.facts.history(tenant, "mira", "passport_deadline")
    return [(fact.value, fact.evidence_verified, fact.label) for fact in history]


@pytest.mark.parametrize(
    ("tenant_policy", "attribute_policy", "refused"),
    [
        (None, None, False),
        ("accept", None, False),
        ("refuse", None, True),
        (None, "refuse", True),
        ("accept", "refuse", True),
        ("refuse", "accept", False),  # the attribute's own declaration wins
        ("refuse", "refuse", True),
    ],
)
def test_unverified_evidence_is_refused_only_where_declared_and_the_attribute_wins(
    store: MemoryStore, tenant_policy: str | None, attribute_policy: str | None, refused: bool
) -> None:
    tenant = _tenant(store, tenant_policy)
    extra = {} if attribute_policy is None else {"on_unverified_evidence": attribute_policy}
    declare(store, tenant, **extra)
    status, field, reason = _write(store, tenant, NOT_QUOTED)
    if refused:
        assert (status, field) == ("invalid", "evidence")
        by = "attribute 'passport_deadline'" if attribute_policy == "refuse" else "the tenant"
        assert reason == (
            f"the evidence is not in episode 'x4''s text, and {by} refuses unverified evidence"
            " (on_unverified_evidence: refuse)"
        )
        assert _held(store, tenant) == []
        assert store.conflicts.list(tenant).conflicts == []
    else:
        assert (status, field) == ("written", None)
        assert _held(store, tenant) == [("2026-09-09", False, "current · unverified")]


def test_verified_evidence_is_written_whatever_is_declared(store: MemoryStore) -> None:
    tenant = _tenant(store, "refuse")
    declare(store, tenant, on_unverified_evidence="refuse")
    assert _write(store, tenant, QUOTED)[:2] == ("written", None)
    assert _held(store, tenant) == [("2026-09-09", True, "current")]


def test_a_refused_candidate_never_undoes_the_others_of_its_call(store: MemoryStore) -> None:
    tenant = _tenant(store)
    declare(store, tenant, on_unverified_evidence="refuse")
    declare(store, tenant, "home_city", "string")
    record(store, tenant, "x4", "2026-05-31T09:00:00Z", TEXT)
    city = {**_candidate("Mira lives in Oslo", "Oslo"), "attribute": "home_city"}
    results = store.facts.apply_candidates(tenant, "x4", [_candidate(NOT_QUOTED), city])
    assert [(r.status, r.field) for r in results] == [("invalid", "evidence"), ("written", None)]
    assert _held(store, tenant) == []


def test_redeclaring_the_field_bumps_schema_version_and_the_list_shows_it(
    store: MemoryStore,
) -> None:
    tenant = _tenant(store)
    declare(store, tenant)
    declare(store, tenant)
    assert [
        (a.schema_version, a.on_unverified_evidence) for a in store.admin.list_attributes(tenant)
    ] == [(1, None)]
    declare(store, tenant, on_unverified_evidence="refuse")
    declare(store, tenant, on_unverified_evidence="refuse")
    [attribute] = store.admin.list_attributes(tenant)
    assert (attribute.schema_version, attribute.on_unverified_evidence) == (2, "refuse")


def test_the_tenant_default_can_be_changed_and_bad_values_are_refused(
    store: MemoryStore,
) -> None:
    tenant = _tenant(store)
    declare(store, tenant)
    store.admin.set_unverified_evidence(tenant, "refuse")
    assert _write(store, tenant, NOT_QUOTED)[:2] == ("invalid", "evidence")
    store.admin.set_unverified_evidence(tenant, "accept")
    assert (
        store.facts.apply_candidates(tenant, "x4", [_candidate(NOT_QUOTED)])[0].status == "written"
    )
    with pytest.raises(InvalidInput) as bad:
        store.admin.set_unverified_evidence(tenant, "maybe")
    assert bad.value.field == "on_unverified_evidence"
    with pytest.raises(NotFound):
        store.admin.set_unverified_evidence("no-such-tenant", "refuse")
    with pytest.raises(InvalidInput) as declared:
        declare(store, tenant, on_unverified_evidence="maybe")
    assert declared.value.field == "on_unverified_evidence"


def _import_line(tenant: str, episode_id: str, evidence: str, value: str) -> str:
    occurred = "2026-05-31T09:00:00Z" if episode_id == "i1" else "2026-05-31T10:00:00Z"
    return json.dumps(
        {
            "tenant": tenant,
            "id": episode_id,
            "occurred_at": occurred,
            "text": f"Mira: my passport deadline is {value}.",
            "updates": [_candidate(evidence, value)],
        }
    )


@pytest.mark.parametrize(
    ("tenant_policy", "attribute_policy"), [("refuse", None), (None, "refuse")]
)
def test_the_bulk_import_refuses_what_the_write_path_refuses(
    store: MemoryStore, tenant_policy: str | None, attribute_policy: str | None
) -> None:
    tenant = _tenant(store, tenant_policy)
    extra = {} if attribute_policy is None else {"on_unverified_evidence": attribute_policy}
    declare(store, tenant, **extra)
    outcome = store.episodes.import_lines(
        [
            _import_line(tenant, "i1", "my passport deadline is 2026-09-09", "2026-09-09"),
            _import_line(tenant, "i2", NOT_QUOTED, "2026-10-10"),
        ]
    )
    assert outcome.candidates == {"written": 1, "invalid": 1}
    [refused] = outcome.refused
    assert (refused.line, refused.status, refused.field) == (2, "invalid", "evidence")
    assert _held(store, tenant) == [("2026-09-09", True, "current")]


def test_the_bulk_import_accepts_unverified_evidence_by_default(store: MemoryStore) -> None:
    tenant = _tenant(store)
    declare(store, tenant)
    outcome = store.episodes.import_lines([_import_line(tenant, "i1", NOT_QUOTED, "2026-09-09")])
    assert outcome.candidates == {"written": 1}
    assert _held(store, tenant) == [("2026-09-09", False, "current · unverified")]
