"""The timeline pages over plain HTTP (no browser): sign-in, cookies, CSRF, revocation, escaping,
security headers, tenant isolation, and the pages' absence from the OpenAPI document.

The app reads at a fixed clock after every write the tests make (each write sets its own with
``X-SGAM-Now``), so the pages say the same on any date.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from server.ui.pages import CONTENT_SECURITY_POLICY
from server.ui.sessions import csrf_token_for
from store.clock import ManualClock
from tests.conftest import ts
from tests.helpers import owner_connection
from tests.ui_helpers import ADMIN, Key, form_token, make_key, seed_mira, sign_in, version_rows

Client = TestClient[Litestar]
PAGE_CLOCK = ts("2027-01-01T00:00:00Z")


def _client(
    settings: Settings, embedder: Embedder, base_url: str = "http://testserver.local"
) -> TestClient[Litestar]:
    app = create_app(settings, embedder=embedder, clock=ManualClock(PAGE_CLOCK))
    client = TestClient(app, base_url=base_url, raise_server_exceptions=False)
    client.follow_redirects = False
    return client


@pytest.fixture(scope="module")
def ui(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """The app at a fixed clock, redirects not followed."""
    with _client(api_settings, embedder) as client:
        yield client


@pytest.fixture
def browser(ui: Client) -> Iterator[Client]:
    """The app's client with no cookies, as a fresh browser."""
    ui.cookies.clear()
    yield ui
    ui.cookies.clear()


@pytest.fixture(scope="module")
def mira(ui: Client) -> Key:
    """A tenant holding the seed scenario."""
    key = make_key(ui, "ui-seed")
    seed_mira(ui, key)
    return key


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


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
    login_cookie = _set_cookies(form)["sgam_ui_login"]
    assert login_cookie == (
        f"sgam_ui_login={form_token(form.text)}; HttpOnly; Path=/ui; SameSite=strict"
    )
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
        (key.tenant, _sha(session_id), key.key_id, _sha(csrf_token_for(session_id)))
    ]
    page = browser.get("/ui/subjects")
    assert page.status_code == 200
    assert f"tenant <strong>{key.tenant}</strong>" in page.text


def test_cookies_are_secure_when_the_setting_says_so(
    api_settings: Settings, embedder: Embedder
) -> None:
    settings = api_settings.model_copy(update={"ui_cookie_secure": True})
    # Browsers send Secure cookies over HTTPS only, as does the test client.
    with _client(settings, embedder, "https://testserver.local") as client:
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


def test_the_seed_page_shows_the_correction_current_and_the_first_value_superseded(
    browser: Client, mira: Key
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    assert "/ui/subjects/mira" in browser.get("/ui/subjects").text
    now = browser.get("/ui/subjects/mira")
    assert now.status_code == 200
    assert version_rows(now.text) == [
        ("2026-08-01", "past"),
        ("2026-07-15", "retired"),
        ("2026-07-15", "superseded"),
        ("2026-06-30", "current"),
    ]
    assert 'passport_deadline:\n    <span class="believed">2026-06-30</span>' in now.text
    for episode in ("e0", "e1", "e2"):
        assert f'href="/ui/episodes/{episode}"' in now.text
    assert now.text.count('class="supersedes"') == 1
    before = browser.get("/ui/subjects/mira", params={"known_at": "2026-06-02"})
    assert version_rows(before.text) == [("2026-07-15", "current")]
    assert '<td class="state">current then</td>' in before.text
    assert "3 versions\n  recorded later are not shown." in before.text
    bad = browser.get("/ui/subjects/mira", params={"known_at": "June"})
    assert bad.status_code == 422
    assert "&#39;June&#39; is not a time" in bad.text
    source = browser.get("/ui/episodes/e2")
    assert "Mira corrected the deadline. It is now 2026-06-30." in source.text


def test_another_tenants_subject_and_episodes_are_not_found(browser: Client, mira: Key) -> None:
    other = make_key(browser, "ui-other")
    assert sign_in(browser, other.api_key).status_code == 303
    for path in ("/ui/subjects/mira", "/ui/episodes/e1"):
        answer = browser.get(path)
        assert answer.status_code == 404, path
        assert "2026-07-15" not in answer.text
    listed = browser.get("/ui/subjects")
    assert "mira" not in listed.text
    assert "This tenant holds no subjects yet." in listed.text


HOSTILE = '<script>alert("x")</script>'


def test_hostile_values_and_texts_are_escaped(browser: Client) -> None:
    key = make_key(browser)
    at = key.headers("2026-06-01T00:00:00Z")
    declared = browser.put(
        "/v1/attributes/note", json={"value_type": "string", "description": HOSTILE}, headers=at
    )
    assert declared.status_code == 200, declared.text
    episode = {"id": "h1", "occurred_at": "2026-06-01T00:00:00Z", "text": HOSTILE + " said"}
    candidate = {"evidence": "", "subject": "eve", "attribute": "note", "change": "new"}
    recorded = browser.post(
        "/v1/episodes",
        json={**episode, "updates": [{**candidate, "value": HOSTILE}]},
        headers=at,
    )
    assert recorded.status_code == 200, recorded.text
    assert sign_in(browser, key.api_key).status_code == 303
    for path in ("/ui/subjects/eve", "/ui/episodes/h1"):
        page = browser.get(path)
        assert page.status_code == 200, path
        assert "<script>alert" not in page.text
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text
    assert version_rows(browser.get("/ui/subjects/eve").text) == [(HOSTILE, "current")]
    hostile_path = browser.get("/ui/subjects/%3Cscript%3E")
    assert hostile_path.status_code == 422
    assert "<script>" not in hostile_path.text


def test_every_page_and_file_sends_the_security_headers_and_no_inline_code(
    browser: Client, mira: Key
) -> None:
    assert CONTENT_SECURITY_POLICY == (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self';"
        " form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
    answers = [browser.get("/ui/login"), browser.get("/ui/subjects")]
    assert sign_in(browser, mira.api_key).status_code == 303
    for path in (
        "/ui/subjects",
        "/ui/subjects/mira",
        "/ui/episodes/e1",
        "/ui/episodes/nope",
        "/ui/static/ui.css",
        "/ui/static/ui.js",
    ):
        answers.append(browser.get(path))
    assert [a.status_code for a in answers] == [200, 303, 200, 200, 200, 404, 200, 200]
    for answer in answers:
        assert {
            name: answer.headers.get(name)
            for name in ("content-security-policy", "x-frame-options", "referrer-policy")
        } == {
            "content-security-policy": CONTENT_SECURITY_POLICY,
            "x-frame-options": "DENY",
            "referrer-policy": "no-referrer",
        }, answer.url
        if answer.headers.get("content-type", "").startswith("text/html"):
            assert re.findall(r"<script(?![^>]*\ssrc=)|<style|\sstyle=|\son\w+=", answer.text) == []


def test_the_pages_are_not_in_the_openapi_document(browser: Client) -> None:
    document = browser.get("/schema/openapi.json").json()
    outside_v1 = sorted(path for path in document["paths"] if not path.startswith("/v1/"))
    assert outside_v1 == ["/healthz", "/metrics", "/readyz"]
    assert [path for path in document["paths"] if "ui" in path.split("/")] == []


def test_a_disputed_key_marks_its_value_and_names_the_challenger(browser: Client) -> None:
    key = make_key(browser)
    at = key.headers("2026-06-01T00:00:00Z")
    declared = browser.put(
        "/v1/attributes/city",
        json={"value_type": "string", "description": "city", "on_equal_start": "source_precedence"},
        headers=at,
    )
    assert declared.status_code == 200, declared.text
    start = "2026-06-01T00:00:00Z"
    for episode, value in (("c1", "Oslo"), ("c2", "Bergen")):
        candidate = {"evidence": "", "subject": "ada", "attribute": "city", "change": "new"}
        recorded = browser.post(
            "/v1/episodes",
            json={
                "id": episode,
                "occurred_at": start,
                "text": f"Ada lives in {value}.",
                "updates": [{**candidate, "value": value, "valid_from": start}],
            },
            headers=at,
        )
        assert recorded.status_code == 200, recorded.text
    assert recorded.json()["results"][0]["status"] == "conflict"
    assert sign_in(browser, key.api_key).status_code == 303
    page = browser.get("/ui/subjects/ada")
    assert version_rows(page.text) == [("Oslo", "current")]
    bars = re.findall(r'<a class="(bar [^"]+)"\s+href="([^"]+)">', page.text)
    assert bars == [("bar current disputed", "/ui/episodes/c1")]
    challenge = re.search(r'<span class="challenge">([^<]*)\(<a href="([^"]+)">', page.text)
    assert challenge is not None
    assert (" ".join(challenge[1].split()), challenge[2]) == (
        "disputed by Bergen",
        "/ui/episodes/c2",
    )
