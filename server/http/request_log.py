"""One log line per request, and its id in the ``X-Request-ID`` header of every answer.

The id is the client's ``X-Request-ID`` when that is well-formed (``REQUEST_ID_PATTERN``),
else a new UUID; the answer echoes it whatever its status, and every log line written while
the request is served carries it (``server.runtime.logs``).

The line names the route by its template (``/v1/facts/{subject}/{attribute}``), never the
concrete path or the query string, which carry subjects, ids and query text; a problem's
``code`` and ``field`` are read from the problem+json answer. Nothing of a body is logged.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from litestar.datastructures import ResponseHeader
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from server.runtime.logs import REQUEST_ID
from store.contract.problems import PROBLEM_MEDIA_TYPE

log = logging.getLogger("server.requests")

REQUEST_ID_HEADER: Final = "X-Request-ID"
REQUEST_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""A client's request id is kept when it is 1-128 of A-Z a-z 0-9 . _ : - (a UUID, a trace id)."""

REQUEST_ID_RESPONSE_HEADER: Final = ResponseHeader(
    name=REQUEST_ID_HEADER,
    value="",
    documentation_only=True,
    required=True,
    description="The request's id: the client's X-Request-ID when it is 1-128 of"
    " A-Z a-z 0-9 . _ : -, else one the server made. Every log line of the request carries it.",
)
"""Documents the header on each route's answers (``RequestLog`` sets it on all of them)."""

_HEADER_KEY: Final = REQUEST_ID_HEADER.lower().encode()
_PROBLEM_TYPE: Final = PROBLEM_MEDIA_TYPE.encode()
_PROBLEM_BODY_LIMIT: Final = 64 * 1024
"""Problem bodies are small; a larger one is not read for its code."""


def request_id(scope: Scope) -> str:
    """The client's ``X-Request-ID`` when well-formed, else a new one."""
    for key, value in scope.get("headers", ()):
        if key == _HEADER_KEY:
            offered = value.decode("latin-1")
            if REQUEST_ID_PATTERN.fullmatch(offered):
                return offered
            break
    return str(uuid.uuid4())


@dataclass
class _Answer:
    """What the request log notes of an answer as it is sent."""

    status: int | None = None
    problem: bool = False
    body: bytearray = field(default_factory=bytearray)

    def note(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.problem = any(
                key.lower() == b"content-type" and value.startswith(_PROBLEM_TYPE)
                for key, value in message.get("headers", ())
            )
        elif (
            message["type"] == "http.response.body"
            and self.problem
            and len(self.body) < _PROBLEM_BODY_LIMIT
        ):
            self.body += message.get("body", b"")

    def problem_fields(self) -> dict[str, Any]:
        """The problem's ``code`` and ``field`` (each None when absent)."""
        if not self.problem:
            return {"code": None, "field": None}
        try:
            body = json.loads(self.body)
        except ValueError:
            return {"code": None, "field": None}
        if not isinstance(body, dict):
            return {"code": None, "field": None}
        return {"code": body.get("code"), "field": body.get("field")}


class RequestLog:
    """ASGI middleware around the whole app, routing included, so 404s and 405s are logged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request with its id set; log one line once it is answered."""
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        rid = request_id(scope)
        token = REQUEST_ID.set(rid)
        answer = _Answer()
        header = (_HEADER_KEY, rid.encode())

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            answer.note(message)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            _log_request(scope, answer, started=started)
            REQUEST_ID.reset(token)


def _log_request(scope: Scope, answer: _Answer, *, started: float) -> None:
    status = answer.status or 500  # an exception escaped before any answer was sent
    level = logging.ERROR if status >= 500 else logging.INFO
    if not log.isEnabledFor(level):  # e.g. sgam serve --log-level warning
        return
    state = scope.get("state") or {}
    fields = {
        "method": scope.get("method"),
        "route": scope.get("path_template") or None,  # None: no route matched
        "status": status,
        **answer.problem_fields(),
        "tenant_id": state.get("tenant_id"),
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    log.log(level, "request", extra=fields)
