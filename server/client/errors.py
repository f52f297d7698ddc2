"""The API's problem+json failures as exceptions, one class per stable ``code``."""

from __future__ import annotations

from typing import Final

import httpx
from pydantic import ValidationError

from server.wire import HTTP_STATUS_CODE, PROBLEM_MEDIA_TYPE, Problem


class SGAMError(Exception):
    """A whole-request failure the server answered (per-candidate outcomes are results)."""

    def __init__(self, detail: str, *, status: int, code: str, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.code = code
        self.field = field

    def __str__(self) -> str:
        at = f" (field {self.field})" if self.field else ""
        return f"{self.status} {self.code}: {self.detail}{at}"


class InvalidRequest(SGAMError):
    """``invalid``: a body, parameter or header breaks the contract; ``field`` names it."""


class NotFoundError(SGAMError):
    """``not_found``: nothing of that name for this tenant, or nothing known at that time."""


class ConflictError(SGAMError):
    """``conflict``: the request contradicts stored state."""


class LegalHoldError(ConflictError):
    """``legal_hold``: the data is under legal hold (erasing a held subject or its episodes)."""


class SchemaChangeRequired(ConflictError):
    """``schema_change_requires_migration``: a redeclaration that only a migration can make."""


class Unauthorized(SGAMError):
    """``unauthorized``: a missing, unknown or revoked API key, or a wrong admin token."""


class Forbidden(SGAMError):
    """``forbidden``: not allowed here, e.g. a disabled clock header or admin API."""


class TooLarge(SGAMError):
    """``too_large``: the body is over the server's size limit."""


class Unavailable(SGAMError):
    """``unavailable``: the server's database cannot be reached."""


ERRORS: Final[dict[str, type[SGAMError]]] = {
    "invalid": InvalidRequest,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "legal_hold": LegalHoldError,
    "schema_change_requires_migration": SchemaChangeRequired,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "too_large": TooLarge,
    "unavailable": Unavailable,
}
"""The exception for each ``code``; any other code (``internal``) is a plain SGAMError."""


def is_problem(response: httpx.Response) -> bool:
    """Whether the response is an RFC 9457 problem."""
    content_type: str = response.headers.get("content-type", "")
    return content_type.partition(";")[0].strip() == PROBLEM_MEDIA_TYPE


def error_from(response: httpx.Response) -> SGAMError:
    """The exception for a failed response: its problem's code, else one read from the status."""
    status = response.status_code
    problem = None
    if is_problem(response):
        try:
            problem = Problem.model_validate_json(response.content)
        except ValidationError:
            problem = None
    if problem is None:
        # Not from SGAM itself (a proxy, a load balancer): the status is all there is.
        code = HTTP_STATUS_CODE.get(status, "internal")
        detail = response.text.strip()[:500] or response.reason_phrase
        return ERRORS.get(code, SGAMError)(detail, status=status, code=code)
    return ERRORS.get(problem.code, SGAMError)(
        problem.detail, status=status, code=problem.code, field=problem.field
    )
