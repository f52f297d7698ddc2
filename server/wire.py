"""Wire shapes the server and its client share, importable without the server's weight.

The problem+json body with its stable codes, the health answers and the clock header's
name. ``server.problems`` maps errors onto these; ``server.client`` parses them.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, Field

PROBLEM_MEDIA_TYPE: Final = "application/problem+json"
CLOCK_HEADER: Final = "X-SGAM-Now"
"""Sets a request's system time where the server allows it (evaluations only)."""
DECISION_HEADER: Final = "X-SGAM-Decision"
"""Names the decision a read is made for: the read leaves receipts under it."""
SCOPE_HEADER: Final = "X-SGAM-Scope"
"""The caller's own scope (e.g. ``project:acme``), part of every receipt's scope hash."""
FRESHNESS_HEADER: Final = "X-SGAM-Freshness-Budget"
"""The age in seconds the caller allows what it reads: receipts record it."""
UNSUPPORTED_MEDIA_TYPE: Final = "unsupported_media_type"
"""A body sent to a JSON route as something else (415): the code its problem carries."""

HTTP_STATUS_CODE: Final[dict[int, str]] = {
    400: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "invalid",
    409: "conflict",
    413: "too_large",
    422: "invalid",
    503: "unavailable",
}
"""Failures raised by the HTTP layer itself (routing, parsing, auth, size), by status."""

TITLES: Final[dict[str, str]] = {
    "invalid": "The request is not valid",
    "not_found": "Not found",
    "conflict": "The request conflicts with stored state",
    "legal_hold": "The data is under legal hold",
    "schema_change_requires_migration": "The change needs an attribute migration",
    "unauthorized": "Missing or unknown credentials",
    "forbidden": "Not allowed",
    "too_large": "The request is too large",
    UNSUPPORTED_MEDIA_TYPE: "The body is not sent as JSON",
    "unavailable": "A dependency is unavailable",
    "internal": "Internal error",
}


class Problem(BaseModel):
    """An RFC 9457 problem detail with SGAM's stable ``code`` and the ``field`` at fault."""

    type: str = Field(description="A URI naming the problem's code.")
    title: str
    status: int
    detail: str
    code: str = Field(
        description="Stable: invalid, not_found, conflict, legal_hold,"
        " schema_change_requires_migration, unauthorized, forbidden, too_large,"
        " unsupported_media_type, unavailable or internal."
    )
    field: str | None = Field(default=None, description="The body path, parameter or header.")
    unconvertible: list[dict[str, Any]] | None = Field(
        default=None,
        description="A refused attribute migration's values that would not convert: fact_id,"
        " version_id, subject, value and reason of each.",
    )


class Health(BaseModel):
    """Liveness."""

    status: str


class Readiness(BaseModel):
    """Readiness, and each check behind it."""

    status: str
    database: bool
    migrations_pending: int | None
    model_loaded: bool
    detail: str | None = None
