"""The write path for facts: validate a candidate, resolve it against its key, commit it.

Each assertion or expiry is one transaction holding its key's advisory lock, so the temporal
rules of ``store.temporal`` always see the key's latest committed state.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from pydantic import ValidationError

from store import episodes, versions
from store.attributes import find_attribute, get_attribute
from store.clock import Clock
from store.errors import InvalidInput
from store.locks import lock_key
from store.models import Episode, ExpireResult, Fact, MemoryUpdate, UpdateResult
from store.temporal import Plan, Version, plan_assert, plan_expire
from store.values import ValueParseError, canonical, parse_value
from store.versions import IdFactory

_WHITESPACE = re.compile(r"\s+")


def fold_whitespace(text: str) -> str:
    """Collapse runs of whitespace so quotes match across line breaks and spacing."""
    return _WHITESPACE.sub(" ", text).strip()


def evidence_occurs(evidence: str, text: str | None) -> bool:
    """Whether the quoted evidence occurs in the episode text (whitespace folded)."""
    folded = fold_whitespace(evidence)
    return bool(folded) and text is not None and folded in fold_whitespace(text)


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

    key = {"tenant_id": tenant_id, "subject": update.subject, "attribute": update.attribute}
    lock_key(conn, **key)
    now = clock()
    try:
        _require_forward_time(conn, now=now, **key)
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
        schema_version=attribute.schema_version,
    )
    current = versions.load_current(conn, **key)
    plan = plan_assert([row.as_version() for row in current], new)
    episodes.add_subjects(conn, tenant_id, episode.id, [update.subject])
    if plan.status == "conflict":
        assert plan.subject_version is not None
        conflict_id = _log_conflict(
            conn,
            new=new,
            incumbent=plan.subject_version,
            policy=attribute.on_equal_start,
            now=now,
            new_id=new_id,
            **key,
        )
        return UpdateResult(
            index=index, status="conflict", reason=plan.reason, conflict_id=conflict_id
        )
    fact = _run_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    return UpdateResult(
        index=index,
        status=plan.status,
        reason=plan.reason,
        fact=fact,
    )


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
    lock_key(conn, **key)
    now = clock()
    _require_forward_time(conn, now=now, **key)
    current = versions.load_current(conn, **key)
    expiry_id = new_id()
    plan = plan_expire([row.as_version() for row in current], at=at, expiry_id=expiry_id)
    if plan.status == "invalid":
        raise InvalidInput(plan.reason or "invalid expiry", field="at")
    if plan.status == "unchanged":
        return ExpireResult(status="unchanged")
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
    fact = _run_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    return ExpireResult(status="expired", expiry_id=expiry_id, fact=fact)


def _require_forward_time(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
) -> None:
    last = versions.last_system_time(
        conn, tenant_id=tenant_id, subject=subject, attribute=attribute
    )
    if last is not None and now < last:
        raise InvalidInput(
            f"system time {now.isoformat()} is before this key's last change"
            f" ({last.isoformat()}); writes may not go back in system time",
            field="now",
        )


def _run_plan(
    conn: psycopg.Connection[Any],
    plan: Plan,
    *,
    current: list[versions.VersionRow],
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
    new_id: IdFactory,
) -> Fact | None:
    """Retire and insert what the plan says; return the fact the caller should see."""
    versions.retire(conn, tenant_id=tenant_id, versions=plan.retire, at=now)
    inserted = versions.insert(
        conn,
        tenant_id=tenant_id,
        subject=subject,
        attribute=attribute,
        versions=plan.insert,
        recorded_at=now,
        new_id=new_id,
    )
    shown = plan.subject_version
    if shown is None:
        return None
    for planned, row in zip(plan.insert, inserted, strict=True):
        if planned is shown:
            return versions.to_fact(row, now)
    return next(
        (versions.to_fact(row, now) for row in current if row.version_id == shown.version_id),
        None,
    )


def _log_conflict(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    new: Version,
    incumbent: Version,
    policy: str,
    now: datetime,
    new_id: IdFactory,
) -> UUID:
    """Record an equal-start disagreement once (a repeated candidate finds the open one)."""
    params = {
        "tenant_id": tenant_id,
        "subject": subject,
        "attribute": attribute,
        "valid_from": new.valid_from,
        "challenger_value": canonical(new.value),
        "challenger_episode_id": new.source_episode_id,
    }
    existing = conn.execute(
        """
        SELECT conflict_id FROM conflicts
        WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s AND attribute = %(attribute)s
          AND valid_from = %(valid_from)s AND status = 'open'
          AND challenger_value = %(challenger_value)s::jsonb
          AND challenger_episode_id = %(challenger_episode_id)s
        """,
        params,
    ).fetchone()
    if existing is not None:
        conflict_id: UUID = existing[0]
        return conflict_id
    conflict_id = new_id()
    conn.execute(
        """
        INSERT INTO conflicts (
            tenant_id, conflict_id, subject, attribute, valid_from, policy, incumbent_fact_id,
            challenger_value, challenger_episode_id, challenger_kind, evidence,
            evidence_verified, created_at
        ) VALUES (
            %(tenant_id)s, %(conflict_id)s, %(subject)s, %(attribute)s, %(valid_from)s,
            %(policy)s, %(incumbent_fact_id)s, %(challenger_value)s::jsonb,
            %(challenger_episode_id)s, %(challenger_kind)s, %(evidence)s,
            %(evidence_verified)s, %(now)s
        )
        """,
        {
            **params,
            "conflict_id": conflict_id,
            "policy": policy,
            "incumbent_fact_id": incumbent.fact_id,
            "challenger_kind": new.source_kind,
            "evidence": new.evidence,
            "evidence_verified": new.evidence_verified,
            "now": now,
        },
    )
    return conflict_id
