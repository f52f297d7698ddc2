"""Episodes leaving the store: deleted when no row cites them, else reduced to stubs.

Erasure and the retention purge remove episodes the same way. A stub keeps id, kind, times and
content hash, and says why its content went (``erased_at`` or ``purged_at``), so a citation of
it still resolves. Evidence quoted from the episode's text is cleared wherever it survives.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg import sql

from store.governance import receipts

_STILL_CITED = """
SELECT DISTINCT episode_id FROM (
    SELECT source_episode_id AS episode_id FROM fact_versions WHERE tenant_id = %(tenant_id)s
    UNION ALL
    SELECT source_episode_id FROM expiries WHERE tenant_id = %(tenant_id)s
    UNION ALL
    SELECT source_episode_id FROM conflicts WHERE tenant_id = %(tenant_id)s
) AS cited
WHERE episode_id = ANY(%(episode_ids)s)
"""

_STUB = """
UPDATE episodes SET text = NULL, session_id = NULL, metadata = '{{}}',
                    {mark} = %(now)s
WHERE tenant_id = %(tenant_id)s AND id = ANY(%(stubbed)s)
"""


def remove_episodes(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    episode_ids: list[str],
    *,
    now: datetime,
    mark: Literal["erased_at", "purged_at"],
) -> dict[str, int]:
    """Delete episodes no row cites any more; reduce the others to stubs marked ``mark``.

    Counts ``episodes_stubbed``, ``episodes_deleted``, ``vectors_deleted`` and
    ``receipts_deleted``.
    """
    params: dict[str, Any] = {"tenant_id": tenant_id, "episode_ids": episode_ids, "now": now}
    cited = {row[0] for row in conn.execute(_STILL_CITED, params)}
    params["stubbed"] = sorted(cited)
    params["deleted"] = sorted(set(episode_ids) - cited)
    # An erasure takes every receipt of its episodes along. A purge leaves a stub's to their own
    # retention (its id still resolves), but an episode deleted outright takes its receipts,
    # which would name an id that resolves to nothing.
    erased = episode_ids if mark == "erased_at" else params["deleted"]
    receipts_deleted = receipts.erase_episodes(conn, tenant_id, erased)
    # Quotes of the text held by surviving rows go with the text.
    conn.execute(
        "UPDATE fact_versions SET evidence = NULL"
        " WHERE tenant_id = %(tenant_id)s AND source_episode_id = ANY(%(episode_ids)s)",
        params,
    )
    conn.execute(
        "UPDATE conflicts SET evidence = NULL"
        " WHERE tenant_id = %(tenant_id)s AND source_episode_id = ANY(%(episode_ids)s)",
        params,
    )
    vectors = conn.execute(
        "DELETE FROM episode_vectors"
        " WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(episode_ids)s)",
        params,
    ).rowcount
    # A stub keeps no subject, outcome, buffered weak signal, extraction job nor learned name
    # (deleted episodes take theirs along by cascade). A purge has deleted the signals and
    # jobs already, with those past their time, in one statement each: it counts them.
    signals_and_jobs = ("weak_signals", "extraction_jobs") if mark == "erased_at" else ()
    for table in (
        "episode_subjects",
        "episode_outcomes",
        *signals_and_jobs,
        "subject_names",  # the names learned from it
    ):
        conn.execute(
            f"DELETE FROM {table}"  # our own table names
            " WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(stubbed)s)",
            params,
        )
    stubbed = conn.execute(sql.SQL(_STUB).format(mark=sql.Identifier(mark)), params).rowcount
    deleted = conn.execute(
        "DELETE FROM episodes WHERE tenant_id = %(tenant_id)s AND id = ANY(%(deleted)s)",
        params,
    ).rowcount
    return {
        "episodes_stubbed": stubbed,
        "episodes_deleted": deleted,
        "vectors_deleted": vectors,
        "receipts_deleted": receipts_deleted,
    }
