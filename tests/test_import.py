"""The bulk import: the same store as one call at a time, all or nothing, tenant by tenant."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from retrieval.embeddings import Embedder
from server.cli import app
from store.bulk import BadLine
from store.clock import ManualClock
from store.errors import Conflict, NotFound
from store.service import MemoryStore
from tests.conftest import ts

_numbers = itertools.count(1)


def _update(subject: str, attribute: str, value: str | None, **extra: Any) -> dict[str, Any]:
    return {"evidence": "", "subject": subject, "attribute": attribute, "change": "update"} | {
        "value": value,
        **extra,
    }


def _line(
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
    _line(
        "e1",
        "2026-06-01T09:00:00Z",
        _update("mira", "deadline", "2026-07-15", evidence="the deadline is 2026-07-15"),
        _update("mira", "tier", "gold"),
        _update("mira", "balance", "1e20"),
        _update("kai", "tier", "bronze"),
    ),
    _line(
        "e2",
        "2026-06-03T10:00:00Z",
        _update("mira", "deadline", "2026-06-30"),
        _update("mira", "tier", "gold"),
        _update("mira", "balance", "1e20"),
    ),
    _line(
        "e0",
        "2026-05-30T08:00:00Z",
        _update("mira", "deadline", "2026-08-01"),
        _update("mira", "nope", "x"),
        _update("mira", "balance", "a lot"),
        _update("mira", "deadline", None, change="no_change"),
        {"subject": "mira"},
    ),
    _line(
        "e3",
        "2026-06-03T10:00:00Z",
        _update("mira", "deadline", "2026-09-09"),
        _update("mira", "tier", "silver", valid_from="2026-06-01T09:00:00Z"),
        kind="tool_result",
    ),
    _line(
        "e4",
        "2026-06-01T09:00:00Z",
        _update("kai", "tier", "platinum"),
        kind="user_confirmation",
    ),
    _line(
        "e5",
        "2026-06-05T00:00:00Z",
        _update("zed", "balance", "10"),
        _update("zed", "balance", "20", valid_from="2026-06-06T00:00:00Z"),
        _update("zed", "balance", "15", valid_from="2026-06-04T00:00:00Z"),
    ),
    _line("e1", "2026-06-01T09:00:00Z", _update("lee", "deadline", "2026-02-02")),
]


@pytest.fixture
def clock() -> ManualClock:
    """One system time for both ways of writing the history."""
    return ManualClock(ts("2026-06-10T00:00:00Z"))


def _tenant(store: MemoryStore, prefix: str) -> str:
    tenant = f"{prefix}-{next(_numbers)}"
    store.admin.create_tenant(tenant)
    store.admin.declare_attribute(tenant, "deadline", {"value_type": "date"})
    store.admin.declare_attribute(
        tenant, "tier", {"value_type": "string", "on_equal_start": "source_precedence"}
    )
    store.admin.declare_attribute(tenant, "balance", {"value_type": "number"})
    return tenant


def _lines(tenant: str, history: list[dict[str, Any]]) -> list[str]:
    return [json.dumps({"tenant": tenant, **line}) for line in history]


def _stored(pool: ConnectionPool, tenant: str) -> dict[str, list[dict[str, Any]]]:
    """Every row the tenant holds, fact ids replaced by a label of where each fact came from."""
    with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
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
    return {"versions": versions, "conflicts": conflicts, "episodes": episodes}


def _one_call_at_a_time(store: MemoryStore, tenant: str) -> list[tuple[int, Any]]:
    results = []
    for number, line in enumerate(HISTORY, start=1):
        episode = {name: value for name, value in line.items() if name != "updates"}
        store.episodes.record(tenant, episode)
        for result in store.facts.apply_updates(tenant, line["id"], line["updates"]):
            results.append((number, result))
    return results


def test_an_import_stores_what_one_call_at_a_time_stores(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    one_by_one, imported = _tenant(store, "calls"), _tenant(store, "import")
    results = _one_call_at_a_time(store, one_by_one)
    outcome = store.episodes.import_lines(_lines(imported, HISTORY))

    assert _stored(pool, imported) == _stored(pool, one_by_one)
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
    tenant = _tenant(store, "again")
    first = store.episodes.import_lines(_lines(tenant, HISTORY))
    before = _stored(pool, tenant)
    again = store.episodes.import_lines(_lines(tenant, HISTORY))
    assert first.episodes_recorded == 6
    assert again.episodes_recorded == 0
    assert again.candidates.get("written", 0) == 0
    assert _stored(pool, tenant)["versions"] == before["versions"]
    with pool.connection() as conn:
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
    tenant = _tenant(store, "bad")
    lines = [*_lines(tenant, HISTORY[:2]), "", bad.replace("{t}", tenant)]
    with pytest.raises(BadLine) as raised:
        store.episodes.import_lines(lines)
    assert (raised.value.line, raised.value.field) == (4, field)
    assert raised.value.detail.startswith("line 4: ")
    assert _stored(pool, tenant) == {"versions": [], "conflicts": [], "episodes": []}


def test_a_refused_episode_or_tenant_names_its_line_and_writes_nothing(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    tenant = _tenant(store, "refused")
    store.episodes.record(tenant, {"id": "e2", "occurred_at": "2026-06-03T10:00:00Z", "text": "?"})
    before = _stored(pool, tenant)
    with pytest.raises(Conflict, match=r"^line 2: episode 'e2' exists with different content"):
        store.episodes.import_lines(_lines(tenant, HISTORY))
    with pytest.raises(NotFound, match=r"^line 3: tenant 'nobody-here' does not exist"):
        store.episodes.import_lines(
            _lines(tenant, HISTORY[2:4]) + _lines("nobody-here", HISTORY[:1])
        )
    assert _stored(pool, tenant) == before


def test_each_line_writes_only_into_its_own_tenant(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    acme, globex = _tenant(store, "acme"), _tenant(store, "globex")
    mine = _line("e1", "2026-06-01T09:00:00Z", _update("mira", "deadline", "2026-07-15"))
    theirs = {**_line("e1", "2026-06-02T09:00:00Z", _update("mira", "deadline", "2026-12-24"))}
    theirs["text"] = "Globex's own e1."
    outcome = store.episodes.import_lines(_lines(acme, [mine]) + _lines(globex, [theirs]))
    assert outcome.episodes_recorded == 2
    assert store.facts.current(acme, "mira", "deadline").value == "2026-07-15"
    assert store.facts.current(globex, "mira", "deadline").value == "2026-12-24"
    assert store.episodes.get(globex, "e1").text == "Globex's own e1."
    assert store.episodes.get(acme, "e1").text == mine["text"]
    assert [r["value"] for r in _stored(pool, acme)["versions"]] == ["2026-07-15"]


def test_embedding_after_the_import_gives_each_new_episode_one_vector(
    pool: ConnectionPool, clock: ManualClock, embedder: Embedder
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=embedder)
    tenant = _tenant(store, "vectors")
    outcome = store.episodes.import_lines(_lines(tenant, HISTORY))
    assert store.episodes.embed(outcome.recorded, batch=4) == 6
    assert store.episodes.embed(outcome.recorded) == 6  # again: each keeps its one vector
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT episode_id, model FROM episode_vectors WHERE tenant_id = %s ORDER BY 1",
            [tenant],
        ).fetchall()
    assert rows == [(e, embedder.model_id) for e in ("e0", "e1", "e2", "e3", "e4", "e5")]


class _LengthModel:
    """A stand-in model (vectors only move around here): a text's vector is its length."""

    model_id = "text-length"

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        return np.array([[len(text), 1.0, 0.0] for text in texts], dtype=np.float32)


def test_large_embedding_batches_are_copied_in_and_keep_existing_vectors(
    pool: ConnectionPool, clock: ManualClock
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=_LengthModel())
    tenant = _tenant(store, "copied")
    history = [_line(f"e{n}", "2026-06-01T09:00:00Z", text="x" * n) for n in range(1, 81)]
    outcome = store.episodes.import_lines(_lines(tenant, history))
    assert store.episodes.embed(outcome.recorded[:40], batch=64) == 40
    assert store.episodes.embed(outcome.recorded, batch=80) == 80
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT episode_id, embedding::text FROM episode_vectors WHERE tenant_id = %s",
            [tenant],
        ).fetchall()
    assert sorted(rows) == sorted((f"e{n}", f"[{n},1,0]") for n in range(1, 81))


def test_sgam_import_reports_counts_and_refusals_by_line(
    store: MemoryStore, conninfo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", conninfo)
    tenant = _tenant(store, "cli")
    good = tmp_path / "history.jsonl"
    good.write_text("\n".join(_lines(tenant, HISTORY[:3])) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(good), "--no-embed"])
    assert result.exit_code == 0, result.output
    assert "imported 3 lines in" in result.output
    assert "3 new episodes; candidates: 1 ignored, 3 invalid, 1 unchanged, 7 written" in (
        result.output
    )
    assert "line 3, candidate 1: invalid (attribute): attribute 'nope' is not declared" in (
        result.output
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_lines(tenant, HISTORY[3:4])[0] + "\n{oops\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(bad), "--no-embed"])
    assert result.exit_code == 1
    assert "error: line 2: not JSON" in result.output
    with psycopg.connect(conninfo) as conn:
        found = conn.execute(
            "SELECT count(*) FROM episodes WHERE tenant_id = %s AND id = 'e3'", [tenant]
        ).fetchone()
    assert found == (0,)
