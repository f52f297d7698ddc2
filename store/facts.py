"""The write path for facts: validate candidates, resolve each against its key, commit them.

The candidates of one call, and each expiry, are one transaction holding its keys' locks, so
the temporal rules of ``store.temporal`` always see each key's latest committed state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from pydantic import ValidationError

from store import conflicts, episodes, versions
from store.attributes import find_attribute, get_attribute
from store.clock import Clock
from store.errors import InvalidInput
from store.models import Attribute, Episode, Fact, MemoryUpdate
from store.policies import equal_start_outcome
from store.results import ExpireResult, UpdateResult
from store.temporal import Plan, Version, plan_assert, plan_expire, plan_replace
from store.text import one_line
from store.values import JsonValue, ValueParseError, parse_value
from store.versions import IdFactory, as_version


def evidence_occurs(evidence: str, text: str | None) -> bool:
    """Whether the quoted evidence occurs in the episode text (whitespace folded)."""
    folded = one_line(evidence)
    return bool(folded) and text is not None and folded in one_line(text)


def _invalid(index: int, reason: str, field: str | None) -> UpdateResult:
    return UpdateResult(index=index, status="invalid", reason=reason, field=field)


def validate_candidate(candidate: object, index: int) -> MemoryUpdate | UpdateResult:
    """Parse a candidate's shape; a broken one becomes an ``invalid`` result, not an error."""
    try:
        return MemoryUpdate.model_validate(candidate)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        return _invalid(index, first["msg"], field)


def check_candidate(
    update: MemoryUpdate, index: int, *, episode: Episode, attribute: Attribute | None
) -> tuple[Attribute, JsonValue] | UpdateResult:
    """The declaration (``attribute``, None if undeclared) and typed value of a candidate, or
    the result that refuses it."""
    if update.change == "no_change":
        return UpdateResult(index=index, status="ignored", reason="change is no_change")
    if update.strength == "weak":
        return _invalid(index, "weak signals not supported yet", "strength")
    if update.value is None:
        return _invalid(index, "value is required unless change is no_change", "value")
    if episode.erased_at is not None:
        return _invalid(index, f"episode {episode.id!r} was erased", "episode")
    if attribute is None:
        return _invalid(index, f"attribute {update.attribute!r} is not declared", "attribute")
    try:
        value = parse_value(update.value, attribute.value_type, enum_values=attribute.enum_values)
    except ValueParseError as error:
        return _invalid(index, f"not a {attribute.value_type}: {error}", "value")
    return attribute, value


@dataclass(frozen=True, slots=True)
class Accepted:
    """A candidate that passed its checks: what it asserts, and under which declaration."""

    index: int
    update: MemoryUpdate
    declared: Attribute
    value: JsonValue

    @property
    def key(self) -> tuple[str, str]:
        """The (subject, attribute) key it writes."""
        return self.update.subject, self.update.attribute

    def new_fact(self, episode: Episode, fact_id: UUID) -> Version:
        """The fact it asserts, stamped with its source episode, open from its start."""
        return Version(
            fact_id=fact_id,
            value=self.value,
            valid_from=self.update.valid_from or episode.occurred_at,
            valid_to=None,
            source_episode_id=episode.id,
            source_kind=episode.kind,
            evidence=self.update.evidence,
            evidence_verified=evidence_occurs(self.update.evidence, episode.text),
            schema_version=self.declared.schema_version,
        )


def apply_candidates(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode_id: str,
    updates: Sequence[MemoryUpdate | UpdateResult],
    clock: Clock,
    new_id: IdFactory,
) -> list[UpdateResult]:
    """Apply candidates citing one episode (the caller's, never the model's) in one transaction.

    ``updates`` are the candidates as ``validate_candidate`` left them. Every key to write is
    locked (in lock-id order) before system time is read, once, so writers queued on a key
    record in the order they commit. A refused candidate writes nothing and never undoes the
    others: each is checked before anything of it is written. Results keep the candidates'
    order, and a key's later candidates see what its earlier ones wrote.
    """
    episode = episodes.get_episode(conn, tenant_id, episode_id)
    results: dict[int, UpdateResult] = {}
    declared: dict[str, Attribute | None] = {}
    accepted = []
    for index, update in enumerate(updates):
        if isinstance(update, UpdateResult):
            results[index] = update
            continue
        if update.attribute not in declared:
            declared[update.attribute] = find_attribute(conn, tenant_id, update.attribute)
        checked = check_candidate(
            update, index, episode=episode, attribute=declared[update.attribute]
        )
        if isinstance(checked, UpdateResult):
            results[index] = checked
        else:
            accepted.append(Accepted(index, update, *checked))
    if accepted:
        _write_accepted(
            conn, tenant_id, accepted, episode=episode, results=results, clock=clock, new_id=new_id
        )
    return [results[index] for index in range(len(updates))]


def _write_accepted(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    accepted: list[Accepted],
    *,
    episode: Episode,
    results: dict[int, UpdateResult],
    clock: Clock,
    new_id: IdFactory,
) -> None:
    now, current, refused = versions.hold_keys(
        conn, clock, tenant_id=tenant_id, keys=[item.key for item in accepted]
    )
    for item in accepted:
        if item.key in refused:
            error = refused[item.key]
            results[item.index] = _invalid(item.index, error.detail, error.field)
    written = [item for item in accepted if item.key not in refused]
    keys = [item.key for item in written]
    writes = versions.PendingWrites(tenant_id=tenant_id, now=now, new_id=new_id)
    planned: dict[int, tuple[Plan, UUID | None]] = {}
    for position, item in enumerate(written):
        if item.key in keys[:position]:  # an earlier candidate of this call may have changed it
            writes.flush(conn)
            current |= versions.load_current_keys(
                conn, tenant_id=tenant_id, keys=[item.key], now=now
            )
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
    for index, (plan, shown) in planned.items():
        fact = None if shown is None else writes.fact(shown)
        results[index] = UpdateResult(
            index=index, status=plan.status, reason=plan.reason, fact=fact
        )
    if written:
        episodes.add_subjects(conn, tenant_id, episode.id, [subject for subject, _ in keys])


def resolve_candidate(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    item: Accepted,
    *,
    episode: Episode,
    current: list[Fact],
    now: datetime,
    new_id: IdFactory,
) -> Plan | UpdateResult:
    """What an accepted candidate does to its key's ``current`` knowledge (the caller holds the
    key's lock): the plan to write, or the result that writes no version.

    A different value starting where an incumbent starts goes by the attribute's policy: a
    plan that replaces the incumbent, or a result that keeps it (outranked, or a conflict
    logged for settlement).
    """
    subject, attribute = item.key
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    new = item.new_fact(episode, new_id())
    plan = plan_assert([as_version(row) for row in current], new)
    incumbent = plan.shown
    if plan.status != "conflict" or incumbent is None:
        return plan
    declared = item.declared
    outcome = equal_start_outcome(
        declared.on_equal_start,
        newcomer_kind=new.source_kind,
        incumbent_kind=incumbent.source_kind,
        overrides=declared.source_ranks,
    )
    if outcome == "outranked":
        shown = next(row for row in current if row.version_id == incumbent.version_id)
        return UpdateResult(index=item.index, status="unchanged", reason="outranked", fact=shown)
    if outcome in {"conflict", "dispute"}:
        conflict_id = conflicts.log_conflict(
            conn,
            new=new,
            incumbent=incumbent,
            policy=declared.on_equal_start,
            disputed=outcome == "dispute",
            now=now,
            new_id=new_id,
            **key,
        )
        reason = (
            "disputed: a source of equal rank starts a different value here"
            if outcome == "dispute"
            else plan.reason
        )
        return UpdateResult(
            index=item.index, status="conflict", reason=reason, conflict_id=conflict_id
        )
    conflicts.follow_replacement(
        conn, valid_from=incumbent.valid_from, replaced=incumbent.fact_id, by=new.fact_id, **key
    )
    return plan_replace(incumbent, new)


def expire(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attribute: str,
    at: datetime,
    source_episode: Episode,
    clock: Clock,
    new_id: IdFactory,
) -> ExpireResult:
    """End the value valid at ``at`` (no successor), citing the episode that said so."""
    get_attribute(conn, tenant_id, attribute)
    if source_episode.erased_at is not None:
        raise InvalidInput(f"episode {source_episode.id!r} was erased", field="source_episode_id")
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    now = versions.hold_key(conn, clock, **key)
    current = versions.load_current(conn, now=now, **key)
    expiry_id = new_id()
    plan = plan_expire([as_version(row) for row in current], at=at, expiry_id=expiry_id)
    if plan.status == "invalid":
        raise InvalidInput(plan.reason or "invalid expiry", field="at")
    # Logged even when it changes nothing now: a later retraction replays the key's log, and
    # without the retracted fact this expiry may end another value.
    conn.execute(
        """
        INSERT INTO expiries (tenant_id, expiry_id, subject, attribute, at, source_episode_id,
                              recorded_at)
        VALUES (%(tenant_id)s, %(expiry_id)s, %(subject)s, %(attribute)s, %(at)s,
                %(source_episode_id)s, %(now)s)
        """,
        {
            **key,
            "expiry_id": expiry_id,
            "at": at,
            "source_episode_id": source_episode.id,
            "now": now,
        },
    )
    episodes.add_subjects(conn, tenant_id, source_episode.id, [subject])
    if plan.status == "unchanged":
        return ExpireResult(status="unchanged", expiry_id=expiry_id)
    fact = versions.apply_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    return ExpireResult(status="expired", expiry_id=expiry_id, fact=fact)
