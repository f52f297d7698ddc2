"""An attribute name nobody declared says so, and names the declared ones closest to it: a
write's candidate is ``invalid``, a read is ``not_found`` on ``attribute``. A declared name
with nothing known stays "not known"; an old name within its rename's dual-read window counts
as declared."""

from __future__ import annotations

import pytest

from store.attributes.names import undeclared
from store.errors import NotFound
from store.service import MemoryStore
from tests.helpers import declare, record

pytestmark = pytest.mark.store


def _candidate(attribute: str) -> dict[str, str]:
    return {
        "evidence": "",
        "subject": "mira",
        "attribute": attribute,
        "change": "new",
        "value": "2026-09-09",
    }


@pytest.mark.parametrize(
    ("asked", "reason"),
    [
        ("pasport_deadline", "; did you mean 'passport_deadline'?"),
        ("Passport_Deadline", "; did you mean 'passport_deadline'?"),
        ("deadline", "; did you mean 'visa_deadline' or 'passport_deadline'?"),
        ("shoe_size", ""),
    ],
)
def test_the_reason_names_the_closest_declared_names(asked: str, reason: str) -> None:
    declared = ["home_city", "passport_deadline", "visa_deadline"]
    assert undeclared(asked, declared) == f"attribute {asked!r} is not declared{reason}"


def test_a_candidate_with_a_misspelt_attribute_is_invalid_and_names_the_declared_one(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant)
    record(store, tenant, "e1", "2026-05-31T09:00:00Z")
    [written, refused] = store.facts.apply_candidates(
        tenant, "e1", [_candidate("passport_deadline"), _candidate("pasport_deadline")]
    )
    assert written.status == "written"
    assert (refused.status, refused.field) == ("invalid", "attribute")
    assert refused.reason == (
        "attribute 'pasport_deadline' is not declared; did you mean 'passport_deadline'?"
    )
    assert store.facts.history(tenant, "mira", "passport_deadline")[0].value == "2026-09-09"


def test_a_read_of_an_undeclared_attribute_says_so_and_a_declared_one_stays_not_known(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant)
    with pytest.raises(NotFound) as typo:
        store.facts.at(tenant, "mira", "pasport_deadline")
    assert typo.value.field == "attribute"
    assert typo.value.detail == (
        "attribute 'pasport_deadline' is not declared; did you mean 'passport_deadline'?"
    )
    with pytest.raises(NotFound) as history:
        store.facts.history(tenant, "mira", "pasport_deadline")
    assert history.value.detail == typo.value.detail
    with pytest.raises(NotFound) as unknown:
        store.facts.at(tenant, "nobody", "passport_deadline")
    assert unknown.value.detail == "nobody.passport_deadline is not known at that time"
    assert store.facts.history(tenant, "nobody", "passport_deadline") == []


def test_an_old_name_within_its_dual_read_window_counts_as_declared(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "home_city", "string")
    record(store, tenant, "e1", "2026-05-31T09:00:00Z")
    store.admin.migrate_attribute(
        tenant, "home_city", {"attribute": "city", "value_type": "string"}
    )
    [result] = store.facts.apply_candidates(
        tenant, "e1", [{**_candidate("home_city"), "value": "Oslo"}]
    )
    assert result.status == "written"
    assert store.facts.at(tenant, "mira", "home_city").value == "Oslo"
    with pytest.raises(NotFound) as unknown:
        store.facts.at(tenant, "ada", "home_city")
    assert unknown.value.detail == "ada.city is not known at that time"
