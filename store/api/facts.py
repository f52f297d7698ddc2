"""Facts: candidates and expiries written against their keys, retractions, exact reads."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row

from store.api.receipts import traced_read
from store.api.transactions import Transactions
from store.attributes.names import (
    former_names,
    refuse_retired_name,
    refuse_undeclared,
    renamed_targets,
)
from store.contract.facts import Fact
from store.contract.results import ExpireResult, RetractResult, UpdateResult
from store.db.inputs import check_identifier, parse_instant, parse_uuid, read_times
from store.episodes import record as episodes
from store.errors import InvalidInput, NotFound
from store.facts import candidates as candidates_
from store.facts import reads, retraction
from store.facts import writes as facts
from store.governance import touched
from store.governance.receipts import NO_TRACE, Trace
from store.subjects import merged_ids


class FactCalls:
    """The write path of facts and the exact reads of one key."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def apply_candidates(
        self,
        tenant_id: str,
        episode_id: str,
        candidates: Sequence[object],
        *,
        trace: Trace = NO_TRACE,
    ) -> list[UpdateResult]:
        """Apply candidates citing one episode, all in one transaction.

        The source episode and tenant come from this call; a candidate that names either is
        refused as invalid. An invalid candidate is a result, never an error, and writes
        nothing. Results keep the candidates' order.
        """
        check_identifier(episode_id, "episode_id")
        checked = [facts.validate_candidate(item, index) for index, item in enumerate(candidates)]
        transactions = self._transactions
        return transactions.pipelined(
            lambda conn, now: candidates_.send_candidates(
                conn,
                tenant_id,
                episode_id=episode_id,
                candidates=checked,
                clock=transactions.clock,
                asked_at=now,
                new_id=transactions.new_id,
                trace=trace,
            ),
            tenant_id=tenant_id,
        )

    def expire(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        at: datetime | str,
        source_episode_id: str,
    ) -> ExpireResult:
        """End the value of a key at ``at``, citing the episode that said it ended."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        check_identifier(source_episode_id, "source_episode_id")
        instant = parse_instant(at, "at")
        assert instant is not None
        transactions = self._transactions

        def work(conn: psycopg.Connection[Any], _: datetime) -> ExpireResult:
            try:
                source = episodes.get_episode(conn, tenant_id, source_episode_id)
            except NotFound as error:
                raise NotFound(error.detail, field="source_episode_id") from None
            return facts.expire(
                conn,
                tenant_id,
                subject=merged_ids.resolve_subject(conn, tenant_id, subject),
                attribute=attribute,
                at=instant,
                source_episode=source,
                clock=transactions.clock,
                new_id=transactions.new_id,
            )

        return transactions.run(work, tenant_id=tenant_id)

    def retract(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        fact_id: UUID | str | None = None,
        valid_from: datetime | str | None = None,
    ) -> RetractResult:
        """Withdraw a wrong fact, named by ``fact_id`` or by its ``valid_from``."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        if (fact_id is None) == (valid_from is None):
            raise InvalidInput(
                "name the fact by exactly one of fact_id or valid_from", field="fact_id"
            )
        target = parse_uuid(fact_id, "fact_id") if fact_id is not None else None
        start = parse_instant(valid_from, "valid_from")
        transactions = self._transactions
        return transactions.run(
            lambda conn, _: retraction.retract(
                conn,
                tenant_id,
                subject=merged_ids.resolve_subject(conn, tenant_id, subject),
                attribute=attribute,
                fact_id=target,
                valid_from=start,
                clock=transactions.clock,
                new_id=transactions.new_id,
            ),
            tenant_id=tenant_id,
        )

    def current(self, tenant_id: str, subject: str, attribute: str) -> Fact:
        """The value valid now in current knowledge (NotFound: not known)."""
        return self.at(tenant_id, subject, attribute)

    def at(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
        trace: Trace = NO_TRACE,
    ) -> Fact:
        """The value valid at ``valid_at`` as believed at ``known_at``.

        Both default to now; given only ``known_at``, ``valid_at`` defaults to it ("what did
        we believe on June 2 about June 2"). A read for a decision (``trace``) leaves its
        receipt, also when nothing was known.
        """
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        valid, known = read_times(valid_at, known_at)

        def read(conn: psycopg.Connection[Any], now: datetime) -> Fact:
            def read_key(name: str) -> Fact | None:
                times = {"valid_at": valid, "known_at": known}
                return reads.read_at(conn, tenant_id, now, subject=subject, attribute=name, **times)

            # The subject's survivor is found in the read's own statement: a read of a
            # declared name is one statement. Only a miss asks whether the name is a renamed
            # attribute's old one, and names the key read, its subject as it is now.
            fact = read_key(attribute)
            if fact is not None:
                return fact
            renamed = renamed_targets(conn, tenant_id, [attribute], now=now)
            if attribute in renamed:
                fact = read_key(renamed[attribute])
            if fact is None:
                if attribute not in renamed:
                    refuse_undeclared(conn, tenant_id, attribute)
                named = merged_ids.resolve_subject(conn, tenant_id, subject)
                raise reads.not_known(named, renamed.get(attribute, attribute))
            fact.migrated_from = attribute
            return fact

        return traced_read(
            self._transactions,
            tenant_id,
            trace,
            read,
            lambda _, fact, now: [
                touched.fact_missing(subject, attribute)
                if fact is None
                else touched.fact_read(fact, now=now, asked=subject)
            ],
        )

    async def aat(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        trace: Trace = NO_TRACE,
    ) -> Fact:
        """``at`` for a caller on an event loop: a read of a declared name for no decision is
        one statement on the loop (``Transactions.aread``). Any other read (a miss, a renamed
        attribute, a receipt to leave) is ``at`` on the loop's default executor, where sync
        handlers run."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        valid, known = read_times(valid_at, known_at)
        if trace.decision_id is None and self._transactions.async_pool is not None:
            statement = partial(
                reads.read_at_query, tenant_id, subject=subject, attribute=attribute
            )
            found = await self._transactions.aread(
                partial(statement, valid_at=valid, known_at=known),
                row_factory=class_row(Fact),
                tenant_id=tenant_id,
            )
            if found:
                return found[0]
        return await asyncio.to_thread(
            self.at, tenant_id, subject, attribute, valid_at=valid, known_at=known, trace=trace
        )

    def sourced(self, tenant_id: str, episode_id: str) -> list[Fact]:
        """Every version ever believed whose source is the episode, by subject then key."""
        check_identifier(episode_id, "episode_id")
        return self._transactions.run(
            lambda conn, now: reads.read_sourced(conn, tenant_id, episode_id, now=now),
            tenant_id=tenant_id,
        )

    def history(self, tenant_id: str, subject: str, attribute: str) -> list[Fact]:
        """Every version of a key, by valid_from then recorded_at."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        return self._transactions.run(
            lambda conn, now: migrated_history(
                conn,
                tenant_id,
                merged_ids.resolve_subject(conn, tenant_id, subject),
                attribute,
                now=now,
            ),
            tenant_id=tenant_id,
            snapshot=True,
        )


def migrated_history(
    conn: psycopg.Connection[Any], tenant_id: str, subject: str, attribute: str, *, now: datetime
) -> list[Fact]:
    """A key's history under every name its attribute had, by valid_from then recorded_at.

    An old name within its dual-read window reads the new name's history (each version saying
    ``migrated_from``); past it, the old name is unknown.
    """
    renamed = renamed_targets(conn, tenant_id, [attribute], now=now)
    name = renamed.get(attribute, attribute)
    if name == attribute:
        refuse_retired_name(conn, tenant_id, attribute)
    names = [name, *former_names(conn, tenant_id, name)]
    facts = reads.read_history(conn, tenant_id, subject=subject, attributes=names, now=now)
    if not facts and name == attribute:
        refuse_undeclared(conn, tenant_id, attribute)
    if len(names) > 1:
        facts.sort(key=lambda fact: (fact.valid_from, fact.recorded_at, str(fact.version_id)))
    if name != attribute:
        for fact in facts:
            fact.migrated_from = attribute
    return facts
