"""One rule says which episodes a legal hold keeps, and purge and erasure both follow it.

An episode is linked to a subject when it names the subject, or sources one of its fact
versions, an expiry that ended one of them, a conflict's challenger on its keys, or a weak
signal about it. For
each kind of link alone, an episode linked to a held subject survives the purge whole and
erasing it is refused; erasing another subject whose episode it is is refused too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from store.db.clock import ManualClock
from store.errors import LegalHold
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record

T0 = ts("2026-06-01T00:00:00Z")
AT = "2026-06-01T00:00:00Z"
KEEP_RECEIPTS = timedelta(days=90)


def _named(store: MemoryStore, tenant: str) -> None:
    record(store, tenant, "linked", AT, retention_class="ephemeral", subjects=["mira", "bob"])


def _source(store: MemoryStore, tenant: str) -> None:
    record(store, tenant, "linked", AT, retention_class="ephemeral", subjects=["bob"])
    assert assert_value(store, tenant, "linked", "grim", AT, attribute="mood").status == "written"


def _expiry(store: MemoryStore, tenant: str) -> None:
    # An expiry that ended nothing links nothing, until a retraction's replay makes it end a
    # value: the episode is then linked to mira by it alone (her name was never added to it).
    for episode_id in ("e0", "x", "b"):
        record(store, tenant, episode_id, AT)
    record(store, tenant, "linked", AT, retention_class="ephemeral", subjects=["bob"])
    assert_value(store, tenant, "e0", "amber", AT, attribute="mood")
    store.facts.expire(tenant, "mira", "mood", at="2026-06-01T06:00:00Z", source_episode_id="x")
    assert_value(store, tenant, "b", "blue", "2026-06-01T03:00:00Z", attribute="mood")
    late = "2026-06-01T08:00:00Z"
    assert store.facts.expire(
        tenant, "mira", "mood", at=late, source_episode_id="linked"
    ).status == ("unchanged")
    store.facts.retract(tenant, "mira", "mood", valid_from=AT)  # blue now runs to 08:00
    assert store.facts.at(tenant, "mira", "mood", valid_at="2026-06-01T07:00:00Z").value == "blue"


def _conflict(store: MemoryStore, tenant: str) -> None:
    record(store, tenant, "e0", AT)
    assert_value(store, tenant, "e0", "grim", AT, attribute="mood")
    record(store, tenant, "linked", AT, retention_class="ephemeral", subjects=["bob"])
    assert assert_value(store, tenant, "linked", "glad", AT, attribute="mood").status == "conflict"


def _weak_signal(store: MemoryStore, tenant: str) -> None:
    record(store, tenant, "linked", AT, retention_class="ephemeral", subjects=["bob"])
    buffered = assert_value(store, tenant, "linked", "calm", AT, attribute="mood", strength="weak")
    assert buffered.status == "buffered"


LINKS: dict[str, Callable[[MemoryStore, str], None]] = {
    "named": _named,
    "source": _source,
    "expiry": _expiry,
    "conflict": _conflict,
    "weak signal": _weak_signal,
}


@pytest.mark.parametrize("link", sorted(LINKS))
def test_an_episode_linked_to_a_held_subject_is_kept_by_purge_and_erasure(
    store: MemoryStore, clock: ManualClock, tenant: str, link: str
) -> None:
    clock.set(T0)
    declare(store, tenant, "mood", "string", weak_window_days=30)
    LINKS[link](store, tenant)
    store.retention.place_hold(tenant, "mira")
    clock.set(T0 + timedelta(days=3))  # past a day of ``ephemeral``

    with pytest.raises(LegalHold) as refused:
        store.erasure.erase_episode(tenant, "linked")
    assert (refused.value.code, refused.value.field) == ("legal_hold", "episode_id")
    assert "'mira'" in refused.value.detail
    with pytest.raises(LegalHold) as other:
        store.erasure.erase_subject(tenant, "bob")  # the episode concerns bob too
    assert (other.value.code, other.value.field) == ("legal_hold", "subject")
    store.retention.purge_tenant(tenant, receipt_retention=KEEP_RECEIPTS)
    kept = store.episodes.get(tenant, "linked")
    assert (kept.text, kept.purged_at, kept.erased_at) == ("an episode", None, None)
