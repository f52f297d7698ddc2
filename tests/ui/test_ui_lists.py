"""The listing pages over plain HTTP: subjects found by id or name with their counts, paged
and sorted by last change; an episode's sourced facts, outcome, extraction state and retention
class; a decision's receipts and the verdict the API's classifier gives; each tenant's own."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import uuid4

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.settings import Settings
from server.ui import lists
from tests.ui_helpers import Key, make_key, page_client, sign_in
from tests.ui_lists_helpers import seed_lists

Client = TestClient[Litestar]

ROW = re.compile(
    r'<td data-label="subject"><a href="/ui/subjects/([^"]+)">[^<]*</a></td>\s*'
    r'<td class="count" data-label="keys">(\d+)</td>\s*'
    r'<td class="count[^"]*" data-label="open conflicts">(\d+)</td>\s*'
    r'<td data-label="last change"><time datetime="[^"]+">([^<]+)</time></td>'
)


def rows(page: str) -> list[tuple[str, int, int, str]]:
    """The subjects table: (subject, keys, open conflicts, last change) of each row."""
    return [(s, int(k), int(c), when) for s, k, c, when in ROW.findall(page)]


@pytest.fixture(scope="module")
def browser(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """One browser for the module's tests; each signs in as the tenant it reads as."""
    with page_client(api_settings, embedder) as client:
        yield client


@dataclass(frozen=True)
class Seeded:
    """The tenant holding ``seed_lists``'s writes, and its decision's id."""

    key: Key
    decision: str


@pytest.fixture(scope="module")
def seeded(browser: Client) -> Seeded:
    """A tenant with ``seed_lists``'s writes."""
    key = make_key(browser, "ui-lists")
    return Seeded(key, seed_lists(browser, key))


@pytest.fixture
def mira(seeded: Seeded) -> Key:
    """The seeded tenant's key."""
    return seeded.key


@pytest.fixture
def decision(seeded: Seeded) -> str:
    """The seeded decision's id."""
    return seeded.decision


def test_subjects_show_keys_open_conflicts_and_last_change_sorted_either_way(
    browser: Client, mira: Key
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    by_id = browser.get("/ui/subjects")
    assert by_id.status_code == 200
    # mira's last change: e0's value, written at the seed's last clock; ben: its episode.
    assert rows(by_id.text) == [
        ("ben", 0, 0, "2026-06-10 08:00:00 UTC"),
        ("mira", 1, 0, "2026-06-05 12:00:00 UTC"),
    ]
    by_change = browser.get("/ui/subjects", params={"order": "changed"})
    assert [row[0] for row in rows(by_change.text)] == ["ben", "mira"]
    assert '<option value="changed" selected>' in by_change.text


def test_subjects_are_found_by_id_or_by_name(browser: Client, mira: Key) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    assert [row[0] for row in rows(browser.get("/ui/subjects?match=MIR").text)] == ["mira"]
    by_name = browser.get("/ui/subjects", params={"match": "okafor"})
    assert [row[0] for row in rows(by_name.text)] == ["ben"]
    assert 'value="okafor"' in by_name.text
    none = browser.get("/ui/subjects", params={"match": "<zed>"})
    assert none.status_code == 200
    assert "No subject's id or name holds '&lt;zed&gt;'." in none.text


def test_subjects_page_by_page_keeping_the_search_and_order(
    browser: Client, mira: Key, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lists, "SUBJECTS_PER_PAGE", 1)
    assert sign_in(browser, mira.api_key).status_code == 303
    first = browser.get("/ui/subjects", params={"order": "changed"})
    assert [row[0] for row in rows(first.text)] == ["ben"]
    assert 'id="first-page"' not in first.text
    found = re.search(r'id="next-page" href="([^"]+)"', first.text)
    assert found is not None
    link = html.unescape(found[1])
    assert "order=changed" in link
    second = browser.get(link)
    assert [row[0] for row in rows(second.text)] == ["mira"]
    assert 'id="next-page"' not in second.text
    assert 'id="first-page" href="/ui/subjects?match=&amp;order=changed"' in second.text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("order=name", "is not valid here"),
        ("cursor=bm90LWEtY3Vyc29y", "not a cursor this server issued"),
        ("match=" + "x" * 201, "is not valid here"),
    ],
)
def test_a_bad_search_is_a_page_saying_so(
    browser: Client, mira: Key, query: str, message: str
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    answer = browser.get(f"/ui/subjects?{query}")
    assert answer.status_code == 422
    assert message in answer.text


def test_an_episode_lists_the_facts_it_sourced_and_its_state(browser: Client, mira: Key) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    e1 = browser.get("/ui/episodes/e1")
    assert e1.status_code == 200
    # e1's deadline as first believed, then ended where e2's correction starts.
    sourced = re.findall(
        r'<a href="(/ui/subjects/mira#key-passport_deadline)">mira</a></td>\s*'
        r'<td data-label="key">passport_deadline</td>\s*<td data-label="value">([^<]+)</td>',
        e1.text,
    )
    assert sourced == [("/ui/subjects/mira#key-passport_deadline", "2026-07-15")] * 2
    assert '<dd id="retention">standard</dd>' in e1.text
    assert '<dd id="outcome">none recorded</dd>' in e1.text
    assert '<dd id="extraction">never sent for extraction</dd>' in e1.text
    e2 = browser.get("/ui/episodes/e2")
    assert "succeeded, verified (revision 1, 2026-06-10 08:00:00 UTC)" in e2.text
    b1 = browser.get("/ui/episodes/b1")
    assert 'id="no-facts"' in b1.text


def test_a_decision_shows_its_receipts_and_the_apis_verdict(
    browser: Client, mira: Key, decision: str
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    found = browser.get("/ui/decisions", params={"decision_id": f" {decision} "})
    assert (found.status_code, found.headers["location"]) == (303, f"/ui/decisions/{decision}")
    page = browser.get(f"/ui/decisions/{decision}")
    assert page.status_code == 200
    assert page.text.count('<tr id="receipt-') == 1
    assert '<td data-label="provenance"><a href="/ui/episodes/e2">e2</a></td>' in page.text
    assert "2026-06-30" not in page.text  # content-free: the value read is not there
    memory = {"type": "semantic", "subject": "mira", "attribute": "passport_deadline"}
    api = browser.post(
        "/v1/health/classify",
        json={
            "expectations": [
                {"decision_id": decision, "memory": memory, "task_outcome": "verified"}
            ]
        },
        headers=mira.headers(),
    )
    [expected] = api.json()["verdicts"]
    judged = browser.get(f"/ui/decisions/{decision}", params={**memory, "task_outcome": "verified"})
    assert judged.status_code == 200
    assert f"<dt>verdict</dt><dd><strong>{expected['verdict']}</strong></dd>" in judged.text
    assert f"<dt>layer</dt><dd>{expected['layer']}</dd>" in judged.text
    state = expected["operating_state"].replace("_", " ")
    assert f"<dt>operating state</dt><dd>{state}</dd>" in judged.text
    assert f'href="#receipt-{expected["receipt_id"]}"' in judged.text


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/ui/decisions?decision_id=nope", 422, "&#39;nope&#39; is not a decision id"),
        ("/ui/decisions/nope", 422, "decision_id must be a UUID"),
        (f"/ui/decisions/{uuid4()}", 404, "no decision"),
        ("/ui/decisions/{decision}?type=semantic&subject=mira", 422, "attribute: Field required"),
        ("/ui/decisions/{decision}?type=working&thread=t&version=x", 422, "version:"),
        ("/ui/decisions/{decision}?type=gossip", 422, "Check the memory asked about"),
    ],
)
def test_a_bad_decision_or_memory_is_a_page_saying_so(
    browser: Client, mira: Key, decision: str, *, path: str, status: int, message: str
) -> None:
    assert sign_in(browser, mira.api_key).status_code == 303
    answer = browser.get(path.replace("{decision}", decision))
    assert answer.status_code == status, answer.text
    assert message in answer.text


def test_another_tenants_subjects_episodes_and_decisions_are_not_found(
    browser: Client, mira: Key, decision: str
) -> None:
    other = make_key(browser, "ui-other")
    assert sign_in(browser, other.api_key).status_code == 303
    for path in ("/ui/subjects/mira", "/ui/episodes/e1", f"/ui/decisions/{decision}"):
        assert browser.get(path).status_code == 404, path
    assert rows(browser.get("/ui/subjects").text) == []
    assert rows(browser.get("/ui/subjects?match=okafor").text) == []
