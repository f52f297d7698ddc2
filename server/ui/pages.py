"""What every page shares: the template engine, the security headers, the error pages.

Templates come from the package (``server/ui/templates``) and Jinja escapes every value put
into them. Pages load their stylesheet and script from the app itself (``/ui/static``), so the
policy allows nothing but this origin's files, no inline script or style, and no framing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from jinja2 import Environment, PackageLoader, StrictUndefined
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Redirect, Template
from litestar.template import TemplateConfig
from litestar.types import ExceptionHandlersMap

from server.http.problems import status_of
from server.runtime.resources import resources_of
from server.ui.sessions import SESSION_COOKIE, CsrfRefused, SignInRequired, expired
from server.ui.sign_in import TooManySignIns
from store.errors import StoreError

log = logging.getLogger("server.ui")

STATIC_FILES: Final = {
    "ui.css": "text/css",
    "ui.js": "text/javascript",
    "actions.css": "text/css",
    "lists.css": "text/css",
}
"""The files under ``/ui/static`` (package data in ``server/ui/static``) and their types; Litestar
adds ``charset=utf-8`` to every text type itself."""

CONTENT_SECURITY_POLICY: Final = "; ".join(
    (
        "default-src 'none'",
        "style-src 'self'",
        "script-src 'self'",
        "img-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
"""Sent with every page, error pages and static files included."""

STATIC_HEADERS: Final = {**SECURITY_HEADERS, "Cache-Control": "public, max-age=3600"}
"""The stylesheet and script hold nothing of a tenant's: browsers may keep them an hour."""


def shown_instant(at: datetime) -> str:
    """An instant as the pages print it: UTC to the second."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """The pages' templates, from the package, every value HTML-escaped."""
    environment = Environment(
        loader=PackageLoader("server.ui", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["utc"] = shown_instant
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment))


def page(
    name: str,
    *,
    status_code: int = 200,
    cookies: list[Any] | None = None,
    headers: dict[str, str] | None = None,
    **context: Any,
) -> Template:
    """The page rendered from template ``name``, with the security headers (and ``headers``)."""
    return Template(
        template_name=name,
        context=context,
        status_code=status_code,
        headers={**SECURITY_HEADERS, **(headers or {})},
        cookies=cookies or [],
        media_type=MediaType.HTML,
    )


def cookies_secure(request: Request[Any, Any, Any]) -> bool:
    """Whether the pages' cookies are marked Secure (a setting)."""
    return resources_of(request.app).settings.ui_cookie_secure


def sign_in_redirect(request: Request[Any, Any, Any], _: SignInRequired) -> Response[Any]:
    """No live session: to the sign-in form, forgetting a stale session cookie."""
    return to_sign_in(request)


def to_sign_in(request: Request[Any, Any, Any]) -> Redirect:
    """To the sign-in form, the session cookie forgotten (signed out, or no live session)."""
    return Redirect(
        "/ui/login",
        status_code=303,
        headers=SECURITY_HEADERS,
        cookies=[expired(SESSION_COOKIE, secure=cookies_secure(request))],
    )


def csrf_refused(request: Request[Any, Any, Any], _: CsrfRefused) -> Response[Any]:
    """A form without its page's token: refused, nothing changed."""
    del request
    return error_page(
        403,
        "This form has expired or did not come from this site: reload the page and try again.",
    )


def error_page(
    status: int, message: str, request: Request[Any, Any, Any] | None = None, **context: Any
) -> Template:
    """A page saying what went wrong, with the status it answers; in a session's request, with
    the signed-in header, and offering to sign in only to a browser without a session."""
    signed_in = getattr(request.state, "signed_in", None) if request is not None else None
    if signed_in is not None:
        context["signed_in"] = signed_in
    session = request is not None and SESSION_COOKIE in request.cookies
    return page(
        "error.html.j2",
        status_code=status,
        status=status,
        message=message,
        offer_sign_in=signed_in is None and not session,
        **context,
    )


def too_many_sign_ins(request: Request[Any, Any, Any], error: TooManySignIns) -> Response[Any]:
    """An address past its refused sign-ins: 429, saying when it may try again."""
    del request
    wait = error.retry_after_s
    return page(
        "error.html.j2",
        status_code=429,
        headers={"Retry-After": str(wait)},
        status=429,
        message=f"Too many refused sign-ins: try again in {wait} seconds.",
    )


def store_error(request: Request[Any, Any, Any], error: StoreError) -> Response[Any]:
    """A store refusal as a page: not found, invalid input, unavailable."""
    status = status_of(error)
    if status == 500:
        log.error("the store failed a page", exc_info=error)
        return error_page(500, "The server failed to show this page.", request)
    return error_page(status, error.detail, request)


def http_error(request: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    """An HTTP-layer refusal (a bad parameter, a body too large) as a page."""
    if error.status_code >= 500:
        log.error("a page failed: %s", error.detail)
        return error_page(500, "The server failed to show this page.", request)
    return error_page(error.status_code, str(error.detail), request)


def invalid_input(request: Request[Any, Any, Any], error: ValidationException) -> Response[Any]:
    """An address or form value that does not validate (an id's pattern): a 422 page naming it."""
    extra = error.extra if isinstance(error.extra, list) else []
    names = [str(item["key"]) for item in extra if isinstance(item, dict) and item.get("key")]
    what = f"'{names[0]}'" if names else "The request"
    return error_page(422, f"{what} is not valid here: check the address and try again.", request)


def internal_error(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """A bug: a page that says nothing of it; the log has it."""
    del request
    log.error("a page failed", exc_info=error)
    return error_page(500, "The server failed to show this page.")


PAGES_PATH: Final = "/ui"


def routing_error(
    api: Callable[[Request[Any, Any, Any], HTTPException], Response[Any]],
) -> Callable[[Request[Any, Any, Any], HTTPException], Response[Any]]:
    """An app-wide handler of 404 and 405, which routing raises before any router's handlers
    apply: a page under ``/ui`` (with the security headers), ``api``'s answer elsewhere."""

    def handle(request: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
        path = request.url.path
        if path == PAGES_PATH or path.startswith(PAGES_PATH + "/"):
            return http_error(request, error)
        return api(request, error)

    return handle


EXCEPTION_HANDLERS: Final[ExceptionHandlersMap] = {
    SignInRequired: sign_in_redirect,
    CsrfRefused: csrf_refused,
    TooManySignIns: too_many_sign_ins,
    StoreError: store_error,
    # Named apart from HTTPException: the app's own handler for it (problem+json) would win.
    ValidationException: invalid_input,
    HTTPException: http_error,
    Exception: internal_error,
}
