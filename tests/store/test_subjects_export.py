"""Subjects on the real database: listed by id across pages, exported whole, per tenant.

Two tenants tell the same story with their own texts and values: subjects ``mira`` and
``Ben`` hold facts, ``zoe`` is only named by an episode, and each tenant has one subject the
other lacks. Also here: the tenant's ``MemoryUpdate`` schema, its attributes as an enum.
"""

from __future__ import annotations

from uuid import uuid4

import pytest

from store.contract.facts import Fact, MemoryUpdate
from store.db.clock import ManualClock
from store.db.paging import encode_cursor
from store.errors import InvalidInput, NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record

SHARED = ["Ben", "mira", "zoe"]


def tell(store: MemoryStore, clock: ManualClock, tenant: str, *, side: str) -> None:
    """The shared story in ``tenant``, its texts and values marked with ``side``."""
    store.admin.create_tenant(tenant)
    clock.set(ts("2026-06-01T00:00:00Z"))
    declare(store, tenant, "passport_deadline", "date")
    declare(store, tenant, "tier", "string", on_equal_start="reject")
    record(store, tenant, "e1", "2026-05-01T09:00:00Z", f"{side} e1 mira", subjects=["mira"])
    record(store, tenant, "e2", "2026-05-10T09:00:00Z", f"{side} e2 mira moved it")
    record(store, tenant, "e3", "2026-05-12T09:00:00Z", f"{side} e3 ben", subjects=["Ben"])
    record(store, tenant, "e4", "2026-05-03T09:00:00Z", f"{side} e4 zoe, mira", subjects=["zoe"])
    record(store, tenant, "e5", "2026-05-04T09:00:00Z", f"{side} e5 about nobody")
    record(store, tenant, f"only-{side}", "2026-05-05T09:00:00Z", side, subjects=[f"only-{side}"])
    deadline = "2031-01-11" if side == "alpha" else "2041-04-14"
    moved = "2032-02-12" if side == "alpha" else "2042-05-15"
    clock.set(ts("2026-06-01T01:00:00Z"))
    assert assert_value(store, tenant, "e1", deadline).status == "written"
    assert assert_value(store, tenant, "e1", f"gold-{side}", attribute="tier").status == "written"
    assert assert_value(store, tenant, "e3", "2030-01-01", subject="Ben").status == "written"
    clock.set(ts("2026-06-01T02:00:00Z"))
    assert assert_value(store, tenant, "e2", moved).status == "written"
    # Same start as e1's tier: under "reject" a conflict, logged against mira.
    challenged = assert_value(
        store, tenant, "e2", f"silver-{side}", "2026-05-01T09:00:00Z", attribute="tier"
    )
    assert challenged.status == "conflict"
    # e4 names zoe and now mira too (a candidate citing it names her); e5 names nobody.
    clock.set(ts("2026-06-01T03:00:00Z"))
    store.facts.expire(tenant, "mira", "tier", at="2026-05-20T00:00:00Z", source_episode_id="e4")


@pytest.fixture
def pair(store: MemoryStore, clock: ManualClock) -> tuple[str, str]:
    """Tenants alpha and bravo holding the same subject names and episode ids."""
    suffix = uuid4().hex[:8]
    alpha, bravo = f"alpha-{suffix}", f"bravo-{suffix}"
    tell(store, clock, alpha, side="alpha")
    tell(store, clock, bravo, side="bravo")
    clock.set(ts("2026-06-02T00:00:00Z"))
    return alpha, bravo


def all_pages(store: MemoryStore, tenant: str, *, limit: int) -> list[list[str]]:
    """Every page of the tenant's subjects, following cursors to the end."""
    pages, cursor = [], None
    while True:
        page = store.subjects.list(tenant, limit=limit, cursor=cursor)
        pages.append(page.subjects)
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


def test_subjects_page_by_id_in_byte_order_and_each_tenant_sees_its_own(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, bravo = pair
    # Byte order: upper case before lower case, whatever the database's locale says.
    assert all_pages(store, alpha, limit=2) == [["Ben", "mira"], ["only-alpha", "zoe"]]
    assert all_pages(store, bravo, limit=3) == [["Ben", "mira", "only-bravo"], ["zoe"]]
    assert all_pages(store, alpha, limit=4) == [["Ben", "mira", "only-alpha", "zoe"]]
    whole = store.subjects.list(bravo)
    assert (whole.subjects, whole.next_cursor) == (["Ben", "mira", "only-bravo", "zoe"], None)


def test_a_cursor_resumes_after_its_subject_even_in_another_tenant(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, bravo = pair
    first = store.subjects.list(alpha, limit=2)
    assert first.next_cursor is not None
    # A cursor holds a position, not a tenant's data: bravo's list resumes at the same place.
    assert store.subjects.list(bravo, cursor=first.next_cursor).subjects == ["only-bravo", "zoe"]


def test_a_tenant_without_subjects_lists_none(store: MemoryStore, tenant: str) -> None:
    empty = store.subjects.list(tenant)
    assert (empty.subjects, empty.next_cursor) == ([], None)


@pytest.mark.parametrize(
    ("cursor", "limit", "field"),
    [
        ("not-a-cursor", 10, "cursor"),
        (encode_cursor(["2026-06-01T00:00:00Z", str(uuid4())]), 10, "cursor"),  # a conflicts one
        (encode_cursor([7]), 10, "cursor"),
        (None, 0, "limit"),
        (None, 501, "limit"),
    ],
)
def test_a_foreign_cursor_or_a_bad_limit_is_invalid(
    store: MemoryStore, tenant: str, cursor: str | None, limit: int, field: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        store.subjects.list(tenant, limit=limit, cursor=cursor)
    assert raised.value.field == field


def test_an_export_holds_the_profile_every_version_the_linked_episodes_and_conflicts(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, _ = pair
    exported = store.subjects.export(alpha, "mira")
    history: list[Fact] = [
        *store.facts.history(alpha, "mira", "passport_deadline"),
        *store.facts.history(alpha, "mira", "tier"),
    ]
    assert exported.subject == "mira"
    assert exported.exported_at == ts("2026-06-02T00:00:00Z")
    assert exported.facts == store.subjects.profile(alpha, "mira").facts
    assert [(f.attribute, f.value) for f in exported.facts] == [("passport_deadline", "2032-02-12")]
    assert exported.versions == history
    assert {f.status for f in exported.versions} == {"current", "past", "retired"}
    assert [(f.attribute, f.value, f.status) for f in exported.versions] == [
        ("passport_deadline", "2031-01-11", "retired"),
        ("passport_deadline", "2031-01-11", "past"),
        ("passport_deadline", "2032-02-12", "current"),
        ("tier", "gold-alpha", "retired"),
        ("tier", "gold-alpha", "past"),
    ]
    # Ordered by occurred_at: e1, e4 (the expiry's source), e2; not e3, e5 or only-alpha.
    assert [(e.id, e.text) for e in exported.episodes] == [
        ("e1", "alpha e1 mira"),
        ("e4", "alpha e4 zoe, mira"),
        ("e2", "alpha e2 mira moved it"),
    ]
    assert exported.conflicts == store.conflicts.list(alpha, status=None, subject="mira").conflicts
    assert [(c.attribute, c.challenger.value) for c in exported.conflicts] == [
        ("tier", "silver-alpha")
    ]


def test_a_subject_only_named_by_an_episode_exports_that_episode_alone(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, _ = pair
    exported = store.subjects.export(alpha, "zoe")
    assert (exported.facts, exported.versions, exported.conflicts) == ([], [], [])
    assert [e.id for e in exported.episodes] == ["e4"]


def test_an_export_never_shows_or_reveals_another_tenants_data(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, bravo = pair
    text = store.subjects.export(alpha, "mira").model_dump_json()
    assert "alpha" in text
    assert "bravo" not in text
    assert "2041-04-14" not in text
    # bravo's own subject does not exist for alpha, the same answer as a name nobody holds.
    for subject in ("only-bravo", "nobody"):
        with pytest.raises(NotFound) as raised:
            store.subjects.export(alpha, subject)
        assert (raised.value.field, raised.value.detail) == (
            "subject",
            f"subject {subject!r} is not known",
        )
    assert store.subjects.export(bravo, "only-bravo").episodes[0].text == "bravo"


def test_an_erased_subject_is_neither_listed_nor_exported(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, bravo = pair
    store.erasure.erase_subject(alpha, "mira")
    # e4 concerned mira too and went with her; it was all alpha held about zoe.
    assert store.subjects.list(alpha).subjects == ["Ben", "only-alpha"]
    with pytest.raises(NotFound):
        store.subjects.export(alpha, "mira")
    assert store.subjects.list(bravo).subjects == ["Ben", "mira", "only-bravo", "zoe"]
    assert [f.value for f in store.subjects.export(bravo, "mira").facts] == ["2042-05-15"]


def test_the_memory_update_schema_limits_attribute_to_the_tenants_names(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "passport_deadline", "date", aliases=["passport expiry"])
    declare(store, tenant, "Tier", "enum", enum_values=["gold", "silver"])
    declare(store, tenant, "home_city", "string")
    store.admin.create_tenant(f"{tenant}-other")
    declare(store, f"{tenant}-other", "shoe_size", "integer")

    schema = store.admin.memory_update_schema(tenant)
    expected = MemoryUpdate.model_json_schema()
    # Aliases route questions; the write path takes an attribute by name only.
    expected["properties"]["attribute"]["enum"] = ["Tier", "home_city", "passport_deadline"]
    assert schema == expected
    assert store.admin.memory_update_schema(f"{tenant}-other")["properties"]["attribute"][
        "enum"
    ] == ["shoe_size"]


def test_with_no_attribute_declared_the_enum_admits_nothing(
    store: MemoryStore, tenant: str
) -> None:
    assert store.admin.memory_update_schema(tenant)["properties"]["attribute"]["enum"] == []


def test_erasure_removes_the_text_of_every_episode_export_shows(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    """Export and erasure find a subject's episodes by one condition: nothing shown survives."""
    alpha, bravo = pair
    shown = store.subjects.export(alpha, "mira")
    assert {episode.id for episode in shown.episodes} >= {"e1", "e2", "e4"}

    store.erasure.erase_subject(alpha, "mira")

    for episode in shown.episodes:
        try:
            left = store.episodes.get(alpha, episode.id)
        except NotFound:
            continue
        assert (left.text, left.erased_at is not None) == (None, True), episode.id
    with pytest.raises(NotFound):
        store.subjects.export(alpha, "mira")
    assert {e.id for e in store.subjects.export(bravo, "mira").episodes} == {
        e.id for e in shown.episodes
    }


def test_an_export_holds_every_outcome_of_its_episodes(
    store: MemoryStore, pair: tuple[str, str]
) -> None:
    alpha, _ = pair
    first = store.outcomes.record(alpha, "e2", {"status": "failed", "verified": True})
    second = store.outcomes.record(alpha, "e2", {"status": "succeeded", "verified": True})
    store.outcomes.record(alpha, "e3", {"status": "partial"})  # an episode not about mira
    exported = store.subjects.export(alpha, "mira")
    assert exported.outcomes == [first, second]
    assert [(o.episode_id, o.revision, o.status) for o in exported.outcomes] == [
        ("e2", 1, "failed"),
        ("e2", 2, "succeeded"),
    ]
