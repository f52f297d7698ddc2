"""Bulk import, the transaction: episodes and facts of many lines, written by COPY.

One transaction for the whole file, holding each tenant's lock exclusively (so no key writer
of those tenants runs meanwhile, and no lock per key is needed) and one system time read
once those locks are held. Episodes new to the store are written by COPY
(``store.episodes.bulk_episodes``), every fact version by COPY into a staging table and one
insert from it (``store.episodes.bulk_copy``); a key whose candidates meet an equal-start
disagreement goes through the write path's own resolution instead, since its policy may log a
conflict or replace an incumbent. Keys are planned in memory: the database is asked once for
the state of the keys whose subjects hold any (``store.episodes.bulk_state``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg

from store.attributes.registry import list_attributes
from store.contract.episodes import Episode
from store.contract.results import UpdateResult
from store.db import tenants
from store.db.clock import Clock
from store.db.locks import lock_tenants
from store.episodes import bulk_episodes, bulk_state
from store.episodes import record as episodes
from store.episodes.bulk import (
    Candidate,
    ImportLine,
    KeyWrites,
    Outcomes,
    at_line,
    drawn_in_blocks,
    plan_key,
)
from store.episodes.bulk_copy import copy_versions
from store.errors import InvalidInput, StoreError
from store.facts import versions
from store.facts import writes as facts
from store.facts.versions import IdFactory, Key
from store.facts.writes import Accepted, check_candidate
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE, Touched
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
    new_id = drawn_in_blocks(new_id)
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
        self.cited: list[Episode] = []

    def run(self, lines: list[ImportLine]) -> list[Recorded]:
        """Write the lines' episodes and facts; the episodes it recorded."""
        tenants.enter_tenant(self.conn, self.tenant_id)
        try:
            tenants.require_tenant(self.conn, self.tenant_id)
        except StoreError as error:
            raise at_line(lines[0].line, error) from None
        cited = self._episodes(lines)
        self.cited = cited
        by_key = self._candidates(lines, cited)
        current, refused = bulk_state.key_state(self.conn, self.tenant_id, by_key, now=self.now)
        values = [candidate.item.value for items in by_key.values() for candidate in items]
        stored = bulk_state.stored_values(self.conn, values)
        ready: dict[Key, list[Candidate]] = {}
        for key, candidates in by_key.items():
            for candidate in candidates:
                if key in refused:
                    self.outcomes.add(candidate.line, _refusal(candidate, refused[key]))
                else:
                    self.subjects.setdefault(candidate.episode.id, set()).add(key[0])
                    if name := candidate.item.candidate.subject_name:
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
                found = bulk_episodes.new_episode(line.episode, episode_id=episode_id, now=self.now)
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
            for index, candidate in enumerate(line.candidates):
                checked = (
                    candidate
                    if isinstance(candidate, UpdateResult)
                    else check_candidate(
                        candidate,
                        index,
                        episode=episode,
                        attribute=declared.get(candidate.attribute),
                        unverified=unverified,
                        declared=declared,
                    )
                )
                if isinstance(checked, UpdateResult):
                    self.outcomes.add(line.line, checked)
                    continue
                assert not isinstance(candidate, UpdateResult)
                accepted = Accepted(index, candidate, *checked)
                by_key.setdefault(accepted.key, []).append(Candidate(line.line, accepted, episode))
        return by_key

    def _write_episodes(self) -> None:
        for episode in self.new.values():
            subjects = self.subjects.pop(episode.id, set())
            episode.subjects = sorted(set(episode.subjects) | subjects)
        bulk_episodes.copy_episodes(self.conn, self.tenant_id, self.new.values())
        named = {s for episode in self.new.values() for s in episode.subjects}
        for episode_id, subjects in self.subjects.items():  # episodes stored before
            episodes.add_subjects(self.conn, self.tenant_id, episode_id, sorted(subjects))
            named |= subjects
        subject_names.note_ids(self.conn, self.tenant_id, named, now=self.now)
        subject_names.learn(self.conn, self.tenant_id, self.named, texts=self.texts, now=self.now)
        # Each line records its episode, as one call would: one receipt a line.
        self._receipts([touched.episode_written(episode) for episode in self.cited])

    def _receipts(self, written: list[Touched]) -> None:
        receipts.leave_receipts(
            self.conn, self.tenant_id, written, action="write", trace=NO_TRACE, now=self.now
        )

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
                fact = versions.apply_plan(
                    conn, outcome, current=current, now=now, new_id=new_id, **args
                )
                if fact is not None:
                    source = candidate.episode.id
                    version_id = fact.version_id
                    self._receipts(
                        [
                            touched.fact_written(
                                subject,
                                attribute,
                                version_id=version_id,
                                now=now,
                                source_episode_id=source,
                            )
                        ]
                    )
                outcome = UpdateResult(
                    index=candidate.item.index, status=outcome.status, reason=outcome.reason
                )
            self.outcomes.add(candidate.line, outcome)


def _refusal(candidate: Candidate, error: InvalidInput) -> UpdateResult:
    return UpdateResult(
        index=candidate.item.index, status="invalid", reason=error.detail, field=error.field
    )
