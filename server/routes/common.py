"""What every route shares: the documented problem responses and the time query parameters."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

from litestar import Request
from litestar.openapi import ResponseSpec
from litestar.params import PathParameter, QueryParameter

from server.problems import PROBLEM_MEDIA_TYPE, Problem
from store.errors import InvalidInput
from store.inputs import parse_instant
from store.models import IDENTIFIER_PATTERN
from store.service import MemoryStore


def store_of(request: Request[Any, Any, Any]) -> MemoryStore:
    """The request's store, its clock set by the route's guard (``X-SGAM-Now`` if allowed)."""
    store: MemoryStore = request.state.store
    return store


def tenant_of(request: Request[Any, Any, Any]) -> str:
    """The tenant of the request's API key, set by ``tenant_guard``."""
    tenant_id: str = request.state.tenant_id
    return tenant_id


PathId = Annotated[
    str,
    PathParameter(pattern=IDENTIFIER_PATTERN, description="An id: 1-200 of A-Z a-z 0-9 _ . : @ -"),
]
"""A subject, attribute, episode or tenant id in a path."""

PathUuid = Annotated[
    str, PathParameter(format="uuid", description="A UUID; anything else is 422 naming it.")
]
"""A key or conflict id in a path, parsed by the store so a malformed one is a 422."""

Instant = Annotated[
    str | None,
    QueryParameter(
        format="date-time", description="An RFC 3339 instant with an offset; default now."
    ),
]
"""``valid_at`` / ``known_at``: an instant, or now when absent."""

InstantAlias = Annotated[
    str | None, QueryParameter(format="date-time", description="Alias of valid_at.")
]


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
    422: _problem("A field is not valid (code invalid, field names it)"),
    500: _problem("A server bug; the detail reveals nothing, the log has it (code internal)"),
    503: _problem("The database is unavailable (code unavailable)"),
}
"""Documented on every route, so the OpenAPI document describes each error it can answer."""


def valid_time(valid_at: str | None, at: str | None) -> datetime | str | None:
    """``valid_at`` or its alias ``at`` (not both); the alias is parsed here, so a bad one is
    reported under the name that was sent."""
    if valid_at is not None and at is not None:
        raise InvalidInput("give valid_at or its alias at, not both", field="at")
    return parse_instant(at, "at") if at is not None else valid_at
