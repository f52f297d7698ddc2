"""Retention: the tenant's classes, legal holds, and the purge of every tenant."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg

from store.api.transactions import Transactions, restore_session
from store.contract.governance import (
    Hold,
    PurgedFact,
    PurgeReport,
    RetentionClass,
    RetentionClassDeclaration,
    TenantPurge,
    TenantPurgeFailure,
)
from store.db import tenants
from store.db.inputs import check_identifier, parse_input, parse_uuid
from store.errors import NotFound, StoreError, translate
from store.governance import legal_holds, purge, retention

PURGE_LOCK = (0x5350, 0)
"""The advisory lock one purge holds at a time, across every server process: a key space of
its own beside the tenant locks' (store/db/locks.py)."""


class RetentionCalls:
    """Retention classes, legal holds, and the purge."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def classes(self, tenant_id: str) -> list[RetentionClass]:
        """The tenant's retention classes by name: the four defaults unless overridden, and
        those it declared."""
        return self._transactions.run(
            lambda conn, _: retention.list_classes(conn, tenant_id), tenant_id=tenant_id
        )

    def declare_class(
        self, tenant_id: str, name: str, declaration: RetentionClassDeclaration | dict[str, Any]
    ) -> RetentionClass:
        """Declare a class, or override one (a default included)."""
        check_identifier(name, "name")
        parsed = parse_input(RetentionClassDeclaration, declaration)

        def work(conn: psycopg.Connection[Any], now: datetime) -> RetentionClass:
            tenants.require_tenant(conn, tenant_id)
            return retention.declare_class(conn, tenant_id, name, declaration=parsed, now=now)

        return self._transactions.run(work, tenant_id=tenant_id)

    def place_hold(self, tenant_id: str, subject: str) -> Hold:
        """Place a legal hold on a subject (idempotent)."""
        check_identifier(subject, "subject")

        def work(conn: psycopg.Connection[Any], now: datetime) -> Hold:
            tenants.require_tenant(conn, tenant_id)
            return legal_holds.place_hold(conn, tenant_id, subject, now=now)

        return self._transactions.run(work, tenant_id=tenant_id)

    def release_hold(self, tenant_id: str, subject: str) -> Hold:
        """Release a subject's legal hold; NotFound when it has none."""
        check_identifier(subject, "subject")
        return self._transactions.run(
            lambda conn, _: legal_holds.release_hold(conn, tenant_id, subject),
            tenant_id=tenant_id,
        )

    def purged_facts(self, tenant_id: str, fact_ids: list[UUID]) -> dict[UUID, datetime]:
        """When each of ``fact_ids`` was purged whole (those a ``supersedes`` or ``ended_by``
        still names after the purge); ids not purged are absent."""
        return self._transactions.run(
            lambda conn, _: purge.purged_facts(conn, tenant_id, fact_ids), tenant_id=tenant_id
        )

    def purged_fact(self, tenant_id: str, fact_id: UUID | str) -> PurgedFact:
        """A fact id a purge removed whole, resolved; NotFound for any other id."""
        wanted = parse_uuid(fact_id, "fact_id")
        found = self.purged_facts(tenant_id, [wanted])
        if wanted not in found:
            raise NotFound(f"fact {wanted} was not purged", field="fact_id")
        return PurgedFact(fact_id=wanted, purged_at=found[wanted])

    def purge_tenant(
        self, tenant_id: str, *, receipt_retention: timedelta, dry_run: bool = False
    ) -> TenantPurge:
        """Purge one tenant in one transaction; ``dry_run`` counts and rolls it all back."""
        new_id = self._transactions.new_id

        def work(conn: psycopg.Connection[Any], now: datetime) -> TenantPurge:
            # A dry run rolls back to a savepoint; a real one needs none inside the call's own.
            with conn.transaction(force_rollback=True) if dry_run else nullcontext():
                counts = purge.purge_tenant(
                    conn,
                    tenant_id,
                    now=now,
                    receipts_before=now - receipt_retention,
                    new_id=new_id,
                )
            return counts.model_copy(update={"tombstone_id": None}) if dry_run else counts

        return self._transactions.run(work, tenant_id=tenant_id)

    def purge(self, *, receipt_retention: timedelta, dry_run: bool = False) -> PurgeReport | None:
        """Purge every tenant, each as itself; None when another purge is running.

        A tenant whose purge fails (its transaction rolled back) is reported in ``failed``;
        the purge goes on with the tenants after it.
        """
        with self._purge_lock() as held:
            if not held:
                return None
            tenant_ids = self._transactions.read(
                lambda conn, _: [row[0] for row in conn.execute("SELECT sgam_tenant_ids()")],
                tenant_id=None,
            )
            purged: list[TenantPurge] = []
            failed: list[TenantPurgeFailure] = []
            for tenant_id in tenant_ids:
                try:
                    purged.append(
                        self.purge_tenant(
                            tenant_id, receipt_retention=receipt_retention, dry_run=dry_run
                        )
                    )
                except StoreError as error:
                    failed.append(
                        TenantPurgeFailure(
                            tenant_id=tenant_id, code=error.code, detail=error.detail
                        )
                    )
            return PurgeReport(dry_run=dry_run, tenants=purged, failed=failed)

    @contextmanager
    def _purge_lock(self) -> Iterator[bool]:
        """Hold the purge's session lock on a connection of its own while the purge runs;
        whether it was free. A process that dies lets it go with its connection."""
        try:
            with self._transactions.pool.connection() as conn:
                conn.autocommit = True
                try:
                    row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", PURGE_LOCK)
                    held = bool(row.fetchone() == (True,))
                    try:
                        yield held
                    finally:
                        if held:
                            conn.execute("SELECT pg_advisory_unlock(%s, %s)", PURGE_LOCK)
                finally:
                    restore_session(conn, autocommit=False)
        except psycopg.Error as error:
            raise translate(error) from error
