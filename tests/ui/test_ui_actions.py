"""The pages' writes over plain HTTP: the open conflicts and their resolution, a subject's
erasure and legal hold. Each goes through the API's store call, each is refused without the
session's own CSRF token and changes nothing then; erasure and hold refuse to act unconfirmed;
another tenant's conflict or subject is not found. The state is read back over the API."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.settings import Settings
from server.ui import actions
from tests.ui_conflict_helpers import city, conflicts, make_conflict
from tests.ui_helpers import Key, form_token, make_key, page_client, sign_in

Client = TestClient[Litestar]
REFUSED = "This form has expired or did not come from this site"


@pytest.fixture(scope="module")
def browser(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """One client for the module's tests; each signs in as the tenant it acts as."""
    with page_client(api_settings, embedder) as client:
        yield client


def _signed_in(browser: Client, key: Key) -> str:
    """Sign in as ``key``'s tenant; the session's CSRF token, as its pages carry it."""
    browser.cookies.clear()
    assert sign_in(browser, key.api_key).status_code == 303
    return form_token(browser.get("/ui/conflicts").text)


def _refusals(browser: Client, key: Key, path: str, fields: dict[str, str]) -> None:
    """``fields`` posted to ``path`` without a token, with a forged one and with another
    session's (the same tenant's): each a 403 page."""
    other_session = _signed_in(browser, key)
    _signed_in(browser, key)
    for token in (None, "forged-" + "x" * 40, other_session):
        data = fields if token is None else {**fields, "csrf_token": token}
        answer = browser.post(path, data=data)
        assert answer.status_code == 403, (token, answer.text)
        assert REFUSED in answer.text


def test_the_open_conflicts_list_both_sides_their_windows_and_sources(browser: Client) -> None:
    key = make_key(browser, "ui-conflicts")
    conflict_id = make_conflict(browser, key)
    _signed_in(browser, key)
    page = browser.get("/ui/conflicts")
    assert page.status_code == 200
    row = re.search(rf'<tr id="conflict-{conflict_id}".*?</tr>', page.text, re.S)
    assert row is not None, page.text
    incumbent, challenger = re.findall(
        r'<td data-label="(?:incumbent|challenger)".*?</td>', row[0], re.S
    )
    assert '<span class="value">Oslo</span>' in incumbent
    assert "valid 2026-06-01 00:00:00 UTC \u2013 open" in incumbent
    assert 'href="/ui/episodes/ada-0"' in incumbent
    assert '<span class="value">Bergen</span>' in challenger
    assert 'href="/ui/episodes/ada-1"' in challenger
    assert f'action="/ui/conflicts/{conflict_id}/resolve"' in row[0]
    assert 'href="/ui/subjects/ada"' in row[0]


def test_resolving_through_the_page_is_the_apis_resolution(browser: Client) -> None:
    key = make_key(browser, "ui-resolve")
    conflict_id = make_conflict(browser, key)
    token = _signed_in(browser, key)
    answer = browser.post(
        f"/ui/conflicts/{conflict_id}/resolve", data={"csrf_token": token, "choose": "challenger"}
    )
    assert answer.status_code == 303
    assert (
        answer.headers["location"] == "/ui/conflicts?resolved=ada&attribute=city&chose=challenger"
    )
    after = browser.get(answer.headers["location"])
    assert "the challenger now holds the start" in after.text
    assert conflict_id not in after.text
    assert "No open conflicts." in after.text
    [settled] = conflicts(browser, key, subject="ada", status="resolved")
    assert (settled["conflict_id"], settled["resolution"]) == (conflict_id, "challenger")
    assert settled["resolved_fact_id"] is not None
    assert city(browser, key) == "Bergen"
    # Recorded as the API's resolution is: the challenger written from its episode, the
    # incumbent retired (kept in the history), at the page's clock.
    history = browser.get("/v1/facts/ada/city/history", headers=key.headers()).json()
    written = [(v["value"], v["source_episode_id"], v["retired_at"]) for v in history]
    assert written == [("Oslo", "ada-0", settled["resolved_at"]), ("Bergen", "ada-1", None)]
    again = browser.post(
        f"/ui/conflicts/{conflict_id}/resolve", data={"csrf_token": token, "choose": "incumbent"}
    )
    assert again.status_code == 409
    assert "already resolved" in again.text


def test_a_resolve_without_the_sessions_token_is_refused_and_changes_nothing(
    browser: Client,
) -> None:
    key = make_key(browser, "ui-resolve-csrf")
    conflict_id = make_conflict(browser, key)
    _refusals(browser, key, f"/ui/conflicts/{conflict_id}/resolve", {"choose": "challenger"})
    token = _signed_in(browser, key)
    bad = browser.post(
        f"/ui/conflicts/{conflict_id}/resolve", data={"csrf_token": token, "choose": "both"}
    )
    assert bad.status_code == 422
    assert "Choose the incumbent or the challenger." in bad.text
    assert [c["conflict_id"] for c in conflicts(browser, key, subject="ada")] == [conflict_id]
    assert city(browser, key) == "Oslo"


def test_another_tenants_conflict_is_not_found(browser: Client) -> None:
    owner = make_key(browser, "ui-owner")
    conflict_id = make_conflict(browser, owner)
    other = make_key(browser, "ui-stranger")
    token = _signed_in(browser, other)
    assert conflict_id not in browser.get("/ui/conflicts").text
    answer = browser.post(
        f"/ui/conflicts/{conflict_id}/resolve", data={"csrf_token": token, "choose": "challenger"}
    )
    assert answer.status_code == 404
    assert "Oslo" not in answer.text
    assert [c["conflict_id"] for c in conflicts(browser, owner, subject="ada")] == [conflict_id]
    malformed = browser.post(
        "/ui/conflicts/not-a-uuid/resolve", data={"csrf_token": token, "choose": "challenger"}
    )
    assert malformed.status_code == 422


def _exported(browser: Client, key: Key, subject: str = "ada") -> int:
    return browser.get(f"/v1/subjects/{subject}/export", headers=key.headers()).status_code


def test_erasure_asks_for_the_subjects_id_and_does_nothing_without_it(browser: Client) -> None:
    key = make_key(browser, "ui-erase")
    make_conflict(browser, key)
    token = _signed_in(browser, key)
    subject_page = browser.get("/ui/subjects/ada")
    assert 'href="/ui/subjects/ada/erase"' in subject_page.text
    confirm = browser.get("/ui/subjects/ada/erase")
    assert confirm.status_code == 200
    assert "1 fact version," in confirm.text
    assert "1 conflict," in confirm.text
    for typed in (None, "", "ad", "ADA"):
        data = {"csrf_token": token} | ({} if typed is None else {"confirm": typed})
        refused = browser.post("/ui/subjects/ada/erase", data=data)
        assert refused.status_code == 422, typed
        assert "Type the subject&#39;s id, ada, to confirm: nothing was erased." in refused.text
    _refusals(browser, key, "/ui/subjects/ada/erase", {"confirm": "ada"})
    assert _exported(browser, key) == 200
    token = _signed_in(browser, key)
    erased = browser.post("/ui/subjects/ada/erase", data={"csrf_token": token, "confirm": "ada"})
    assert erased.status_code == 200
    tombstone = re.search(r'<code id="tombstone">([0-9a-f-]{36})</code>', erased.text)
    assert tombstone is not None
    assert "<dt>conflicts deleted</dt><dd>1</dd>" in erased.text
    assert _exported(browser, key) == 404
    assert browser.get("/ui/subjects/ada/erase").status_code == 404


def test_a_legal_hold_is_placed_and_released_once_confirmed_and_blocks_erasure(
    browser: Client,
) -> None:
    key = make_key(browser, "ui-hold")
    make_conflict(browser, key)
    hold = "/ui/subjects/ada/legal-hold"
    _refusals(browser, key, hold, {"action": "place", "confirm": "yes"})
    token = _signed_in(browser, key)
    unconfirmed = browser.post(hold, data={"csrf_token": token, "action": "place"})
    assert unconfirmed.status_code == 422
    assert "Tick the box to place the hold: nothing was changed." in unconfirmed.text
    # No hold was placed: releasing one over the API finds none.
    released = browser.delete("/v1/subjects/ada/legal-hold", headers=key.headers())
    assert released.status_code == 404

    placed = browser.post(hold, data={"csrf_token": token, "action": "place", "confirm": "yes"})
    assert (placed.status_code, placed.headers["location"]) == (303, f"{hold}?done=placed")
    assert "The legal hold was placed." in browser.get(placed.headers["location"]).text
    blocked = browser.post("/ui/subjects/ada/erase", data={"csrf_token": token, "confirm": "ada"})
    assert blocked.status_code == 409
    assert _exported(browser, key) == 200

    data = {"csrf_token": token, "action": "release", "confirm": "yes"}
    lifted = browser.post(hold, data=data)
    assert lifted.headers["location"] == f"{hold}?done=released"
    assert browser.post(hold, data=data).status_code == 404
    assert browser.delete("/v1/subjects/ada/legal-hold", headers=key.headers()).status_code == 404


def test_another_tenants_subject_cannot_be_erased_or_held(browser: Client) -> None:
    owner = make_key(browser, "ui-subject-owner")
    make_conflict(browser, owner)
    token = _signed_in(browser, make_key(browser, "ui-subject-stranger"))
    assert browser.get("/ui/subjects/ada/erase").status_code == 404
    assert browser.get("/ui/subjects/ada/legal-hold").status_code == 404
    erase = browser.post("/ui/subjects/ada/erase", data={"csrf_token": token, "confirm": "ada"})
    assert erase.status_code == 404
    assert _exported(browser, owner) == 200


def test_the_list_pages_and_keeps_to_one_subject_when_asked(
    browser: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = make_key(browser, "ui-conflict-pages")
    first, second = (make_conflict(browser, key, subject=s) for s in ("ada", "bo"))
    _signed_in(browser, key)
    monkeypatch.setattr(actions, "CONFLICTS_PER_PAGE", 1)
    page_one = browser.get("/ui/conflicts")
    next_page = re.search(r'<a href="(/ui/conflicts\?cursor=[^"]+)">Next page</a>', page_one.text)
    assert next_page is not None
    page_two = browser.get(html.unescape(next_page[1]))
    assert "Next page" not in page_two.text
    # Both made at one instant: either may come first, one a page.
    shown = [[c for c in (first, second) if c in page.text] for page in (page_one, page_two)]
    assert sorted(shown) == sorted([[first], [second]])
    only_bo = browser.get("/ui/conflicts", params={"subject": "bo"})
    assert "Open conflicts of <code>bo</code>" in only_bo.text
    assert (first in only_bo.text, second in only_bo.text) == (False, True)


def test_values_that_are_not_text_are_shown_as_json(browser: Client) -> None:
    key = make_key(browser, "ui-conflict-json")
    # Candidates carry text; the store keeps the JSON value it parses to.
    values = ('{"since": 2020, "name": "Oslo"}', '{"name": "Bergen", "verified": true}')
    make_conflict(browser, key, values=values, value_type="json")
    _signed_in(browser, key)
    page = browser.get("/ui/conflicts")
    shown = re.findall(r'<span class="value">([^<]*)</span>', page.text)
    assert [html.unescape(value) for value in shown] == [
        '{"name":"Oslo","since":2020}',
        '{"name":"Bergen","verified":true}',
    ]


def test_an_incumbent_retracted_since_is_shown_as_no_longer_believed(browser: Client) -> None:
    key = make_key(browser, "ui-conflict-retracted")
    conflict_id = make_conflict(browser, key)
    [conflict] = conflicts(browser, key, subject="ada")
    retracted = browser.post(
        "/v1/facts/ada/city/retract",
        json={"fact_id": conflict["incumbent_fact_id"]},
        headers=key.headers(),
    )
    assert retracted.status_code == 200, retracted.text
    _signed_in(browser, key)
    page = browser.get("/ui/conflicts")
    row = re.search(rf'<tr id="conflict-{conflict_id}".*?</tr>', page.text, re.S)
    assert row is not None, page.text
    incumbent = re.search(r'<td data-label="incumbent".*?</td>', row[0], re.S)
    assert incumbent is not None
    assert "no longer believed" in incumbent[0]
    assert "Oslo" not in incumbent[0]
