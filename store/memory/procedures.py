"""Procedural memory: versions of named procedures, their approval and their activation.

The lifecycle's rules are ``store.memory.procedure_rules``; this module reads and writes the rows
(migration 0016). A scope's activations are a stack whose top is the active version.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.contract.procedures import (
    ActiveProcedure,
    ApprovalInput,
    ProcedureInput,
    ProcedureVersion,
)
from store.memory.procedure_rules import EMPTY, ScopeStack, VersionState

_NUMBER = """
INSERT INTO procedures (tenant_id, name, latest_version, created_at)
VALUES (%(tenant_id)s, %(name)s, 1, %(now)s)
ON CONFLICT (tenant_id, name) DO UPDATE SET latest_version = procedures.latest_version + 1
RETURNING latest_version
"""

_INSERT_VERSION = """
INSERT INTO procedure_versions (tenant_id, name, version, steps, definition, created_at)
VALUES (%(tenant_id)s, %(name)s, %(version)s, %(steps)s, %(definition)s, %(now)s)
RETURNING name, version, 'draft' AS status, steps, definition, created_at,
    approver, policy, evaluation_ref, approved_at
"""


def create_version(
    conn: psycopg.Connection[Any], tenant_id: str, procedure: ProcedureInput, *, now: datetime
) -> ProcedureVersion:
    """Write the procedure's next version (1 for a new one) as a draft.

    Numbering updates the procedure's row, which holds its other writers until this commits.
    """
    params = {"tenant_id": tenant_id, "name": procedure.name, "now": now}
    numbered = conn.execute(_NUMBER, params).fetchone()
    assert numbered is not None
    definition = None if procedure.definition is None else Jsonb(procedure.definition)
    with conn.cursor(row_factory=class_row(ProcedureVersion)) as cur:
        cur.execute(
            _INSERT_VERSION,
            {**params, "version": numbered[0], "steps": procedure.steps, "definition": definition},
        )
        created = cur.fetchone()
    assert created is not None
    return created


def lock_procedure(conn: psycopg.Connection[Any], tenant_id: str, name: str) -> bool:
    """Hold the procedure's row until commit (its activations change one at a time)."""
    return (
        conn.execute(
            "SELECT FROM procedures WHERE tenant_id = %(tenant_id)s AND name = %(name)s"
            " FOR NO KEY UPDATE",
            {"tenant_id": tenant_id, "name": name},
        ).fetchone()
        is not None
    )


def version_state(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    name: str,
    version: int,
    lock: Literal["update", "share"],
) -> VersionState | None:
    """A version's approval state, its row locked (``update`` or ``share``) until commit."""
    statement = (
        "SELECT name, version, approved_at IS NOT NULL AS approved FROM procedure_versions"
        " WHERE tenant_id = %(tenant_id)s AND name = %(name)s AND version = %(version)s"
    )
    statement += " FOR UPDATE" if lock == "update" else " FOR SHARE"
    with conn.cursor(row_factory=class_row(VersionState)) as cur:
        cur.execute(statement, {"tenant_id": tenant_id, "name": name, "version": version})
        return cur.fetchone()


def approve_version(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    name: str,
    version: int,
    approval: ApprovalInput,
    now: datetime,
) -> ProcedureVersion:
    """Record the approval of a draft (``procedure_rules.check_approvable`` said it may be)."""
    with conn.cursor(row_factory=class_row(ProcedureVersion)) as cur:
        cur.execute(
            "UPDATE procedure_versions SET approver = %(approver)s, policy = %(policy)s,"
            " evaluation_ref = %(evaluation_ref)s, approved_at = %(now)s"
            " WHERE tenant_id = %(tenant_id)s AND name = %(name)s AND version = %(version)s"
            " AND approved_at IS NULL"
            " RETURNING name, version, 'approved' AS status, steps, definition, created_at,"
            " approver, policy, evaluation_ref, approved_at",
            {
                **approval.model_dump(),
                "tenant_id": tenant_id,
                "name": name,
                "version": version,
                "now": now,
            },
        )
        approved = cur.fetchone()
    assert approved is not None
    return approved


def scope_stack(conn: psycopg.Connection[Any], tenant_id: str, name: str, scope: str) -> ScopeStack:
    """The top two entries of a scope's activation stack."""
    rows = conn.execute(
        "SELECT depth, version FROM procedure_activations"
        " WHERE tenant_id = %(tenant_id)s AND name = %(name)s AND scope = %(scope)s"
        " ORDER BY depth DESC LIMIT 2",
        {"tenant_id": tenant_id, "name": name, "scope": scope},
    ).fetchall()
    if not rows:
        return EMPTY
    below = rows[1][1] if len(rows) > 1 else None
    return ScopeStack(depth=rows[0][0], active=rows[0][1], rollback_target=below)


def push_activation(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    name: str,
    scope: str,
    stack: ScopeStack,
    version: int,
    now: datetime,
) -> None:
    """Make ``version`` the top of the scope's stack; the foreign keys refuse a draft."""
    conn.execute(
        "INSERT INTO procedure_activations"
        " (tenant_id, name, scope, depth, version, approved_at, activated_at)"
        " SELECT tenant_id, name, %(scope)s, %(depth)s, version, approved_at, %(now)s"
        " FROM procedure_versions"
        " WHERE tenant_id = %(tenant_id)s AND name = %(name)s AND version = %(version)s",
        {
            "tenant_id": tenant_id,
            "name": name,
            "scope": scope,
            "depth": stack.depth + 1,
            "version": version,
            "now": now,
        },
    )


def pop_activation(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    name: str,
    scope: str,
    stack: ScopeStack,
    now: datetime,
) -> None:
    """Take the top off the scope's stack: the entry below is active again, from ``now``."""
    params = {
        "tenant_id": tenant_id,
        "name": name,
        "scope": scope,
        "depth": stack.depth,
        "now": now,
    }
    conn.execute(
        "DELETE FROM procedure_activations WHERE tenant_id = %(tenant_id)s AND name = %(name)s"
        " AND scope = %(scope)s AND depth = %(depth)s",
        params,
    )
    conn.execute(
        "UPDATE procedure_activations SET activated_at = %(now)s WHERE tenant_id = %(tenant_id)s"
        " AND name = %(name)s AND scope = %(scope)s AND depth = %(depth)s - 1",
        params,
    )


_ACTIVE = """
SELECT v.name, v.version, 'approved' AS status, v.steps, v.definition, v.created_at,
    v.approver, v.policy, v.evaluation_ref, v.approved_at,
    a.scope, a.activated_at, b.version AS rollback_target
FROM procedure_activations AS a
JOIN procedure_versions AS v
    ON v.tenant_id = a.tenant_id AND v.name = a.name AND v.version = a.version
    AND v.approved_at = a.approved_at
LEFT JOIN procedure_activations AS b
    ON b.tenant_id = a.tenant_id AND b.name = a.name AND b.scope = a.scope AND b.depth = a.below
WHERE a.tenant_id = %(tenant_id)s AND a.name = %(name)s AND a.scope = %(scope)s
ORDER BY a.depth DESC
LIMIT 1
"""


def read_active(
    conn: psycopg.Connection[Any], tenant_id: str, name: str, scope: str
) -> ActiveProcedure | None:
    """The version active in ``scope``, with its rollback target; None when none is."""
    with conn.cursor(row_factory=class_row(ActiveProcedure)) as cur:
        cur.execute(_ACTIVE, {"tenant_id": tenant_id, "name": name, "scope": scope})
        return cur.fetchone()
