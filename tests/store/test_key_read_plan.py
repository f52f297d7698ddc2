"""A key's exact read is one statement that finds the subject an id names now (its survivor
when merged) and searches the key's index by that subject, whatever the statistics say."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from store.db.database import connect
from store.facts.reads import read_at

pytestmark = pytest.mark.store

TENANT = "crowded"
CROWD = 500  # other subjects holding the same attribute
DAY = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def analyzed(conninfo: str) -> str:
    """mira's key among CROWD other subjects' versions of the attribute, 'mira-old' merged into
    mira; the tables analyzed, so the planner knows the attribute alone matches many rows."""
    with connect(conninfo) as conn:
        p = {"t": TENANT, "crowd": CROWD, "day": DAY}
        conn.execute("INSERT INTO tenants (tenant_id, created_at) VALUES (%(t)s, now())", p)
        conn.execute(
            "INSERT INTO attributes (tenant_id, attribute, value_type, created_at, updated_at)"
            " VALUES (%(t)s, 'city', 'string', now(), now())",
            p,
        )
        conn.execute(
            "INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, kind, text,"
            " content_hash) VALUES (%(t)s, 'e', now(), now(), 'message', 'e', 'e')",
            p,
        )
        conn.execute(
            "INSERT INTO fact_versions (tenant_id, version_id, fact_id, subject, attribute,"
            " value, valid_from, recorded_at, source_episode_id, source_kind,"
            " evidence_verified, schema_version)"
            " SELECT %(t)s, gen_random_uuid(), gen_random_uuid(),"
            " CASE WHEN n = 0 THEN 'mira' ELSE 's-' || n END, 'city', to_jsonb('c' || n),"
            " %(day)s, %(day)s, 'e', 'message', false, 1 FROM generate_series(0, %(crowd)s) n",
            p,
        )
        conn.execute(
            "INSERT INTO subject_merges (tenant_id, merge_id, merged_subject, survivor,"
            " merged_at, versions_moved, conflicts_moved, episodes_linked)"
            " VALUES (%(t)s, gen_random_uuid(), 'mira-old', 'mira', %(day)s, 0, 0, 0)",
            p,
        )
        conn.commit()
        conn.execute("ANALYZE fact_versions, subject_merges")
    return conninfo


def _read(conninfo: str, subject: str) -> tuple[Any, list[dict[str, Any]]]:
    """The fact ``subject`` reads, and the fact_versions scans of the statement's plan."""
    plans: list[dict[str, Any]] = []

    class Explaining(psycopg.Cursor[Any]):
        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            text = query.decode() if isinstance(query, bytes) else str(query)
            with psycopg.Cursor(self.connection) as plain:
                explain = "EXPLAIN (ANALYZE, FORMAT JSON) " + text
                [[plan]] = plain.execute(explain.encode(), params).fetchall()
            plans.append(plan[0]["Plan"])
            return super().execute(query, params, **kwargs)

    with connect(conninfo) as conn:
        conn.cursor_factory = Explaining
        found = read_at(
            conn, TENANT, NOW, subject=subject, attribute="city", valid_at=NOW, known_at=NOW
        )
    [plan] = plans
    return found, [node for node in _nodes(plan) if node.get("Relation Name") == "fact_versions"]


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


@pytest.mark.parametrize("asked", ["mira", "mira-old"])
def test_a_keys_read_searches_the_key_by_the_subject_now(analyzed: str, asked: str) -> None:
    found, scans = _read(analyzed, asked)

    assert found is not None
    assert (found.subject, found.value) == ("mira", "c0")
    # One index search by tenant, subject and attribute: never every subject's version of it.
    [scan] = scans
    assert scan["Node Type"] == "Index Scan", scan
    assert "subject" in scan["Index Cond"], scan
    assert scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0) == 1, scan
