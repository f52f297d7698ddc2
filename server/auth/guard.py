"""Who is calling: an API key names the tenant of every call; the admin token manages tenants.

The tenant is never read from a body or a path: it is the key's. A missing, malformed,
unknown or revoked key is 401; a key reaching for another tenant's object finds nothing
(404), because every read and write filters on the key's tenant. A key this process has
verified is checked against its cache (``server/auth/keycache.py``: no database round trip, and
still 401 on the first call after its revocation returned).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.handlers.base import BaseRouteHandler
from litestar.params import HeaderParameter, SkipValidation

from server.auth.keycache import authenticate
from server.runtime.resources import resources_of
from store.contract.problems import CLOCK_HEADER
from store.db.inputs import parse_instant
from store.service import MemoryStore

CLOCK_HEADER_PARAMETER = HeaderParameter(
    name=CLOCK_HEADER,
    annotation=str,
    required=False,
    format="date-time",
    description="Honoured only when the server is configured to allow it"
    " (SGAM_ALLOW_CLOCK_HEADER=true; off by default): then it sets this request's clock (RFC"
    " 3339 with an offset). Otherwise any value is refused with 403 (code forbidden).",
)
"""Documents ``X-SGAM-Now`` on every tenant route; ``store_for`` reads it."""


class RequestProblem(HTTPException):
    """An HTTP-layer refusal that names the header or parameter at fault."""

    def __init__(self, status_code: int, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail=detail, status_code=status_code)
        self.field = field


def bearer_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The token of an ``Authorization: Bearer ...`` header (401 when absent or malformed)."""
    header = connection.headers.get("authorization")
    if header is None:
        raise RequestProblem(401, "send Authorization: Bearer <api key>", field="Authorization")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise RequestProblem(
            401, "the Authorization header must be 'Bearer <token>'", field="Authorization"
        )
    return token.strip()


# Guards establish the caller and dependencies hand it to the handlers: guards run before the
# body is parsed (so a missing key is 401 whatever the body), dependencies only after it.


async def tenant_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Let through a valid API key; its tenant and the request's store go on the state."""
    token = bearer_token(connection)
    resources = resources_of(connection.app)
    tenant_id = await authenticate(token, cache=resources.keys, admin=resources.store.admin)
    if tenant_id is None:
        raise RequestProblem(401, "unknown or revoked API key", field="Authorization")
    connection.state.tenant_id = tenant_id
    connection.state.store = store_for(connection)


def store_for(connection: ASGIConnection[Any, Any, Any, Any]) -> MemoryStore:
    """The store, its clock set by ``X-SGAM-Now`` when the server allows that header."""
    resources = resources_of(connection.app)
    header = connection.headers.get(CLOCK_HEADER)
    if header is None:
        return resources.store
    if not resources.settings.allow_clock_header:
        raise RequestProblem(
            403,
            f"the {CLOCK_HEADER} header is disabled on this server"
            " (SGAM_ALLOW_CLOCK_HEADER=true enables it for evaluations)",
            field=CLOCK_HEADER,
        )
    instant = parse_instant(header, CLOCK_HEADER)
    assert instant is not None
    return resources.store_with_clock(lambda: instant)


def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Let through only the admin token from settings (403 when none is configured)."""
    expected = resources_of(connection.app).settings.admin_token
    if expected is None:
        raise RequestProblem(
            403, "the admin API is disabled: set SGAM_ADMIN_TOKEN", field="Authorization"
        )
    token = bearer_token(connection)
    # Digests have one length, so the comparison time says nothing about the token's length.
    offered = hashlib.sha256(token.encode()).digest()
    if not hmac.compare_digest(
        offered, hashlib.sha256(expected.get_secret_value().encode()).digest()
    ):
        raise RequestProblem(401, "wrong admin token", field="Authorization")
    connection.state.store = store_for(connection)


# The tenant routes' dependencies form one chain, tenant_id -> store -> times (and reader):
# each comes after the caller is known. The app resolves them one at a time, never in a task
# group (``server.http.dependencies``).


def provide_store(request: Request[Any, Any, Any]) -> MemoryStore:
    """The admin routes' ``store`` dependency: the request's store, as the guard set it."""
    store: MemoryStore = request.state.store
    return store


def provide_tenant_store(
    request: Request[Any, Any, Any], tenant_id: NamedDependency[SkipValidation[str]]
) -> MemoryStore:
    """The tenant routes' ``store`` dependency: the store serving ``tenant_id``'s request."""
    del tenant_id  # established first; the store of a request is always its tenant's
    return provide_store(request)


def provide_tenant_id(request: Request[Any, Any, Any]) -> str:
    """The ``tenant_id`` dependency: the tenant of the request's API key (``tenant_guard``)."""
    tenant_id: str = request.state.tenant_id
    return tenant_id
