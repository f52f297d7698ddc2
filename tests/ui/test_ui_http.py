"""Signing in to the timeline pages over plain HTTP (no browser): the session cookie and its
flags, the server-side session, CSRF refusals, and revocation (``test_ui_pages.py``: the pages)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from server.settings import Settings
from server.ui.sign_in import MAX_REFUSED, WINDOW_S
from tests.helpers import owner_connection
from tests.ui_helpers import ADMIN, UI_SECRET, form_token, make_key, page_client, sign_in

Client = TestClient[Litestar]


@pytest.fixture(scope="module")
def ui(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """The app at a fixed clock, redirects not followed."""
    with page_client(api_settings, embedder) as client:
        yield client


@pytest.fixture
def browser(ui: Client) -> Iterator[Client]:
    """The app's client with no cookies, as a fresh browser."""
    ui.cookies.clear()
    yield ui
    ui.cookies.clear()


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _hmac(message: str) -> str:
    """``message`` signed with the pages' key: the SHA-256 of ``UI_SECRET``."""
    key = hashlib.sha256(UI_SECRET.encode()).digest()
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def _set_cookies(response: httpx.Response) -> dict[str, str]:
    """Each Set-Cookie header of the response by cookie name."""
    return {h.split("=", 1)[0]: h for h in response.headers.get_list("set-cookie")}


def _sessions(pool: ConnectionPool, tenant: str) -> list[tuple[object, ...]]:
    with owner_connection(pool) as conn:
        return conn.execute(
            "SELECT tenant_id, session_hash, key_id::text, csrf_hash FROM ui_sessions"
            " WHERE tenant_id = %(tenant)s ORDER BY created_at",
            {"tenant": tenant},
        ).fetchall()


def test_signing_in_keeps_a_server_side_session_and_gives_the_browser_only_its_id(
    browser: Client, pool: ConnectionPool
) -> None:
    key = make_key(browser)
    form = browser.get("/ui/login")
    nonce = browser.cookies["sgam_ui_login"]
    login_cookie = _set_cookies(form)["sgam_ui_login"]
    assert login_cookie == f"sgam_ui_login={nonce}; HttpOnly; Path=/ui; SameSite=strict"
    assert form_token(form.text) == _hmac(f"sgam-ui-sign-in\x00{nonce}")
    signed = browser.post(
        "/ui/login", data={"api_key": key.api_key, "csrf_token": form_token(form.text)}
    )
    assert (signed.status_code, signed.headers["location"]) == (303, "/ui/subjects")
    cookies = _set_cookies(signed)
    session_id = browser.cookies["sgam_ui"]
    assert cookies == {
        "sgam_ui": f"sgam_ui={session_id}; HttpOnly; Max-Age=28800; Path=/ui; SameSite=strict",
        "sgam_ui_login": 'sgam_ui_login=""; HttpOnly; Max-Age=0; Path=/ui; SameSite=strict',
    }
    assert key.api_key not in str(signed.headers)
    assert _sessions(pool, key.tenant) == [
        (key.tenant, _sha(session_id), key.key_id, _sha(_hmac(f"sgam-ui-session\x00{session_id}")))
    ]
    page = browser.get("/ui/subjects")
    assert page.status_code == 200
    assert f"tenant <strong>{key.tenant}</strong>" in page.text


def test_cookies_are_secure_when_the_setting_says_so(
    api_settings: Settings, embedder: Embedder
) -> None:
    settings = api_settings.model_copy(update={"ui_cookie_secure": True})
    # Browsers send Secure cookies over HTTPS only, as does the test client.
    with page_client(settings, embedder, "https://testserver.local") as client:
        key = make_key(client)
        form = client.get("/ui/login")
        assert _set_cookies(form)["sgam_ui_login"].endswith("; Secure")
        signed = client.post(
            "/ui/login", data={"api_key": key.api_key, "csrf_token": form_token(form.text)}
        )
        assert signed.status_code == 303
        assert "; Secure" in _set_cookies(signed)["sgam_ui"]


def test_pages_without_a_live_session_send_the_browser_to_the_sign_in_form(
    browser: Client,
) -> None:
    for path in ("/ui/subjects", "/ui/subjects/mira", "/ui/episodes/e1"):
        answer = browser.get(path)
        assert (answer.status_code, answer.headers["location"]) == (303, "/ui/login"), path
    browser.cookies.set("sgam_ui", "not-a-session", domain="testserver.local", path="/ui")
    stale = browser.get("/ui/subjects")
    assert (stale.status_code, stale.headers["location"]) == (303, "/ui/login")
    assert "Max-Age=0" in _set_cookies(stale)["sgam_ui"]
    assert browser.get("/ui").headers["location"] == "/ui/subjects"


def test_a_wrong_key_is_refused_and_opens_no_session(browser: Client, pool: ConnectionPool) -> None:
    key = make_key(browser)
    refused = sign_in(browser, key.api_key[:-2] + "xx")
    assert refused.status_code == 401
    assert "Unknown or revoked key." in refused.text
    assert _sessions(pool, key.tenant) == []


def test_forms_without_their_token_are_refused_and_change_nothing(
    browser: Client, pool: ConnectionPool
) -> None:
    key = make_key(browser)
    form = browser.get("/ui/login")
    for token in ("", "forged", form_token(form.text) + "x"):
        refused = browser.post("/ui/login", data={"api_key": key.api_key, "csrf_token": token})
        assert refused.status_code == 403, token
    browser.cookies.clear()  # a cross-site post carries no sign-in cookie
    refused = browser.post(
        "/ui/login", data={"api_key": key.api_key, "csrf_token": form_token(form.text)}
    )
    assert refused.status_code == 403
    assert "did not come from this site" in refused.text
    assert _sessions(pool, key.tenant) == []

    assert sign_in(browser, key.api_key).status_code == 303
    for data in ({}, {"csrf_token": "forged"}, {"csrf_token": form_token(form.text)}):
        assert browser.post("/ui/logout", data=data).status_code == 403, data
    assert len(_sessions(pool, key.tenant)) == 1
    page = browser.get("/ui/subjects")
    assert page.status_code == 200
    out = browser.post("/ui/logout", data={"csrf_token": form_token(page.text)})
    assert (out.status_code, out.headers["location"]) == (303, "/ui/login")
    assert "Max-Age=0" in _set_cookies(out)["sgam_ui"]
    assert _sessions(pool, key.tenant) == []


def test_a_revoked_keys_session_stops_working_at_once(browser: Client) -> None:
    key = make_key(browser)
    assert sign_in(browser, key.api_key).status_code == 303
    assert browser.get("/ui/subjects").status_code == 200
    revoked = browser.delete(f"/v1/admin/keys/{key.key_id}", headers=ADMIN)
    assert revoked.status_code == 200, revoked.text
    answer = browser.get("/ui/subjects")
    assert (answer.status_code, answer.headers["location"]) == (303, "/ui/login")
    assert sign_in(browser, key.api_key).status_code == 401


def test_a_sign_in_token_must_be_signed_for_its_own_cookie(
    browser: Client, pool: ConnectionPool
) -> None:
    key = make_key(browser)
    first = browser.get("/ui/login")
    first_token = form_token(first.text)
    second = browser.get("/ui/login")  # a second form: a new nonce in the cookie
    planted = {"api_key": key.api_key, "csrf_token": "planted-by-another-site"}
    browser.cookies.set(
        "sgam_ui_login", planted["csrf_token"], domain="testserver.local", path="/ui"
    )

    # A pair set from elsewhere, equal as a double submit wants, carries no signature.
    assert browser.post("/ui/login", data=planted).status_code == 403
    browser.cookies.set("sgam_ui_login", "another-nonce", domain="testserver.local", path="/ui")
    other = {"api_key": key.api_key, "csrf_token": form_token(second.text)}
    assert browser.post("/ui/login", data=other).status_code == 403
    assert _sessions(pool, key.tenant) == []
    assert first_token != form_token(second.text)


def test_refused_sign_ins_from_one_address_are_limited_with_retry_after(
    api_settings: Settings, embedder: Embedder, pool: ConnectionPool
) -> None:
    with page_client(api_settings, embedder) as client:  # an app of its own: its own counts
        key = make_key(client)
        for _ in range(MAX_REFUSED):
            assert sign_in(client, key.api_key + "x").status_code == 401

        limited = sign_in(client, key.api_key)

        assert limited.status_code == 429, limited.text
        assert 0 < int(limited.headers["retry-after"]) <= WINDOW_S
        assert limited.headers["content-security-policy"].startswith("default-src 'none'")
        assert "Too many refused sign-ins" in limited.text
        assert _sessions(pool, key.tenant) == []
