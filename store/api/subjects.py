"""Subjects: their profiles, the list of them, and an export."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import psycopg

from store.api.receipts import traced_read
from store.api.transactions import Transactions
from store.attributes.names import mark_renamed
from store.contract.facts import SubjectNamesDeclaration
from store.contract.results import (
    MergeResult,
    Profile,
    SubjectExport,
    SubjectNames,
    SubjectOverview,
    SubjectPage,
)
from store.db import tenants
from store.db.inputs import check_identifier, parse_input, read_times
from store.db.locks import lock_keys
from store.errors import InvalidInput
from store.facts import reads
from store.governance import touched
from store.governance.receipts import NO_TRACE, Trace
from store.subjects import export as subjects
from store.subjects import merged_ids, merges, overview
from store.subjects import names as subject_names
from store.subjects.overview import SubjectOrder


class SubjectCalls:
    """Reads of a subject as a whole."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def profile(
        self,
        tenant_id: str,
        subject: str,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
        trace: Trace = NO_TRACE,
    ) -> Profile:
        """Every attribute of a subject at one valid and known time (defaults as ``at``).

        A read for a decision (``trace``) leaves a receipt per fact served.
        """
        check_identifier(subject, "subject")
        valid, known = read_times(valid_at, known_at)

        def work(conn: psycopg.Connection[Any], now: datetime) -> Profile:
            subject_ = merged_ids.resolve_subject(conn, tenant_id, subject)
            known_at_ = known or now
            valid_at_ = valid or known or now
            found = reads.read_profile(
                conn,
                tenant_id,
                subject=subject_,
                valid_at=valid_at_,
                known_at=known_at_,
                now=now,
            )
            mark_renamed(conn, tenant_id, found, now=now)
            return Profile(subject=subject_, valid_at=valid_at_, known_at=known_at_, facts=found)

        return traced_read(
            self._transactions,
            tenant_id,
            trace,
            work,
            lambda _, profile, now: [
                touched.fact_read(fact, now=now, asked=subject)
                for fact in (profile.facts if profile is not None else [])
            ],
        )

    def list(
        self,
        tenant_id: str,
        *,
        limit: int = 100,
        cursor: str | None = None,
        match: str | None = None,
    ) -> SubjectPage:
        """A page of the tenant's subject ids in byte order (facts held or episodes naming),
        those whose id or a name holds ``match`` when given."""

        def work(conn: psycopg.Connection[Any], _: datetime) -> SubjectPage:
            found, next_cursor = subjects.list_subjects(
                conn, tenant_id, limit=limit, cursor=cursor, match=match
            )
            return SubjectPage(subjects=found, next_cursor=next_cursor)

        return self._transactions.run(work, tenant_id=tenant_id)

    def overview(
        self,
        tenant_id: str,
        *,
        limit: int = 100,
        cursor: str | None = None,
        match: str | None = None,
        order: SubjectOrder = "id",
    ) -> SubjectOverview:
        """A page of subjects as ``list`` finds them, each with its keys, open conflicts and
        last change, by id or newest change first (``order``), in one statement."""
        return self._transactions.run(
            lambda conn, _: overview.overview(
                conn, tenant_id, match=match, order=order, limit=limit, cursor=cursor
            ),
            tenant_id=tenant_id,
        )

    def export(self, tenant_id: str, subject: str) -> SubjectExport:
        """Everything held about a subject: facts now, all versions, episodes, conflicts."""
        check_identifier(subject, "subject")
        return self._transactions.run(
            lambda conn, now: _export(conn, tenant_id, subject, now=now),
            tenant_id=tenant_id,
        )

    def names(self, tenant_id: str, subject: str) -> SubjectNames:
        """The names a question may call the subject by (a merged id reads as its survivor)."""
        check_identifier(subject, "subject")

        def work(conn: psycopg.Connection[Any], _: datetime) -> SubjectNames:
            survivor = merged_ids.resolve_subject(conn, tenant_id, subject)
            return subject_names.read_names(conn, tenant_id, survivor)

        return self._transactions.run(work, tenant_id=tenant_id)

    def declare_names(
        self,
        tenant_id: str,
        subject: str,
        declaration: SubjectNamesDeclaration | Mapping[str, Any],
    ) -> SubjectNames:
        """Replace the subject's display name and aliases; learned names stay.

        A merged id declares its survivor's names. The subject need hold nothing yet: a name
        declared first finds the facts written later.
        """
        check_identifier(subject, "subject")
        declared = parse_input(SubjectNamesDeclaration, declaration)

        def work(conn: psycopg.Connection[Any], now: datetime) -> SubjectNames:
            tenants.require_tenant(conn, tenant_id)
            # The tenant's lock, shared: a merge (which holds it alone) has committed or not begun.
            lock_keys(conn, tenant_id=tenant_id, keys=[])
            survivor = merged_ids.resolve_subject(conn, tenant_id, subject)
            subject_names.declare(
                conn,
                tenant_id,
                survivor,
                display_name=declared.display_name,
                aliases=declared.aliases,
                now=now,
            )
            return subject_names.read_names(conn, tenant_id, survivor)

        return self._transactions.run(work, tenant_id=tenant_id)

    def merge(self, tenant_id: str, subject: str, *, into: str) -> MergeResult:
        """Fold the duplicate ``subject`` into ``into`` in one transaction
        (``store.subjects.merges``)."""
        check_identifier(subject, "subject")
        check_identifier(into, "into")
        if subject == into:
            raise InvalidInput(f"subject {subject!r} cannot be merged into itself", field="into")
        transactions = self._transactions
        return transactions.run(
            lambda conn, _: merges.merge_subject(
                conn,
                tenant_id,
                merged=subject,
                into=into,
                clock=transactions.clock,
                new_id=transactions.new_id,
            ),
            tenant_id=tenant_id,
        )


def _export(
    conn: psycopg.Connection[Any], tenant_id: str, subject: str, *, now: datetime
) -> SubjectExport:
    """The export of the subject ``subject`` names now, with what the ids merged into it kept."""
    survivor = merged_ids.resolve_subject(conn, tenant_id, subject)
    merged = merged_ids.merged_into(conn, tenant_id, survivor)
    return subjects.export_subject(conn, tenant_id, survivor, now=now, merged=merged)
