"""Receipts: the content-free trace of a write or of a read made for a decision.

A receipt says which memory was touched, in which scope, when it was written and read, where
it came from, whether it reached the decision, and whether it was still valid: only ids,
hashes, times, enums, booleans and counts (design, section 6). What the memory *says* is
never in it. The health classifier (``retrieval/memory_health``) reads receipts and nothing else.

Keys and scopes are hashes, so equal ones compare equal without being stored: the memory's
own key (``memory_key``: an attribute, a thread, an episode, a procedure) and its scope
(``scope_hash``: the tenant, the subject, thread or procedure the memory belongs to, and the
caller's optional scope string, ``X-SGAM-Scope``). Each hash is an HMAC-SHA-256 under the
tenant's receipt secret, and the receipt names the secret's version (``secret_version``): it
proves equality to whoever holds the secret (the server), and without it a guessable subject
cannot be confirmed by trying names. Rotating the secret starts a new version; receipts made
before keep theirs and still compare. Version 0 names receipts made before secrets existed:
their hashes are plain SHA-256.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Mapping
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from store.contract.common import MemoryType, Timestamp
from store.contract.memory import OutcomeStatus

ReceiptAction = Literal["read", "write"]
Invalidation = Literal["current", "superseded"]
OwnerKind = Literal["subject", "thread", "procedure", "episode"]

OWNER_KINDS: dict[str, OwnerKind] = {
    "semantic": "subject",
    "episodic": "subject",
    "working": "thread",
    "procedural": "procedure",
}
"""What a memory of each type belongs to, which its scope names."""

_HASH_CHARS = 32  # 128 bits of SHA-256, as hex


LEGACY_SECRET_VERSION = 0
"""The version of receipts made before receipt secrets: hashed with no secret (plain SHA-256)."""

Keyring = Mapping[int, bytes]
"""A tenant's receipt secrets by version (version 0: the empty secret of the oldest receipts)."""


@functools.lru_cache(maxsize=8192)
def _digest(secret: bytes, *parts: str) -> str:
    # The unit separator cannot occur in an identifier, so distinct part lists never collide
    # by concatenation. Cached: a tenant's reads hash the same few keys and scopes again.
    data = "\x1f".join(parts).encode()
    if not secret:
        return hashlib.sha256(data).hexdigest()[:_HASH_CHARS]
    return hmac.new(secret, data, hashlib.sha256).hexdigest()[:_HASH_CHARS]


def memory_key(memory_type: MemoryType, key: str, *, secret: bytes) -> str:
    """The hash naming one memory within its scope: a semantic memory's attribute, a working
    memory's thread, an episode's id, a procedure's name."""
    return _digest(secret, "sgam-memory/1", memory_type, key)


def fold_owner(kind: OwnerKind, owner: str | None) -> str:
    """``owner`` as the store compares it: subjects case-insensitively, the rest exactly."""
    if owner is None:
        return ""
    return owner.lower() if kind == "subject" else owner


def owner_key(tenant_id: str, kind: OwnerKind, owner: str | None, *, secret: bytes) -> str:
    """The hash of what a receipt is erased with, without the caller's scope: its subject,
    thread or procedure, or for an episode the episode itself."""
    return _digest(secret, "sgam-owner/1", tenant_id, kind, fold_owner(kind, owner))


def owner_keys(tenant_id: str, kind: OwnerKind, owner: str | None, keyring: Keyring) -> list[str]:
    """``owner_key`` under every secret of the tenant: the receipts of one owner, whatever
    version each was made with."""
    return sorted({owner_key(tenant_id, kind, owner, secret=s) for s in keyring.values()})


def scope_hash(
    tenant_id: str, kind: OwnerKind, owner: str | None, scope: str | None, *, secret: bytes
) -> str:
    """The hash of a scope: the tenant, what the memory belongs to, the caller's scope string.

    ``owner`` None is a tenant-wide read (an episode search naming no subject).
    """
    return _digest(secret, "sgam-scope/1", tenant_id, kind, fold_owner(kind, owner), scope or "")


def procedure_owner(name: str, activation_scope: str) -> str:
    """A procedure's owner in a scope hash: its name and the scope it is active in (an
    identifier holds no ``/``, so the pair reads one way only)."""
    return f"{name}/{activation_scope}"


class Receipt(BaseModel):
    """One content-free receipt of a read made for a decision, or of a write."""

    model_config = ConfigDict(extra="forbid")

    receipt_id: UUID
    decision_id: UUID | None = Field(
        description="The decision the read was made for; null for a write made for none"
    )
    action: ReceiptAction
    memory_type: MemoryType
    memory_key: str = Field(description="memory_key(): the hash of the memory's own key")
    version: str | None = Field(
        description="The version read or written: a fact version's id, a checkpoint's or a"
        " procedure's version number; null when the read found nothing"
    )
    expected_scope_hash: str = Field(description="The scope the request asked for")
    observed_scope_hash: str = Field(description="The scope of the memory served or written")
    written_at: Timestamp | None = Field(
        description="When the memory version was written; null when the read found nothing"
    )
    read_at: Timestamp | None = Field(description="When it was read; null for a write")
    freshness_budget_s: int | None = Field(
        description="The age the caller allowed (X-SGAM-Freshness-Budget), seconds; null: none"
    )
    provenance: str | None = Field(
        description="Where the version came from: a fact's source episode id, a checkpoint's"
        " write, an episode's own id, a procedure version's approval; null when unknown"
    )
    activated: bool = Field(
        description="Whether it reached what the read returned: the context block, or the answer"
        " of a direct read"
    )
    invalidation: Invalidation | None = Field(
        description="Whether the version was still the current belief when read: current, or"
        " superseded (a later write corrected, ended or retracted it); null when nothing was"
        " found"
    )
    outcome: OutcomeStatus | None = Field(
        description="An episode's observed outcome when read; null: none recorded (episodic only)"
    )
    approved: bool | None = Field(
        description="Whether the procedure version served was an approved one (procedural only)"
    )
    recorded_at: Timestamp
    secret_version: int = Field(
        default=LEGACY_SECRET_VERSION,
        description="The version of the tenant's receipt secret its hashes were made with (0:"
        " made before receipt secrets, plain SHA-256)",
    )


class SecretVersion(BaseModel):
    """A version of a tenant's receipt secret (never the secret itself): receipts made since
    ``created_at`` name it in ``secret_version``."""

    tenant_id: str
    secret_version: int = Field(ge=1)
    created_at: Timestamp


class DecisionReceipts(BaseModel):
    """A decision and every receipt left for it, oldest first."""

    decision_id: UUID
    opened_at: Timestamp = Field(description="When the decision's first read was made")
    receipts: list[Receipt]
