"""Administration: tenants, API keys, each tenant's attribute schema, and the timeline pages'
sessions (opened for a verified key)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg

from store.api.transactions import Transactions
from store.attributes import changes as attribute_changes
from store.attributes import registry as attributes
from store.contract.common import UnverifiedEvidencePolicy
from store.contract.facts import Attribute, AttributeDeclaration
from store.contract.governance import AttributeChange, MigrationResult
from store.contract.results import ApiKey, ApiKeyIssued, ApiKeyRevoked
from store.db import tenants
from store.db.inputs import check_identifier, parse_input, parse_uuid
from store.errors import InvalidInput
from store.governance import keys, ui_sessions
from store.governance.keys import ActiveKey
from store.governance.retention import require_class
from store.governance.ui_sessions import UiSession

DUAL_READ = timedelta(days=30)
"""How long a renamed attribute's old name still reads and writes the new one, by default."""


class AdminCalls:
    """Calls an operator or an admin token makes, and the key check every request makes."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def create_tenant(
        self, tenant_id: str, *, on_unverified_evidence: UnverifiedEvidencePolicy = "accept"
    ) -> None:
        """Create a tenant (Conflict if it exists) with its default for unverified evidence."""
        check_identifier(tenant_id, "tenant_id")
        policy = _unverified_policy(on_unverified_evidence)
        self._transactions.run(
            lambda conn, now: tenants.create_tenant(
                conn, tenant_id, now=now, on_unverified_evidence=policy
            ),
            tenant_id=tenant_id,
        )

    def set_unverified_evidence(self, tenant_id: str, policy: str) -> None:
        """Set the tenant's default for candidates whose evidence is not in their episode:
        ``accept`` or ``refuse`` (an attribute's own declaration wins over it)."""
        check_identifier(tenant_id, "tenant_id")
        parsed = _unverified_policy(policy)
        self._transactions.run(
            lambda conn, _: tenants.set_unverified_evidence(conn, tenant_id, parsed),
            tenant_id=tenant_id,
        )

    def unverified_evidence(self, tenant_id: str) -> UnverifiedEvidencePolicy:
        """The tenant's default for unverified evidence (NotFound for no such tenant)."""
        check_identifier(tenant_id, "tenant_id")
        return self._transactions.run(
            lambda conn, _: tenants.read_unverified_evidence(conn, tenant_id),
            tenant_id=tenant_id,
        )

    def ensure_tenant(self, tenant_id: str) -> None:
        """Create a tenant unless it exists."""
        check_identifier(tenant_id, "tenant_id")
        self._transactions.run(
            lambda conn, now: tenants.ensure_tenant(conn, tenant_id, now=now), tenant_id=tenant_id
        )

    def create_api_key(self, tenant_id: str) -> ApiKeyIssued:
        """Issue an API key for the tenant; its token is shown only in this result."""
        check_identifier(tenant_id, "tenant_id")
        return self._transactions.run(
            lambda conn, now: keys.create_api_key(conn, tenant_id, now=now), tenant_id=tenant_id
        )

    def authenticate(self, api_key: str) -> str | None:
        """The tenant of a valid, unrevoked key; None for anything else."""
        return self._transactions.run(
            lambda conn, _: keys.authenticate(conn, api_key), tenant_id=None
        )

    def find_active_key(self, key_id: UUID) -> ActiveKey | None:
        """The unrevoked key with this id, as a server process caches it."""
        return self._transactions.run(
            lambda conn, _: keys.find_active_key(conn, key_id), tenant_id=None
        )

    def revoke_api_key(self, key_id: UUID | str) -> ApiKeyRevoked:
        """Revoke a key for good (revoking it again changes nothing).

        Returns only once no server process can accept the key any more: after the commit it
        waits out the key-cache lease (``keys.KEY_CACHE_LEASE``), by which time every process
        has either received the revocation or stopped answering from its cache. A repeated
        revocation waits too, in case the first caller did not live to the end of its wait.
        """
        target = parse_uuid(key_id, "key_id")
        revoked = self._transactions.run(
            lambda conn, now: keys.revoke_api_key(conn, target, now=now), tenant_id=None
        )
        time.sleep(keys.KEY_CACHE_LEASE)
        return revoked

    def list_api_keys(self, tenant_id: str) -> list[ApiKey]:
        """The tenant's keys without their secrets, oldest first."""
        check_identifier(tenant_id, "tenant_id")
        return self._transactions.run(
            lambda conn, _: keys.list_api_keys(conn, tenant_id), tenant_id=tenant_id
        )

    def declare_attribute(
        self,
        tenant_id: str,
        attribute: str,
        declaration: AttributeDeclaration | Mapping[str, Any],
    ) -> Attribute:
        """Declare or redeclare an attribute of the tenant's schema."""
        check_identifier(attribute, "attribute")
        parsed = parse_input(AttributeDeclaration, declaration)

        def work(conn: psycopg.Connection[Any], now: datetime) -> Attribute:
            tenants.require_tenant(conn, tenant_id)
            require_class(conn, tenant_id, parsed.retention_class, field="retention_class")
            return attributes.declare_attribute(
                conn, tenant_id, attribute, declaration=parsed, now=now
            )

        return self._transactions.run(work, tenant_id=tenant_id)

    def migrate_attribute(
        self,
        tenant_id: str,
        attribute: str,
        change: AttributeChange | Mapping[str, Any],
        *,
        dry_run: bool = False,
        keep_unconvertible: bool = False,
        dual_read: timedelta = DUAL_READ,
    ) -> MigrationResult:
        """Change an attribute's declaration (type, enum members, name) and convert its facts,
        all in one transaction; a dry run reports the same and changes nothing."""
        check_identifier(attribute, "attribute")
        parsed = parse_input(AttributeChange, change)
        transactions = self._transactions
        return transactions.run(
            lambda conn, _: attribute_changes.migrate_attribute(
                conn,
                tenant_id,
                attribute,
                change=parsed,
                dry_run=dry_run,
                keep_unconvertible=keep_unconvertible,
                clock=transactions.clock,
                new_id=transactions.new_id,
                dual_read=dual_read,
            ),
            tenant_id=tenant_id,
        )

    def list_attributes(self, tenant_id: str) -> list[Attribute]:
        """The tenant's attribute schema."""
        return self._transactions.run(
            lambda conn, _: attributes.list_attributes(conn, tenant_id), tenant_id=tenant_id
        )

    def memory_update_schema(self, tenant_id: str) -> dict[str, Any]:
        """The ``MemoryUpdate`` JSON Schema for structured output, attributes as an enum."""
        return self._transactions.run(
            lambda conn, _: attributes.memory_update_schema(conn, tenant_id), tenant_id=tenant_id
        )


def _unverified_policy(policy: str) -> UnverifiedEvidencePolicy:
    """``accept`` or ``refuse``; anything else is InvalidInput naming the field."""
    if policy == "accept":
        return "accept"
    if policy == "refuse":
        return "refuse"
    raise InvalidInput(
        f"on_unverified_evidence must be accept or refuse, not {policy!r}",
        field="on_unverified_evidence",
    )


class UiSessionCalls:
    """Server-side sessions, shared by every server process through the database."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def open(
        self,
        tenant_id: str,
        key_id: UUID,
        *,
        session_hash: bytes,
        csrf_hash: bytes,
        lifetime: timedelta,
    ) -> datetime:
        """Keep a session of ``key_id`` (a key of ``tenant_id`` the caller verified); when it
        expires."""

        def work(conn: psycopg.Connection[Any], now: datetime) -> datetime:
            expires_at = now + lifetime
            ui_sessions.open_session(
                conn,
                tenant_id,
                key_id=key_id,
                session_hash=session_hash,
                csrf_hash=csrf_hash,
                now=now,
                expires_at=expires_at,
            )
            return expires_at

        return self._transactions.run(work, tenant_id=tenant_id)

    def find(self, session_hash: bytes) -> UiSession | None:
        """The live session with this digest, its key still active; None otherwise."""
        return self._transactions.read(
            lambda conn, now: ui_sessions.find_session(conn, session_hash, now=now),
            tenant_id=None,
        )

    def close(self, tenant_id: str, session_hash: bytes) -> bool:
        """End the tenant's session with this digest; whether it was open."""
        return self._transactions.run(
            lambda conn, _: ui_sessions.close_session(conn, tenant_id, session_hash),
            tenant_id=tenant_id,
        )
