"""Every whole-request failure as RFC 9457 problem+json, mapped in one table.

A problem carries a stable ``code`` (what clients branch on) and, where one field is at
fault, ``field`` (a dotted path into the body, or a query, path or header name).
Per-candidate outcomes are not problems: they are results inside a 200.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from litestar import Request, Response
from litestar._signature.types import ExtendedMsgSpecValidationError
from litestar.exceptions import HTTPException, InternalServerException, ValidationException
from litestar.types import ExceptionHandlersMap

from store.contract.problems import (
    ERRORS,
    HTTP_STATUS_CODE,
    PROBLEM_MEDIA_TYPE,
    ErrorCode,
    ErrorKind,
    Problem,
)
from store.db.inputs import plain_reason, user_reason
from store.errors import StoreError, UnconvertibleValues

log = logging.getLogger(__name__)

RETRY_AFTER_S = "1"
"""Seconds a 503 asks a client to wait before it tries again (``Retry-After``)."""


def problem_response(
    code: str,
    status: int,
    detail: str,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
    unconvertible: list[dict[str, Any]] | None = None,
) -> Response[dict[str, Any]]:
    """The problem+json response for one failure, with any headers its status calls for."""
    body = Problem(
        type=f"urn:sgam:problem:{code}",
        title=_kind(code).title,
        status=status,
        detail=user_reason(detail),
        code=str(code),
        field=field,
        unconvertible=unconvertible,
    ).model_dump(mode="json", exclude_none=True)
    if status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": 'Bearer realm="sgam"'}
    if status == 503:  # the database is down or busy: worth asking again shortly
        headers = {**(headers or {}), "Retry-After": RETRY_AFTER_S}
    return Response(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


def _kind(code: str) -> ErrorKind:
    """The contract's entry for ``code``; ``internal``'s for a code it does not list."""
    return ERRORS[ErrorCode(code)] if code in _CODES else ERRORS[ErrorCode.INTERNAL]


_CODES: Final = frozenset(ErrorCode)


def status_of(error: StoreError) -> int:
    """The HTTP status of a store error: its code's in the contract (``ERRORS``)."""
    return _kind(error.code).status


def store_error_handler(_: Request[Any, Any, Any], error: StoreError) -> Response[Any]:
    """A store error: its own code, detail and field; the status its code has in ``ERRORS``."""
    status = status_of(error)
    _log_refusal(error, status)
    if status == 500:
        return problem_response(ErrorCode.INTERNAL, 500, "the server failed to handle this request")
    unconvertible = error.unconvertible if isinstance(error, UnconvertibleValues) else None
    return problem_response(
        error.code, status, error.detail, field=error.field, unconvertible=unconvertible
    )


def _log_refusal(error: StoreError, status: int) -> None:
    """Log a database refusal by the rule that refused (SQLSTATE, constraint, table).

    Never the detail: the database's message may quote the values it refused.
    """
    if error.refusal is None and status != 500:
        return  # the store's own checks refused: the request line's code and field say it
    refusal = error.refusal
    log.log(
        logging.ERROR if status >= 500 else logging.WARNING,
        "database refusal" if refusal is not None else "unmapped store error",
        extra={
            "error": type(error).__name__,
            "code": error.code,
            "status": status,
            "sqlstate": refusal.sqlstate if refusal else None,
            "constraint": refusal.constraint if refusal else None,
            "table": refusal.table if refusal else None,
        },
    )


_WHOLE_BODY = "data"
"""Litestar's name for the body as a whole: never a field a client sent."""


def _first_error(error: ValidationException) -> dict[str, Any]:
    """Litestar's first error entry ({key, message, source}); empty when it gave none."""
    extra = error.extra
    if isinstance(extra, list) and extra and isinstance(extra[0], dict):
        return extra[0]
    return {}


def _validation_field(error: ValidationException) -> str | None:
    key = _first_error(error).get("key")
    return str(key) if key and key != _WHOLE_BODY else None


def _validation_detail(error: ValidationException) -> str:
    first = _first_error(error)
    if first.get("key") == _WHOLE_BODY:
        # Litestar reports a missing body as the KeyError of its own parameter: "'data'".
        return "the request needs a JSON body"
    message = plain_reason(str(first.get("message", "")).strip())
    if message:
        return message
    detail = str(error.detail)
    # Litestar says "Validation failed for POST /v1/..."; a body that does not parse says why.
    return detail if not detail.startswith("Validation failed") else "the request is not valid"


def validation_error_handler(
    _: Request[Any, Any, Any], error: ValidationException
) -> Response[Any]:
    """A body, query or path value that does not validate: 422, naming the field."""
    return problem_response(
        ErrorCode.INVALID,
        ERRORS[ErrorCode.INVALID].status,
        _validation_detail(error),
        field=_validation_field(error),
    )


def _body_error_named_like_a_dependency(error: HTTPException) -> ValidationException | None:
    """A body that failed validation, which Litestar answered as a 500: the 422 it is.

    Litestar takes an invalid value named like a dependency (``store``, ``tenant_id``...) for a
    bad injected value, a server fault, but a body may carry a field of that name. Injected
    values skip validation (``server.routes.common``), so what failed is the client's body:
    Litestar's pydantic plugin raises ``ExtendedMsgSpecValidationError`` for bodies alone.
    """
    cause = error.__cause__
    if not isinstance(error, InternalServerException) or not isinstance(
        cause, ExtendedMsgSpecValidationError
    ):
        return None
    # The entries Litestar would have built had the name been any other.
    return ValidationException(
        extra=[
            {
                "key": ".".join(str(part) for part in failure["loc"]),
                "message": str(failure["msg"]).split(" - ", maxsplit=1)[0],
            }
            for failure in cause.errors
        ]
    )


def http_error_handler(request: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    """An error raised by the HTTP layer (routing, parsing, auth, size): code by status."""
    if (misfiled := _body_error_named_like_a_dependency(error)) is not None:
        return validation_error_handler(request, misfiled)
    # An error of this server's own (``server.http.json_bodies``) carries its code.
    code = getattr(error, "code", None) or HTTP_STATUS_CODE.get(
        error.status_code, ErrorCode.INTERNAL
    )
    status = error.status_code if code != ErrorCode.INTERNAL else 500
    field = getattr(error, "field", None)
    if status == 413:
        limit = request.app.request_max_body_size
        return problem_response(code, status, f"the body is over the limit of {limit} bytes")
    if status == 500:
        log.error("unmapped HTTP error %s: %s", error.status_code, error.detail)
        return problem_response(code, status, "the server failed to handle this request")
    # Keep the headers the status calls for, e.g. Allow on a 405.
    return problem_response(code, status, str(error.detail), field=field, headers=error.headers)


def nesting_error_handler(request: Request[Any, Any, Any], error: RecursionError) -> Response[Any]:
    """A body nested past the JSON decoder's recursion limit is the client's input: a 400.

    msgspec says "while deserializing" when decoding a body; any other recursion is a bug.
    """
    if "deserializing" not in str(error):
        return internal_error_handler(request, error)
    return problem_response(ErrorCode.INVALID, 400, "the JSON body is nested too deeply")


def internal_error_handler(_: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """Anything else is a bug: log it whole, answer a problem that reveals nothing."""
    log.exception("unhandled error", exc_info=error)
    return problem_response(ErrorCode.INTERNAL, 500, "the server failed to handle this request")


EXCEPTION_HANDLERS: Final[ExceptionHandlersMap] = {
    StoreError: store_error_handler,
    ValidationException: validation_error_handler,
    HTTPException: http_error_handler,
    RecursionError: nesting_error_handler,
    Exception: internal_error_handler,
}
"""Exception handlers for ``create_app``; pinned by a test."""

__all__ = ["EXCEPTION_HANDLERS", "problem_response", "status_of"]
