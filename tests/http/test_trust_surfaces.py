"""The API, the context block and the timeline page name a version alike
(``store.contract.labels``): an unverified current fact, and a challenger refused under
``reject``, read on all three; the admin and attribute calls that declare unverified evidence
refused, and their bad input."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.context.marks import is_marked
from retrieval.search.embeddings import Embedder
from server.settings import Settings
from tests.http_helpers import ADMIN, assert_problem
from tests.ui_helpers import Key, make_key, page_client, sign_in, version_rows

Client = TestClient[Litestar]
NOW = "2026-06-04T12:00:00Z"
START = "2026-06-01T09:00:00Z"
BAR = re.compile(r'<a class="(bar [^"]+)"\s+href="/ui/episodes/([^"]+)">')
STATE_CELL = re.compile(r'<td class="state"[^>]*>([^<]*)</td>')
BAR_TEXT = re.compile(r'<text class="label wide [^"]*"[^>]*>([^<]*)</text>')
"""A bar's label as the wide layout places it (the narrow one may shorten it)."""


@pytest.fixture(scope="module")
def browser(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    with page_client(api_settings, embedder) as client:
        yield client


def _ok(response: Any) -> Any:
    assert response.status_code in {200, 201}, response.text
    return response.json()


def _episode(
    browser: Client, key: Key, episode_id: str, text: str, update: dict[str, Any]
) -> dict[str, Any]:
    body = {"id": episode_id, "occurred_at": START, "text": text, "updates": [update]}
    recorded = _ok(browser.post("/v1/episodes", json=body, headers=key.headers(NOW)))
    [result] = recorded["results"]
    return dict(result)


def _candidate(attribute: str, value: str, evidence: str) -> dict[str, Any]:
    return {
        "evidence": evidence,
        "subject": "mira",
        "attribute": attribute,
        "change": "new",
        "value": value,
        "valid_from": START,
    }


def _context(browser: Client, key: Key, question: str) -> dict[str, Any]:
    body = {"question": question, "subject": "mira"}
    return dict(_ok(browser.post("/v1/context", json=body, headers=key.headers(NOW))))


def _page(browser: Client, key: Key) -> str:
    assert sign_in(browser, key.api_key).status_code == 303
    page = browser.get("/ui/subjects/mira")
    assert page.status_code == 200, page.text
    return html.unescape(page.text)


def test_an_unverified_current_fact_says_so_in_the_api_the_block_and_the_page(
    browser: Client,
) -> None:
    key = make_key(browser, "trust")
    declaration = {"value_type": "date", "description": "Passport renewal deadline"}
    _ok(browser.put("/v1/attributes/passport_deadline", json=declaration, headers=key.headers(NOW)))
    written = _episode(
        browser,
        key,
        "x4",
        "Mira asked about her trip to Lisbon.",
        _candidate("passport_deadline", "2026-09-09", "the deadline is 2026-09-09"),
    )
    assert written["status"] == "written", written
    fact = _ok(browser.get("/v1/facts/mira/passport_deadline", headers=key.headers(NOW)))
    assert (fact["value"], fact["evidence_verified"], fact["label"]) == (
        "2026-09-09",
        False,
        "current · unverified",
    )
    assert written["fact"]["label"] == "current · unverified"

    context = _context(browser, key, "When is Mira's passport deadline?")
    assert context["block"].splitlines()[0] == (
        "passport_deadline: 2026-09-09 (unverified; from 2026-06-01; source x4)"
    )
    assert [(f["label"], f["evidence_verified"]) for f in context["facts"]] == [
        ("current · unverified", False)
    ]

    page = _page(browser, key)
    assert version_rows(page) == [("2026-09-09", "current")]
    assert STATE_CELL.findall(page) == ["current · unverified"]
    assert BAR.findall(page) == [("bar current unverified", "x4")]
    assert BAR_TEXT.findall(page)[-1] == "2026-09-09 · current · unverified"


def test_a_challenger_refused_under_reject_is_in_conflict_everywhere_never_disputed(
    browser: Client,
) -> None:
    key = make_key(browser, "trust")
    declaration = {"value_type": "string", "description": "City Mira lives in"}
    _ok(browser.put("/v1/attributes/home_city", json=declaration, headers=key.headers(NOW)))
    first = _episode(
        browser,
        key,
        "s1",
        "Mira said she lives in Oslo.",
        _candidate("home_city", "Oslo", "she lives in Oslo"),
    )
    refused = _episode(
        browser,
        key,
        "s4",
        "Mira said she lives in Trondheim.",
        _candidate("home_city", "Trondheim", "she lives in Trondheim"),
    )
    assert (first["status"], refused["status"]) == ("written", "conflict")
    fact = _ok(browser.get("/v1/facts/mira/home_city", headers=key.headers(NOW)))
    assert (fact["value"], fact["disputed"], fact["label"], fact["challengers"]) == (
        "Oslo",
        False,
        "current",
        [],
    )
    [conflict] = _ok(browser.get("/v1/conflicts", headers=key.headers(NOW)))["conflicts"]
    assert (conflict["disputed"], conflict["status"]) == (False, "open")

    context = _context(browser, key, "Where does Mira live?")
    lines = context["block"].splitlines()
    assert lines[0] == "home_city: Oslo (from 2026-06-01; source s1)"
    assert "Uncertain:" not in lines
    assert context["uncertain"] == []
    assert not any("disputed" in line for line in lines)
    # The refused value, where quoted, is marked: never read as current.
    assert all(is_marked(line) for line in lines if "Trondheim" in line)
    assert [(f["value"], f["label"]) for f in context["facts"]] == [("Oslo", "current")]

    page = _page(browser, key)
    assert version_rows(page) == [("Oslo", "current")]
    assert STATE_CELL.findall(page) == ["current"]
    assert BAR.findall(page) == [("bar current in-conflict", "s1")]
    assert BAR_TEXT.findall(page)[-1] == "Oslo · current"
    assert "disputed" not in page
    challenge = re.search(r'<span class="challenge">([^<]*)\(<a href="([^"]+)">', page)
    assert challenge is not None
    assert (" ".join(challenge[1].split()), challenge[2]) == (
        "in conflict by Trondheim",
        "/ui/episodes/s4",
    )


def test_the_tenant_default_is_set_at_creation_and_the_attribute_overrides_it(
    browser: Client,
) -> None:
    created = browser.post(
        "/v1/admin/tenants",
        json={"tenant_id": "trust-refusing", "on_unverified_evidence": "refuse"},
        headers=ADMIN,
    )
    assert _ok(created) == {"tenant_id": "trust-refusing", "on_unverified_evidence": "refuse"}
    issued = _ok(browser.post("/v1/admin/tenants/trust-refusing/keys", headers=ADMIN))
    key = Key("trust-refusing", issued["key_id"], issued["api_key"])
    for attribute, declared in (("refused_date", None), ("accepted_date", "accept")):
        body: dict[str, Any] = {"value_type": "date"}
        if declared is not None:
            body["on_unverified_evidence"] = declared
        _ok(browser.put(f"/v1/attributes/{attribute}", json=body, headers=key.headers(NOW)))
    listed = _ok(browser.get("/v1/attributes", headers=key.headers(NOW)))["attributes"]
    assert [(a["attribute"], a["on_unverified_evidence"]) for a in listed] == [
        ("accepted_date", "accept"),
        ("refused_date", None),
    ]
    body = {
        "id": "u1",
        "occurred_at": START,
        "text": "Nothing about dates here.",
        "updates": [
            _candidate("refused_date", "2026-09-09", "the date is 2026-09-09"),
            _candidate("accepted_date", "2026-09-09", "the date is 2026-09-09"),
        ],
    }
    results = _ok(browser.post("/v1/episodes", json=body, headers=key.headers(NOW)))["results"]
    assert [(r["status"], r["field"]) for r in results] == [
        ("invalid", "evidence"),
        ("written", None),
    ]
    assert "the tenant refuses unverified evidence" in results[0]["reason"]
    assert results[1]["fact"]["label"] == "current · unverified"
    missing = browser.get("/v1/facts/mira/refused_date", headers=key.headers(NOW))
    assert_problem(missing, 404, "not_found")


def test_bad_values_are_problems_naming_the_field_and_change_nothing(browser: Client) -> None:
    key = make_key(browser, "trust")
    bad = browser.put(
        "/v1/attributes/city",
        json={"value_type": "string", "on_unverified_evidence": "sometimes"},
        headers=key.headers(NOW),
    )
    assert_problem(bad, 422, "invalid", field="on_unverified_evidence")
    listed = _ok(browser.get("/v1/attributes", headers=key.headers(NOW)))["attributes"]
    assert listed == []
    tenant = browser.post(
        "/v1/admin/tenants",
        json={"tenant_id": "trust-bad", "on_unverified_evidence": True},
        headers=ADMIN,
    )
    assert_problem(tenant, 422, "invalid", field="on_unverified_evidence")
    assert browser.post("/v1/admin/tenants/trust-bad/keys", headers=ADMIN).status_code == 404
