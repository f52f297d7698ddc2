"""Subjects found by id or name, with their keys, open conflicts and last change, a page at a
time by id or by last change; and the facts an episode is the source of. The story is
``test_subjects_export``'s, told in two tenants."""

from __future__ import annotations

from uuid import uuid4

import pytest

from store.db.clock import ManualClock
from store.db.paging import encode_cursor
from store.errors import InvalidInput
from store.service import MemoryStore
from tests.conftest import ts
from tests.store.test_subjects_export import tell


@pytest.fixture
def pair(store: MemoryStore, clock: ManualClock) -> tuple[str, str]:
    """Tenants alpha and bravo holding the same subject names; Ben is named Benedict Okafor
    in alpha only."""
    suffix = uuid4().hex[:8]
    alpha, bravo = f"alpha-{suffix}", f"bravo-{suffix}"
    tell(store, clock, alpha, side="alpha")
    tell(store, clock, bravo, side="bravo")
    clock.set(ts("2026-06-02T00:00:00Z"))
    store.subjects.declare_names(alpha, "Ben", {"display_name": "Benedict Okafor"})
    return alpha, bravo


def test_each_subject_has_its_keys_open_conflicts_and_last_change(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, _ = pair
    found = store.subjects.overview(alpha)
    assert found.next_cursor is None
    assert [(s.subject, s.keys, s.open_conflicts, s.last_change) for s in found.subjects] == [
        # Ben: one deadline written at 01:00.
        ("Ben", 1, 0, ts("2026-06-01T01:00:00Z")),
        # mira: a deadline and a tier, the tier's conflict still open, the tier ended at 03:00.
        ("mira", 2, 1, ts("2026-06-01T03:00:00Z")),
        # Named only by episodes, recorded at midnight.
        ("only-alpha", 0, 0, ts("2026-06-01T00:00:00Z")),
        ("zoe", 0, 0, ts("2026-06-01T00:00:00Z")),
    ]


def test_by_last_change_newest_first_across_pages(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, _ = pair
    pages, cursor = [], None
    while True:
        page = store.subjects.overview(alpha, order="changed", limit=3, cursor=cursor)
        pages.append([summary.subject for summary in page.subjects])
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    # Equal last changes (only-alpha, zoe) in byte order; the page boundary falls between them.
    assert pages == [["mira", "Ben", "only-alpha"], ["zoe"]]


def test_match_finds_by_id_or_by_name_in_the_tenant_only(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, bravo = pair

    def found(tenant: str, match: str) -> list[str]:
        listed = store.subjects.list(tenant, match=match).subjects
        summaries = store.subjects.overview(tenant, match=match).subjects
        assert [summary.subject for summary in summaries] == listed
        return listed

    assert found(alpha, "MIR") == ["mira"]
    assert found(alpha, "only-") == ["only-alpha"]
    # A declared name, folded as names are: case and accents aside.
    assert found(alpha, "okafór") == ["Ben"]
    assert found(bravo, "okafor") == []
    assert found(alpha, "nobody") == []
    assert found(alpha, "  ") == ["Ben", "mira", "only-alpha", "zoe"]


def test_a_cursor_of_another_order_is_refused(store: MemoryStore, pair: tuple[str, str]) -> None:
    alpha, _ = pair
    by_id = store.subjects.overview(alpha, limit=1).next_cursor
    by_change = store.subjects.overview(alpha, limit=1, order="changed").next_cursor
    assert by_id is not None
    assert by_change is not None
    for cursor, order in ((by_id, "changed"), (by_change, "id"), (encode_cursor([1, 2]), "id")):
        with pytest.raises(InvalidInput) as refused:
            store.subjects.overview(alpha, cursor=cursor, order=order)  # type: ignore[arg-type]
        assert refused.value.field == "cursor"
    with pytest.raises(InvalidInput) as bad_order:
        store.subjects.overview(alpha, order="name")  # type: ignore[arg-type]
    assert bad_order.value.field == "order"


def test_the_facts_an_episode_sourced_in_its_tenant(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, bravo = pair
    sourced = store.facts.sourced(alpha, "e1")
    # Each value e1 gave, as first believed (open-ended) and as now (ended by e2's later
    # deadline, and by the tier's expiry): every version believed, the retired one first.
    assert [(f.attribute, f.value, f.valid_to, f.retired_at) for f in sourced] == [
        ("passport_deadline", "2031-01-11", None, ts("2026-06-01T02:00:00Z")),
        ("passport_deadline", "2031-01-11", ts("2026-05-10T09:00:00Z"), None),
        ("tier", "gold-alpha", None, ts("2026-06-01T03:00:00Z")),
        ("tier", "gold-alpha", ts("2026-05-20T00:00:00Z"), None),
    ]
    assert {f.subject for f in sourced} == {"mira"}
    assert [f.value for f in store.facts.sourced(bravo, "e3")] == ["2030-01-01"]
    assert store.facts.sourced(alpha, "e5") == []
    assert store.facts.sourced(alpha, "no-such-episode") == []
