"""A route that reads a body reads JSON: sent as JSON (else 415), within the body limits, each
key once per object.

Litestar decodes a body as JSON whatever its ``Content-Type``, and msgspec keeps the last of
repeated keys; both would let a client's mistake pass silently. The hook runs after the
guards (the caller is known) and before the body is decoded for the handler. It scans a
body larger than ``INLINE_SCAN_BYTES`` in a worker thread of its own small pool
(``server.http.body_scan``), so a hostile body costs the event loop nothing, and the decoder
and the models then see only bodies the limits bound. A smaller body (a question) is scanned
on the event loop: its scan costs less than handing it to a thread and back, and the worst
arrangement of its bytes not much more.
"""

from __future__ import annotations

from typing import Any, Final

import anyio.to_thread
from anyio import CapacityLimiter
from litestar import Request
from litestar.exceptions import ClientException, ValidationException

from server.http.body_scan import cut, scan_body
from store.contract.problems import ERRORS, ErrorCode

CONTENT_TYPE: Final = "Content-Type"
SCAN_THREADS: Final = 1
"""Bodies scanned at once; more wait their turn, so bodies never take every worker thread."""
INLINE_SCAN_BYTES: Final = 256
"""The largest body scanned on the event loop rather than in the pool. A question's body
scans in under 10 us, the worst 256 bytes (``[{},{},...]``) in about 0.1 ms on a loaded
2-core machine, where the hop to a worker thread and back alone takes about 55 us."""


class UnsupportedMediaType(ClientException):
    """A body sent as something other than JSON to a route that reads JSON."""

    code = ErrorCode.UNSUPPORTED_MEDIA_TYPE
    status_code = ERRORS[code].status
    field = CONTENT_TYPE


def is_json_media_type(content_type: str) -> bool:
    """Whether ``content_type`` names JSON: ``application/json`` or ``application/*+json``."""
    media_type = content_type.partition(";")[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


class JsonBodyCheck:
    """The ``before_request`` hook: refuse a body a JSON route would misread or that breaks a
    limit; routes without a body pass untouched. One per app, with its pool of scans."""

    def __init__(self, *, threads: int = SCAN_THREADS) -> None:
        self._scans = CapacityLimiter(threads)

    async def __call__(self, request: Request[Any, Any, Any]) -> None:
        """Check the request's body, if its route reads one."""
        if request.route_handler.parsed_data_field is None:
            return
        content_type = request.headers.get(CONTENT_TYPE)
        if content_type is None:
            if not await request.body():
                return  # no body at all: the route's own rules say whether it needs one
            raise UnsupportedMediaType("the body must be sent as Content-Type: application/json")
        if not is_json_media_type(content_type):
            raise UnsupportedMediaType(
                f"the body must be sent as application/json, not {cut(content_type)}"
            )
        body = await request.body()
        if len(body) <= INLINE_SCAN_BYTES:
            fault = scan_body(body)
        else:
            fault = await anyio.to_thread.run_sync(scan_body, body, limiter=self._scans)
        if fault is not None:
            field = ".".join(cut(str(part)) for part in fault.path)
            raise ValidationException(extra=[{"key": field, "message": fault.detail}])
