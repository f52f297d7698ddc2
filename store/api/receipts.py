"""Receipts: reads made for a decision leave them; a decision's receipts read back; retention."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast
from uuid import UUID

import psycopg

from store.api.transactions import Transactions
from store.contract.health import Evidence, MemoryRef
from store.contract.receipts import DecisionReceipts, SecretVersion
from store.db import tenants
from store.db.inputs import parse_uuid
from store.errors import NotFound
from store.governance import receipt_secrets, receipts
from store.governance.receipts import Touched, Trace

T = TypeVar("T")


def traced_read(
    transactions: Transactions,
    tenant_id: str,
    trace: Trace,
    read: Callable[[psycopg.Connection[Any], datetime], T],
    describe: Callable[[psycopg.Connection[Any], T | None, datetime], list[Touched]],
) -> T:
    """``read``, and the receipts ``describe`` gives of what it served, in one transaction.

    A read that found nothing (NotFound) still leaves its receipt, then raises: "nothing was
    there" is evidence too. A read for no decision (``trace``) leaves none: it runs alone, as
    one statement (``Transactions.read``), so ``read`` must be one.
    """
    if trace.decision_id is None:
        return transactions.read(read, tenant_id=tenant_id)

    def work(conn: psycopg.Connection[Any], now: datetime) -> tuple[T | None, NotFound | None]:
        try:
            found = read(conn, now)
        except NotFound as error:
            leave(conn, describe(conn, None, now), now)
            return None, error
        leave(conn, describe(conn, found, now), now)
        return found, None

    def leave(conn: psycopg.Connection[Any], touched: list[Touched], now: datetime) -> None:
        receipts.leave_receipts(
            conn,
            tenant_id,
            touched,
            action="read",
            trace=trace,
            now=now,
        )

    found, missing = transactions.run(work, tenant_id=tenant_id)
    if missing is not None:
        raise missing
    return cast(T, found)


class ReceiptCalls:
    """A decision's receipts, the classifier's evidence, and their retention."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def decision(self, tenant_id: str, decision_id: UUID | str) -> DecisionReceipts:
        """The decision and its receipts, oldest first; NotFound when the tenant has none."""
        wanted = parse_uuid(decision_id, "decision_id")
        found = self._transactions.run(
            lambda conn, _: receipts.read_decision(conn, tenant_id, wanted),
            tenant_id=tenant_id,
            snapshot=True,
        )
        if found is None:
            raise NotFound(f"no decision {wanted}", field="decision_id")
        return found

    def evidence(
        self, tenant_id: str, *, decision_ids: Sequence[UUID], memories: Sequence[MemoryRef]
    ) -> Evidence:
        """What the classifier judges: the receipts of ``decision_ids`` and the writes of
        ``memories``, with the tenant's receipt secrets their hashes were made with."""

        def work(conn: psycopg.Connection[Any], _: datetime) -> Evidence:
            ring = receipt_secrets.keyring(conn, tenant_id)
            hashed = sorted(
                {
                    (m.type, m.memory_key(secret=secret))
                    for m in memories
                    for secret in ring.values()
                }
            )
            found = receipts.evidence_receipts(
                conn, tenant_id, decision_ids=decision_ids, memories=hashed
            )
            return Evidence(available=True, receipts=found, keyring=ring)

        return self._transactions.run(work, tenant_id=tenant_id, snapshot=True)

    def rotate_secret(self, tenant_id: str) -> SecretVersion:
        """Start the tenant's next receipt secret: receipts made from now on are hashed with it;
        those made before keep their version and still compare."""

        def work(conn: psycopg.Connection[Any], now: datetime) -> SecretVersion:
            tenants.require_tenant(conn, tenant_id)
            receipt_secrets.current_secret(conn, tenant_id, now=now)  # version 1 first, if none
            rotated = receipt_secrets.rotate(conn, tenant_id, now=now)
            receipt_secrets.forget(conn, tenant_id)
            return rotated

        return self._transactions.run(work, tenant_id=tenant_id)

    def purge(self, tenant_id: str, *, retention: timedelta) -> int:
        """Delete the tenant's receipts older than ``retention``; how many went."""
        return self._transactions.run(
            lambda conn, now: receipts.purge_receipts(conn, tenant_id, before=now - retention),
            tenant_id=tenant_id,
        )


def traced_write(
    transactions: Transactions,
    tenant_id: str,
    trace: Trace,
    write: Callable[[psycopg.Connection[Any], datetime], T],
    describe: Callable[[T], list[Touched]],
) -> T:
    """``write``, and the receipts ``describe`` gives of what it wrote, in one transaction."""

    def work(conn: psycopg.Connection[Any], now: datetime) -> T:
        written = write(conn, now)
        receipts.leave_receipts(
            conn,
            tenant_id,
            describe(written),
            action="write",
            trace=trace,
            now=now,
        )
        return written

    return transactions.run(work, tenant_id=tenant_id)
