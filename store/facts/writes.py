"""The write path's rules for facts: validate a candidate, resolve it against its key; expiries.

The candidates of one call (``store.facts.candidates``), and each expiry, are one transaction
holding its keys' locks, so the temporal rules of ``store.facts.temporal`` always see each key's
latest committed state."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol
from uuid import UUID

import psycopg
from pydantic import ValidationError

from store.attributes.names import undeclared
from store.attributes.registry import get_attribute
from store.contract.common import EpisodeKind, UnverifiedEvidencePolicy
from store.contract.facts import Attribute, Fact, MemoryUpdate
from store.contract.results import ExpireResult, UpdateResult
from store.contract.values import JsonValue, ValueParseError, parse_value
from store.db.clock import Clock
from store.db.inputs import first_error
from store.episodes import record as episodes
from store.episodes.text import one_line
from store.errors import InvalidInput
from store.facts import conflicts, versions
from store.facts.policies import equal_start_outcome
from store.facts.temporal import Plan, Version, plan_assert, plan_expire, plan_replace
from store.facts.versions import IdFactory, as_version


class CitedEpisode(Protocol):
    """What a candidate write reads of the episode it cites (an ``Episode`` is one)."""

    @property
    def id(self) -> str: ...
    @property
    def occurred_at(self) -> datetime: ...
    @property
    def kind(self) -> EpisodeKind: ...
    @property
    def text(self) -> str | None: ...
    @property
    def content_hash(self) -> str: ...
    @property
    def erased_at(self) -> datetime | None: ...
    @property
    def purged_at(self) -> datetime | None: ...


def evidence_occurs(evidence: str, text: str | None) -> bool:
    """Whether the quoted evidence occurs in the episode text (whitespace folded)."""
    folded = one_line(evidence)
    return bool(folded) and text is not None and folded in _folded_text(text)


@lru_cache(maxsize=16)
def _folded_text(text: str) -> str:
    # The candidates of one call cite one episode: its text is folded once, not per candidate.
    return one_line(text)


def invalid_result(index: int, reason: str, field: str | None) -> UpdateResult:
    """The result refusing a candidate, saying why and naming the field at fault."""
    return UpdateResult(index=index, status="invalid", reason=reason, field=field)


def validate_candidate(candidate: object, index: int) -> MemoryUpdate | UpdateResult:
    """Parse a candidate's shape; a broken one becomes an ``invalid`` result, not an error."""
    try:
        return MemoryUpdate.model_validate(candidate)
    except ValidationError as error:
        reason, field = first_error(error)
        return invalid_result(index, reason, field)


def check_candidate(
    candidate: MemoryUpdate,
    index: int,
    *,
    episode: CitedEpisode,
    attribute: Attribute | None,
    buffers_weak: bool = False,
    unverified: UnverifiedEvidencePolicy = "accept",
    declared: Iterable[str] = (),
) -> tuple[Attribute, JsonValue] | UpdateResult:
    """The declaration (``attribute``, None if undeclared) and typed value of a candidate, or
    the result that refuses it. A weak candidate is refused where nothing buffers it
    (``buffers_weak`` false: the bulk import); it is checked like any other elsewhere.

    ``unverified`` is the tenant's default for evidence not found in the episode's text; the
    attribute's own ``on_unverified_evidence``, when declared, wins over it. ``declared``: the
    tenant's declared names, which an undeclared attribute's reason picks the closest of."""
    if candidate.change == "no_change":
        return UpdateResult(index=index, status="ignored", reason="change is no_change")
    if candidate.strength == "weak" and not buffers_weak:
        return invalid_result(
            index, "weak signals are buffered only on the episode write path", "strength"
        )
    if candidate.value is None:
        return invalid_result(index, "value is required unless change is no_change", "value")
    if episode.erased_at is not None:
        return invalid_result(index, f"episode {episode.id!r} was erased", "episode")
    if episode.purged_at is not None:
        return invalid_result(index, f"episode {episode.id!r} was purged", "episode")
    if attribute is None:
        return invalid_result(index, undeclared(candidate.attribute, declared), "attribute")
    try:
        value = parse_value(
            candidate.value, attribute.value_type, enum_values=attribute.enum_values
        )
    except ValueParseError as error:
        return invalid_result(index, f"not a {attribute.value_type}: {error}", "value")
    refused = _refuses_unverified(
        candidate, episode=episode, attribute=attribute, tenant=unverified
    )
    if refused is not None:
        return invalid_result(index, refused, "evidence")
    return attribute, value


def _refuses_unverified(
    candidate: MemoryUpdate,
    *,
    episode: CitedEpisode,
    attribute: Attribute,
    tenant: UnverifiedEvidencePolicy,
) -> str | None:
    """Why a candidate is refused for evidence not in its episode, or None when it is not."""
    declared = attribute.on_unverified_evidence
    if (declared or tenant) == "accept" or evidence_occurs(candidate.evidence, episode.text):
        return None
    by = f"attribute {attribute.attribute!r}" if declared else "the tenant"
    return (
        f"the evidence is not in episode {episode.id!r}'s text, and {by} refuses unverified"
        " evidence (on_unverified_evidence: refuse)"
    )


@dataclass(frozen=True, slots=True)
class Accepted:
    """A candidate that passed its checks: what it asserts, and under which declaration."""

    index: int
    candidate: MemoryUpdate
    declared: Attribute
    value: JsonValue

    @property
    def key(self) -> tuple[str, str]:
        """The (subject, attribute) key it writes."""
        return self.candidate.subject, self.candidate.attribute

    def new_fact(self, episode: CitedEpisode, fact_id: UUID) -> Version:
        """The fact it asserts, stamped with its source episode, open from its start."""
        return Version(
            fact_id=fact_id,
            value=self.value,
            valid_from=self.candidate.valid_from or episode.occurred_at,
            valid_to=None,
            source_episode_id=episode.id,
            source_kind=episode.kind,
            evidence=self.candidate.evidence,
            evidence_verified=evidence_occurs(self.candidate.evidence, episode.text),
            schema_version=self.declared.schema_version,
        )


def resolve_candidate(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    item: Accepted,
    *,
    episode: CitedEpisode,
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
    source_episode: CitedEpisode,
    clock: Clock,
    new_id: IdFactory,
) -> ExpireResult:
    """End the value valid at ``at`` (no successor), citing the episode that said so."""
    get_attribute(conn, tenant_id, attribute)
    if source_episode.erased_at is not None or source_episode.purged_at is not None:
        gone = "erased" if source_episode.erased_at is not None else "purged"
        raise InvalidInput(f"episode {source_episode.id!r} was {gone}", field="source_episode_id")
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    now = versions.hold_key(conn, clock, **key)
    current = versions.load_current(conn, now=now, **key)
    expiry_id = new_id()
    plan = plan_expire([as_version(row) for row in current], at=at, expiry_id=expiry_id)
    if plan.status == "invalid":
        raise InvalidInput(plan.reason or "invalid expiry", field="at")
    if plan.status == "unchanged" and not current:
        # The key holds no value: every fact a replay could see arrived before this expiry and
        # was withdrawn, and those asserted later replay after it. Nothing to log, nothing to
        # tie the episode to the subject by.
        return ExpireResult(status="unchanged")
    # Logged even when it changes nothing now: a later retraction replays the key's log, and
    # without the retracted fact this expiry may end another value. An unchanged expiry is
    # still no link between the episode and the subject (``episodes.LINKED_TO_SUBJECTS``).
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
    if plan.status == "unchanged":
        return ExpireResult(status="unchanged", expiry_id=expiry_id)
    fact = versions.apply_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    episodes.add_subjects(conn, tenant_id, source_episode.id, [subject])
    return ExpireResult(status="expired", expiry_id=expiry_id, fact=fact)
