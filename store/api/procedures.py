"""Procedural memory: draft versions, their approval, activation in a scope, and rollback.

Only an approved version is ever active, and only the active one is served. A version's
approval holds its row; a scope's activation or rollback holds the procedure's row, so
concurrent calls on one procedure take their turns.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import psycopg

from store.api.receipts import traced_read, traced_write
from store.api.transactions import Transactions
from store.contract.procedures import (
    DEFAULT_SCOPE,
    MAX_VERSION,
    ActiveProcedure,
    ApprovalInput,
    ProcedureInput,
    ProcedureVersion,
)
from store.db.inputs import check_identifier, parse_input
from store.errors import InvalidInput, NotFound
from store.governance import touched
from store.governance.receipts import NO_TRACE, Touched, Trace
from store.memory import procedure_rules, procedures


class ProcedureCalls:
    """Versions of named procedures and the version active in each scope."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def create(
        self,
        tenant_id: str,
        procedure: ProcedureInput | Mapping[str, Any],
        *,
        trace: Trace = NO_TRACE,
    ) -> ProcedureVersion:
        """Write a draft: version 1 of a new procedure, or the next version of a known one."""
        given = parse_input(ProcedureInput, procedure)
        return traced_write(
            self._transactions,
            tenant_id,
            trace,
            lambda conn, now: procedures.create_version(conn, tenant_id, given, now=now),
            lambda written: [touched.procedure_written(written)],
        )

    def approve(
        self,
        tenant_id: str,
        name: str,
        *,
        version: int,
        approval: ApprovalInput | Mapping[str, Any],
        trace: Trace = NO_TRACE,
    ) -> ProcedureVersion:
        """Record who approved a draft, under which policy; a second approval is a conflict."""
        _check_version(name, version)
        given = parse_input(ApprovalInput, approval)

        def work(conn: psycopg.Connection[Any], now: datetime) -> ProcedureVersion:
            state = procedures.version_state(
                conn, tenant_id, name=name, version=version, lock="update"
            )
            if state is None:
                raise _no_version(name, version)
            procedure_rules.check_approvable(state)
            return procedures.approve_version(
                conn, tenant_id, name=name, version=version, approval=given, now=now
            )

        return traced_write(
            self._transactions,
            tenant_id,
            trace,
            work,
            lambda written: [touched.procedure_written(written)],
        )

    def activate(
        self,
        tenant_id: str,
        name: str,
        *,
        version: int,
        scope: str = DEFAULT_SCOPE,
        trace: Trace = NO_TRACE,
    ) -> ActiveProcedure:
        """Make an approved version the active one in ``scope``; the one it replaces becomes
        its rollback target. Activating the active version changes nothing."""
        _check_version(name, version)
        check_identifier(scope, "scope")

        def work(conn: psycopg.Connection[Any], now: datetime) -> ActiveProcedure:
            if not procedures.lock_procedure(conn, tenant_id, name):
                raise _no_version(name, version)
            state = procedures.version_state(
                conn, tenant_id, name=name, version=version, lock="share"
            )
            if state is None:
                raise _no_version(name, version)
            stack = procedures.scope_stack(conn, tenant_id, name, scope)
            if procedure_rules.activation(state, stack) == "push":
                procedures.push_activation(
                    conn, tenant_id, name=name, scope=scope, stack=stack, version=version, now=now
                )
            return _active(conn, tenant_id, name, scope)

        return traced_write(self._transactions, tenant_id, trace, work, _activation_written)

    def rollback(
        self, tenant_id: str, name: str, *, scope: str = DEFAULT_SCOPE, trace: Trace = NO_TRACE
    ) -> ActiveProcedure:
        """Make the active version's rollback target active again in ``scope``.

        The target's own rollback target is then the next one back.
        """
        check_identifier(name, "name")
        check_identifier(scope, "scope")

        def work(conn: psycopg.Connection[Any], now: datetime) -> ActiveProcedure:
            if not procedures.lock_procedure(conn, tenant_id, name):
                raise NotFound(f"no procedure named {name}")
            stack = procedures.scope_stack(conn, tenant_id, name, scope)
            procedure_rules.rollback(stack, name=name, scope=scope)
            procedures.pop_activation(conn, tenant_id, name=name, scope=scope, stack=stack, now=now)
            return _active(conn, tenant_id, name, scope)

        return traced_write(self._transactions, tenant_id, trace, work, _activation_written)

    def active(
        self,
        tenant_id: str,
        name: str,
        *,
        scope: str = DEFAULT_SCOPE,
        trace: Trace = NO_TRACE,
    ) -> ActiveProcedure:
        """The version active in ``scope``: NotFound when none is. A read for a decision
        (``trace``) leaves its receipt."""
        check_identifier(name, "name")
        check_identifier(scope, "scope")

        def read(conn: psycopg.Connection[Any], _: datetime) -> ActiveProcedure:
            return _active(conn, tenant_id, name, scope)

        return traced_read(
            self._transactions,
            tenant_id,
            trace,
            read,
            lambda _, active, __: [
                touched.procedure_missing(name, scope)
                if active is None
                else touched.procedure_read(active)
            ],
        )


def _activation_written(active: ActiveProcedure) -> list[Touched]:
    return [touched.procedure_written(active, scope=active.scope)]


def _check_version(name: str, version: int) -> None:
    check_identifier(name, "name")
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidInput("version must be an integer", field="version")
    if not 1 <= version <= MAX_VERSION:
        raise InvalidInput(f"version must be from 1 to {MAX_VERSION}", field="version")


def _no_version(name: str, version: int) -> NotFound:
    return NotFound(f"procedure {name} has no version {version}")


def _active(
    conn: psycopg.Connection[Any], tenant_id: str, name: str, scope: str
) -> ActiveProcedure:
    active = procedures.read_active(conn, tenant_id, name, scope)
    if active is None:
        raise NotFound(f"no version of procedure {name} is active in scope {scope}")
    return active
