"""Subject merge, the same on every surface: refused merges name their field and change
nothing, a merge stays within its tenant, the old id reads as the survivor, merges chain."""

from __future__ import annotations

import pytest
from psycopg_pool import ConnectionPool

from tests.conformance.surfaces import Refused, Surface
from tests.http_helpers import candidate, tenant_rows


def _world(surface: Surface) -> Surface:
    """Mira's passport deadline; the duplicate ``mira-2`` living in Lisbon."""
    surface.declare_attribute("passport_deadline", {"value_type": "date"})
    surface.declare_attribute("home_city", {"value_type": "string"})
    surface.record(
        {"id": "e1", "occurred_at": "2026-05-01T09:00:00Z", "text": "Deadline 2026-07-15."},
        [candidate("mira", "passport_deadline", "2026-07-15")],
    )
    surface.record(
        {
            "id": "e2",
            "occurred_at": "2026-05-02T09:00:00Z",
            "text": "M. lives in Lisbon.",
            "subjects": ["mira-2"],
        },
        [candidate("mira-2", "home_city", "Lisbon")],
    )
    return surface


def test_refused_merges_name_their_field_and_change_nothing(
    surface: Surface, pool: ConnectionPool
) -> None:
    _world(surface)
    merged = surface.merge_subject("mira-2", into="mira")
    assert (merged.merged, merged.into, merged.versions_moved) == ("mira-2", "mira", 1)
    before = tenant_rows(pool, surface.tenant)

    refusals = []
    for subject, into in (
        ("mira", "mira"),
        ("mira", "mira-2"),
        ("mira", "not an id"),
        ("mira", ""),
        ("nobody", "mira"),
        ("mira-2", "someone"),
    ):
        with pytest.raises(Refused) as refused:
            surface.merge_subject(subject, into=into)
        refusals.append(refused.value.fault)

    assert refusals == [
        ("invalid", "into"),  # into itself
        ("conflict", "into"),  # into itself, through the merge
        ("invalid", "into"),
        ("invalid", "into"),
        ("not_found", "subject"),
        ("conflict", "subject"),  # already merged
    ]
    assert tenant_rows(pool, surface.tenant) == before


def test_a_merge_stays_within_its_tenant(surface: Surface, pool: ConnectionPool) -> None:
    other = _world(surface.other())
    _world(surface)
    other.record(
        {"id": "e3", "occurred_at": "2026-05-03T09:00:00Z", "text": "Solo's deadline."},
        [candidate("solo", "passport_deadline", "2026-07-15")],
    )
    before = tenant_rows(pool, other.tenant)

    surface.merge_subject("mira-2", into="mira")
    with pytest.raises(Refused) as unknown_here:
        surface.merge_subject("solo", into="mira")
    with pytest.raises(Refused) as merged_only_here:
        other.merge_subject("mira-3", into="mira")

    assert unknown_here.value.fault == merged_only_here.value.fault == ("not_found", "subject")
    assert tenant_rows(pool, other.tenant) == before
    assert other.fact("mira-2", "home_city").subject == "mira-2"
    with pytest.raises(Refused) as not_merged_there:
        other.fact("mira", "home_city")
    assert not_merged_there.value.code == "not_found"


def test_the_old_id_reads_as_the_survivor(surface: Surface) -> None:
    _world(surface)
    merged = surface.merge_subject("mira-2", into="mira")

    assert (merged.merged, merged.into, merged.versions_moved) == ("mira-2", "mira", 1)
    assert (merged.conflicts_moved, merged.episodes_linked) == (0, 1)
    fact = surface.fact("mira-2", "home_city")
    assert (fact.subject, fact.value) == ("mira", "Lisbon")
    assert surface.history("mira-2", "home_city") == surface.history("mira", "home_city")
    assert surface.profile("mira-2") == surface.profile("mira")
    assert surface.episode("e2").subjects == ["mira"]


def test_merges_chain_to_the_final_survivor(surface: Surface) -> None:
    _world(surface)
    surface.record(
        {"id": "e3", "occurred_at": "2026-05-03T09:00:00Z", "text": "A lives in Lisbon."},
        [candidate("a", "home_city", "Lisbon")],
    )
    surface.record(
        {"id": "e4", "occurred_at": "2026-05-04T09:00:00Z", "text": "B's deadline."},
        [candidate("b", "passport_deadline", "2026-07-15")],
    )
    surface.record(
        {"id": "e5", "occurred_at": "2026-05-05T09:00:00Z", "text": "On c.", "subjects": ["c"]}
    )

    surface.merge_subject("a", into="b")
    second = surface.merge_subject("b", into="c")
    assert (second.merged, second.into) == ("b", "c")
    # Into a merged id means into its survivor.
    surface.record(
        {"id": "e6", "occurred_at": "2026-05-06T09:00:00Z", "text": "On d.", "subjects": ["d"]}
    )
    third = surface.merge_subject("d", into="a")

    assert third.into == "c"
    for name in ("a", "b", "c", "d"):
        profile = surface.profile(name)
        assert profile.subject == "c"
        assert sorted((fact.attribute, fact.value) for fact in profile.facts) == [
            ("home_city", "Lisbon"),
            ("passport_deadline", "2026-07-15"),
        ]
    # A write naming a merged id writes the survivor's key.
    [written] = surface.apply(
        "e3", [{**candidate("a", "home_city", "Porto"), "valid_from": "2026-05-07T09:00:00Z"}]
    )
    assert written.status == "written"
    assert surface.fact("c", "home_city").value == "Porto"
