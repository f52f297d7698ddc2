"""The bulk import: the same store as one call at a time, all or nothing, tenant by tenant."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

import pytest
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.episodes.bulk import BadLine
from store.errors import Conflict, NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import owner_connection

_numbers = itertools.count(1)


def candidate(subject: str, attribute: str, value: str | None, **extra: Any) -> dict[str, Any]:
    """A MemoryUpdate as an import line carries it."""
    return {"evidence": "", "subject": subject, "attribute": attribute, "change": "update"} | {
        "value": value,
        **extra,
    }


def episode_line(
    episode_id: str, occurred_at: str, *updates: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "id": episode_id,
        "occurred_at": occurred_at,
        "text": f"Episode {episode_id}: the deadline is 2026-07-15.",
        "updates": list(updates),
        **extra,
    }


# Every rule of the write path at least once: the three assertion rules, same-value repeats,
# a number that comes back from jsonb as another number, refused and ignored candidates, an
# equal start under each policy outcome (conflict, outranked, replaced), two candidates of
# one key in one call, and an episode recorded twice.
HISTORY = [
    episode_line(
        "e1",
        "2026-06-01T09:00:00Z",
        candidate("mira", "deadline", "2026-07-15", evidence="the deadline is 2026-07-15"),
        candidate("mira", "tier", "gold"),
        candidate("mira", "balance", "1e20"),
        candidate("kai", "tier", "bronze"),
    ),
    episode_line(
        "e2",
        "2026-06-03T10:00:00Z",
        candidate("mira", "deadline", "2026-06-30"),
        candidate("mira", "tier", "gold"),
        candidate("mira", "balance", "1e20"),
    ),
    episode_line(
        "e0",
        "2026-05-30T08:00:00Z",
        candidate("mira", "deadline", "2026-08-01"),
        candidate("mira", "nope", "x"),
        candidate("mira", "balance", "a lot"),
        candidate("mira", "deadline", None, change="no_change"),
        {"subject": "mira"},
    ),
    episode_line(
        "e3",
        "2026-06-03T10:00:00Z",
        candidate("mira", "deadline", "2026-09-09"),
        candidate("mira", "tier", "silver", valid_from="2026-06-01T09:00:00Z"),
        kind="tool_result",
    ),
    episode_line(
        "e4",
        "2026-06-01T09:00:00Z",
        candidate("kai", "tier", "platinum"),
        kind="user_confirmation",
    ),
    episode_line(
        "e5",
        "2026-06-05T00:00:00Z",
        candidate("zed", "balance", "10"),
        candidate("zed", "balance", "20", valid_from="2026-06-06T00:00:00Z"),
        candidate("zed", "balance", "15", valid_from="2026-06-04T00:00:00Z"),
    ),
    episode_line("e1", "2026-06-01T09:00:00Z", candidate("lee", "deadline", "2026-02-02")),
]


@pytest.fixture
def clock() -> ManualClock:
    """One system time for both ways of writing the history."""
    return ManualClock(ts("2026-06-10T00:00:00Z"))


def new_tenant(store: MemoryStore, prefix: str) -> str:
    """A tenant with the history's attributes declared."""
    tenant = f"{prefix}-{next(_numbers)}"
    store.admin.create_tenant(tenant)
    store.admin.declare_attribute(tenant, "deadline", {"value_type": "date"})
    store.admin.declare_attribute(
        tenant, "tier", {"value_type": "string", "on_equal_start": "source_precedence"}
    )
    store.admin.declare_attribute(tenant, "balance", {"value_type": "number"})
    return tenant


def import_text(tenant: str, history: list[dict[str, Any]]) -> list[str]:
    """The history as the lines of an import file of ``tenant``."""
    return [json.dumps({"tenant": tenant, **line}) for line in history]


def stored_rows(pool: ConnectionPool, tenant: str) -> dict[str, list[dict[str, Any]]]:
    """Every row the tenant holds, fact and expiry ids replaced by a label of where each came
    from."""
    with owner_connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        params = {"tenant_id": tenant}
        cur.execute(
            "SELECT * FROM fact_versions WHERE tenant_id = %(tenant_id)s"
            " ORDER BY subject, attribute, write_order",
            params,
        )
        versions = cur.fetchall()
        label: dict[Any, Any] = {}
        for row in versions:  # a fact's first version names it
            label.setdefault(row["fact_id"], (row["source_episode_id"], str(row["valid_from"])))
        cur.execute(
            "SELECT * FROM expiries WHERE tenant_id = %(tenant_id)s ORDER BY write_order", params
        )
        expiries = cur.fetchall()
        for row in expiries:  # an expiry by its source and instant
            label[row["expiry_id"]] = ("expiry", row["source_episode_id"], str(row["at"]))
            for name in ("tenant_id", "expiry_id", "write_order"):
                del row[name]
        for row in versions:
            for name in ("fact_id", "supersedes", "ended_by"):
                row[name] = label.get(row[name], row[name])
            for name in ("tenant_id", "version_id", "write_order"):
                del row[name]
        cur.execute("SELECT * FROM conflicts WHERE tenant_id = %(tenant_id)s", params)
        conflicts = cur.fetchall()
        for row in conflicts:
            for name in ("incumbent_fact_id", "resolved_fact_id"):
                row[name] = label.get(row[name], row[name])
            del row["tenant_id"], row["conflict_id"]
        cur.execute("SELECT * FROM episodes WHERE tenant_id = %(tenant_id)s ORDER BY id", params)
        episodes = [{**row, "tenant_id": None} for row in cur.fetchall()]
    conflicts.sort(key=repr)
    return {
        "versions": versions,
        "conflicts": conflicts,
        "episodes": episodes,
        "expiries": expiries,
    }


def one_call_at_a_time(
    store: MemoryStore, tenant: str, history: list[dict[str, Any]] = HISTORY
) -> list[tuple[int, Any]]:
    """Each line's episode recorded, then its candidates applied: one call each, in order."""
    results = []
    for number, line in enumerate(history, start=1):
        episode = {name: value for name, value in line.items() if name != "updates"}
        store.episodes.record(tenant, episode)
        for result in store.facts.apply_candidates(tenant, line["id"], line["updates"]):
            results.append((number, result))
    return results


def test_an_import_stores_what_one_call_at_a_time_stores(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    one_by_one, imported = new_tenant(store, "calls"), new_tenant(store, "import")
    results = one_call_at_a_time(store, one_by_one)
    outcome = store.episodes.import_lines(import_text(imported, HISTORY))

    assert stored_rows(pool, imported) == stored_rows(pool, one_by_one)
    assert outcome.lines == len(HISTORY)
    assert outcome.episodes_recorded == 6
    assert outcome.candidates == dict(sorted(Counter(r.status for _, r in results).items()))
    refused = [
        {"line": line, **result.model_dump(include={"index", "status", "reason", "field"})}
        for line, result in results
        if result.status in {"invalid", "conflict"}
    ]
    assert [item.model_dump() for item in outcome.refused] == refused
    assert set(outcome.candidates) == {"conflict", "ignored", "invalid", "unchanged", "written"}


def test_an_import_is_idempotent_and_needs_no_model_to_write_facts(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    tenant = new_tenant(store, "again")
    first = store.episodes.import_lines(import_text(tenant, HISTORY))
    before = stored_rows(pool, tenant)
    again = store.episodes.import_lines(import_text(tenant, HISTORY))
    assert first.episodes_recorded == 6
    assert again.episodes_recorded == 0
    assert again.candidates.get("written", 0) == 0
    assert stored_rows(pool, tenant)["versions"] == before["versions"]
    with owner_connection(pool) as conn:
        vectors = conn.execute(
            "SELECT count(*) FROM episode_vectors WHERE tenant_id = %s", [tenant]
        ).fetchone()
    assert vectors == (0,)  # the store has no model: facts were written all the same


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ("not json", None),
        ("[1, 2]", None),
        ('{"occurred_at": "2026-06-01T00:00:00Z", "text": "no tenant"}', "tenant"),
        ('{"tenant": "{t}", "occurred_at": "2026-06-01T00:00:00", "text": "naive"}', "occurred_at"),
        ('{"tenant": "{t}", "occurred_at": "2026-06-01T00:00:00Z", "text": ""}', "text"),
        ('{"tenant": "{t}", "occurred_at": "2026-06-01T00:00:00Z", "text": "x", "u": 1}', "u"),
        (
            '{"tenant": "{t}", "occurred_at": "2026-06-01T00:00:00Z", "text": "x", "updates": {}}',
            "updates",
        ),
    ],
)
def test_a_bad_line_is_reported_by_number_and_writes_nothing(
    store: MemoryStore, pool: ConnectionPool, bad: str, field: str | None
) -> None:
    tenant = new_tenant(store, "bad")
    lines = [*import_text(tenant, HISTORY[:2]), "", bad.replace("{t}", tenant)]
    with pytest.raises(BadLine) as raised:
        store.episodes.import_lines(lines)
    assert (raised.value.line, raised.value.field) == (4, field)
    assert raised.value.detail.startswith("line 4: ")
    assert stored_rows(pool, tenant) == {
        "versions": [],
        "conflicts": [],
        "episodes": [],
        "expiries": [],
    }


def test_a_refused_episode_or_tenant_names_its_line_and_writes_nothing(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    tenant = new_tenant(store, "refused")
    store.episodes.record(tenant, {"id": "e2", "occurred_at": "2026-06-03T10:00:00Z", "text": "?"})
    before = stored_rows(pool, tenant)
    with pytest.raises(Conflict, match=r"^line 2: episode 'e2' exists with different content"):
        store.episodes.import_lines(import_text(tenant, HISTORY))
    with pytest.raises(NotFound, match=r"^line 3: tenant 'nobody-here' does not exist"):
        store.episodes.import_lines(
            import_text(tenant, HISTORY[2:4]) + import_text("nobody-here", HISTORY[:1])
        )
    assert stored_rows(pool, tenant) == before


def test_each_line_writes_only_into_its_own_tenant(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    acme, globex = new_tenant(store, "acme"), new_tenant(store, "globex")
    mine = episode_line("e1", "2026-06-01T09:00:00Z", candidate("mira", "deadline", "2026-07-15"))
    theirs = {
        **episode_line("e1", "2026-06-02T09:00:00Z", candidate("mira", "deadline", "2026-12-24"))
    }
    theirs["text"] = "Globex's own e1."
    outcome = store.episodes.import_lines(import_text(acme, [mine]) + import_text(globex, [theirs]))
    assert outcome.episodes_recorded == 2
    assert store.facts.current(acme, "mira", "deadline").value == "2026-07-15"
    assert store.facts.current(globex, "mira", "deadline").value == "2026-12-24"
    assert store.episodes.get(globex, "e1").text == "Globex's own e1."
    assert store.episodes.get(acme, "e1").text == mine["text"]
    assert [r["value"] for r in stored_rows(pool, acme)["versions"]] == ["2026-07-15"]
