"""The write path for facts: validate a candidate, resolve it against its key, commit it.

Each assertion or expiry is one transaction holding its key's advisory lock, so the temporal
rules of ``store.temporal`` always see the key's latest committed state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

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


def apply_update(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode: Episode,
    update: MemoryUpdate,
    index: int,
    clock: Clock,
    new_id: IdFactory,
) -> UpdateResult:
    """Apply one validated candidate citing ``episode`` (the caller's, never the model's).

    System time is read after the key's lock is held, so writers queued on one key record
    in the order they commit.
    """
    checked = check_candidate(conn, tenant_id, episode=episode, update=update, index=index)
    if isinstance(checked, UpdateResult):
        return checked
    declared, value = checked
    key = {"tenant_id": tenant_id, "subject": update.subject, "attribute": update.attribute}
    try:
        now = versions.hold_key(conn, clock, **key)
    except InvalidInput as error:
        return _invalid(index, error.detail, error.field)
    new = Version(
        fact_id=new_id(),
        value=value,
        valid_from=update.valid_from or episode.occurred_at,
        valid_to=None,
        source_episode_id=episode.id,
        source_kind=episode.kind,
        evidence=update.evidence,
        evidence_verified=evidence_occurs(update.evidence, episode.text),
        schema_version=declared.schema_version,
    )
    current = versions.load_current(conn, now=now, **key)
    plan = plan_assert([as_version(row) for row in current], new)
    episodes.add_subjects(conn, tenant_id, episode.id, [update.subject])
    if plan.status == "conflict":
        settled = _settle_equal_start(
            conn,
            plan,
            new=new,
            declared=declared,
            current=current,
            key=key,
            index=index,
            now=now,
            new_id=new_id,
        )
        if isinstance(settled, UpdateResult):
            return settled
        plan = settled
    fact = versions.apply_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    return UpdateResult(index=index, status=plan.status, reason=plan.reason, fact=fact)


def check_candidate(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode: Episode,
    update: MemoryUpdate,
    index: int,
) -> tuple[Attribute, JsonValue] | UpdateResult:
    """The declared attribute and typed value of a candidate, or the result that refuses it."""
    if update.change == "no_change":
        return UpdateResult(index=index, status="ignored", reason="change is no_change")
    if update.strength == "weak":
        return _invalid(index, "weak signals not supported yet", "strength")
    if update.value is None:
        return _invalid(index, "value is required unless change is no_change", "value")
    if episode.erased_at is not None:
        return _invalid(index, f"episode {episode.id!r} was erased", "episode")
    attribute = find_attribute(conn, tenant_id, update.attribute)
    if attribute is None:
        return _invalid(index, f"attribute {update.attribute!r} is not declared", "attribute")
    try:
        value = parse_value(update.value, attribute.value_type, enum_values=attribute.enum_values)
    except ValueParseError as error:
        return _invalid(index, f"not a {attribute.value_type}: {error}", "value")
    return attribute, value


def _settle_equal_start(
    conn: psycopg.Connection[Any],
    plan: Plan,
    *,
    new: Version,
    declared: Attribute,
    current: list[Fact],
    key: dict[str, str],
    index: int,
    now: datetime,
    new_id: IdFactory,
) -> Plan | UpdateResult:
    """A different value starting where the incumbent starts, under the attribute's policy:
    the plan that replaces the incumbent, or the result that keeps it (outranked, or a
    conflict logged for settlement)."""
    incumbent = plan.shown
    assert incumbent is not None
    outcome = equal_start_outcome(
        declared.on_equal_start,
        newcomer_kind=new.source_kind,
        incumbent_kind=incumbent.source_kind,
        overrides=declared.source_ranks,
    )
    if outcome == "outranked":
        shown = next(row for row in current if row.version_id == incumbent.version_id)
        return UpdateResult(index=index, status="unchanged", reason="outranked", fact=shown)
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
        return UpdateResult(index=index, status="conflict", reason=reason, conflict_id=conflict_id)
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
