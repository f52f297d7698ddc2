"""One call's candidates written against their keys, in as few round trips as the rules allow.

Everything the call reads is sent at once, behind its keys' locks: the episode, the
declarations, the keys' current knowledge. Everything it writes is sent after the plans, and
what the writes return is read last. On a connection in pipeline mode, with the transaction's
BEGIN before and its COMMIT after (``Transactions.pipelined``), that is two round trips for a call
of distinct keys; on a plain connection the same statements run one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from store.attributes.names import ask_renamed_targets, declared_names
from store.attributes.registry import ask_attributes
from store.contract.facts import MemoryUpdate
from store.contract.results import UpdateResult
from store.db import tenants
from store.db.clock import Clock
from store.db.locks import lock_keys
from store.episodes import record as episodes
from store.facts import versions, weak_signals
from store.facts.temporal import Plan
from store.facts.versions import IdFactory, Key
from store.facts.writes import (
    Accepted,
    CitedEpisode,
    check_candidate,
    invalid_result,
    resolve_candidate,
)
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE, Trace
from store.subjects import merged_ids
from store.subjects import names as subject_names

Results = Callable[[], list[UpdateResult]]
"""Reads back what a call wrote and gives one result per candidate, in the candidates' order."""


def send_candidates(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode_id: str,
    candidates: Sequence[MemoryUpdate | UpdateResult],
    clock: Clock,
    asked_at: datetime,
    new_id: IdFactory,
    trace: Trace = NO_TRACE,
) -> Results:
    """Send the statements of candidates citing one episode (the caller's, never the model's);
    the returned call gives their results once those statements ran.

    ``asked_at`` is the call's time, read before its transaction: an old attribute name is
    judged within its dual-read window then. Writes record the time read under their locks.

    ``candidates`` are as ``validate_candidate`` left them. Every key a candidate
    may write is locked (in lock-id order) before system time is read, once, so writers queued
    on a key record in the order they commit. A refused candidate writes nothing and never
    undoes the others: each is checked before anything of it is written. A key's later
    candidates see what its earlier ones wrote.
    """
    results: dict[int, UpdateResult] = {}
    proposed: list[tuple[int, MemoryUpdate]] = []
    for index, candidate in enumerate(candidates):
        if isinstance(candidate, UpdateResult):
            results[index] = candidate
        else:
            proposed.append((index, candidate))
    proposed, keys = _lock_survivor_keys(conn, tenant_id, proposed)
    names = {candidate.attribute for _, candidate in proposed}
    episode_of = episodes.ask_cited_episode(conn, tenant_id, episode_id)
    declared_of = ask_attributes(conn, tenant_id, names)
    unverified_of = tenants.ask_unverified_evidence(conn, tenant_id)
    renamed_of = ask_renamed_targets(conn, tenant_id, names, now=asked_at)
    state_of = versions.ask_key_state(conn, tenant_id=tenant_id, keys=keys) if keys else None
    episode, declared, unverified = episode_of(), declared_of(), unverified_of()
    renamed = renamed_of()
    migrated = {i: u.attribute for i, u in proposed if u.attribute in renamed}
    if migrated:
        # An old name within its dual-read window writes the new one: those keys are locked
        # now (a rare second round trip), and the call's state is read again with them.
        proposed = [
            (i, u.model_copy(update={"attribute": renamed[u.attribute]}) if i in migrated else u)
            for i, u in proposed
        ]
        if state_of is not None:
            state_of(asked_at)  # read, so the next statements' answers come in order
        keys = _keys(proposed)
        lock_keys(conn, tenant_id=tenant_id, keys=keys)
        declared |= ask_attributes(conn, tenant_id, set(renamed.values()))()
        state_of = versions.ask_key_state(conn, tenant_id=tenant_id, keys=keys) if keys else None
    # Only a refusal reads the tenant's names, for the reason's closest ones.
    misnamed = any(candidate.attribute not in declared for _, candidate in proposed)
    known_names = declared_names(conn, tenant_id) if misnamed else ()
    accepted = []
    for index, candidate in proposed:
        checked = check_candidate(
            candidate,
            index,
            episode=episode,
            attribute=declared.get(candidate.attribute),
            buffers_weak=True,
            unverified=unverified,
            declared=known_names,
        )
        if isinstance(checked, UpdateResult):
            results[index] = checked
        else:
            accepted.append(Accepted(index, candidate, *checked))
    finish = None
    supporting: dict[int, list[str]] = {}
    if state_of is not None and any(item.candidate.strength == "weak" for item in accepted):
        # Weak candidates are buffered; those the buffer promotes are written like the rest.
        weak = weak_signals.take_weak(
            conn,
            tenant_id,
            accepted,
            episode=episode,
            clock=clock,
            state_of=state_of,
            new_id=new_id,
            results=results,
        )
        accepted, clock, supporting = weak.accepted, weak.clock, weak.supporting
        state_of = weak.state_of
    if accepted and state_of is not None:
        finish = _send_writes(
            conn,
            tenant_id,
            accepted,
            episode=episode,
            state_of=state_of,
            results=results,
            clock=clock,
            new_id=new_id,
            trace=trace,
            supporting=supporting,
        )

    def shaped() -> list[UpdateResult]:
        if finish is not None:
            finish()
        weak_signals.mark_promoted(results, supporting)
        for index, old_name in migrated.items():
            results[index].migrated_from = old_name
        return [results[index] for index in range(len(candidates))]

    return shaped


def _lock_survivor_keys(
    conn: psycopg.Connection[Any], tenant_id: str, proposed: list[tuple[int, MemoryUpdate]]
) -> tuple[list[tuple[int, MemoryUpdate]], list[Key]]:
    """Lock the candidates' keys; a merged subject's id names its survivor's
    (``store.subjects.merges``).

    The merged ids are asked once the tenant's lock is held, which a merge holds exclusively:
    it has committed, or not begun. The candidates as they will be written, and their keys.
    """
    keys = _keys(proposed)
    if keys:
        lock_keys(conn, tenant_id=tenant_id, keys=keys)
    survivors = merged_ids.resolve_subjects(conn, tenant_id, (u.subject for _, u in proposed))
    if not survivors:
        return proposed, keys
    moved = [
        (i, u.model_copy(update={"subject": survivors[u.subject]}) if u.subject in survivors else u)
        for i, u in proposed
    ]
    keys = _keys(moved)
    lock_keys(conn, tenant_id=tenant_id, keys=keys)
    return moved, keys


def _keys(proposed: Sequence[tuple[int, MemoryUpdate]]) -> list[Key]:
    """The keys the candidates may write, sorted (the lock order)."""
    return sorted({(u.subject, u.attribute) for _, u in proposed if u.change != "no_change"})


def _send_writes(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    accepted: list[Accepted],
    *,
    episode: CitedEpisode,
    state_of: versions.KeyState,
    results: dict[int, UpdateResult],
    clock: Clock,
    new_id: IdFactory,
    trace: Trace,
    supporting: dict[int, list[str]],
) -> Callable[[], None]:
    """Plan and send the accepted candidates' writes at the system time read under their
    locks; the returned call sets their results from what the writes returned. A weak signal
    promoted (its index in ``supporting``) notes every episode its new fact stands on."""
    now = clock()
    current, last = state_of(now)
    refused = versions.refused_keys(now, last)
    for item in accepted:
        if item.key in refused:
            error = refused[item.key]
            results[item.index] = invalid_result(item.index, error.detail, error.field)
    written = [item for item in accepted if item.key not in refused]
    accepted_keys = {item.index: item.key for item in written}
    writes = versions.PendingWrites(tenant_id=tenant_id, now=now, new_id=new_id)
    planned: dict[int, tuple[Plan, UUID | None]] = {}
    seen: set[Key] = set()
    for item in written:
        if item.key in seen:  # an earlier candidate of this call may have changed it
            writes.flush(conn)
            current |= versions.load_current_keys(
                conn, tenant_id=tenant_id, keys=[item.key], now=now
            )
        seen.add(item.key)
        subject, attribute = item.key
        outcome = resolve_candidate(
            conn,
            tenant_id,
            item,
            episode=episode,
            current=current[item.key],
            now=now,
            new_id=new_id,
        )
        if isinstance(outcome, UpdateResult):
            results[item.index] = outcome
        else:
            shown = writes.add(
                outcome, subject=subject, attribute=attribute, current=current[item.key]
            )
            planned[item.index] = (outcome, shown)
    writes.flush(conn)
    weak_signals.record_sources(
        conn,
        tenant_id,
        {
            plan.shown.fact_id: [episode.id, *supporting[index]]
            for index, (plan, _) in planned.items()
            if supporting.get(index) and plan.status == "written" and plan.shown is not None
        },
    )
    # Each version written leaves its receipt, in the same transaction (and round trip).
    receipts.leave_receipts(
        conn,
        tenant_id,
        [
            touched.fact_written(
                *accepted_keys[index], version_id=shown, now=now, source_episode_id=episode.id
            )
            for index, (_, shown) in planned.items()
            if shown is not None
        ],
        action="write",
        trace=trace,
        now=now,
    )
    if written:
        # Last, so the episode's row, which every call citing it updates, is locked only until
        # the COMMIT that follows.
        subjects = [item.candidate.subject for item in written]
        episodes.add_subjects(conn, tenant_id, episode.id, subjects)
        subject_names.note(
            conn,
            tenant_id,
            subjects,
            [
                (i.candidate.subject, i.candidate.subject_name)
                for i in written
                if i.candidate.subject_name
            ],
            episode_id=episode.id,
            episode_text=episode.text,
            now=now,
        )

    def finish() -> None:
        for index, (plan, shown) in planned.items():
            fact = None if shown is None else writes.fact(shown)
            results[index] = UpdateResult(
                index=index, status=plan.status, reason=plan.reason, fact=fact
            )

    return finish
