"""A typed Python client for the SGAM HTTP API, blocking and async.

    with SGAMClient("http://localhost:8000", api_key) as sgam:
        fact = sgam.fact("mira", "passport_deadline", valid_at="2026-06-02T00:00:00Z")

Results are the server's own models (``store.models``, ``retrieval.models``,
``server.bodies``); a problem+json answer raises an ``SGAMError`` subclass.
"""

from server.client.aio import AsyncSGAMClient
from server.client.call import Call, Candidate, Instant
from server.client.errors import (
    ConflictError,
    Forbidden,
    InvalidRequest,
    LegalHoldError,
    NotFoundError,
    SchemaChangeRequired,
    SGAMError,
    TooLarge,
    Unauthorized,
    Unavailable,
)
from server.client.sync import SGAMClient

__all__ = [
    "AsyncSGAMClient",
    "Call",
    "Candidate",
    "ConflictError",
    "Forbidden",
    "Instant",
    "InvalidRequest",
    "LegalHoldError",
    "NotFoundError",
    "SGAMClient",
    "SGAMError",
    "SchemaChangeRequired",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
]
