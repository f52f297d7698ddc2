"""The extraction queue's statements: one job per episode sent for extraction (migration 0020).

A job holds no content. Claiming crosses tenants through ``sgam_claim_extractions`` (an
owner-defined function, as the key lookups are); everything else runs in a transaction of the
job's tenant, behind row-level security. Only the holder of a job's current lease may finish
it: a finish under a lease that expired and was taken again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.contract.memory import CandidateOutcome, ExtractionState, JobStatus
from store.contract.results import UpdateResult


@dataclass(frozen=True, slots=True)
class Claim:
    """A leased job: whose, which episode, and the lease that lets its holder finish it."""

    tenant_id: str
    episode_id: str
    lease_id: UUID


@dataclass(frozen=True, slots=True)
class Queued:
    """An episode to queue as it is recorded: under which prompt, and whether already leased
    (for ``lease`` long, by ``lease_id``) by a caller extracting it before answering."""

    prompt_version: str
    lease_id: UUID | None = None
    lease: timedelta = timedelta(minutes=5)


def enqueue(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    episode_id: str,
    *,
    now: datetime,
    prompt_version: str,
    lease: tuple[UUID, datetime] | None = None,
) -> bool:
    """Queue an episode for extraction, or, with ``lease``, queue it already leased (an
    extraction made before answering). An episode already queued keeps its job: False."""
    lease_id, until = lease if lease is not None else (None, None)
    row = conn.execute(
        "INSERT INTO extraction_jobs (tenant_id, episode_id, status, prompt_version, attempts,"
        " queued_at, run_after, lease_id, leased_until)"
        " VALUES (%(tenant)s, %(episode)s, 'queued', %(version)s, %(attempts)s, %(now)s,"
        " %(now)s, %(lease)s, %(until)s)"
        " ON CONFLICT (tenant_id, episode_id) DO NOTHING RETURNING 1",
        {
            "tenant": tenant_id,
            "episode": episode_id,
            "version": prompt_version,
            "attempts": 0 if lease is None else 1,
            "now": now,
            "lease": lease_id,
            "until": until,
        },
    ).fetchone()
    return row is not None


def claim(
    conn: psycopg.Connection[Any], *, wanted: int, now: datetime, lease: timedelta
) -> list[Claim]:
    """Lease at most ``wanted`` due jobs of any tenant, each counted as an attempt."""
    rows = conn.execute(
        "SELECT tenant_id, episode_id, lease_id FROM sgam_claim_extractions(%s, %s, %s)",
        (wanted, now, lease),
    ).fetchall()
    return [Claim(str(tenant), str(episode), lease_id) for tenant, episode, lease_id in rows]


def hold(conn: psycopg.Connection[Any], job: Claim, *, now: datetime) -> int | None:
    """Lock the job if ``job``'s lease is still its current one and has not run out; its
    attempts so far (this one included), or None when the lease is no longer held."""
    row = conn.execute(
        "SELECT attempts FROM extraction_jobs WHERE tenant_id = %s AND episode_id = %s"
        " AND lease_id = %s AND leased_until > %s FOR UPDATE",
        (job.tenant_id, job.episode_id, job.lease_id, now),
    ).fetchone()
    return None if row is None else int(row[0])


def finish_done(
    conn: psycopg.Connection[Any], job: Claim, results: list[UpdateResult], *, now: datetime
) -> None:
    """Mark a held job done, keeping each candidate's status and reason."""
    outcomes = [
        CandidateOutcome(index=r.index, status=r.status, reason=r.reason).model_dump()
        for r in results
    ]
    conn.execute(
        "UPDATE extraction_jobs SET status = 'done', results = %s, finished_at = %s,"
        " lease_id = NULL, leased_until = NULL, last_error = NULL"
        " WHERE tenant_id = %s AND episode_id = %s",
        (Jsonb(outcomes), now, job.tenant_id, job.episode_id),
    )


def finish_failed(
    conn: psycopg.Connection[Any],
    job: Claim,
    *,
    error: str,
    now: datetime,
    max_attempts: int,
    backoff: timedelta,
) -> JobStatus:
    """Record a held job's failed attempt: ``failed`` with its next try at ``now + backoff``,
    or ``dead`` once ``max_attempts`` were made. Returns the new status."""
    row = conn.execute(
        "UPDATE extraction_jobs SET"
        " status = CASE WHEN attempts >= %(max)s THEN 'dead' ELSE 'failed' END,"
        " run_after = %(next)s, last_error = %(error)s, lease_id = NULL, leased_until = NULL,"
        " finished_at = CASE WHEN attempts >= %(max)s THEN %(now)s END"
        " WHERE tenant_id = %(tenant)s AND episode_id = %(episode)s RETURNING status",
        {
            "max": max_attempts,
            "next": now + backoff,
            "error": error,
            "now": now,
            "tenant": job.tenant_id,
            "episode": job.episode_id,
        },
    ).fetchone()
    status: JobStatus = row[0] if row else "dead"
    return status


def requeue_dead(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str, *, now: datetime
) -> JobStatus | None:
    """Requeue a dead job (attempts start again). Returns the job's status before: ``dead``
    when it was requeued, another when it was left alone, None when the episode has none."""
    row = conn.execute(
        "SELECT status FROM extraction_jobs WHERE tenant_id = %s AND episode_id = %s FOR UPDATE",
        (tenant_id, episode_id),
    ).fetchone()
    if row is None:
        return None
    if row[0] == "dead":
        conn.execute(
            "UPDATE extraction_jobs SET status = 'queued', attempts = 0, queued_at = %(now)s,"
            " run_after = %(now)s, finished_at = NULL"
            " WHERE tenant_id = %(tenant)s AND episode_id = %(episode)s",
            {"now": now, "tenant": tenant_id, "episode": episode_id},
        )
    status: JobStatus = row[0]
    return status


def job_state(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str
) -> ExtractionState | None:
    """The episode's extraction job, or None when it has none."""
    with conn.cursor(row_factory=class_row(ExtractionState)) as cur:
        cur.execute(
            "SELECT status, prompt_version, attempts, queued_at, run_after, finished_at,"
            " last_error, coalesce(results, '[]'::jsonb) AS candidates FROM extraction_jobs"
            " WHERE tenant_id = %s AND episode_id = %s",
            (tenant_id, episode_id),
        )
        return cur.fetchone()


def queue_lag(conn: psycopg.Connection[Any], *, now: datetime) -> float:
    """Seconds since the oldest job still waiting (any tenant) was queued; 0 when none."""
    row = conn.execute("SELECT sgam_extraction_lag(%s)", (now,)).fetchone()
    return float(row[0]) if row else 0.0
