"""The timeline pages over plain HTTP (no browser): the seed scenario's page as believed now
and before the correction, disputes, tenant isolation, escaping, the security headers, and the
pages' absence from the OpenAPI document."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from server.settings import Settings
from server.ui.pages import CONTENT_SECURITY_POLICY, SECURITY_HEADERS
from store.contract.times import parse_timestamp
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.ui_helpers import Key, make_key, page_client, seed_mira, sign_in, version_rows

Client = TestClient[Litestar]


@pytest.fixture(scope="module")
def browser(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """One browser for the module's tests; each signs in as the tenant it reads as."""
    with page_client(api_settings, embedder) as client:
        yield client


@pytest.fixture(scope="module")
def mira(browser: Client) -> Key:
    """A tenant holding the seed scenario."""
    key = make_key(browser, "ui-seed")
    seed_mira(browser, key)
    return key


def test_the_seed_page_shows_the_correction_current_and_the_first_value_superseded(
    browser: Client, mira: Key
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    assert "/ui/subjects/mira" in browser.get("/ui/subjects").text
    now = browser.get("/ui/subjects/mira")
    assert now.status_code == 200
    assert version_rows(now.text) == [
        ("2026-08-01", "past"),
        ("2026-07-15", "superseded"),
        ("2026-07-15", "retired"),
        ("2026-06-30", "current"),
    ]
    # The retired belief is folded under the value it belonged to, closed, and not drawn.
    folded = re.search(r'<details class="retired">\s*<summary>([^<]*)</summary>', now.text)
    assert folded is not None
    assert folded[1] == "1 earlier belief of 2026-07-15, retired"
    assert now.text.count('<a class="bar ') == 3
    assert 'passport_deadline:\n    <span class="believed">2026-06-30</span>' in now.text
    # The axis reaches now (PAGE_CLOCK), marked; the instants are to the second, in UTC.
    assert re.findall(r'<line class="marker ([^"]+)"', now.text) == ["now"]
    assert re.findall(r"<text class=\"tick\"[^>]*>([^<]*)</text>", now.text)[-1] >= "2027-01-01"
    changes = re.findall(r'\?known_at=[^"]+"(?: aria-current="true")?>([^<]+)</a></li>', now.text)
    assert changes == [
        "2026-06-01 09:00:05 UTC",
        "2026-06-03 10:00:05 UTC",
        "2026-06-05 12:00:00 UTC",
        "2027-01-01 00:00:00 UTC",
    ]
    for episode in ("e0", "e1", "e2"):
        assert f'href="/ui/episodes/{episode}"' in now.text
    assert now.text.count('class="supersedes"') == 1
    before = browser.get("/ui/subjects/mira", params={"known_at": "2026-06-02"})
    assert version_rows(before.text) == [("2026-07-15", "current")]
    assert '<td class="state" data-label="state">current then</td>' in before.text
    assert re.findall(r'<line class="marker ([^"]+)"', before.text) == ["known-at", "now"]
    assert "3 versions\n  recorded later are not shown." in before.text
    bad = browser.get("/ui/subjects/mira", params={"known_at": "June"})
    assert bad.status_code == 422
    assert "&#39;June&#39; is not a time" in bad.text
    source = browser.get("/ui/episodes/e2")
    assert "Mira corrected the deadline. It is now 2026-06-30." in source.text


def test_known_at_before_the_first_record_says_why_nothing_was_known(
    browser: Client, mira: Key
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    empty = browser.get("/ui/subjects/mira", params={"known_at": "2026-05-31"})
    assert empty.status_code == 200
    found = re.search(r'<p class="empty" id="empty">(.*?)</p>', empty.text, re.DOTALL)
    assert found is not None
    assert " ".join(re.sub(r"<[^>]+>", "", found[1]).split()) == (
        "Nothing was known about this subject at 2026-05-31 00:00:00 UTC. Known at is system"
        " time: when the server recorded what it was told, not when it happened. This subject"
        " was first recorded at 2026-06-01 09:00:05 UTC."
    )
    assert 'href="/ui/subjects/mira?known_at=2026-06-01T09%3A00%3A05Z"' in found[1]
    # No listed change is the one shown: each came after.
    assert 'aria-current="true"' not in empty.text


def test_another_tenants_subject_and_episodes_are_not_found(browser: Client, mira: Key) -> None:
    other = make_key(browser, "ui-other")
    assert sign_in(browser, other.api_key).status_code == 303
    for path in ("/ui/subjects/mira", "/ui/episodes/e1", "/ui/nope"):
        answer = browser.get(path)
        assert answer.status_code == 404, path
        assert "2026-07-15" not in answer.text
        # Still signed in: no offer to sign in; the header names the tenant where the
        # session was looked up (every page's own route).
        assert 'href="/ui/login"' not in answer.text, path
    for path in ("/ui/subjects/mira", "/ui/episodes/e1"):
        answer = browser.get(path)
        assert f"tenant <strong>{other.tenant}</strong>" in answer.text, path
        assert 'action="/ui/logout"' in answer.text, path
    listed = browser.get("/ui/subjects")
    assert "mira" not in listed.text
    assert "This tenant holds no subjects yet." in listed.text
    browser.cookies.clear()
    assert 'href="/ui/login"' in browser.get("/ui/nope").text


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
    browser.cookies.clear()
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


SECURITY_HEADER_NAMES = (
    "content-security-policy",
    "x-frame-options",
    "referrer-policy",
    "x-content-type-options",
    "cache-control",
)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/ui/nope", 404),
        ("/ui/subjects/mira/more", 404),
        ("/ui/static/nope.js", 404),
        ("/ui/subjects/a%20b", 422),
        ("/ui/episodes/bad%20id!", 422),
    ],
)
def test_an_error_answer_is_a_page_with_the_security_headers(
    browser: Client, mira: Key, path: str, status: int
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303

    answer = browser.get(path)

    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert {name: answer.headers.get(name) for name in SECURITY_HEADER_NAMES} == {
        name.lower(): value for name, value in SECURITY_HEADERS.items()
    }


def test_a_method_a_page_does_not_take_is_a_405_page_and_the_apis_stays_a_problem(
    browser: Client,
) -> None:
    page = browser.put("/ui/subjects")
    problem = browser.put("/healthz")

    assert (page.status_code, page.headers["content-type"]) == (405, "text/html; charset=utf-8")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert (problem.status_code, problem.headers["content-type"]) == (
        405,
        "application/problem+json",
    )


@pytest.mark.parametrize(
    ("name", "content_type"),
    [("ui.css", "text/css; charset=utf-8"), ("ui.js", "text/javascript; charset=utf-8")],
)
def test_a_static_file_names_its_charset_once(
    browser: Client, name: str, content_type: str
) -> None:
    answer = browser.get(f"/ui/static/{name}")

    assert (answer.status_code, answer.headers["content-type"]) == (200, content_type)


def test_a_purged_episodes_page_says_it_was_purged_and_shows_no_text(
    browser: Client, pool: ConnectionPool
) -> None:
    key = make_key(browser, "ui-purged")
    then = key.headers("2026-06-01T00:00:00Z")
    declared = browser.put("/v1/attributes/city", json={"value_type": "string"}, headers=then)
    assert declared.is_success, declared.text
    # A fact cites it, so the purge keeps its stub rather than deleting it.
    candidate = {"subject": "mira", "attribute": "city", "change": "new", "value": "Oslo",
                 "evidence": "Oslo", "valid_from": "2026-06-01T00:00:00Z"}  # fmt: skip
    episode = {"id": "gone", "occurred_at": "2026-06-01T00:00:00Z", "text": "Mira left Oslo.",
               "retention_class": "ephemeral", "updates": [candidate]}  # fmt: skip
    assert browser.post("/v1/episodes", json=episode, headers=then).status_code == 200
    later = ManualClock(parse_timestamp("2026-06-03T00:00:00Z"))
    purged = MemoryStore(pool, clock=later).retention.purge_tenant(
        key.tenant, receipt_retention=timedelta(days=90)
    )
    assert purged.episodes_stubbed == 1
    assert sign_in(browser, key.api_key).status_code == 303

    page = browser.get("/ui/episodes/gone")

    assert page.status_code == 200, page.text
    assert "None" not in page.text
    assert "Mira left Oslo." not in page.text
    assert "Purged 2026-06-03 00:00:00 UTC by its retention class\n  (ephemeral)" in page.text


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
    # Its evidence ("") is nowhere in its episode: the bar says unverified too.
    assert bars == [("bar current disputed unverified", "/ui/episodes/c1")]
    challenge = re.search(r'<span class="challenge">([^<]*)\(<a href="([^"]+)">', page.text)
    assert challenge is not None
    assert (" ".join(challenge[1].split()), challenge[2]) == (
        "disputed by Bergen",
        "/ui/episodes/c2",
    )
