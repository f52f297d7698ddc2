"""Bulk import's episodes: each new one built in memory as ``record_episode`` would store it,
then all stored with one COPY.

COPY cannot write a table under row-level security, so the rows go through a scratch table of
the transaction and from it into ``episodes`` in one insert, which the tenant's policy checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from store.contract.episodes import Episode, EpisodeInput
from store.episodes.record import add_pairs, content_hash


def new_episode(episode: EpisodeInput, *, episode_id: str, now: datetime) -> Episode:
    """The episode ``record_episode`` would store for ``episode`` under a new id at ``now``."""
    return Episode.model_construct(
        id=episode_id,
        occurred_at=episode.occurred_at,
        recorded_at=now,
        kind=episode.kind,
        session_id=episode.session_id,
        subjects=episode.all_subjects(),
        text=episode.text,
        content_hash=content_hash(episode.text),
        retention_class=episode.retention_class,
        metadata=episode.metadata,
        erased_at=None,
        purged_at=None,
    )


_EPISODE_COLUMNS = (
    "tenant_id, id, occurred_at, recorded_at, kind, session_id, text, content_hash,"
    " retention_class, metadata"
)


def copy_episodes(conn: psycopg.Connection[Any], tenant_id: str, new: Iterable[Episode]) -> int:
    """Store new episodes (none of their ids may exist) with one COPY, and their subjects'
    pairs with one insert; how many.

    COPY cannot write a table under row-level security: the rows go to a scratch table first
    and from it into ``episodes`` in one insert, which the tenant's policy checks.
    """
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS copied_episodes"
        " (LIKE episodes INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
    )
    count = 0
    pairs: list[tuple[str, str]] = []
    with (
        conn.cursor() as cur,
        cur.copy(f"COPY copied_episodes ({_EPISODE_COLUMNS}) FROM STDIN") as copy,
    ):
        for episode in new:
            copy.write_row(
                (
                    tenant_id,
                    episode.id,
                    episode.occurred_at,
                    episode.recorded_at,
                    episode.kind,
                    episode.session_id,
                    episode.text,
                    episode.content_hash,
                    episode.retention_class,
                    Jsonb(episode.metadata),
                )
            )
            count += 1
            pairs.extend((episode.id, subject) for subject in episode.subjects)
    conn.execute(
        f"INSERT INTO episodes ({_EPISODE_COLUMNS}) SELECT {_EPISODE_COLUMNS} FROM copied_episodes"
        " RETURNING true"  # on Citus: inserted on each shard, not COPied (store.db.distribution)
    )
    add_pairs(conn, tenant_id, pairs)  # their subjects, in one statement
    conn.execute("TRUNCATE copied_episodes")  # the next tenant of this transaction starts empty
    return count
