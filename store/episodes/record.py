"""Episodes: the raw inputs facts cite, recorded once per id."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.contract.common import EpisodeKind
from store.contract.episodes import Episode, EpisodeInput
from store.errors import Conflict, NotFound
from store.governance.retention import require_class
from store.subjects import names as subject_names

T = TypeVar("T")


_TRUNCATED = """EXISTS (SELECT FROM episode_vectors AS v
            WHERE v.tenant_id = %(tenant_id)s AND v.tenant_id = episodes.tenant_id
              AND v.episode_id = episodes.id AND v.embedding_truncated)"""
"""Whether any of a stored episode's vectors was cut."""


def _columns(subjects: str, truncated: str = _TRUNCATED) -> str:
    """An episode as its JSON names it, its subjects read by ``subjects``;
    ``embedding_truncated`` if any of its vectors was cut (``truncated``)."""
    return f"""
    id, occurred_at, recorded_at, kind, session_id, {subjects} AS subjects,
    text, content_hash, retention_class, metadata, erased_at, purged_at,
    {truncated} AS embedding_truncated
"""


_COLUMNS = _columns(
    """ARRAY(SELECT s.subject FROM episode_subjects AS s
             WHERE s.tenant_id = %(tenant_id)s AND s.tenant_id = episodes.tenant_id
               AND s.episode_id = episodes.id ORDER BY s.subject COLLATE "C")"""
)
"""A stored episode: its subjects, its pairs in ``episode_subjects`` in byte order (as
``EpisodeInput.all_subjects``); lookups name the tenant itself, so Citus routes them whole."""

_NEW_COLUMNS = _columns("%(subjects)s::text[]", "false")
"""An episode just inserted: its subjects are those it names, whose pairs are written next, and
no vector yet (an INSERT's RETURNING asks no other table: Citus refuses subqueries there)."""


def content_hash(text: str) -> str:
    """The hash that identifies an episode's content (kept in stubs and tombstones)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_episode(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    episode: EpisodeInput,
    *,
    now: datetime,
    new_id: Callable[[], object],
) -> Episode:
    """Record an episode; the same id with the same content returns the stored one.

    The same id with different text, time or kind is refused: an id names one input. A
    retention class the tenant has not declared is refused (``invalid``, ``retention_class``).
    """
    require_class(conn, tenant_id, episode.retention_class, field="retention_class")
    episode_id = episode.id or str(new_id())
    digest = content_hash(episode.text)
    with conn.cursor(row_factory=class_row(Episode)) as cur:
        cur.execute(
            """
            INSERT INTO episodes (
                tenant_id, id, occurred_at, recorded_at, kind, session_id,
                text, content_hash, retention_class, metadata
            ) VALUES (
                %(tenant_id)s, %(id)s, %(occurred_at)s, %(now)s, %(kind)s,
                %(session_id)s, %(text)s, %(content_hash)s, %(retention_class)s, %(metadata)s
            )
            ON CONFLICT (tenant_id, id) DO NOTHING
            RETURNING"""
            + _NEW_COLUMNS,
            {
                "tenant_id": tenant_id,
                "id": episode_id,
                "occurred_at": episode.occurred_at,
                "now": now,
                "kind": episode.kind,
                "session_id": episode.session_id,
                "subjects": episode.all_subjects(),
                "text": episode.text,
                "content_hash": digest,
                "retention_class": episode.retention_class,
                "metadata": Jsonb(episode.metadata),
            },
        )
        row = cur.fetchone()
    if row is not None:
        # A new episode's subjects are kept by their ids, and the names its text wrote learned.
        if row.subjects:
            add_subjects(conn, tenant_id, row.id, row.subjects)
        subject_names.note(
            conn,
            tenant_id,
            row.subjects,
            episode.subject_names.items(),
            episode_id=row.id,
            episode_text=row.text,
            now=now,
        )
        return row
    stored = get_episode(conn, tenant_id, episode_id)
    check_same_episode(stored, episode)
    return stored


def check_same_episode(stored: Episode, episode: EpisodeInput) -> None:
    """Refuse recording ``episode`` under the id ``stored`` holds, unless it is the same input."""
    if stored.erased_at is not None:
        # A stub keeps only a content hash: answering "same content" would confirm a guess.
        raise Conflict(f"episode {stored.id!r} was erased; its id cannot be reused", field="id")
    if stored.purged_at is not None:
        raise Conflict(f"episode {stored.id!r} was purged; its id cannot be reused", field="id")
    same = (
        stored.content_hash == content_hash(episode.text)
        and stored.occurred_at == episode.occurred_at
        and stored.kind == episode.kind
    )
    if not same:
        raise Conflict(f"episode {stored.id!r} exists with different content", field="id")


def get_episode(conn: psycopg.Connection[Any], tenant_id: str, episode_id: str) -> Episode:
    """One episode (or its stub after an erasure); NotFound if the tenant has no such id."""
    return ask_episode(conn, tenant_id, episode_id)()


@dataclass(frozen=True, slots=True)
class CitedEpisodeRow:
    """A cited episode as a write reads it (``store.facts.writes.CitedEpisode``): without its
    subject list, which every write citing the episode about a new subject lengthens (read
    whole, each such write would cost more than the last). Its fields are as stored,
    unvalidated (the pool's connections speak UTC)."""

    id: str
    occurred_at: datetime
    kind: EpisodeKind
    text: str | None
    content_hash: str
    erased_at: datetime | None
    purged_at: datetime | None


_CITED_COLUMNS = " id, occurred_at, kind, text, content_hash, erased_at, purged_at "


def ask_cited_episode(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str
) -> Callable[[], CitedEpisodeRow]:
    """The episode a write cites, asked now and read when called (in pipeline mode, the
    statements sent in between travel with it); NotFound when the tenant has none."""
    return _ask_one(conn, tenant_id, episode_id, CitedEpisodeRow, _CITED_COLUMNS)


def ask_episode(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str
) -> Callable[[], Episode]:
    """Send ``get_episode``'s read now and read its answer when called (in pipeline mode, the
    statements sent in between travel with it)."""
    return _ask_one(conn, tenant_id, episode_id, Episode, _COLUMNS)


def _ask_one(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    episode_id: str,
    row_type: type[T],
    columns: str,
) -> Callable[[], T]:
    cur = conn.cursor(row_factory=class_row(row_type))
    cur.execute(
        "SELECT" + columns + "FROM episodes WHERE tenant_id = %(tenant_id)s AND id = %(id)s",
        {"tenant_id": tenant_id, "id": episode_id},
    )

    def episode() -> T:
        with cur:
            row = cur.fetchone()
        if row is None:
            raise NotFound(f"episode {episode_id!r} does not exist", field="episode_id")
        return row

    return episode


def add_subjects(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str, subjects: Iterable[str]
) -> None:
    """Note that the episode concerns ``subjects`` (``add_pairs``)."""
    add_pairs(conn, tenant_id, [(episode_id, subject) for subject in subjects])


def add_pairs(
    conn: psycopg.Connection[Any], tenant_id: str, pairs: Sequence[tuple[str, str]]
) -> None:
    """Note that each episode of ``pairs`` (episode id, subject) concerns its subject: a row
    each in ``episode_subjects``, the only place an episode's subjects are kept (0030).

    A candidate citing an episode about a new subject adds its pair and never writes the
    episode's own row, on which every write citing the episode would otherwise queue.
    """
    ids, subjects = ([pair[i] for pair in pairs] for i in (0, 1))
    conn.execute(_ADD_PAIRS, {"tenant_id": tenant_id, "ids": ids, "subjects": subjects})


_ADD_PAIRS = """
INSERT INTO episode_subjects (tenant_id, episode_id, subject)
SELECT DISTINCT %(tenant_id)s, p.* FROM unnest(%(ids)s::text[], %(subjects)s::text[]) AS p
ON CONFLICT DO NOTHING
"""


LINKED_IDS = """
    SELECT episode_id FROM episode_subjects
    WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
    UNION ALL
    SELECT source_episode_id FROM fact_versions
    WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
    UNION ALL
    SELECT x.source_episode_id FROM expiries AS x
    JOIN fact_versions AS v
      ON v.tenant_id = x.tenant_id AND v.subject = x.subject
     AND v.attribute = x.attribute AND v.ended_by = x.expiry_id
    WHERE x.tenant_id = %(tenant_id)s AND x.subject = ANY(%(subjects)s)
    UNION ALL
    SELECT source_episode_id FROM conflicts
    WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
    UNION ALL
    SELECT episode_id FROM weak_signals
    WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
"""
"""Ids (repeats included) of the episodes linked to one of ``%(subjects)s`` (a list): naming
one, or the source of a version, an expiry that ended one (an expiry that ended nothing links
no episode), a conflict's challenger or a weak signal of one's keys; each part read through an
index on the subject."""

LINKED_TO_SUBJECTS = "(e.id IN (" + LINKED_IDS + "))"
"""The episode ``e`` is linked to one of ``%(subjects)s``: the rule of export, erasure and legal
holds (what a held subject keeps from purge and erasure), one hashed lookup of the ids."""


def subject_episodes(conn: psycopg.Connection[Any], tenant_id: str, subject: str) -> list[Episode]:
    """Episodes linked to ``subject`` (``LINKED_TO_SUBJECTS``), stubs included, oldest first."""
    with conn.cursor(row_factory=class_row(Episode)) as cur:
        cur.execute(
            # From the linked ids, each episode looked up by its key (OFFSET 0 keeps the
            # planner from turning the lookups into a scan of the tenant's episodes).
            "SELECT episodes.* FROM (SELECT DISTINCT id FROM ("
            + LINKED_IDS
            + ") AS linked (id)) AS linked CROSS JOIN LATERAL (SELECT"
            + _COLUMNS
            + "FROM episodes WHERE tenant_id = %(tenant_id)s AND id = linked.id OFFSET 0)"
            " AS episodes ORDER BY episodes.occurred_at, episodes.id",
            {"tenant_id": tenant_id, "subjects": [subject]},
        )
        return cur.fetchall()


def get_episodes(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: Iterable[str]
) -> dict[str, Episode]:
    """The tenant's episodes (or stubs) among ``episode_ids``, by id; unknown ids are absent."""
    wanted = sorted(set(episode_ids))
    if not wanted:
        return {}
    with conn.cursor(row_factory=class_row(Episode)) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM episodes"
            " WHERE tenant_id = %(tenant_id)s AND id = ANY(%(episode_ids)s)",
            {"tenant_id": tenant_id, "episode_ids": wanted},
        )
        found = cur.fetchall()
    return {episode.id: episode for episode in found}


def episode_subjects(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: Iterable[str]
) -> dict[str, list[str]]:
    """The subjects each of the tenant's episodes among ``episode_ids`` concerns now (its pairs in
    ``episode_subjects``, in byte order as ``get_episodes`` gives them); an episode with none is
    absent."""
    wanted = sorted(set(episode_ids))
    if not wanted:
        return {}
    rows = conn.execute(
        'SELECT episode_id, array_agg(subject ORDER BY subject COLLATE "C") FROM episode_subjects'
        " WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(episode_ids)s)"
        " GROUP BY episode_id",
        {"tenant_id": tenant_id, "episode_ids": wanted},
    ).fetchall()
    return {str(episode_id): list(subjects) for episode_id, subjects in rows}


def episode_times(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: Iterable[str]
) -> dict[str, datetime]:
    """When each of the tenant's episodes (or stubs) among ``episode_ids`` occurred, by id:
    ``get_episodes``'s rows cut to the one column a block without evidence cites them by."""
    wanted = sorted(set(episode_ids))
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT id, occurred_at FROM episodes"
        " WHERE tenant_id = %(tenant_id)s AND id = ANY(%(episode_ids)s)",
        {"tenant_id": tenant_id, "episode_ids": wanted},
    ).fetchall()
    return {str(episode_id): occurred_at for episode_id, occurred_at in rows}
