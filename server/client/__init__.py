"""A typed Python client for the SGAM HTTP API, blocking and async.

    with SGAMClient("http://localhost:8000", api_key) as sgam:
        fact = sgam.fact("mira", "passport_deadline", valid_at="2026-06-02T00:00:00Z")

Results are the contract's models (``store.contract``), which the server answers with; a
problem+json answer raises the ``SGAMError`` subclass the contract names for its ``code``;
no answer at all raises ``Unavailable`` (``Timeout`` past the client's timeout). The
client loads the contract, httpx and pydantic only, never the server or the store.
"""

from server.client.aio import AsyncSGAMClient
from server.client.call import Call, Candidate, Instant
from server.client.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    LegalHold,
    NotFound,
    SchemaChangeRequiresMigration,
    SGAMError,
    Timeout,
    TooLarge,
    Unauthorized,
    Unavailable,
    UnsupportedMediaType,
)
from server.client.sync import SGAMClient

__all__ = [
    "AsyncSGAMClient",
    "Call",
    "Candidate",
    "Conflict",
    "Forbidden",
    "Instant",
    "InvalidInput",
    "LegalHold",
    "NotFound",
    "SGAMClient",
    "SGAMError",
    "SchemaChangeRequiresMigration",
    "Timeout",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
    "UnsupportedMediaType",
]
