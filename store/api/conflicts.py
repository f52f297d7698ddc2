"""Equal-start conflicts: listed for review, settled by choosing a side."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import psycopg

from store.api.transactions import Transactions
from store.contract.results import ConflictPage, ResolveResult
from store.db.inputs import check_identifier, parse_instant, parse_uuid
from store.errors import InvalidInput
from store.facts import conflicts, resolution
from store.subjects import merged_ids


class ConflictCalls:
    """The conflicts a policy left open, and their settlement."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def list(
        self,
        tenant_id: str,
        *,
        status: Literal["open", "resolved"] | None = "open",
        subject: str | None = None,
        attribute: str | None = None,
        valid_from: datetime | str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> ConflictPage:
        """A page of conflicts (open ones by default), oldest first."""
        for value, field in ((subject, "subject"), (attribute, "attribute")):
            if value is not None:
                check_identifier(value, field)
        start = parse_instant(valid_from, "valid_from")

        def work(conn: psycopg.Connection[Any], _: datetime) -> ConflictPage:
            found, next_cursor = conflicts.list_conflicts(
                conn,
                tenant_id,
                status=status,
                subject=merged_ids.resolve_subject(conn, tenant_id, subject) if subject else None,
                attribute=attribute,
                valid_from=start,
                limit=limit,
                cursor=cursor,
            )
            return ConflictPage(conflicts=found, next_cursor=next_cursor)

        return self._transactions.run(work, tenant_id=tenant_id)

    def resolve(
        self,
        tenant_id: str,
        conflict_id: UUID | str,
        *,
        choose: Literal["incumbent", "challenger"],
    ) -> ResolveResult:
        """Settle a conflict: keep the incumbent, or let the challenger replace it."""
        target = parse_uuid(conflict_id, "conflict_id")
        if choose not in ("incumbent", "challenger"):
            raise InvalidInput("choose must be incumbent or challenger", field="choose")
        transactions = self._transactions
        return transactions.run(
            lambda conn, _: resolution.resolve(
                conn,
                tenant_id,
                conflict_id=target,
                choose=choose,
                clock=transactions.clock,
                new_id=transactions.new_id,
            ),
            tenant_id=tenant_id,
        )
