"""Bulk import, the transaction: episodes and facts of many lines, written by COPY.

One transaction for the whole file, holding each tenant's lock exclusively (so no key writer
of those tenants runs meanwhile, and no lock per key is needed) and one system time read
once those locks are held. Episodes new to the store are written by COPY, every fact version
by COPY into a staging table and one insert from it (``store.episodes.bulk_copy``); a key whose
candidates meet an equal-start disagreement goes through the write path's own resolution
instead, since its policy may log a conflict or replace an incumbent. Keys are planned in
memory: the database is asked once for the state of the keys whose subjects hold any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from store.attributes.registry import list_attributes
from store.contract.episodes import Episode
from store.contract.results import UpdateResult
from store.contract.values import JsonValue, canonical
from store.db import tenants
from store.db.clock import Clock
from store.db.locks import lock_tenants
from store.episodes import record as episodes
from store.episodes.bulk import (
    Candidate,
    ImportLine,
    KeyWrites,
    Outcomes,
    at_line,
    has_float,
    plan_key,
)
from store.episodes.bulk_copy import copy_versions
from store.errors import InvalidInput, StoreError
from store.facts import versions
from store.facts import writes as facts
from store.facts.temporal import Version
from store.facts.versions import IdFactory, Key, as_version
from store.facts.writes import Accepted, check_candidate
from store.governance.retention import require_class
from store.subjects import names as subject_names

Recorded = tuple[str, str]
"""A new episode, to embed: (tenant, episode id)."""


def import_lines(
    conn: psycopg.Connection[Any], lines: list[ImportLine], *, clock: Clock, new_id: IdFactory
) -> tuple[Outcomes, list[Recorded]]:
    """Record every line's episode and apply its candidates, in file order, at one system time.

    Returns each candidate's outcome and the episodes new to the store, for their vectors.
    """
    by_tenant: dict[str, list[ImportLine]] = {}
    for line in lines:
        by_tenant.setdefault(line.tenant_id, []).append(line)
    lock_tenants(conn, by_tenant)
    now = clock()
    outcomes = Outcomes()
    recorded: list[Recorded] = []
    for tenant_id, tenant_lines in sorted(by_tenant.items()):
        imported = _TenantImport(conn, tenant_id, now=now, new_id=new_id, outcomes=outcomes)
        recorded.extend(imported.run(tenant_lines))
    return outcomes, recorded


class _TenantImport:
    """One tenant's lines: its episodes, its keys' plans, their writes."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        tenant_id: str,
        *,
        now: datetime,
        new_id: IdFactory,
        outcomes: Outcomes,
    ) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self.now = now
        self.new_id = new_id
        self.outcomes = outcomes
        self.new: dict[str, Episode] = {}
        self.subjects: dict[str, set[str]] = {}
        self.named: list[tuple[str, str, str]] = []
        """Names to learn: (subject, name, the episode that wrote it)."""
        self.texts: dict[str, str | None] = {}

    def run(self, lines: list[ImportLine]) -> list[Recorded]:
        """Write the lines' episodes and facts; the episodes it recorded."""
        tenants.enter_tenant(self.conn, self.tenant_id)
        try:
            tenants.require_tenant(self.conn, self.tenant_id)
        except StoreError as error:
            raise at_line(lines[0].line, error) from None
        cited = self._episodes(lines)
        by_key = self._candidates(lines, cited)
        current, refused = self._key_state(by_key)
        values = [candidate.item.value for items in by_key.values() for candidate in items]
        stored = _stored_values(self.conn, values)
        ready: dict[Key, list[Candidate]] = {}
        for key, candidates in by_key.items():
            for candidate in candidates:
                if key in refused:
                    self.outcomes.add(candidate.line, _refusal(candidate, refused[key]))
                else:
                    self.subjects.setdefault(candidate.episode.id, set()).add(key[0])
                    if name := candidate.item.update.subject_name:
                        self.named.append((key[0], name, candidate.episode.id))
            if key not in refused:
                ready[key] = candidates
        self._write_episodes()
        # Keys with stored versions first: what they retire goes before any new row.
        touched = {
            key: plan_key(
                key, current[key], candidates=ready[key], new_id=self.new_id, stored=stored
            )
            for key in ready
            if current.get(key)
        }
        retire = [
            version_id for writes in touched.values() if writes for version_id in writes.retire
        ]
        versions.retire(self.conn, tenant_id=self.tenant_id, version_ids=retire, at=self.now)
        through_write_path = []

        def planned() -> Iterator[KeyWrites]:
            # The keys without stored versions are planned as the COPY asks for them, so each
            # key's plan is let go once its rows are sent.
            for key, candidates in ready.items():
                writes = (
                    touched[key]
                    if key in touched
                    else plan_key(key, [], candidates=candidates, new_id=self.new_id, stored=stored)
                )
                if writes is None:
                    through_write_path.append(candidates)
                else:
                    self.outcomes.counts.update(writes.counts)
                    yield writes

        copy_versions(self.conn, self.tenant_id, planned=planned(), now=self.now)
        for candidates in through_write_path:
            self._through_write_path(candidates)
        return [(self.tenant_id, episode_id) for episode_id in self.new]

    def _episodes(self, lines: list[ImportLine]) -> list[Episode]:
        """The episode each line cites: stored already (same content), or new."""
        given = [line.episode.id for line in lines if line.episode.id]
        known = episodes.get_episodes(self.conn, self.tenant_id, given)
        cited = []
        for line in lines:
            episode_id = line.episode.id or str(self.new_id())
            found = known.get(episode_id) or self.new.get(episode_id)
            if found is None:
                try:
                    require_class(
                        self.conn,
                        self.tenant_id,
                        line.episode.retention_class,
                        field="retention_class",
                    )
                except StoreError as error:
                    raise at_line(line.line, error) from None
                found = episodes.new_episode(line.episode, episode_id=episode_id, now=self.now)
                self.new[episode_id] = found
                self.named.extend(
                    (subject, name, episode_id)
                    for subject, name in line.episode.subject_names.items()
                )
            else:
                try:
                    episodes.check_same_episode(found, line.episode)
                except StoreError as error:
                    raise at_line(line.line, error) from None
            cited.append(found)
            self.texts[found.id] = found.text
        return cited

    def _candidates(
        self, lines: list[ImportLine], cited: list[Episode]
    ) -> dict[Key, list[Candidate]]:
        """The accepted candidates by key, in file order; the refused ones are counted."""
        declared = {item.attribute: item for item in list_attributes(self.conn, self.tenant_id)}
        unverified = tenants.ask_unverified_evidence(self.conn, self.tenant_id)()
        by_key: dict[Key, list[Candidate]] = {}
        for line, episode in zip(lines, cited, strict=True):
            for index, update in enumerate(line.updates):
                checked = (
                    update
                    if isinstance(update, UpdateResult)
                    else check_candidate(
                        update,
                        index,
                        episode=episode,
                        attribute=declared.get(update.attribute),
                        unverified=unverified,
                    )
                )
                if isinstance(checked, UpdateResult):
                    self.outcomes.add(line.line, checked)
                    continue
                assert not isinstance(update, UpdateResult)
                accepted = Accepted(index, update, *checked)
                by_key.setdefault(accepted.key, []).append(Candidate(line.line, accepted, episode))
        return by_key

    def _key_state(
        self, keys: Iterable[Key]
    ) -> tuple[dict[Key, list[Version]], dict[Key, InvalidInput]]:
        """The keys' stored current knowledge, and the keys this system time may not write.

        Only keys of subjects with a current version or a retraction can have either, so only
        those are read (a key's state is its current versions and its retractions).
        """
        keys = list(keys)
        params = {"tenant_id": self.tenant_id, "subjects": sorted({key[0] for key in keys})}
        held = {subject for (subject,) in self.conn.execute(_HELD_SUBJECTS, params)}
        keys = [key for key in keys if key[0] in held]
        if not keys:  # the import's first facts on all its subjects: nothing to read
            return {}, {}
        facts = versions.load_current_keys(
            self.conn, tenant_id=self.tenant_id, keys=keys, now=self.now
        )
        last = versions.last_system_times(self.conn, tenant_id=self.tenant_id, current=facts)
        current = {key: [as_version(fact) for fact in found] for key, found in facts.items()}
        return current, versions.refused_keys(self.now, last)

    def _write_episodes(self) -> None:
        for episode in self.new.values():
            subjects = self.subjects.pop(episode.id, set())
            episode.subjects = sorted(set(episode.subjects) | subjects)
        episodes.copy_episodes(self.conn, self.tenant_id, self.new.values())
        named = {s for episode in self.new.values() for s in episode.subjects}
        for episode_id, subjects in self.subjects.items():  # episodes stored before
            episodes.add_subjects(self.conn, self.tenant_id, episode_id, sorted(subjects))
            named |= subjects
        subject_names.note_ids(self.conn, self.tenant_id, named, now=self.now)
        subject_names.learn(self.conn, self.tenant_id, self.named, texts=self.texts, now=self.now)

    def _through_write_path(self, candidates: list[Candidate]) -> None:
        """A key's candidates one by one through the write path (its lock is the tenant's)."""
        conn, now, new_id = self.conn, self.now, self.new_id
        for candidate in candidates:
            subject, attribute = candidate.item.key
            args = {"tenant_id": self.tenant_id, "subject": subject, "attribute": attribute}
            current = versions.load_current(conn, now=now, **args)
            outcome = facts.resolve_candidate(
                conn,
                self.tenant_id,
                candidate.item,
                episode=candidate.episode,
                current=current,
                now=now,
                new_id=new_id,
            )
            if not isinstance(outcome, UpdateResult):
                versions.apply_plan(conn, outcome, current=current, now=now, new_id=new_id, **args)
                outcome = UpdateResult(
                    index=candidate.item.index, status=outcome.status, reason=outcome.reason
                )
            self.outcomes.add(candidate.line, outcome)


_HELD_SUBJECTS = """
SELECT subject FROM fact_versions
WHERE tenant_id = %(tenant_id)s AND retired_at IS NULL AND subject = ANY(%(subjects)s)
UNION
SELECT subject FROM retractions WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
"""
"""Which of these subjects hold a current version or a retraction: their keys have a state."""


def _refusal(candidate: Candidate, error: InvalidInput) -> UpdateResult:
    return UpdateResult(
        index=candidate.item.index, status="invalid", reason=error.detail, field=error.field
    )


def _stored_values(
    conn: psycopg.Connection[Any], values: Iterable[JsonValue]
) -> Callable[[JsonValue], JsonValue]:
    """A function giving a value as the database returns it once stored as jsonb.

    Only numbers with a fraction or an exponent can come back otherwise (``1e20`` returns as
    ``100000000000000000000``), so only values holding a float make the round trip.
    """
    floating = {canonical(value): value for value in values if has_float(value)}
    returned: dict[str, JsonValue] = {}
    if floating:
        sent = list(floating.values())
        rows = conn.execute(
            "SELECT value FROM unnest(%(values)s::jsonb[]) WITH ORDINALITY AS v(value, n)"
            " ORDER BY n",
            {"values": [Jsonb(value) for value in sent]},
        ).fetchall()
        returned = {canonical(value): row[0] for value, row in zip(sent, rows, strict=True)}

    def stored(value: JsonValue) -> JsonValue:
        return returned.get(canonical(value), value) if returned and has_float(value) else value

    return stored
