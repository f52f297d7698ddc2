"""A tenant's schema, as routing reads it, is read whole only when it changed.

A read snapshot asks for its tenant's attributes by their stamp (every column of every
declaration, hashed); a stamp seen before is answered from memory. Any change to a declaration
must be seen at the next read, and two tenants must never see each other's declarations, even
when they declare the same names at the same instant.
"""

from __future__ import annotations

import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.attributes import registry
from store.contract.facts import Attribute
from store.db.clock import ManualClock
from tests.read_helpers import ReadPath, read_path


@pytest.fixture
def reader(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    return read_path(pool, clock, embedder)


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tenants whose schema was read whole (and kept) during the test."""
    kept: list[str] = []
    real = registry._schemas.keep

    def keep(key: tuple[str, str], attributes: tuple[Attribute, ...]) -> None:
        kept.append(key[0])
        real(key, attributes)

    monkeypatch.setattr(registry._schemas, "keep", keep)
    return kept


def schema(reader: ReadPath, tenant: str | None = None) -> dict[str, str]:
    """Each attribute the tenant's snapshot routes among, with its description."""
    found = reader.store.snapshots.read(tenant or reader.tenant, lambda s: s.attributes())
    return {attribute.attribute: attribute.description for attribute in found}


def test_an_unchanged_schema_is_read_whole_once(reader: ReadPath, whole_reads: list[str]) -> None:
    reader.declare("home_city", "The city the person lives in")
    reader.declare("plan", "The subscription plan")
    first, second = schema(reader), schema(reader)
    assert (
        first
        == second
        == {
            "home_city": "The city the person lives in",
            "plan": "The subscription plan",
        }
    )
    assert whole_reads == [reader.tenant]


def test_every_change_to_a_declaration_is_seen_at_the_next_read(
    reader: ReadPath, whole_reads: list[str]
) -> None:
    assert schema(reader) == {}
    reader.declare("home_city", "The city the person lives in")
    assert schema(reader) == {"home_city": "The city the person lives in"}
    reader.declare("home_city", "Where the person lives now")  # same instant, same names
    assert schema(reader) == {"home_city": "Where the person lives now"}
    reader.declare("home_city", "Where the person lives now", aliases=["town"])
    found = reader.store.snapshots.read(reader.tenant, lambda s: s.attributes())
    assert [attribute.aliases for attribute in found] == [["town"]]
    reader.tick()
    reader.store.admin.migrate_attribute(
        reader.tenant, "home_city", {"attribute": "city", "value_type": "string"}
    )
    assert set(schema(reader)) == {"city"}
    assert len(whole_reads) == 4


def test_two_tenants_declaring_the_same_names_at_one_instant_see_their_own(
    reader: ReadPath, pool: ConnectionPool, clock: ManualClock, embedder: Embedder
) -> None:
    other = read_path(pool, clock, embedder)
    reader.declare("tier", "The loyalty tier")
    other.declare("tier", "The support tier")
    for _ in range(2):
        assert schema(reader) == {"tier": "The loyalty tier"}
        assert schema(other) == {"tier": "The support tier"}
