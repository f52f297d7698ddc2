"""The content-free check every module's database passes before it is dropped.

Receipts may hold ids, hashes, times, enums, booleans and counts, never what the memory says.
``audit_receipts`` checks the shape of every string a receipt holds (a hash, a version, an
episode id or its own reference) and that none contains a text or value the module stored
(episode texts and metadata, fact values and evidence, checkpoint states, procedure steps and
definitions).
"""

from __future__ import annotations

import re
from typing import Any

import psycopg

# Every string leaf of the JSON and text the suite writes as content (``strict $.**``: the
# document itself and everything in it, each once; no recursive CTE, which Citus refuses over
# every tenant's rows).
_CONTENT = """
WITH doc(value) AS (
    SELECT to_jsonb(text) FROM episodes WHERE text IS NOT NULL
    UNION ALL SELECT metadata FROM episodes
    UNION ALL SELECT value FROM fact_versions
    UNION ALL SELECT to_jsonb(evidence) FROM fact_versions WHERE evidence IS NOT NULL
    UNION ALL SELECT state FROM thread_checkpoints
    UNION ALL SELECT to_jsonb(steps) FROM procedure_versions WHERE steps IS NOT NULL
    UNION ALL SELECT definition FROM procedure_versions WHERE definition IS NOT NULL
    UNION ALL SELECT value FROM weak_signals
    UNION ALL SELECT to_jsonb(evidence) FROM weak_signals WHERE evidence IS NOT NULL
)
SELECT DISTINCT leaf #>> '{}' FROM doc, jsonb_path_query(doc.value, 'strict $.**') AS leaf
WHERE jsonb_typeof(leaf) = 'string'
"""

_RECEIPTS = """
SELECT memory_key, owner_key, expected_scope_hash, observed_scope_hash, version, provenance
FROM receipts
"""

_HASH = re.compile(r"[0-9a-f]{32}")
_VERSION = re.compile(r"[0-9]{1,10}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OWN_REFERENCE = re.compile(r"(checkpoint|approval):[0-9]{1,10}")

_MIN_CONTAINED = 12
"""Content this long cannot be inside an id or a hash by chance: none may contain it."""


def audit_receipts(conn: psycopg.Connection[Any]) -> int:
    """Assert every receipt holds only hashes, version ids or numbers, and provenance that is
    an episode's id or the receipt's own reference, and that none of its hashes and version ids
    is or contains a text or value the database holds; the number of receipts checked (0
    before migration 0018)."""
    if conn.execute("SELECT to_regclass('receipts')").fetchone() == (None,):
        return 0
    episode_ids = {row[0] for row in conn.execute("SELECT id FROM episodes")}
    content = {row[0] for row in conn.execute(_CONTENT) if row[0]}
    long_content = [text for text in content if len(text) >= _MIN_CONTAINED]
    receipts = conn.execute(_RECEIPTS).fetchall()
    for *hashes, version, provenance in receipts:
        assert all(_HASH.fullmatch(value) for value in hashes), hashes
        assert version is None or _VERSION.fullmatch(version), version
        assert (
            provenance is None or provenance in episode_ids or _OWN_REFERENCE.fullmatch(provenance)
        ), provenance
        # Numbers (a checkpoint's version) may equal a stored count; ids and hashes may not.
        compared = [*hashes, *([version] if version and not version.isdigit() else [])]
        leaked = [
            value
            for value in compared
            if value in content or any(text in value for text in long_content)
        ]
        assert not leaked, f"receipts hold content: {leaked[:5]}"
    return len(receipts)
