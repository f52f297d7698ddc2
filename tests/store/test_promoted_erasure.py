"""A fact promoted from several weak signals is retracted only when its last source is erased.

Two independent episodes say mira often asks for CSV; the second completes the quorum, so the
promoted fact cites it and names the first as supporting. Erasing either one leaves the fact
standing on the other (citing the erased one's content-free stub when that was its source);
erasing the other as well retracts it.
"""

from __future__ import annotations

import pytest

from store.db.clock import ManualClock
from store.errors import NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record

AT = "2026-06-01T00:00:00Z"


def _promoted(store: MemoryStore, tenant: str) -> None:
    """``export_format`` csv from w1 (buffered) and w2 (promoted: its source, w1 supporting)."""
    declare(store, tenant, "export_format", "string")
    for episode_id in ("w1", "w2"):
        record(store, tenant, episode_id, AT, text=f"{episode_id}: mira often asks for CSV")
    first = assert_value(store, tenant, "w1", "csv", AT, attribute="export_format", strength="weak")
    second = assert_value(
        store, tenant, "w2", "csv", AT, attribute="export_format", strength="weak"
    )
    assert (first.status, second.status) == ("buffered", "written")
    assert second.supporting_episode_ids == ["w1"]


@pytest.mark.parametrize("first", ["w2", "w1"], ids=["source first", "supporting first"])
def test_a_promoted_fact_stands_until_its_last_source_is_erased(
    store: MemoryStore, clock: ManualClock, tenant: str, first: str
) -> None:
    clock.set(ts(AT))
    _promoted(store, tenant)
    last = {"w1": "w2", "w2": "w1"}[first]

    erased = store.erasure.erase_episode(tenant, first)
    assert erased.facts_retracted == 0
    standing = store.facts.current(tenant, "mira", "export_format")
    assert (standing.value, standing.source_episode_id) == ("csv", "w2")
    source = store.episodes.get(tenant, "w2")
    assert (source.text is None) == (first == "w2")  # an erased source is a stub, still cited

    again = store.erasure.erase_episode(tenant, last)
    assert again.facts_retracted == 1
    with pytest.raises(NotFound):
        store.facts.current(tenant, "mira", "export_format")
    assert store.facts.history(tenant, "mira", "export_format") == []
