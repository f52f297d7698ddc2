"""Episode outcomes: what came of an episode, the mark that lets it count as experience.

An episode has at most one current outcome. Recording another supersedes it (the old row stays,
with ``superseded_at``, as the episode's history); recording the same one again changes nothing,
so a retried request is harmless. An erased episode (a stub) takes no outcome and keeps none.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from store.contract.memory import EpisodeOutcome, OutcomeInput
from store.errors import Conflict, NotFound

_COLUMNS = """
    episode_id, revision, status, outcome_receipt_id, verified, human_intervened,
    budget_exhausted, recorded_at, status <> 'unknown' AS observed
"""
"""An outcome as its JSON names it; ``unknown`` is the one status that reports none observed."""


def current_outcomes(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: Iterable[str]
) -> dict[str, EpisodeOutcome]:
    """The current outcome of each of ``episode_ids`` that has one, by episode id."""
    wanted = sorted(set(episode_ids))
    if not wanted:
        return {}
    with conn.cursor(row_factory=class_row(EpisodeOutcome)) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM episode_outcomes"
            " WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(episode_ids)s)"
            " AND superseded_at IS NULL",
            {"tenant_id": tenant_id, "episode_ids": wanted},
        )
        return {outcome.episode_id: outcome for outcome in cur.fetchall()}


def outcome_history(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: Iterable[str]
) -> list[EpisodeOutcome]:
    """Every outcome ``episode_ids`` were given, by episode then revision (the last is the
    current one)."""
    with conn.cursor(row_factory=class_row(EpisodeOutcome)) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM episode_outcomes"
            " WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(episode_ids)s)"
            " ORDER BY episode_id, revision",
            {"tenant_id": tenant_id, "episode_ids": sorted(set(episode_ids))},
        )
        return cur.fetchall()


def record_outcome(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode_id: str,
    outcome: OutcomeInput,
    now: datetime,
) -> EpisodeOutcome:
    """Make ``outcome`` the episode's current one, superseding any other; the same one again
    is returned unchanged.

    NotFound if the tenant has no such episode; Conflict if it was erased (its stub keeps no
    outcome). The episode's row is locked first, so outcomes of one episode are recorded one
    at a time and revisions never collide.
    """
    params: dict[str, Any] = {"tenant_id": tenant_id, "episode_id": episode_id, "now": now}
    found = conn.execute(
        "SELECT coalesce(erased_at, purged_at) FROM episodes"
        " WHERE tenant_id = %(tenant_id)s AND id = %(episode_id)s FOR NO KEY UPDATE",
        params,
    ).fetchone()
    if found is None:
        raise NotFound(f"episode {episode_id!r} does not exist", field="episode_id")
    if found[0] is not None:
        raise Conflict(
            f"episode {episode_id!r} was erased or purged; its stub takes no outcome",
            field="episode_id",
        )
    current = current_outcomes(conn, tenant_id, [episode_id]).get(episode_id)
    if current is not None and _same(current, outcome):
        return current
    last = conn.execute(
        "SELECT coalesce(max(revision), 0) FROM episode_outcomes"
        " WHERE tenant_id = %(tenant_id)s AND episode_id = %(episode_id)s",
        params,
    ).fetchone()
    params["revision"] = (last[0] if last else 0) + 1
    conn.execute(
        "UPDATE episode_outcomes SET superseded_at = %(now)s"
        " WHERE tenant_id = %(tenant_id)s AND episode_id = %(episode_id)s"
        " AND superseded_at IS NULL",
        params,
    )
    with conn.cursor(row_factory=class_row(EpisodeOutcome)) as cur:
        cur.execute(
            """
            INSERT INTO episode_outcomes (
                tenant_id, episode_id, revision, status, outcome_receipt_id, verified,
                human_intervened, budget_exhausted, recorded_at
            ) VALUES (
                %(tenant_id)s, %(episode_id)s, %(revision)s, %(status)s, %(outcome_receipt_id)s,
                %(verified)s, %(human_intervened)s, %(budget_exhausted)s, %(now)s
            )
            RETURNING"""
            + _COLUMNS,
            {**params, **outcome.model_dump()},
        )
        row = cur.fetchone()
    assert row is not None  # an INSERT ... RETURNING returns its row
    return row


def _same(current: EpisodeOutcome, outcome: OutcomeInput) -> bool:
    return current.model_dump(include=set(OutcomeInput.model_fields)) == outcome.model_dump()
