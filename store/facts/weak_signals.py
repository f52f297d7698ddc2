"""Weak signals: candidates marked ``"strength": "weak"`` wait in a buffer until repeated.

A weak candidate ("often asks for CSV exports") is not written: it is buffered, and its result
is ``buffered``. Its value becomes a fact when the live signals supporting that value come from
at least the attribute's ``weak_quorum`` independent episodes (distinct ids and distinct content
hashes: a copy of the same text under another id adds nothing), or at once when the episode
that carries it is a ``user_confirmation``. The promoted fact goes down the normal write path:
its source is the episode that completed the quorum, its ``valid_from`` the earliest of the
supporting signals', and its result lists the other supporting episodes
(``supporting_episode_ids``). The supporting signals then leave the buffer.

A signal lives for the attribute's ``weak_window_days`` from the system time it was buffered;
an expired signal never counts, and the next weak write to its key drops it. Signals of other
values of a key wait on: a different value never counts towards this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from store.contract.memory import BufferedSignal, BufferPage
from store.contract.results import UpdateResult
from store.contract.values import same_value
from store.db.clock import Clock
from store.db.paging import check_limit, decode_cursor, encode_cursor
from store.episodes import record as episodes
from store.facts import versions
from store.facts.versions import IdFactory, KeyState
from store.facts.writes import Accepted, CitedEpisode, evidence_occurs

# -- the rule (pure) ----------------------------------------------------------------------------


def independent(signals: Sequence[BufferedSignal]) -> list[BufferedSignal]:
    """One signal per content hash (the earliest by valid_from, then episode id), earliest first.

    Each stands for an independent episode: distinct ids and distinct content hashes."""
    earliest: dict[str, BufferedSignal] = {}
    for signal in sorted(signals, key=lambda s: (s.valid_from, s.episode_id)):
        earliest.setdefault(signal.content_hash, signal)
    return list(earliest.values())  # in the order they were seen: earliest first


def promotes(signals: Sequence[BufferedSignal], *, quorum: int, confirmed: bool) -> bool:
    """Whether live signals of one value make it a fact: ``quorum`` independent episodes
    support it, or the episode that brings the latest of them is a confirmation."""
    return bool(signals) and (confirmed or len(independent(signals)) >= quorum)


def supporting_ids(signals: Sequence[BufferedSignal], source: CitedEpisode) -> list[str]:
    """The independent episodes besides ``source`` (and copies of its text), earliest first."""
    return [
        signal.episode_id
        for signal in independent(signals)
        if signal.content_hash != source.content_hash and signal.episode_id != source.id
    ]


# -- the buffer ---------------------------------------------------------------------------------

_COLUMNS = """
    signal_id, subject, attribute, value, episode_id, content_hash, evidence, evidence_verified,
    valid_from, buffered_at, expires_at
"""


def _live(
    conn: psycopg.Connection[Any], tenant_id: str, key: tuple[str, str], now: datetime
) -> list[BufferedSignal]:
    """Drop the key's expired signals; the live ones (the caller holds the key's lock)."""
    params = {"tenant_id": tenant_id, "subject": key[0], "attribute": key[1], "now": now}
    where = (
        " WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s AND attribute = %(attribute)s"
    )
    conn.execute("DELETE FROM weak_signals" + where + " AND expires_at <= %(now)s", params)
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute("SELECT" + _COLUMNS + "FROM weak_signals" + where, params)
        return [BufferedSignal.model_validate(row) for row in cur.fetchall()]


def _insert(conn: psycopg.Connection[Any], tenant_id: str, signal: BufferedSignal) -> None:
    conn.execute(
        "INSERT INTO weak_signals (tenant_id," + _COLUMNS + ") VALUES (%(tenant_id)s,"
        " %(signal_id)s, %(subject)s, %(attribute)s, %(value)s, %(episode_id)s,"
        " %(content_hash)s, %(evidence)s, %(evidence_verified)s, %(valid_from)s,"
        " %(buffered_at)s, %(expires_at)s)",
        {**signal.model_dump(), "value": Jsonb(signal.value), "tenant_id": tenant_id},
    )


@dataclass(frozen=True, slots=True)
class WeakOutcome:
    """What the weak candidates of a call came to: the candidates to write now (strong ones
    and promoted ones, in order), the system time they are written at, the keys' state read at
    that time, and each promoted candidate's other supporting episodes."""

    accepted: list[Accepted]
    clock: Clock
    state_of: KeyState
    supporting: dict[int, list[str]]


def take_weak(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    accepted: list[Accepted],
    *,
    episode: CitedEpisode,
    clock: Clock,
    state_of: KeyState,
    new_id: IdFactory,
    results: dict[int, UpdateResult],
) -> WeakOutcome:
    """Buffer the weak candidates among ``accepted`` (their keys' locks held), setting the
    result of those that wait; promote those whose value the rule now makes a fact.

    System time and the keys' state are read once, here: the writes that follow share them. A
    weak candidate for a key this system time may not write is passed on untouched, for the
    write path to refuse as it refuses any other.
    """
    now = clock()
    state = state_of(now)
    refused = versions.refused_keys(now, state[1])
    kept: list[Accepted] = []
    supporting: dict[int, list[str]] = {}
    waiting: list[str] = []
    for item in accepted:
        if item.candidate.strength != "weak" or item.key in refused:
            kept.append(item)
            continue
        live = _live(conn, tenant_id, item.key, now)
        same = [signal for signal in live if same_value(signal.value, item.value)]
        if not any(signal.episode_id == episode.id for signal in same):
            window = timedelta(days=item.declared.weak_window_days)
            signal = BufferedSignal(
                signal_id=new_id(),
                subject=item.candidate.subject,
                attribute=item.candidate.attribute,
                value=item.value,
                episode_id=episode.id,
                content_hash=episode.content_hash,
                evidence=item.candidate.evidence,
                evidence_verified=evidence_occurs(item.candidate.evidence, episode.text),
                valid_from=item.candidate.valid_from or episode.occurred_at,
                buffered_at=now,
                expires_at=now + window,
            )
            _insert(conn, tenant_id, signal)
            same.append(signal)
        quorum = item.declared.weak_quorum
        confirmed = episode.kind == "user_confirmation"
        if promotes(same, quorum=quorum, confirmed=confirmed):
            conn.execute(
                "DELETE FROM weak_signals WHERE tenant_id = %(tenant_id)s"
                " AND signal_id = ANY(%(ids)s)",
                {"tenant_id": tenant_id, "ids": [signal.signal_id for signal in same]},
            )
            earliest = min(signal.valid_from for signal in same)
            candidate = item.candidate.model_copy(update={"valid_from": earliest})
            kept.append(Accepted(item.index, candidate, item.declared, item.value))
            supporting[item.index] = supporting_ids(same, episode)
        else:
            count = len(independent(same))
            results[item.index] = UpdateResult(
                index=item.index,
                status="buffered",
                reason=f"weak signal: {count} of {quorum} independent episodes support this"
                " value so far",
            )
            waiting.append(item.candidate.subject)
    if waiting:
        episodes.add_subjects(conn, tenant_id, episode.id, waiting)
    kept.sort(key=lambda item: item.index)
    return WeakOutcome(
        accepted=kept, clock=lambda: now, state_of=lambda _: state, supporting=supporting
    )


def record_sources(
    conn: psycopg.Connection[Any], tenant_id: str, promoted: dict[UUID, list[str]]
) -> None:
    """Note every episode each promoted fact (by fact id) stands on: erasing one of them
    retracts the fact only when it was the last (``store.governance.erasure``)."""
    pairs = [(fact_id, episode_id) for fact_id, ids in promoted.items() for episode_id in ids]
    if pairs:
        conn.execute(
            "INSERT INTO fact_sources (tenant_id, fact_id, episode_id)"
            " SELECT %(tenant_id)s, fact_id, episode_id"
            " FROM unnest(%(fact_ids)s::uuid[], %(episode_ids)s::text[]) AS s (fact_id, episode_id)"
            " ON CONFLICT DO NOTHING",
            {
                "tenant_id": tenant_id,
                "fact_ids": [fact_id for fact_id, _ in pairs],
                "episode_ids": [episode_id for _, episode_id in pairs],
            },
        )


def mark_promoted(results: dict[int, UpdateResult], supporting: dict[int, list[str]]) -> None:
    """Name the other supporting episodes on the results of promoted candidates."""
    for index, others in supporting.items():
        result = results[index]
        if result.status == "invalid":
            continue
        reason = result.reason or (
            f"weak signal promoted: {len(others) + 1} independent episodes support this value"
        )
        results[index] = result.model_copy(
            update={"supporting_episode_ids": others, "reason": reason}
        )


def subject_signals(
    conn: psycopg.Connection[Any], tenant_id: str, subject: str
) -> list[BufferedSignal]:
    """Every signal held about ``subject``, live or past its window and not yet purged, oldest
    first: what a subject's export must show."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM weak_signals"
            " WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
            " ORDER BY buffered_at, signal_id",
            {"tenant_id": tenant_id, "subject": subject},
        )
        return [BufferedSignal.model_validate(row) for row in cur.fetchall()]


def list_signals(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str | None,
    attribute: str | None,
    now: datetime,
    limit: int,
    cursor: str | None,
) -> BufferPage:
    """A page of the tenant's live buffered signals, oldest first."""
    after = decode_cursor(cursor) if cursor else None
    params = {
        "tenant_id": tenant_id,
        "subject": subject,
        "attribute": attribute,
        "now": now,
        "after_at": after[0] if after else None,
        "after_id": after[1] if after else None,
        "limit": check_limit(limit) + 1,
    }
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM weak_signals WHERE tenant_id = %(tenant_id)s"
            " AND expires_at > %(now)s"
            " AND (%(subject)s::text IS NULL OR subject = %(subject)s)"
            " AND (%(attribute)s::text IS NULL OR attribute = %(attribute)s)"
            " AND (%(after_at)s::timestamptz IS NULL"
            "      OR (buffered_at, signal_id) > (%(after_at)s, %(after_id)s::uuid))"
            " ORDER BY buffered_at, signal_id LIMIT %(limit)s",
            params,
        )
        rows = [BufferedSignal.model_validate(row) for row in cur.fetchall()]
    page = rows[:limit]
    more = len(rows) > limit
    next_cursor = (
        encode_cursor([page[-1].buffered_at.isoformat(), str(page[-1].signal_id)]) if more else None
    )
    return BufferPage(signals=page, next_cursor=next_cursor)
