"""``/ui``: sign in with an API key, list the tenant's subjects, read a subject's timelines and
the episodes its facts cite. Server-rendered pages, outside the API's OpenAPI document.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from functools import partial
from importlib.resources import files as package_files
from typing import Annotated, Any

import anyio.to_thread
from litestar import Request, Response, Router, get, post
from litestar.exceptions import NotFoundException
from litestar.params import PathParameter, QueryParameter
from litestar.response import Redirect, Template

from server.auth.keycache import authenticate
from server.routes.common import PathId
from server.runtime.resources import resources_of
from server.ui import pages
from server.ui.actions import action_routes
from server.ui.lists import list_routes
from server.ui.pages import SECURITY_HEADERS, cookies_secure, page
from server.ui.sessions import (
    CSRF_FIELD,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    CsrfRefused,
    check_csrf,
    cookie,
    csrf_token_for,
    digest,
    expired,
    new_token,
    signed_in_guard,
    signed_in_of,
)
from server.ui.sign_in import (
    RefusedSignIns,
    client_address,
    is_sign_in_token,
    server_key,
    sign_in_token,
)
from server.ui.timeline import WIDTH, lay_out
from server.ui.timeline_axis import by_second
from store.contract.times import TimestampError, format_timestamp, parse_timestamp
from store.governance.keys import parse_token

_MAX_FIELD = 400

KnownAt = Annotated[str | None, QueryParameter(max_length=_MAX_FIELD)]


def _form_value(form: Any, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) and len(value) <= _MAX_FIELD else None


@get("/login", sync_to_thread=False)
def login_form(request: Request[Any, Any, Any]) -> Template:
    """The sign-in form: a nonce in a cookie of its own, the token signed for it in the form."""
    nonce = new_token()
    key = server_key(resources_of(request.app).settings)
    return page(
        "login.html.j2",
        form_token=sign_in_token(nonce, key),
        error=None,
        cookies=[cookie(LOGIN_COOKIE, nonce, secure=cookies_secure(request))],
    )


@post("/login", status_code=303)
async def login(request: Request[Any, Any, Any]) -> Response[Any]:
    """Check the address's refusals, the form's token and the key; open a session; on to the
    subjects. A refused sign-in counts against the address (``server.ui.sign_in``)."""
    refusals, address = RefusedSignIns.of(request), client_address(request)
    await refusals.check(address)
    resources = resources_of(request.app)
    key = server_key(resources.settings)
    form = await request.form()
    offered = _form_value(form, CSRF_FIELD)
    if not is_sign_in_token(request.cookies.get(LOGIN_COOKIE), offered, key):
        await refusals.refused(address)
        raise CsrfRefused
    api_key = (_form_value(form, "api_key") or "").strip()
    tenant_id = await authenticate(api_key, cache=resources.keys, admin=resources.store.admin)
    offered_key = parse_token(api_key)
    if tenant_id is None or offered_key is None:
        await refusals.refused(address)
        return page(
            "login.html.j2", status_code=401, form_token=offered, error="Unknown or revoked key."
        )
    session_id = new_token()
    lifetime = timedelta(hours=resources.settings.ui_session_hours)
    opening = partial(
        resources.store.ui_sessions.open,
        tenant_id,
        offered_key.key_id,
        session_hash=digest(session_id),
        csrf_hash=digest(csrf_token_for(session_id, key)),
        lifetime=lifetime,
    )
    await anyio.to_thread.run_sync(opening)
    secure = resources.settings.ui_cookie_secure
    return Redirect(
        "/ui/subjects",
        status_code=303,
        headers=SECURITY_HEADERS,
        cookies=[
            cookie(
                SESSION_COOKIE, session_id, secure=secure, max_age=int(lifetime.total_seconds())
            ),
            expired(LOGIN_COOKIE, secure=secure),
        ],
    )


@post("/logout", status_code=303, guards=[signed_in_guard])
async def logout(request: Request[Any, Any, Any]) -> Redirect:
    """End the session (the form must carry its token) and forget its cookie."""
    signed_in = signed_in_of(request)
    check_csrf(signed_in, dict(await request.form()))
    store = resources_of(request.app).store
    await anyio.to_thread.run_sync(
        store.ui_sessions.close, signed_in.tenant_id, signed_in.session_hash
    )
    return pages.to_sign_in(request)


@get("/", sync_to_thread=False, status_code=303)
def index() -> Redirect:
    """The pages start at the subject list."""
    return Redirect("/ui/subjects", status_code=303, headers=SECURITY_HEADERS)


@get("/subjects/{subject:str}", sync_to_thread=True, guards=[signed_in_guard])
def subject_page(
    request: Request[Any, Any, Any], subject: PathId, known_at: KnownAt = None
) -> Template:
    """A subject's keys as timelines, as believed at ``known_at`` (default now)."""
    signed_in = signed_in_of(request)
    store = resources_of(request.app).store
    exported = store.subjects.export(signed_in.tenant_id, subject)
    now = exported.exported_at
    at, error = _known_at(known_at, now=now)
    timeline = lay_out(exported.versions, exported.conflicts, known_at=at, now=now)
    instants = by_second([*(c for c in timeline.changes if c <= now), now])
    position = max((n for n, instant in enumerate(instants) if instant <= at), default=0)
    return page(
        "subject.html.j2",
        status_code=422 if error else 200,
        signed_in=signed_in,
        subject=subject,
        timeline=timeline,
        width=WIDTH,
        now=now,
        is_now=at == now,
        known_at_text=known_at if error else format_timestamp(at),
        error=error,
        instants=[(format_timestamp(instant), instant) for instant in instants],
        position=position,
    )


def _known_at(text: str | None, *, now: datetime) -> tuple[datetime, str | None]:
    """The instant the form asks for, in UTC; a date or a time without an offset is UTC (the
    field says so). Unreadable text is an error shown on the page, read at now."""
    if text is None or not text.strip():
        return now, None
    value = text.strip()
    if len(value) == 10:  # a date alone: its first instant
        value += "T00:00:00"
    try:
        return parse_timestamp(value), None
    except TimestampError:
        pass
    try:
        return parse_timestamp(value + "Z"), None
    except TimestampError:
        return now, f"'{text}' is not a time: write e.g. 2026-06-02 or 2026-06-02T09:30:00Z."


@get("/static/{name:str}", sync_to_thread=False)
def static_file(name: Annotated[str, PathParameter(max_length=40)]) -> Response[bytes]:
    """The pages' stylesheet and script, from the package: nothing is fetched elsewhere."""
    media_type = pages.STATIC_FILES.get(name)
    if media_type is None:
        raise NotFoundException(f"no file {name!r} here")
    return Response(_static(name), media_type=media_type, headers=pages.STATIC_HEADERS)


@functools.cache
def _static(name: str) -> bytes:
    """A static file's bytes, read from the package once."""
    return (package_files("server.ui") / "static" / name).read_bytes()


def ui_routers() -> list[Router]:
    """The pages and their static files, all outside the OpenAPI document."""
    return [
        Router(
            "/ui",
            route_handlers=[
                login_form,
                login,
                logout,
                index,
                subject_page,
                *list_routes,
                static_file,
                *action_routes,
            ],
            exception_handlers=pages.EXCEPTION_HANDLERS,
            include_in_schema=False,
        ),
    ]
