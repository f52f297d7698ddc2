"""The API's problem+json failures as exceptions, one class per stable ``code``, each named
as the contract names it (``store.contract.problems.ERRORS``)."""

from __future__ import annotations

from typing import Final

import httpx
from pydantic import ValidationError

from store.contract.problems import ERRORS as CODES
from store.contract.problems import HTTP_STATUS_CODE, PROBLEM_MEDIA_TYPE, ErrorCode, Problem


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


class InvalidInput(SGAMError):
    """``invalid``: a body, parameter or header breaks the contract; ``field`` names it."""


class NotFound(SGAMError):
    """``not_found``: nothing of that name for this tenant, or nothing known at that time."""


class Conflict(SGAMError):
    """``conflict``: the request contradicts stored state."""


class LegalHold(Conflict):
    """``legal_hold``: the data is under legal hold (erasing a held subject or its episodes)."""


class SchemaChangeRequiresMigration(Conflict):
    """``schema_change_requires_migration``: a redeclaration that only a migration can make."""


class Unauthorized(SGAMError):
    """``unauthorized``: a missing, unknown or revoked API key, or a wrong admin token."""


class Forbidden(SGAMError):
    """``forbidden``: not allowed here, e.g. a disabled clock header or admin API."""


class TooLarge(SGAMError):
    """``too_large``: the body is over the server's size limit."""


class UnsupportedMediaType(SGAMError):
    """``unsupported_media_type``: a body sent to a JSON route as something else."""


class Unavailable(SGAMError):
    """``unavailable``: the server's database cannot be reached, or the server itself cannot
    (then the client raises it with status 503, as a gateway would answer)."""


class Timeout(Unavailable):
    """The server did not answer within the client's ``timeout`` (status 504, as a gateway
    would answer). Whether a write sent that way was applied is unknown: send it again with
    the same ids, which every write accepts without a second effect."""


_CLASSES: Final[dict[str, type[SGAMError]]] = {
    kind.__name__: kind
    for kind in (
        SGAMError,
        InvalidInput,
        NotFound,
        Conflict,
        LegalHold,
        SchemaChangeRequiresMigration,
        Unauthorized,
        Forbidden,
        TooLarge,
        UnsupportedMediaType,
        Unavailable,
    )
}

ERRORS: Final[dict[str, type[SGAMError]]] = {
    code: _CLASSES[kind.name] for code, kind in CODES.items()
}
"""The exception for each ``code``, by the name the contract gives it (``internal``: a plain
SGAMError, as for any code the contract does not list)."""


def unreachable(error: httpx.RequestError, url: str) -> Unavailable:
    """The client's own error for a request that got no answer: ``Timeout`` when it waited
    past its timeout, ``Unavailable`` when the server could not be reached or hung up."""
    code = str(ErrorCode.UNAVAILABLE)
    kind = type(error).__name__
    if isinstance(error, httpx.TimeoutException):
        return Timeout(f"SGAM at {url} did not answer in time: {kind}", status=504, code=code)
    return Unavailable(f"SGAM at {url} cannot be reached: {kind}", status=503, code=code)


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
        code = str(HTTP_STATUS_CODE.get(status, ErrorCode.INTERNAL))
        detail = response.text.strip()[:500] or response.reason_phrase
        return ERRORS.get(code, SGAMError)(detail, status=status, code=code)
    return ERRORS.get(problem.code, SGAMError)(
        problem.detail, status=status, code=problem.code, field=problem.field
    )
