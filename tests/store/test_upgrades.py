"""Upgrades: a history written at any older schema version survives every later migration and
reads, and is written to, through the store as if it had been written by the latest code.

The history is plain SQL, valid at the version it is written at: a table that does not exist
yet is left out, and a row keeps only the columns its table has then (under the names of
then). Migration 0004 numbers the writes it finds in the order they arrived.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from store.contract.facts import Fact
from store.contract.receipts import memory_key, owner_key, scope_hash
from store.db.clock import ManualClock
from store.db.database import temporary_database
from store.db.migrate import available_migrations, migrate
from store.errors import NotFound
from store.service import MemoryStore, open_store
from tests.conftest import ts

LATEST = available_migrations()[-1].version
OLDER = range(1, LATEST)

SECRET = "s" * 43
KEY_ID = UUID(int=0xABC)
API_KEY = f"sgam_{KEY_ID.hex}_{SECRET}"

JAN1, MAR1, JUN1 = (ts(f"2026-0{month}-01T00:00:00Z") for month in (1, 3, 6))
T1, T2, T3, T4 = (ts(f"2026-0{month}-10T00:00:00Z") for month in (1, 2, 3, 4))
"""When the four episodes, and the writes they caused, arrived."""
OSLO, BLUE, NICK, BERGEN, TROMSO = (UUID(int=n) for n in (1, 3, 5, 7, 11))
EXPIRY = UUID(int=9)
UI_SESSION = "ui-session-id"
UI_SESSION_ENDS = ts("2026-12-31T00:00:00Z")
DECISION = UUID(int=0xDEC)
WEAK = UUID(int=0x3EA)
MIGRATION = UUID(int=0x21)

WRITE_ORDER = {UUID(int=n): order for order, n in enumerate((2, 4, 5, 8, 9, 10, 12, 13), 1)}
"""Each version's and the expiry's ``write_order`` as the store gives it, from 0004 on."""

# Migration 0007 renamed these columns; before it they had the names on the right.
RENAMED_IN_7 = {
    ("episodes", "id"): "episode_id",
    ("conflicts", "value"): "challenger_value",
    ("conflicts", "source_episode_id"): "challenger_episode_id",
    ("conflicts", "source_kind"): "challenger_kind",
}
# Migration 0030 dropped these columns: an episode's subjects are its episode_subjects rows.
DROPPED_IN_30 = {("episodes", "subjects")}
# Columns a later migration added with a default; rows written before have none.
ADDED_LATER = {"source_ranks", "disputed", "resolved_fact_id", "facts_retracted"}


def _rows(columns: str, *values: tuple[Any, ...], **same: Any) -> list[dict[str, Any]]:
    """Rows of ``columns`` (space-separated) with these values, each with ``same`` too."""
    return [dict(zip(columns.split(), row, strict=True)) | same for row in values]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


_VERSION = (
    "version_id fact_id attribute value valid_from valid_to recorded_at retired_at supersedes"
    " ended_by ended_by_kind source_episode_id"
)
_CITED: dict[str, Any] = {"tenant_id": "acme", "subject": "mira", "source_kind": "message"}
_CITED |= {"evidence": "quoted", "evidence_verified": True}
"""What every fact version and conflict of the history has in common."""
_EPISODE_TEXTS = (
    "Mira lives in Oslo; the blue team.",
    "Mira has lived in Bergen since New Year.",
    "Mira leaves the blue team in June.",
    "Mira moved to Tromso in March.",
)


def history(version: int) -> dict[str, list[dict[str, Any]]]:
    """Mira's city and team as the store writes them: Oslo; Bergen from the same start, first a
    conflict, then chosen over Oslo; the team expired in June; Tromso from March. From 0003 on,
    a vector; from 0004, a nickname retracted; from 0006, an API key; from 0015, a
    thread's checkpoint; from 0016, a procedure's versions and its activation; from 0017, an
    episode's outcome; from 0018, a decision and its receipt; from 0019, a buffered weak
    signal; from 0020, an extraction job; from 0021, a retention class, a legal hold and a
    purged fact; from 0022, an attribute migration; from 0023, a session of the timeline pages;
    from 0024, a subject's declared and learned names.

    Fact versions are listed latest first: inserted so, their physical order is not arrival order.
    """
    team = Jsonb("blue")
    versions: list[tuple[Any, ...]] = [
        (UUID(int=13), TROMSO, "city", Jsonb("Tromso"), MAR1, None, T4, None, BERGEN, None, None),
        (UUID(int=12), BERGEN, "city", Jsonb("Bergen"), JAN1, MAR1, T4, None, OSLO, TROMSO, "fact"),
        (UUID(int=10), BLUE, "team", team, JAN1, JUN1, T3, None, None, EXPIRY, "expiry"),
        (UUID(int=8), BERGEN, "city", Jsonb("Bergen"), JAN1, None, T3, T4, OSLO, None, None),
        (UUID(int=4), BLUE, "team", team, JAN1, None, T1, T3, None, None, None),
        (UUID(int=2), OSLO, "city", Jsonb("Oslo"), JAN1, None, T1, T3, None, None, None),
    ]
    sources = {OSLO: "e1", BLUE: "e1", NICK: "e1", BERGEN: "e2", TROMSO: "e4"}
    if version >= 4:
        nickname = Jsonb("Mimi")
        versions.append((UUID(int=5), NICK, "nickname", nickname, JAN1, None, T1, T2, *[None] * 3))
    # From 0004 on the store numbers its writes as they arrive (``WRITE_ORDER``).
    numbered = version >= 4
    found = {
        "tenants": _rows("tenant_id created_at", ("acme", JAN1)),
        "attributes": _rows(
            "attribute value_type created_at updated_at",
            *((name, "string", JAN1, JAN1) for name in ("city", "team", "nickname")),
            tenant_id="acme",
        ),
        "episodes": _rows(
            "id occurred_at recorded_at text content_hash",
            *(
                (f"e{n}", at, at, text, _hash(text))
                for n, (at, text) in enumerate(
                    zip((T1, T2, T3, T4), _EPISODE_TEXTS, strict=True), start=1
                )
            ),
            tenant_id="acme",
            kind="message",
            subjects=["mira"],
        ),
        "fact_versions": [
            row | ({"write_order": WRITE_ORDER[row["version_id"]]} if numbered else {})
            for row in _rows(
                _VERSION, *((*row, sources[row[1]]) for row in versions), **_CITED, schema_version=1
            )
        ],
        "expiries": _rows(
            "tenant_id expiry_id subject attribute at source_episode_id recorded_at",
            ("acme", EXPIRY, "mira", "team", JUN1, "e3", T3),
            **({"write_order": WRITE_ORDER[EXPIRY]} if numbered else {}),
        ),
        "conflicts": _rows(
            "conflict_id incumbent_fact_id value source_episode_id created_at resolved_at"
            " resolved_fact_id valid_from attribute policy",
            (UUID(int=6), OSLO, Jsonb("Bergen"), "e2", T2, T3, BERGEN, JAN1, "city", "reject"),
            **_CITED | {"status": "resolved", "resolution": "challenger"},
        ),
        "tombstones": _rows(
            "tombstone_id target target_hash erased_at episodes_deleted episodes_stubbed"
            " fact_versions_deleted conflicts_deleted expiries_deleted",
            (UUID(int=99), "subject", _hash("ghost"), T2, 1, 0, 2, 0, 0),
            tenant_id="acme",
        ),
    }
    if version >= 3:
        vector = "[" + ",".join(["0.5"] * 384) + "]"
        found["episode_vectors"] = _rows(
            "tenant_id episode_id model embedding created_at",
            ("acme", "e1", "all-MiniLM-L6-v2", vector, T1),
        )
    if version >= 4:
        found["retractions"] = _rows(
            "tenant_id fact_id subject attribute retracted_at",
            ("acme", NICK, "mira", "nickname", T2),
        )
    if version >= 6:
        found["api_keys"] = _rows(
            "key_id tenant_id created_at secret_hash",
            (KEY_ID, "acme", T1, hashlib.sha256(SECRET.encode()).digest()),
        )
    if version >= 15:
        found["thread_checkpoints"] = _rows(
            "tenant_id thread_id version active_goal_id pending_dependency state written_at",
            ("acme", "t-1", 1, "move-to-tromso", "e4", Jsonb({"step": 1}), T4),
        )
    if version >= 16:
        found["procedures"] = _rows(
            "tenant_id name latest_version created_at", ("acme", "move", 2, T1)
        )
        approval = ("ops", "review", None, T2)
        found["procedure_versions"] = _rows(
            "tenant_id name version steps definition created_at"
            " approver policy evaluation_ref approved_at",
            ("acme", "move", 1, "pack", None, T1, *approval),
            ("acme", "move", 2, None, Jsonb({"step": "pack"}), T2, None, None, None, None),
        )
        found["procedure_activations"] = _rows(
            "tenant_id name scope depth version approved_at activated_at",
            ("acme", "move", "default", 1, 1, T2, T3),
        )
    if version >= 17:
        found["episode_outcomes"] = _rows(
            "tenant_id episode_id revision status outcome_receipt_id verified human_intervened"
            " budget_exhausted recorded_at superseded_at",
            ("acme", "e3", 1, "partial", "run-7", True, False, False, T3, None),
        )
    if version >= 18:
        found["decisions"] = _rows("tenant_id decision_id opened_at", ("acme", DECISION, T4))
        scope = scope_hash("acme", "subject", "mira", None, secret=b"")  # version 0
        found["receipts"] = _rows(
            "tenant_id receipt_id decision_id action memory_type memory_key owner_key version"
            " expected_scope_hash observed_scope_hash written_at read_at freshness_budget_s"
            " provenance activated invalidation outcome approved recorded_at",
            (
                "acme",
                UUID(int=70),
                DECISION,
                "read",
                "semantic",
                memory_key("semantic", "city", secret=b""),
                owner_key("acme", "subject", "mira", secret=b""),
                str(UUID(int=13)),
                scope,
                scope,
                T4,
                T4,
                None,
                "e4",
                True,
                "current",
                None,
                None,
                T4,
            ),
        )
    if version >= 19:
        found["weak_signals"] = _rows(
            "tenant_id signal_id subject attribute value episode_id content_hash evidence"
            " evidence_verified valid_from buffered_at expires_at",
            (
                "acme",
                WEAK,
                "mira",
                "city",
                Jsonb("Bergen"),
                "e4",
                _hash(_EPISODE_TEXTS[3]),
                "quoted",
                False,
                T4,
                T4,
                ts("2026-05-10T00:00:00Z"),
            ),
        )
    if version >= 20:
        found["extraction_jobs"] = _rows(
            "tenant_id episode_id status prompt_version attempts queued_at run_after lease_id"
            " leased_until last_error results finished_at",
            ("acme", "e4", "dead", "extract-v1", 5, T4, T4, None, None, "timeout", None, T4),
        )
    if version >= 21:
        found["retention_classes"] = _rows(
            "tenant_id name keep_days counts_from declared_at updated_at",
            ("acme", "legal", 3650, "recorded", T1, T2),
        )
        found["legal_holds"] = _rows("tenant_id subject placed_at", ("acme", "mira", T4))
        found["purged_facts"] = _rows("tenant_id fact_id purged_at", ("acme", UUID(int=77), T4))
    if version >= 22:
        found["attribute_migrations"] = _rows(
            "tenant_id migration_id attribute migrated_from from_schema_version schema_version"
            " from_value_type value_type converted kept_fact_ids migrated_at dual_read_until",
            ("acme", MIGRATION, "nickname", None, 1, 2, "string", "string", 0, [], T4, T4),
        )
    if version >= 23:
        found["ui_sessions"] = _rows(
            "tenant_id session_hash key_id csrf_hash created_at expires_at",
            ("acme", _digest(UI_SESSION), KEY_ID, _digest("csrf"), T1, UI_SESSION_ENDS),
        )
    if version >= 24:
        found["subject_names"] = _rows(
            "tenant_id subject source name folded kind key episode_id recorded_at",
            (
                "acme",
                "mira",
                "display",
                "Mira Lindqvist",
                "mira lindqvist",
                "full",
                "mira lindqvist",
                None,
                T4,
            ),
            ("acme", "mira", "learned", "Mira L.", "mira l", "full", "mira l", "e4", T4),
        )
    if version >= 26:
        found["subject_merges"] = _rows(
            "tenant_id merge_id merged_subject survivor merged_at versions_moved conflicts_moved"
            " episodes_linked",
            ("acme", UUID(int=88), "mira-2", "mira", T4, 0, 0, 0),
        )
    if version >= 27:
        found["fact_sources"] = _rows("tenant_id fact_id episode_id", ("acme", UUID(int=77), "e4"))
    if version >= 28:
        found["receipt_secrets"] = _rows(
            "tenant_id version secret created_at", ("acme", 1, bytes(range(32)), T4)
        )
    if version >= 30:  # no array and no trigger any more: the store writes the pairs itself
        found["episode_subjects"] = _rows(
            "tenant_id subject episode_id", *(("acme", "mira", f"e{n}") for n in range(1, 5))
        )
    return found


def _columns(conn: psycopg.Connection[Any], table: str) -> set[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND table_name = %(table)s",
        {"table": table},
    )
    return {str(row[0]) for row in rows}


def write_history(conn: psycopg.Connection[Any], version: int) -> None:
    """Insert ``history(version)`` with SQL valid at ``version`` (the database's schema)."""
    with conn.transaction():
        for table, rows in history(version).items():
            present = _columns(conn, table)
            for row in rows:
                named = {
                    RENAMED_IN_7.get((table, column), column) if version < 7 else column: value
                    for column, value in row.items()
                }
                dropped = {column for (where, column) in DROPPED_IN_30 if where == table}
                assert set(named) - present <= ADDED_LATER | dropped, (table, set(named) - present)
                kept = {column: value for column, value in named.items() if column in present}
                conn.execute(
                    sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                        sql.Identifier(table),
                        sql.SQL(", ").join(map(sql.Identifier, kept)),
                        sql.SQL(", ").join(map(sql.Placeholder, kept)),
                    ),
                    kept,
                )
        if version >= 4:  # the sequence numbers on after the store's writes
            conn.execute("SELECT setval('write_order', %(last)s)", {"last": len(WRITE_ORDER)})


def _table_rows(conn: psycopg.Connection[Any]) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table of tenant data, keyed by the latest column names."""
    found = {}
    tables = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        " AND tablename <> 'schema_migrations'"
    )
    for (table,) in tables.fetchall():
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(table)))
            found[table] = sorted(cur.fetchall(), key=repr)
    return found


@pytest.fixture
def upgraded(server_conninfo: str, request: pytest.FixtureRequest) -> Iterator[tuple[int, str]]:
    """The history written at the test's version, every row checked to survive the migrations
    after it; the version and the upgraded database."""
    version: int = request.param
    with temporary_database(server_conninfo) as info:
        with psycopg.connect(info) as conn:
            migrate(conn, target=version)
            write_history(conn, version)
            before = _table_rows(conn)
            applied = migrate(conn)
            after = _table_rows(conn)
        assert [m.version for m in applied] == list(range(version + 1, LATEST + 1))
        for table, rows in before.items():
            assert rows, table
            renamed = {old: new for (where, new), old in RENAMED_IN_7.items() if where == table}
            latest = renamed if version < 7 else {}
            gone = {c for (where, c) in DROPPED_IN_30 if where == table}
            wanted = [{c: v for c, v in row.items() if c not in gone} for row in rows]
            kept = [{c: row[latest.get(c, c)] for c in wanted[0]} for row in after[table]]
            assert sorted(kept, key=repr) == wanted, table
        yield version, info


def _windows(facts: list[Fact]) -> list[tuple[Any, ...]]:
    return [
        (f.fact_id, f.value, f.valid_from, f.valid_to, f.recorded_at, f.retired_at) for f in facts
    ]


@pytest.mark.parametrize("upgraded", OLDER, indirect=True, ids=lambda v: f"from-{v:04d}")
def test_a_history_written_at_an_older_version_reads_and_writes_after_upgrading(
    upgraded: tuple[int, str],
) -> None:
    version, conninfo = upgraded
    clock = ManualClock(ts("2026-05-01T00:00:00Z"))
    with open_store(conninfo, clock=clock) as store:
        _check_reads(store, version)
        # A write replays the key's log in arrival order: without Tromso, Bergen (chosen over
        # Oslo at the same start) holds from New Year on; in table order it would be Oslo.
        retracted = store.facts.retract("acme", "mira", "city", fact_id=TROMSO)
        assert retracted.status == "retracted"
        assert _windows([store.facts.current("acme", "mira", "city")]) == [
            (BERGEN, "Bergen", JAN1, None, clock(), None)
        ]
        # An episode recorded before outcomes existed (0017) takes one and reads back with it.
        outcome = store.outcomes.record("acme", "e4", {"status": "succeeded", "verified": True})
        assert (outcome.revision, outcome.observed) == (1, True)
        assert store.outcomes.current("acme", "e4") == outcome
        # Facts written before attribute migrations existed (0022) migrate: a rename keeps the
        # fact and its history, and the old name reads the new one.
        renamed = store.admin.migrate_attribute(
            "acme", "team", {"attribute": "squad", "value_type": "string"}
        )
        assert [(c.fact_id, c.converted_value) for c in renamed.converted] == [(BLUE, "blue")]
        moved = store.facts.at("acme", "mira", "team", valid_at=T3)
        assert (moved.fact_id, moved.attribute, moved.migrated_from) == (BLUE, "squad", "team")
        assert [(f.fact_id, f.attribute) for f in store.facts.history("acme", "mira", "squad")] == [
            (BLUE, "team"),
            (BLUE, "team"),
            (BLUE, "squad"),
        ]


def _check_reads(store: MemoryStore, version: int) -> None:
    assert _windows(store.facts.history("acme", "mira", "city")) == [
        (OSLO, "Oslo", JAN1, None, T1, T3),
        (BERGEN, "Bergen", JAN1, None, T3, T4),
        (BERGEN, "Bergen", JAN1, MAR1, T4, None),
        (TROMSO, "Tromso", MAR1, None, T4, None),
    ]
    assert store.facts.at("acme", "mira", "city", valid_at=T2, known_at=T2).value == "Oslo"
    assert store.facts.current("acme", "mira", "city").value == "Tromso"
    assert _windows([store.facts.current("acme", "mira", "team")]) == [
        (BLUE, "blue", JAN1, JUN1, T3, None)
    ]
    with pytest.raises(NotFound):
        store.facts.current("acme", "mira", "nickname")
    assert store.episodes.get("acme", "e2").text == _EPISODE_TEXTS[1]
    assert store.episodes.get("acme", "e2").subjects == ["mira"]  # its array's, kept as pairs
    [conflict] = store.conflicts.list("acme", status="resolved").conflicts
    assert (conflict.conflict_id, conflict.incumbent_fact_id) == (UUID(int=6), OSLO)
    assert store.admin.authenticate(API_KEY) == ("acme" if version >= 6 else None)
    if version >= 15:
        checkpoint = store.checkpoints.read_checkpoint("acme", "t-1")
        assert (checkpoint.version, checkpoint.active_goal_id, checkpoint.state) == (
            1,
            "move-to-tromso",
            {"step": 1},
        )
    if version >= 17:
        assert store.outcomes.current("acme", "e3").status == "partial"
    if version >= 19:
        [signal] = store.weak_signals.list("acme", subject="mira").signals
        assert (signal.signal_id, signal.value, signal.episode_id) == (WEAK, "Bergen", "e4")
    if version >= 18:
        [receipt] = store.receipts.decision("acme", DECISION).receipts
        assert (receipt.receipt_id, receipt.version) == (UUID(int=70), str(UUID(int=13)))
    if version >= 20:
        dead = store.extraction.state("acme", "e4")
        assert dead is not None
        assert (dead.status, dead.attempts, dead.last_error) == ("dead", 5, "timeout")
        assert store.extraction.retry("acme", "e4").status == "queued"
    declared = ["legal"] if version >= 21 else []
    classes = store.retention.classes("acme")
    assert [c.name for c in classes] == sorted(
        ["ephemeral", "session", "standard", "permanent", *declared]
    )
    if version >= 21:
        assert store.retention.purged_facts("acme", [UUID(int=77)]) == {UUID(int=77): T4}
        assert store.retention.release_hold("acme", "mira").placed_at == T4
    if version >= 23:
        session = store.ui_sessions.find(hashlib.sha256(UI_SESSION.encode()).digest())
        assert session is not None
        assert (session.tenant_id, session.key_id, session.expires_at) == (
            "acme",
            KEY_ID,
            UI_SESSION_ENDS,
        )
    if version >= 16:
        active = store.procedures.active("acme", "move")
        assert (active.version, active.approver, active.rollback_target) == (1, "ops", None)
        assert store.procedures.create("acme", {"name": "move", "steps": "unpack"}).version == 3


def test_0004_numbers_old_writes_in_arrival_order_not_table_order(server_conninfo: str) -> None:
    with temporary_database(server_conninfo) as info, psycopg.connect(info) as conn:
        migrate(conn, target=3)
        write_history(conn, 3)
        # Move the oldest version to the end of the table as well.
        conn.execute("UPDATE fact_versions SET evidence = evidence WHERE version_id = %(id)s",
                     {"id": UUID(int=2)})  # fmt: skip
        conn.commit()
        migrate(conn, target=4)
        numbered = conn.execute(
            "SELECT version_id, write_order FROM fact_versions"
            " UNION ALL SELECT expiry_id, write_order FROM expiries ORDER BY 2"
        ).fetchall()
        after = conn.execute(
            "INSERT INTO expiries (tenant_id, expiry_id, subject, attribute, at,"
            " source_episode_id, recorded_at) VALUES ('acme', %(id)s, 'mira', 'city', %(at)s,"
            " 'e4', %(at)s) RETURNING write_order",
            {"id": UUID(int=100), "at": T4},
        ).fetchone()
    # By system time; at one instant by valid time, then id. New writes number on from there.
    assert numbered == [
        (UUID(int=n), order) for order, n in enumerate((2, 4, 8, 10, 9, 12, 13), start=1)
    ]
    assert after == (8,)
