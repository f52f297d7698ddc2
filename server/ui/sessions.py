"""Who is looking at a page: a server-side session, found from its cookie on every request.

The browser holds a random session id (``SESSION_COOKIE``), never the API key; the database holds
only its digest, the key it was opened with and the digest of its CSRF token
(``store/governance/ui_sessions.py``). Every request finds the session again, and the lookup checks
the key as every API key check does: a revoked key's sessions stop working on their next request.

Forms carry a CSRF token. A session's token is its id signed with the server's key, so a page
can print it without the server keeping it; the sign-in form, which has no session yet, carries
a token signed for the nonce in its own ``LOGIN_COOKIE`` (``server.ui.sign_in``).
Both cookies are ``HttpOnly`` and ``SameSite=Strict``, and ``Secure`` when configured.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Final

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie
from litestar.handlers.base import BaseRouteHandler

from server.runtime.resources import resources_of
from server.ui.sign_in import server_key, signed

SESSION_COOKIE: Final = "sgam_ui"
LOGIN_COOKIE: Final = "sgam_ui_login"
COOKIE_PATH: Final = "/ui"
CSRF_FIELD: Final = "csrf_token"
_TOKEN_BYTES = 32
_MAX_TOKEN = 100
"""Longer cookie or form values are refused without hashing them."""


class SignInRequired(Exception):
    """No live session: the page sends the browser to the sign-in form."""


class CsrfRefused(Exception):
    """A form came without the token its page carried."""


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The session a request is made in: its tenant and the token its forms carry."""

    tenant_id: str
    session_hash: bytes
    csrf_token: str
    csrf_hash: bytes


def digest(text: str) -> bytes:
    """The SHA-256 of a token, as the database keeps it."""
    return hashlib.sha256(text.encode()).digest()


def new_token() -> str:
    """A fresh random token (a session id, a sign-in form's CSRF token)."""
    return secrets.token_urlsafe(_TOKEN_BYTES)


def csrf_token_for(session_id: str, key: bytes) -> str:
    """The CSRF token of a session: its id signed with the server's key."""
    return signed("session", session_id, key)


def same_token(offered: str | None, expected_hash: bytes) -> bool:
    """Whether ``offered`` is the token whose digest is ``expected_hash`` (constant time)."""
    if offered is None or len(offered) > _MAX_TOKEN:
        return False
    return hmac.compare_digest(digest(offered), expected_hash)


def cookie(name: str, value: str, *, secure: bool, max_age: int | None = None) -> Cookie:
    """A cookie of the pages: HttpOnly, SameSite=Strict, scoped to ``/ui``."""
    return Cookie(
        key=name,
        value=value,
        path=COOKIE_PATH,
        max_age=max_age,
        httponly=True,
        samesite="strict",
        secure=secure,
    )


def expired(name: str, *, secure: bool) -> Cookie:
    """A cookie that tells the browser to forget ``name``."""
    return cookie(name, "", secure=secure, max_age=0)


async def signed_in_guard(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """Let through a request of a live session; it goes on the state as ``signed_in``."""
    session_id = connection.cookies.get(SESSION_COOKIE)
    if not session_id or len(session_id) > _MAX_TOKEN:
        raise SignInRequired
    resources = resources_of(connection.app)
    session_hash = digest(session_id)
    found = await anyio.to_thread.run_sync(resources.store.ui_sessions.find, session_hash)
    if found is None:
        raise SignInRequired
    connection.state.signed_in = SignedIn(
        tenant_id=found.tenant_id,
        session_hash=session_hash,
        csrf_token=csrf_token_for(session_id, server_key(resources.settings)),
        csrf_hash=found.csrf_hash,
    )


def signed_in_of(connection: ASGIConnection[Any, Any, Any, Any]) -> SignedIn:
    """The request's session, as ``signed_in_guard`` found it."""
    signed_in: SignedIn = connection.state.signed_in
    return signed_in


def check_csrf(signed_in: SignedIn, form: dict[str, Any]) -> None:
    """Refuse a form of the session that does not carry the session's token."""
    offered = form.get(CSRF_FIELD)
    if not isinstance(offered, str) or not same_token(offered, signed_in.csrf_hash):
        raise CsrfRefused
