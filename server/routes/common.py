"""What every route shares: the injected caller, the typed path and time parameters, and the
documented problem responses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Final

from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import PathParameter, QueryParameter, SkipValidation

from retrieval.reader import Reader
from store.contract.common import IDENTIFIER_PATTERN
from store.contract.problems import PROBLEM_MEDIA_TYPE, Problem
from store.db.inputs import parse_instant
from store.errors import InvalidInput
from store.service import MemoryStore

# Injected values are the server's own, so they skip validation: every value Litestar validates
# is the client's (``server.http.problems`` relies on that).

Store = NamedDependency[SkipValidation[MemoryStore]]
"""The request's store, its clock set by the route's guard (``X-SGAM-Now`` if allowed)."""

TenantId = NamedDependency[SkipValidation[str]]
"""The tenant of the request's API key, established by ``tenant_guard``."""

StoreReader = NamedDependency[SkipValidation[Reader]]
"""A reader over the request's store, sharing the model and the attribute-routing cache."""

PathId = Annotated[
    str,
    PathParameter(pattern=IDENTIFIER_PATTERN, description="An id: 1-200 of A-Z a-z 0-9 _ . : @ -"),
]
"""A subject, attribute, episode or tenant id in a path."""

QueryId = Annotated[
    str | None,
    QueryParameter(pattern=IDENTIFIER_PATTERN, description="An id: 1-200 of A-Z a-z 0-9 _ . : @ -"),
]
"""A subject or attribute id in a query string."""

PathUuid = Annotated[
    str, PathParameter(format="uuid", description="A UUID; anything else is 422 naming it.")
]
"""A key or conflict id in a path, parsed by the store so a malformed one is a 422."""

_Instant = Annotated[
    str | None,
    QueryParameter(
        format="date-time", description="An RFC 3339 instant with an offset; default now."
    ),
]
_InstantAlias = Annotated[
    str | None,
    QueryParameter(
        format="date-time",
        description="Alias of valid_at. Give one or the other: a request with both is refused"
        " (422, field at).",
    ),
]


@dataclass(frozen=True, slots=True)
class ReadTimes:
    """A read's ``valid_at`` and ``known_at`` in UTC; None is now (the store's defaults)."""

    valid_at: datetime | None
    known_at: datetime | None


def provide_read_times(
    store: Store, valid_at: _Instant = None, at: _InstantAlias = None, known_at: _Instant = None
) -> ReadTimes:
    """The time query parameters, parsed by the store's rules; a bad one is 422 naming it.

    It takes ``store`` only to come after it in the dependencies' one chain (``server.auth.guard``).

    ``at`` is an alias of ``valid_at``; giving both is refused under ``at``. The first fault
    found is the one reported: both given, then ``at``, ``valid_at``, ``known_at``.
    """
    del store
    if valid_at is not None and at is not None:
        raise InvalidInput("give valid_at or its alias at, not both", field="at")
    return ReadTimes(
        valid_at=parse_instant(at, "at") if at is not None else parse_instant(valid_at, "valid_at"),
        known_at=parse_instant(known_at, "known_at"),
    )


Times = NamedDependency[SkipValidation[ReadTimes]]
"""``valid_at`` (alias ``at``) and ``known_at`` from the query (``provide_read_times``)."""


def _problem(description: str) -> ResponseSpec:
    return ResponseSpec(
        data_container=Problem,
        description=description,
        media_type=PROBLEM_MEDIA_TYPE,
        generate_examples=False,
    )


PROBLEM_RESPONSES: Final[dict[int, ResponseSpec]] = {
    400: _problem("The body is not JSON (code invalid)"),
    401: _problem("Missing, unknown or revoked credentials (code unauthorized)"),
    403: _problem("Not allowed, e.g. a disabled clock header (code forbidden)"),
    404: _problem("Nothing of that name for this tenant (code not_found)"),
    409: _problem("Contradicts stored state (code conflict)"),
    413: _problem("The body is over the size limit (code too_large)"),
    415: _problem("A body that is not JSON by its Content-Type (code unsupported_media_type)"),
    422: _problem("A field is not valid (code invalid, field names it)"),
    500: _problem("A server bug; the detail reveals nothing, the log has it (code internal)"),
    503: _problem("The database is unavailable (code unavailable)"),
}
"""Documented on every route, so the OpenAPI document describes each error it can answer."""
