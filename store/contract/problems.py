"""Problems, health answers and headers: the wire shapes beside the models.

The problem+json body, its stable codes with the HTTP status of each (``ERRORS``), the health
answers and the headers' names. ``store.errors`` takes its codes from here, ``server.http.problems``
maps errors onto them and ``server.client`` parses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
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


class ErrorCode(StrEnum):
    """The stable ``code`` of every problem: what clients branch on."""

    INVALID = "invalid"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    LEGAL_HOLD = "legal_hold"
    SCHEMA_CHANGE_REQUIRES_MIGRATION = "schema_change_requires_migration"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    TOO_LARGE = "too_large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"


@dataclass(frozen=True, slots=True)
class ErrorKind:
    """One code's HTTP status (then any other status it also answers), title and the name of
    the exception it raises: ``server.client``'s, and ``store.errors``' where the store raises
    it (``DatabaseUnavailable`` there for ``unavailable``)."""

    status: int
    title: str
    name: str
    also: tuple[int, ...] = ()
    parent: ErrorCode | None = None
    """The code whose exception this one's subclasses (a legal hold is a conflict)."""


ERRORS: Final[Mapping[ErrorCode, ErrorKind]] = {
    ErrorCode.INVALID: ErrorKind(422, "The request is not valid", "InvalidInput", also=(400, 405)),
    ErrorCode.NOT_FOUND: ErrorKind(404, "Not found", "NotFound"),
    ErrorCode.CONFLICT: ErrorKind(409, "The request conflicts with stored state", "Conflict"),
    ErrorCode.LEGAL_HOLD: ErrorKind(
        409, "The data is under legal hold", "LegalHold", parent=ErrorCode.CONFLICT
    ),
    ErrorCode.SCHEMA_CHANGE_REQUIRES_MIGRATION: ErrorKind(
        409,
        "The change needs an attribute migration",
        "SchemaChangeRequiresMigration",
        parent=ErrorCode.CONFLICT,
    ),
    ErrorCode.UNAUTHORIZED: ErrorKind(401, "Missing or unknown credentials", "Unauthorized"),
    ErrorCode.FORBIDDEN: ErrorKind(403, "Not allowed", "Forbidden"),
    ErrorCode.TOO_LARGE: ErrorKind(413, "The request is too large", "TooLarge"),
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: ErrorKind(
        415, "The body is not sent as JSON", "UnsupportedMediaType"
    ),
    ErrorCode.UNAVAILABLE: ErrorKind(503, "A dependency is unavailable", "Unavailable"),
    ErrorCode.INTERNAL: ErrorKind(500, "Internal error", "SGAMError"),
}
"""Every code, once: the status it answers with, its title and its exception's name."""

HTTP_STATUS_CODE: Final[Mapping[int, ErrorCode]] = {
    status: code
    for code, kind in ERRORS.items()
    if kind.parent is None
    for status in (kind.status, *kind.also)
}
"""The code of a failure known by its status alone: one the HTTP layer raises (routing,
parsing, auth, size), or an answer without a problem body (a proxy's)."""


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
