"""Migrations build the exact schema on a blank database, once, and the database keeps the rules."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from retrieval.search.embeddings import Embedder
from store.contract.common import IDENTIFIER_PATTERN
from store.db.database import temporary_database
from store.db.migrate import available_migrations, migrate
from store.episodes.hnsw import hnsw_index
from store.facts.reads import FIND_SUBJECTS, find_subjects


@pytest.fixture(scope="module")
def blank(server_conninfo: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A connection to a blank database that the test migrates itself."""
    with temporary_database(server_conninfo) as info, psycopg.connect(info) as conn:
        yield conn


def _names(conn: psycopg.Connection[tuple[object, ...]], query: str) -> set[str]:
    return {str(row[0]) for row in conn.execute(query.encode())}


def test_a_blank_database_migrates_to_the_exact_schema(
    blank: psycopg.Connection[tuple[object, ...]],
) -> None:
    applied = migrate(blank)
    assert [m.version for m in applied] == [m.version for m in available_migrations()]
    assert _names(blank, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'") == {
        "schema_migrations",
        "tenants",
        "attributes",
        "episodes",
        "expiries",
        "fact_versions",
        "conflicts",
        "tombstones",
        "episode_vectors",
        "retractions",
        "api_keys",
        "episode_subjects",
        "episode_outcomes",
        "thread_checkpoints",
        "procedures",
        "procedure_versions",
        "procedure_activations",
        "decisions",
        "receipts",
        "weak_signals",
        "extraction_jobs",
        "retention_classes",
        "legal_holds",
        "purged_facts",
        "attribute_migrations",
        "ui_sessions",
        "subject_merges",
        "subject_names",
        "fact_sources",
        "receipt_secrets",
    }
    assert _names(
        blank,
        "SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
        " WHERE n.nspname = 'public' AND contype IN ('x', 'c') AND conrelid <> 0"
        " AND conname NOT LIKE '%_check'",
    ) == {
        "attributes_enum_values",
        "attributes_on_unverified_evidence",
        "tenants_on_unverified_evidence",
        "episodes_stub_has_no_text",
        "fact_versions_valid_window",
        "fact_versions_system_window",
        "fact_versions_ended_by_kind",
        "fact_versions_one_truth",
        "conflicts_resolution",
        "api_keys_revoked_after_created",
        "procedure_versions_numbered",
        "procedure_versions_body",
        "procedure_versions_steps_length",
        "procedure_versions_definition_object",
        "procedure_versions_approval",
        "procedure_activations_depth",
        "receipts_read_shape",
        "extraction_jobs_lease",
        "attribute_migrations_versions",
        "attribute_migrations_window",
        "ui_sessions_expire_after_created",
        "subject_merges_not_itself",
        "receipts_secret_version",
        "subject_names_learned_cite",
    }
    assert _names(
        blank,
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'"
        " AND indexname NOT LIKE '%_pkey'",
    ) == {
        "episodes_occurred",
        "episodes_text_search",
        "expiries_subject",
        "expiries_source",
        "fact_versions_one_truth",
        "fact_versions_current",
        "fact_versions_fact",
        "fact_versions_source",
        "fact_versions_subject_folded",
        "conflicts_open",
        "conflicts_source",
        "conflicts_incumbent",
        "conflicts_subject",
        "episode_vectors_hnsw_all_minilm_l6_v2",
        "episode_vectors_episode",
        "expiries_key",
        "retractions_key",
        "api_keys_tenant",
        "episode_subjects_episode",
        "episode_outcomes_current",
        "procedure_versions_approved",
        "decisions_opened",
        "receipts_decision",
        "receipts_writes",
        "receipts_owner",
        "receipts_provenance",
        "receipts_recorded",
        "weak_signals_key",
        "weak_signals_episode",
        "weak_signals_buffered",
        "extraction_jobs_due",
        "episodes_retention",
        "episodes_session",
        "attribute_migrations_from",
        "attribute_migrations_attribute",
        "api_keys_tenant_key",
        "ui_sessions_session",
        "ui_sessions_expiry",
        "subject_merges_once",
        "subject_merges_survivor",
        "subject_names_key",
        "subject_names_episode",
        "subject_names_similar",
        "fact_sources_episode",
    }
    assert _names(blank, "SELECT extname FROM pg_extension") >= {"btree_gist", "vector", "pg_trgm"}
    # On one node only: Citus places no table with triggers (store/db/distribution.py).
    assert _names(
        blank,
        "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND NOT t.tgisinternal",
    ) == {
        "api_keys_changed",
        "api_keys_truncated",
    }
    # The schema's own functions, not those of its extensions.
    assert _names(
        blank,
        "SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'public' AND NOT EXISTS (SELECT FROM pg_depend d"
        " WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')",
    ) == {
        "sgam_notify_api_key_changed",
        "sgam_active_key",
        "sgam_key_tenant",
        "sgam_claim_extractions",
        "sgam_extraction_lag",
        "sgam_tenant_ids",
        "sgam_ui_session",
        "sgam_name_keys",
        "sgam_fold_id",
        "sgam_similar_subject_names",
    }
    assert _columns(blank, "fact_versions") == [
        "tenant_id",
        "version_id",
        "fact_id",
        "subject",
        "attribute",
        "value",
        "valid_from",
        "valid_to",
        "recorded_at",
        "retired_at",
        "supersedes",
        "ended_by",
        "ended_by_kind",
        "source_episode_id",
        "source_kind",
        "evidence",
        "evidence_verified",
        "schema_version",
        "write_order",
        "subject_folded",
    ]
    assert _columns(blank, "episodes") == [
        "tenant_id",
        "id",
        "occurred_at",
        "recorded_at",
        "kind",
        "session_id",
        "text",
        "content_hash",
        "retention_class",
        "metadata",
        "erased_at",
        "purged_at",
        "text_search",
    ]
    assert _columns(blank, "episode_vectors") == [
        "tenant_id",
        "episode_id",
        "model",
        "embedding",
        "created_at",
        "embedding_truncated",
    ]
    assert _columns(blank, "attributes")[-4:] == [
        "weak_quorum",
        "weak_window_days",
        "renamed_to",
        "on_unverified_evidence",
    ]
    assert _columns(blank, "tenants") == ["tenant_id", "created_at", "on_unverified_evidence"]
    assert _columns(blank, "attribute_migrations") == [
        "tenant_id",
        "migration_id",
        "attribute",
        "migrated_from",
        "from_schema_version",
        "schema_version",
        "from_value_type",
        "value_type",
        "converted",
        "kept_fact_ids",
        "migrated_at",
        "dual_read_until",
    ]
    assert _columns(blank, "weak_signals") == [
        "tenant_id",
        "signal_id",
        "subject",
        "attribute",
        "value",
        "episode_id",
        "content_hash",
        "evidence",
        "evidence_verified",
        "valid_from",
        "buffered_at",
        "expires_at",
    ]
    assert _columns(blank, "retention_classes") == [
        "tenant_id",
        "name",
        "keep_days",
        "counts_from",
        "declared_at",
        "updated_at",
    ]
    assert _columns(blank, "legal_holds") == ["tenant_id", "subject", "placed_at"]
    assert _columns(blank, "purged_facts") == ["tenant_id", "fact_id", "purged_at"]
    assert _columns(blank, "tombstones")[-4:] == [
        "vectors_deleted",
        "receipts_deleted",
        "weak_signals_deleted",
        "extraction_jobs_deleted",
    ]
    assert _columns(blank, "ui_sessions") == [
        "tenant_id",
        "session_hash",
        "key_id",
        "csrf_hash",
        "created_at",
        "expires_at",
    ]
    assert _columns(blank, "api_keys") == [
        "key_id",
        "tenant_id",
        "secret_hash",
        "created_at",
        "revoked_at",
    ]


def _columns(conn: psycopg.Connection[tuple[object, ...]], table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND table_name = %(table)s ORDER BY ordinal_position",
        {"table": table},
    )
    return [str(row[0]) for row in rows]


def test_the_exclusion_constraint_covers_both_windows(
    blank: psycopg.Connection[tuple[object, ...]],
) -> None:
    migrate(blank)
    row = blank.execute(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conname = 'fact_versions_one_truth'"
    ).fetchone()
    assert row is not None
    assert row[0] == (
        "EXCLUDE USING gist (tenant_id WITH =, subject WITH =, attribute WITH =,"
        " tstzrange(valid_from, valid_to) WITH &&, tstzrange(recorded_at, retired_at) WITH &&)"
    )
    current = blank.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'fact_versions_current'"
    ).fetchone()
    assert current is not None
    assert str(current[0]).endswith("WHERE (retired_at IS NULL)")


def test_migrating_again_applies_nothing_and_records_each_version_once(
    blank: psycopg.Connection[tuple[object, ...]],
) -> None:
    migrate(blank)
    assert migrate(blank) == []
    recorded = blank.execute("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [(v, n) for v, n in recorded] == [(m.version, m.name) for m in available_migrations()]


def test_the_default_model_has_a_partial_hnsw_index_on_halfvec(
    blank: psycopg.Connection[tuple[object, ...]],
) -> None:
    migrate(blank)
    row = blank.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'episode_vectors_hnsw_all_minilm_l6_v2'"
    ).fetchone()
    assert row is not None
    assert row[0] == (
        "CREATE INDEX episode_vectors_hnsw_all_minilm_l6_v2 ON public.episode_vectors"
        " USING hnsw (((embedding)::halfvec(384)) halfvec_cosine_ops)"
        " WITH (m='16', ef_construction='128') WHERE (model = 'all-MiniLM-L6-v2'::text)"
    )


def test_the_code_defines_the_default_models_index_as_the_migrations_built_it(
    blank: psycopg.Connection[tuple[object, ...]], embedder: Embedder
) -> None:
    """Re-embedding builds a model's index from ``store.episodes.hnsw``; for the default model that
    definition is the one the migrations applied, as PostgreSQL prints it back."""
    migrate(blank)
    index = hnsw_index(embedder.model_id, embedder.dimensions)

    def indexdef() -> object:
        row = blank.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %(name)s", {"name": index.name}
        ).fetchone()
        assert row is not None, index.name
        return row[0]

    migrated = indexdef()
    with blank.transaction(force_rollback=True):
        blank.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index.name)))
        blank.execute(index.create)
        assert indexdef() == migrated


def test_the_contract_names_migration_renames_columns_and_keeps_every_row(
    server_conninfo: str,
) -> None:
    """Migration 7 only renames: an episode and a conflict written before it read back whole."""
    with temporary_database(server_conninfo) as info, psycopg.connect(info) as blank:
        migrate(blank, target=6)
        _rows_before_the_renames(blank)
        assert [m.version for m in migrate(blank)] == [
            m.version for m in available_migrations()[6:]
        ]
        episode = blank.execute("SELECT id, text FROM episodes").fetchone()
        conflict = blank.execute(
            "SELECT value, source_episode_id, source_kind, evidence FROM conflicts"
        ).fetchone()
    assert episode == ("e1", "Mira lives in Oslo.")
    assert conflict == ("Oslo", "e1", "message", "Oslo")


def _rows_before_the_renames(blank: psycopg.Connection[tuple[object, ...]]) -> None:
    with blank.transaction():
        blank.execute(
            """
            INSERT INTO tenants VALUES ('acme', '2026-06-01T00:00:00Z');
            INSERT INTO attributes (tenant_id, attribute, value_type, created_at, updated_at)
            VALUES ('acme', 'city', 'string', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z');
            INSERT INTO episodes (tenant_id, episode_id, occurred_at, recorded_at, text,
                                  content_hash, kind)
            VALUES ('acme', 'e1', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z',
                    'Mira lives in Oslo.', 'sha256:x', 'message');
            INSERT INTO conflicts (tenant_id, conflict_id, subject, attribute, valid_from, policy,
                                   incumbent_fact_id, challenger_value, challenger_episode_id,
                                   challenger_kind, evidence, evidence_verified, created_at)
            VALUES ('acme', '00000000-0000-0000-0000-000000000001', 'mira', 'city',
                    '2026-06-01T00:00:00Z', 'reject', '00000000-0000-0000-0000-000000000002',
                    '"Oslo"', 'e1', 'message', 'Oslo', true, '2026-06-01T00:00:00Z');
            """
        )


def test_looking_up_a_subject_by_its_folded_name_uses_the_index(server_conninfo: str) -> None:
    """Planning a question must not scan every version of the tenant (migration 9)."""
    with temporary_database(server_conninfo) as info, psycopg.connect(info) as conn:
        migrate(conn)
        with conn.transaction():
            conn.execute(
                """
                INSERT INTO tenants VALUES ('acme', '2026-06-01T00:00:00Z');
                INSERT INTO attributes (tenant_id, attribute, value_type, created_at, updated_at)
                VALUES ('acme', 'city', 'string', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z');
                INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, text,
                                      content_hash, kind)
                VALUES ('acme', 'e1', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z', 'x',
                        'sha256:x', 'message');
                INSERT INTO fact_versions (tenant_id, version_id, fact_id, subject, attribute,
                    value, valid_from, recorded_at, source_episode_id, source_kind,
                    evidence_verified, schema_version)
                SELECT 'acme', gen_random_uuid(), gen_random_uuid(), 'Subject' || n, 'city',
                       '"Oslo"', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z', 'e1',
                       'message', false, 1
                FROM generate_series(1, 20000) AS n;
                ANALYZE fact_versions;
                """
            )
        params = {"tenant_id": "acme", "names": ["subject7", "nobody"]}
        plan = conn.execute(("EXPLAIN (FORMAT JSON) " + FIND_SUBJECTS).encode(), params).fetchone()
        assert plan is not None
        assert "fact_versions_subject_folded" in json.dumps(plan[0])
        assert find_subjects(conn, "acme", names=["SUBJECT7", "nobody"]) == ["Subject7"]


@pytest.mark.parametrize(
    "text",
    ["a", "A-z_0.9:@", "x" * 200, "", "x" * 201, "a b", "é", "a\nb", "a\n", "a/b", "a'b"],
)
def test_the_identifier_domain_accepts_exactly_one_to_200_of_its_characters(
    conninfo: str, text: str
) -> None:
    # The domain's check (0011) against the pattern every layer above it enforces.
    with psycopg.connect(conninfo) as conn:
        try:
            conn.execute("SELECT %(text)s::sgam_identifier", {"text": text})
            stored = True
        except psycopg.errors.CheckViolation:
            stored = False
    assert stored == (re.fullmatch(IDENTIFIER_PATTERN, text) is not None)


_TENANT_CONSTRAINTS = """
SELECT c.conrelid::regclass::text AS table_name, c.conname, c.contype,
       EXISTS (
           SELECT 1 FROM unnest(c.conkey) AS k(attnum)
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
           WHERE a.attname = 'tenant_id'
       ) AS keyed,
       c.contype <> 'f' OR EXISTS (
           SELECT 1 FROM unnest(c.confkey) AS k(attnum)
           JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum
           WHERE a.attname = 'tenant_id'
       ) AS references_keyed
FROM pg_constraint c
JOIN pg_class t ON t.oid = c.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'x', 'f')
  AND EXISTS (
      SELECT 1 FROM pg_attribute a
      WHERE a.attrelid = c.conrelid AND a.attname = 'tenant_id' AND NOT a.attisdropped
  )
ORDER BY 1, 2
"""


REFERENCE_TABLES = {"tenants", "api_keys"}
"""Read before a tenant is known (a key is found by its id alone): distributed by tenant_id,
they would be reference tables, copied whole to every node."""


def test_every_key_and_reference_of_a_tenant_table_includes_the_tenant(conninfo: str) -> None:
    # Distributed by tenant_id (Citus), a primary key, unique or exclusion constraint or
    # foreign key must include the distribution column; so must it here, for every table that
    # has one, including tables added later.
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(_TENANT_CONSTRAINTS).fetchall()
    tables = {row[0] for row in rows}
    assert {"episodes", "fact_versions", "conflicts", "expiries", "retractions"} <= tables
    outside = [
        (table, name)
        for table, name, _, keyed, references_keyed in rows
        if table not in REFERENCE_TABLES and not (keyed and references_keyed)
    ]
    assert outside == []


def _old_episode(conn: psycopg.Connection[Any], version: int, subjects: str, then: str) -> None:
    """Migrate to ``version``, where episodes still had their array, and store tenant acme's
    episode e1 naming ``subjects`` (an array literal); then run ``then``."""
    migrate(conn, target=version)
    with conn.transaction():
        conn.execute(
            sql.SQL(
                """
                INSERT INTO tenants VALUES ('acme', '2026-06-01T00:00:00Z');
                INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, text,
                                      content_hash, kind, subjects)
                VALUES ('acme', 'e1', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z', 'x',
                        'sha256:x', 'message', {subjects});
                """
            ).format(subjects=sql.Literal(subjects))
        )
        conn.execute(then)


def test_the_subject_names_migration_keeps_every_held_subjects_id_as_a_name(
    server_conninfo: str,
) -> None:
    """Migration 24 backfills: subjects held before it are found by their ids' words."""
    with temporary_database(server_conninfo) as info, psycopg.connect(info) as conn:
        _old_episode(
            conn,
            23,
            "{World-Health_Organization}",
            """
                INSERT INTO attributes (tenant_id, attribute, value_type, created_at, updated_at)
                VALUES ('acme', 'city', 'string', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z');
                INSERT INTO fact_versions (tenant_id, version_id, fact_id, subject, attribute,
                    value, valid_from, recorded_at, source_episode_id, source_kind,
                    evidence_verified, schema_version)
                VALUES ('acme', gen_random_uuid(), gen_random_uuid(), 'adaeze_n_okafor', 'city',
                        '"Oslo"', '2026-06-01T00:00:00Z', '2026-06-01T00:00:00Z', 'e1',
                        'message', false, 1);
            """,
        )
        migrate(conn)
        keys = conn.execute(
            "SELECT subject, kind, key FROM subject_names WHERE source = 'id' ORDER BY 1, 2"
        ).fetchall()
    assert keys == [
        ("World-Health_Organization", "acronym", "who"),
        ("World-Health_Organization", "full", "world health organization"),
        ("World-Health_Organization", "leading", "world health"),
        ("World-Health_Organization", "pair", "world organization"),
        ("World-Health_Organization", "surname", "organization"),
        ("adaeze_n_okafor", "acronym", "ano"),
        ("adaeze_n_okafor", "full", "adaeze n okafor"),
        ("adaeze_n_okafor", "pair", "adaeze okafor"),
        ("adaeze_n_okafor", "surname", "okafor"),
    ]


def test_migration_30_keeps_each_subject_of_an_episodes_array_as_its_pair(
    server_conninfo: str,
) -> None:
    """Migration 30 drops episodes.subjects: a subject only the array named gets its pair."""
    with temporary_database(server_conninfo) as info, psycopg.connect(info) as conn:
        _old_episode(conn, 29, "{mira,Bob}", "DELETE FROM episode_subjects WHERE subject = 'Bob'")
        migrate(conn)
        pairs = conn.execute(
            'SELECT subject, episode_id FROM episode_subjects ORDER BY subject COLLATE "C"'
        ).fetchall()
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'episodes'"
        ).fetchall()
    assert pairs == [("Bob", "e1"), ("mira", "e1")]
    assert ("subjects",) not in columns
