"""Tenant isolation over HTTP: a key reads, lists, counts, searches and changes its tenant only.

Tenants A and B hold the same shape of memory under the same names (attributes, subject
``mira``, episodes ``ep-1`` to ``ep-3``, a conflict each) with different values, and each has
a subject, an episode and an attribute of its own. Every call below is made with A's key: a
name only B holds must answer exactly as a name nobody holds, and B's holdings, read with
B's key, must not move.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from psycopg_pool import ConnectionPool

from tests.conftest import ApiTenant
from tests.http_helpers import (
    ADMIN,
    READ_AT,
    SEEDED_AT,
    Client,
    Seeded,
    answer,
    assert_problem,
    candidate,
    holdings,
    make_tenant,
    seed,
    tenant_rows,
)

A_VALUES = {
    "city": "Lisbon",
    "deadline": "2026-07-15",
    "rival_deadline": "2026-06-30",
    "words": "harbour lighthouse",
}
B_VALUES = {
    "city": "Nairobi",
    "deadline": "2031-08-01",
    "rival_deadline": "2031-09-09",
    "words": "zanzibar quokka",
}
B_WORDS = ("Nairobi", "zanzibar", "quokka", "2031-", "only-b", "ep-b-only", "b_note")
"""Text that only B's data holds: none of it may reach an answer to A."""

TIMES = "valid_at=2026-04-01T00:00:00Z&known_at=2026-12-01T00:00:00Z"
"""A read as known after ``SEEDED_AT`` (and before ``READ_AT``), whatever the date today."""
WRITE_AT = {"X-SGAM-Now": "2026-06-01T00:00:00Z"}
"""The system time of the tests' own writes after seeding: after ``SEEDED_AT`` and before
``READ_AT``, so that ``holdings`` read at ``READ_AT`` sees what they did on any date."""
assert SEEDED_AT["X-SGAM-Now"] < WRITE_AT["X-SGAM-Now"] < READ_AT["X-SGAM-Now"]


@dataclass(frozen=True)
class Pair:
    """Two tenants holding the same names with different values."""

    a: Seeded
    b: Seeded

    def b_markers(self) -> list[str]:
        """Everything of B's that A must never see: its words and its ids."""
        return [*B_WORDS, *self.b.fact_ids.values(), self.b.conflict_id]


def _seed_pair(http: Client) -> Pair:
    a = seed(
        http,
        make_tenant(http, "iso-a"),
        **A_VALUES,
        own_subject="only-a",
        own_episode="ep-a-only",
        own_attribute="a_note",
    )
    b = seed(
        http,
        make_tenant(http, "iso-b"),
        **B_VALUES,
        own_subject="only-b",
        own_episode="ep-b-only",
        own_attribute="b_note",
    )
    return Pair(a, b)


@pytest.fixture(scope="module")
def pair(http: Client) -> Pair:
    """Tenants A and B, seeded alike, for the tests that only read."""
    return _seed_pair(http)


@pytest.fixture
def fresh_pair(http: Client) -> Pair:
    """Tenants A and B of the test's own, for the tests that write."""
    return _seed_pair(http)


def state(http: Client, pool: ConnectionPool, seeded: Seeded) -> tuple[Any, Any]:
    """What the tenant's own key reads of its holdings, and every row the database holds."""
    return holdings(http, seeded), tenant_rows(pool, seeded.tenant.name)


def assert_nothing_of_b(pair: Pair, response: httpx.Response) -> None:
    """No word or id of B's appears anywhere in the response."""
    leaked = [marker for marker in pair.b_markers() if marker in response.text]
    assert leaked == [], (leaked, response.text)


def as_if_nobody(
    b_response: httpx.Response, nobody_response: httpx.Response, names: dict[str, str]
) -> None:
    """The answer about B's names is the answer about unheld names, the names swapped back."""
    expected = nobody_response.text
    for b_name, nobody_name in names.items():
        expected = expected.replace(nobody_name, b_name)
    assert b_response.status_code == nobody_response.status_code, (
        b_response.text,
        nobody_response.text,
    )
    assert b_response.headers["content-type"] == nobody_response.headers["content-type"]
    assert b_response.text == expected


# -- reads of names only B holds -------------------------------------------------------------
# An attribute nobody holds is c_note: an undeclared name's answer names A's own closest
# declared names (a_note), and c_note is as close to them as B's b_note is.


@pytest.mark.parametrize(
    ("path", "b_name", "nobody_name", "status"),
    [
        pytest.param("/v1/facts/{}/home_city", "only-b", "nobody", 404, id="fact-subject"),
        pytest.param("/v1/facts/only-b/{}", "b_note", "c_note", 404, id="fact-attribute"),
        pytest.param(
            "/v1/facts/{}/home_city?" + TIMES, "only-b", "nobody", 404, id="fact-at-times"
        ),
        pytest.param("/v1/facts/{}/home_city/history", "only-b", "nobody", 200, id="history"),
        pytest.param("/v1/facts/only-b/{}/history", "b_note", "c_note", 404, id="history-attr"),
        pytest.param("/v1/subjects/{}/profile?" + TIMES, "only-b", "nobody", 200, id="profile"),
        pytest.param("/v1/subjects/{}/export", "only-b", "nobody", 404, id="export"),
        pytest.param("/v1/episodes/{}", "ep-b-only", "ep-nobody", 404, id="episode"),
        pytest.param(
            "/v1/conflicts?status=all&subject={}", "only-b", "nobody", 200, id="conflicts-subject"
        ),
        pytest.param(
            "/v1/conflicts?status=all&attribute={}",
            "b_note",
            "c_note",
            200,
            id="conflicts-attribute",
        ),
    ],
)
def test_a_read_of_a_name_only_b_holds_answers_as_for_a_name_nobody_holds(
    http: Client, pair: Pair, *, path: str, b_name: str, nobody_name: str, status: int
) -> None:
    headers = {**pair.a.headers, **READ_AT}
    b_response = http.get(path.format(b_name), headers=headers)
    nobody_response = http.get(path.format(nobody_name), headers=headers)

    as_if_nobody(b_response, nobody_response, {b_name: nobody_name})
    assert b_response.status_code == status
    if status == 404:
        assert_problem(b_response, 404, "not_found")
    else:
        body = b_response.json()
        assert body == [] or body.get("facts") == [] or body.get("conflicts") == [], body
    # Same for B itself: the name is B's, so B's key finds it.
    assert http.get(path.format(b_name), headers=pair.b.headers).status_code == 200


# -- writes aimed at names only B holds ------------------------------------------------------


@dataclass(frozen=True)
class Aimed:
    """A write with A's key at something of B's, and the same write at something unheld."""

    method: str
    path: str
    body: dict[str, Any] | None
    b_name: Callable[[Seeded], str]
    nobody_name: str
    status: int
    code: str | None = None
    normalize: tuple[str, ...] = ()
    """Fields that differ between any two calls (a new tombstone's id)."""


UNHELD_UUID = "00000000-0000-4000-8000-000000000000"

AIMED = {
    "updates-to-b-episode": Aimed(
        "POST",
        "/v1/episodes/{}/updates",
        {"candidates": [candidate("mira", "home_city", "Porto")]},
        lambda b: "ep-b-only",
        "ep-nobody",
        404,
        "not_found",
    ),
    "erase-b-episode": Aimed(
        "DELETE", "/v1/episodes/{}", None, lambda b: "ep-b-only", "ep-nobody", 404, "not_found"
    ),
    "resolve-b-conflict": Aimed(
        "POST",
        "/v1/conflicts/{}/resolve",
        {"choose": "challenger"},
        lambda b: b.conflict_id,
        UNHELD_UUID,
        404,
        "not_found",
    ),
    "retract-b-fact-by-id": Aimed(
        "POST",
        "/v1/facts/only-b/home_city/retract",
        {"fact_id": "{}"},
        lambda b: b.fact_ids["only-b.home_city"],
        UNHELD_UUID,
        404,
        "not_found",
    ),
    "retract-b-fact-by-start": Aimed(
        "POST",
        "/v1/facts/{}/home_city/retract",
        {"valid_from": "2026-03-02T09:00:00Z"},
        lambda b: "only-b",
        "nobody",
        404,
        "not_found",
    ),
    "retract-shared-key-with-b-fact-id": Aimed(
        "POST",
        "/v1/facts/mira/home_city/retract",
        {"fact_id": "{}"},
        lambda b: b.fact_ids["mira.home_city"],
        UNHELD_UUID,
        404,
        "not_found",
    ),
    "expire-citing-b-episode": Aimed(
        "POST",
        "/v1/facts/only-b/home_city/expire",
        {"at": "2026-05-01T00:00:00Z", "source_episode_id": "{}"},
        lambda b: "ep-b-only",
        "ep-nobody",
        404,
        "not_found",
    ),
    "expire-b-attribute": Aimed(
        "POST",
        "/v1/facts/only-b/{}/expire",
        {"at": "2026-05-01T00:00:00Z", "source_episode_id": "ep-a-only"},
        lambda b: "b_note",
        "c_note",
        404,
        "not_found",
    ),
    # A's own attribute and episode on a subject only B holds: A ends nothing, as for nobody.
    "expire-b-subject": Aimed(
        "POST",
        "/v1/facts/{}/home_city/expire",
        {"at": "2026-05-01T00:00:00Z", "source_episode_id": "ep-a-only"},
        lambda b: "only-b",
        "nobody",
        200,
        normalize=("expiry_id",),
    ),
    # Erasure of a subject with nothing held is 404 and writes no tombstone (see test_erasure):
    # the same for B's subject as for nobody's, and B keeps everything.
    "erase-b-subject": Aimed(
        "DELETE",
        "/v1/subjects/{}",
        None,
        lambda b: "only-b",
        "nobody",
        404,
        "not_found",
    ),
}


def _aim(http: Client, headers: dict[str, str], aimed: Aimed, name: str) -> httpx.Response:
    path = aimed.path.format(name) if "{}" in aimed.path else aimed.path
    body = (
        {k: (v.format(name) if v == "{}" else v) for k, v in aimed.body.items()}
        if aimed.body is not None
        else None
    )
    return http.request(aimed.method, path, json=body, headers=headers)


def _normalized(response: httpx.Response, fields: tuple[str, ...]) -> httpx.Response:
    """The response with the values of ``fields`` (new ids, counts) blanked out."""
    text = response.text
    for field in fields:
        text = re.sub(rf'"{field}":("[0-9a-f-]+"|[0-9]+)', f'"{field}":"…"', text)
    return httpx.Response(response.status_code, headers=response.headers, text=text)


@pytest.mark.parametrize("name", list(AIMED))
def test_a_write_aimed_at_bs_data_finds_nothing_and_b_keeps_everything(
    http: Client, pool: ConnectionPool, fresh_pair: Pair, name: str
) -> None:
    aimed = AIMED[name]
    b_name = aimed.b_name(fresh_pair.b)
    before = state(http, pool, fresh_pair.b)

    headers = {**fresh_pair.a.headers, **WRITE_AT}
    b_response = _aim(http, headers, aimed, b_name)
    nobody_response = _aim(http, headers, aimed, aimed.nobody_name)

    assert state(http, pool, fresh_pair.b) == before
    as_if_nobody(
        _normalized(b_response, aimed.normalize),
        _normalized(nobody_response, aimed.normalize),
        {b_name: aimed.nobody_name},
    )
    if aimed.code is not None:
        assert_problem(b_response, aimed.status, aimed.code)
    else:
        assert b_response.status_code == aimed.status, b_response.text
    sent = b_response.request.url.path + b_response.request.content.decode()
    leaked = [m for m in fresh_pair.b_markers() if m not in sent and m in b_response.text]
    assert leaked == [], b_response.text


def test_erasing_shared_names_with_as_key_erases_only_as(
    http: Client, pool: ConnectionPool, fresh_pair: Pair
) -> None:
    before = state(http, pool, fresh_pair.b)
    headers = {**fresh_pair.a.headers, **WRITE_AT}

    episode = http.delete("/v1/episodes/ep-3", headers=headers)
    subject = http.delete("/v1/subjects/mira", headers=headers)

    assert episode.status_code == 200, episode.text
    assert episode.json()["episodes_deleted"] == 1
    assert subject.status_code == 200, subject.text
    assert subject.json()["fact_versions_deleted"] >= 2
    assert http.get("/v1/subjects/mira/export", headers=fresh_pair.a.headers).status_code == 404
    assert http.get("/v1/episodes/ep-3", headers=fresh_pair.a.headers).status_code == 404
    assert state(http, pool, fresh_pair.b) == before


def test_resolving_as_own_conflict_leaves_bs_open(
    http: Client, pool: ConnectionPool, fresh_pair: Pair
) -> None:
    before = state(http, pool, fresh_pair.b)

    resolved = http.post(
        f"/v1/conflicts/{fresh_pair.a.conflict_id}/resolve",
        json={"choose": "challenger"},
        headers={**fresh_pair.a.headers, **WRITE_AT},
    )

    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["fact"]["value"] == A_VALUES["rival_deadline"]
    assert state(http, pool, fresh_pair.b) == before
    still_open = http.get("/v1/conflicts", headers=fresh_pair.b.headers).json()
    assert [c["conflict_id"] for c in still_open["conflicts"]] == [fresh_pair.b.conflict_id]


# -- lists, searches and shared names ---------------------------------------------------------


@pytest.mark.parametrize("side", ["a", "b"])
def test_shared_names_answer_with_the_callers_own_values(
    http: Client, pair: Pair, side: str
) -> None:
    own = pair.a if side == "a" else pair.b
    values, mine = (A_VALUES, "only-a") if side == "a" else (B_VALUES, "only-b")
    note = "a_note" if side == "a" else "b_note"
    headers = {**own.headers, **READ_AT}

    def get(path: str) -> Any:
        response = http.get(path, headers=headers)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    assert get("/v1/facts/mira/home_city")["value"] == values["city"]
    assert [f["value"] for f in get("/v1/facts/mira/passport_deadline/history")] == [
        values["deadline"]
    ]
    assert {f["attribute"]: f["value"] for f in get("/v1/subjects/mira/profile")["facts"]} == {
        "home_city": values["city"],
        "passport_deadline": values["deadline"],
    }
    assert get("/v1/episodes/ep-1")["text"] == f"Mira moved to {values['city']}. {values['words']}"
    exported = get("/v1/subjects/mira/export")
    assert [e["id"] for e in exported["episodes"]] == ["ep-1", "ep-2", "ep-3"]
    assert {e["text"].rsplit(". ", 1)[-1] for e in exported["episodes"]} == {values["words"]}
    assert [c["conflict_id"] for c in exported["conflicts"]] == [own.conflict_id]
    assert sorted(v["fact_id"] for v in exported["versions"]) == sorted(
        own.fact_ids[k] for k in ("mira.home_city", "mira.passport_deadline")
    )
    conflicts = get("/v1/conflicts?status=all")
    assert [(c["conflict_id"], c["challenger"]["value"]) for c in conflicts["conflicts"]] == [
        (own.conflict_id, values["rival_deadline"])
    ]
    assert get("/v1/subjects") == {"subjects": ["mira", mine], "next_cursor": None}
    first = get("/v1/subjects?limit=1")
    assert first["subjects"] == ["mira"]
    assert get(f"/v1/subjects?limit=1&cursor={first['next_cursor']}") == {
        "subjects": [mine],
        "next_cursor": None,
    }
    names = sorted(["home_city", note, "passport_deadline"])
    assert [a["attribute"] for a in get("/v1/attributes")["attributes"]] == names
    schema = get("/v1/memory-update-schema")
    assert schema["properties"]["attribute"]["enum"] == names


def test_evidence_search_with_bs_words_finds_only_as_episodes(http: Client, pair: Pair) -> None:
    found = http.post(
        "/v1/evidence/search",
        json={"query": "zanzibar quokka Nairobi", "k": 50},
        headers=pair.a.headers,
    )

    assert found.status_code == 200, found.text
    body = found.json()
    assert sorted(r["episode_id"] for r in body["results"]) == sorted(pair.a.episodes)
    assert body["search"]["scope_size"] == len(pair.a.episodes)
    assert all(r["snippet"].endswith(A_VALUES["words"]) for r in body["results"]), body
    assert [m for m in pair.b_markers() if m in str(body["results"])] == []


def test_evidence_search_on_a_subject_only_b_holds_answers_as_for_nobody(
    http: Client, pair: Pair
) -> None:
    def search(subject: str) -> httpx.Response:
        return http.post(
            "/v1/evidence/search",
            json={"query": "where does this person live", "subject": subject},
            headers=pair.a.headers,
        )

    b_response, nobody_response = search("only-b"), search("nobody")

    as_if_nobody(b_response, nobody_response, {"only-b": "nobody"})
    assert b_response.json()["results"] == []


def test_context_carries_only_as_facts_and_episodes(http: Client, pair: Pair) -> None:
    response = http.post(
        "/v1/context",
        json={
            "question": "Where does mira live and when is her passport deadline?",
            "subject": "mira",
            "attributes": ["home_city", "passport_deadline"],
            "evidence_k": 20,
        },
        headers=pair.a.headers,
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert {(f["attribute"], f["value"]) for f in body["facts"]} == {
        ("home_city", A_VALUES["city"]),
        ("passport_deadline", A_VALUES["deadline"]),
    }
    assert {f["fact_id"] for f in body["facts"]} <= set(pair.a.fact_ids.values())
    assert A_VALUES["city"] in body["block"]
    assert_nothing_of_b(pair, response)


def test_context_about_bs_subject_and_attribute_answers_as_for_nobody(
    http: Client, pair: Pair
) -> None:
    def ask(subject: str, attribute: str) -> httpx.Response:
        return http.post(
            "/v1/context",
            json={
                "question": f"What is the {attribute} of {subject}?",
                "subject": subject,
                "attributes": [attribute, "home_city"],
                "valid_at": "2026-04-01T00:00:00Z",
                "known_at": "2026-12-01T00:00:00Z",
            },
            headers=pair.a.headers,
        )

    b_response, nobody_response = ask("only-b", "b_note"), ask("nobody", "c_note")

    assert b_response.status_code == 200, b_response.text
    assert b_response.json()["facts"] == []
    # The token count differs with the names' lengths, nothing else may.
    as_if_nobody(
        _normalized(b_response, ("decision_id", "tokens")),
        _normalized(nobody_response, ("decision_id", "tokens")),
        {"only-b": "nobody", "b_note": "c_note"},
    )


def test_no_answer_to_a_on_shared_names_carries_anything_of_b(http: Client, pair: Pair) -> None:
    headers = {**pair.a.headers, **READ_AT}
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("GET", "/v1/facts/mira/home_city", None),
        ("GET", "/v1/facts/mira/passport_deadline", None),
        ("GET", "/v1/facts/mira/passport_deadline/history", None),
        ("GET", "/v1/subjects/mira/profile", None),
        ("GET", "/v1/subjects/mira/export", None),
        ("GET", "/v1/subjects", None),
        ("GET", "/v1/conflicts?status=all", None),
        ("GET", "/v1/attributes", None),
        ("GET", "/v1/memory-update-schema", None),
        *[("GET", f"/v1/episodes/{e}", None) for e in pair.a.episodes],
        ("POST", "/v1/evidence/search", {"query": "where does mira live", "k": 50}),
        ("POST", "/v1/evidence/search", {"query": "a note", "subject": "mira", "k": 50}),
        ("POST", "/v1/context", {"question": "What do we know about mira?", "evidence_k": 20}),
    ]
    for method, path, body in calls:
        response = http.request(method, path, json=body, headers=headers)
        assert response.status_code == 200, (path, response.text)
        assert_nothing_of_b(pair, response)


def test_the_tenant_never_comes_from_a_body(
    http: Client, pool: ConnectionPool, fresh_pair: Pair
) -> None:
    before = state(http, pool, fresh_pair.b)
    b_name = fresh_pair.b.tenant.name
    headers = {**fresh_pair.a.headers, **WRITE_AT}

    episode = http.post(
        "/v1/episodes",
        json={"occurred_at": "2026-03-05T00:00:00Z", "text": "x", "tenant_id": b_name},
        headers=headers,
    )
    results = http.post(
        "/v1/episodes/ep-1/updates",
        json={"candidates": [{**candidate("mira", "home_city", "Porto"), "tenant_id": b_name}]},
        headers=headers,
    )

    assert_problem(episode, 422, "invalid", field="tenant_id")
    assert results.status_code == 200, results.text
    [result] = results.json()["results"]
    assert (result["status"], result["field"]) == ("invalid", "tenant_id")
    assert state(http, pool, fresh_pair.b) == before


# -- credentials -----------------------------------------------------------------------------

TENANT_ROUTES: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    "declare-attribute": ("PUT", "/v1/attributes/new_attr", {"value_type": "string"}),
    "list-attributes": ("GET", "/v1/attributes", None),
    "memory-update-schema": ("GET", "/v1/memory-update-schema", None),
    "record-episode": (
        "POST",
        "/v1/episodes",
        {"id": "ep-new", "occurred_at": "2026-03-05T00:00:00Z", "text": "new"},
    ),
    "record-batch": (
        "POST",
        "/v1/episodes/batch",
        {"episodes": [{"id": "ep-new", "occurred_at": "2026-03-05T00:00:00Z", "text": "new"}]},
    ),
    "read-episode": ("GET", "/v1/episodes/ep-1", None),
    "apply-updates": (
        "POST",
        "/v1/episodes/ep-1/updates",
        {"candidates": [candidate("mira", "home_city", "Porto")]},
    ),
    "erase-episode": ("DELETE", "/v1/episodes/ep-3", None),
    "read-fact": ("GET", "/v1/facts/mira/home_city", None),
    "read-history": ("GET", "/v1/facts/mira/home_city/history", None),
    "expire": (
        "POST",
        "/v1/facts/mira/home_city/expire",
        {"at": "2026-05-01T00:00:00Z", "source_episode_id": "ep-3"},
    ),
    "retract": (
        "POST",
        "/v1/facts/mira/home_city/retract",
        {"valid_from": "2026-03-01T09:00:00Z"},
    ),
    "list-subjects": ("GET", "/v1/subjects", None),
    "read-profile": ("GET", "/v1/subjects/mira/profile", None),
    "export-subject": ("GET", "/v1/subjects/mira/export", None),
    "erase-subject": ("DELETE", "/v1/subjects/mira", None),
    "list-conflicts": ("GET", "/v1/conflicts", None),
    "resolve-conflict": ("POST", "/v1/conflicts/{conflict}/resolve", {"choose": "challenger"}),
    "evidence-search": ("POST", "/v1/evidence/search", {"query": "mira"}),
    "context": ("POST", "/v1/context", {"question": "Where does mira live?"}),
}
"""Every tenant route with a body that would succeed (and change state, for the writes)."""

ADMIN_ROUTES: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    "create-tenant": ("POST", "/v1/admin/tenants", {"tenant_id": "made-by-{who}"}),
    "create-key": ("POST", "/v1/admin/tenants/{tenant}/keys", None),
    "revoke-key": ("DELETE", "/v1/admin/keys/{key_id}", None),
}


@pytest.fixture(scope="module")
def victim(http: Client) -> Seeded:
    """A tenant that calls without valid credentials aim at (shared by the module's tests)."""
    return seed(
        http,
        make_tenant(http, "iso-victim"),
        **A_VALUES,
        own_subject="only-v",
        own_episode="ep-v-only",
        own_attribute="v_note",
    )


def _call(
    http: Client, route: tuple[str, str, dict[str, Any] | None], seeded: Seeded, **headers: str
) -> httpx.Response:
    method, path, body = route
    path = path.format(conflict=seeded.conflict_id)
    return http.request(method, path, json=body, headers=headers)


def _other_key_wrong_secret(tenant: ApiTenant) -> str:
    token = tenant.headers["Authorization"].removeprefix("Bearer ")
    head, _, secret = token.rpartition("_")
    flipped = ("A" if secret[0] != "A" else "B") + secret[1:]
    return f"Bearer {head}_{flipped}"


CREDENTIALS: dict[str, Callable[[Seeded], dict[str, str]]] = {
    "missing": lambda v: {},
    "not-bearer": lambda v: {"Authorization": "Token abc"},
    "basic": lambda v: {"Authorization": "Basic dXNlcjpwYXNz"},
    "bearer-without-token": lambda v: {"Authorization": "Bearer "},
    "bare-token": lambda v: {"Authorization": v.headers["Authorization"].removeprefix("Bearer ")},
    "unknown-key": lambda v: {"Authorization": f"Bearer sgam_{uuid.uuid4().hex}_{'x' * 43}"},
    "garbage-key": lambda v: {"Authorization": "Bearer not-a-key"},
    "right-id-wrong-secret": lambda v: {"Authorization": _other_key_wrong_secret(v.tenant)},
    "admin-token": lambda v: ADMIN,
}


@pytest.mark.parametrize("route", list(TENANT_ROUTES))
def test_a_call_without_a_valid_api_key_is_401_and_changes_nothing(
    http: Client, pool: ConnectionPool, victim: Seeded, route: str
) -> None:
    before = state(http, pool, victim)

    for credential, headers in CREDENTIALS.items():
        response = _call(http, TENANT_ROUTES[route], victim, **headers(victim))

        body = assert_problem(response, 401, "unauthorized", field="Authorization")
        assert response.headers["www-authenticate"].startswith("Bearer"), credential
        assert body["detail"] in {
            "send Authorization: Bearer <api key>",
            "the Authorization header must be 'Bearer <token>'",
            "unknown or revoked API key",
        }, credential

    assert state(http, pool, victim) == before


def test_a_revoked_key_is_401_like_an_unknown_one_and_the_tenants_other_key_still_works(
    http: Client,
) -> None:
    tenant = make_tenant(http, "iso-revoked")
    spare = http.post(f"/v1/admin/tenants/{tenant.name}/keys", headers=ADMIN).json()
    assert http.get("/v1/subjects", headers=tenant.headers).status_code == 200

    revoked = http.delete(f"/v1/admin/keys/{tenant.key_id}", headers=ADMIN)

    assert revoked.status_code == 200, revoked.text
    assert (revoked.json()["status"], revoked.json()["key_id"]) == ("revoked", tenant.key_id)
    unknown = http.get(
        "/v1/subjects", headers={"Authorization": f"Bearer sgam_{uuid.uuid4().hex}_{'x' * 43}"}
    )
    for method, path, body in TENANT_ROUTES.values():
        response = http.request(
            method, path.format(conflict=UNHELD_UUID), json=body, headers=tenant.headers
        )
        assert_problem(response, 401, "unauthorized", field="Authorization")
        assert response.json() == unknown.json()
    spare_headers = {"Authorization": f"Bearer {spare['api_key']}"}
    assert http.get("/v1/subjects", headers=spare_headers).status_code == 200
    again = http.delete(f"/v1/admin/keys/{tenant.key_id}", headers=ADMIN)
    assert again.json()["status"] == "unchanged"
    assert http.get("/v1/subjects", headers=tenant.headers).status_code == 401


@pytest.mark.parametrize(
    "credential",
    ["api-key", "missing", "wrong-token", "not-bearer"],
)
@pytest.mark.parametrize("route", list(ADMIN_ROUTES))
def test_admin_routes_refuse_anything_but_the_admin_token_and_change_nothing(
    http: Client, victim: Seeded, route: str, credential: str
) -> None:
    headers = {
        "api-key": victim.headers,
        "missing": {},
        "wrong-token": {"Authorization": "Bearer admin-token-for-tests-0123456789x"},
        "not-bearer": {"Authorization": ADMIN["Authorization"].replace("Bearer", "Token")},
    }[credential]
    method, path, body = ADMIN_ROUTES[route]
    made = f"made-by-{credential}-{route}"
    path = path.format(tenant=victim.tenant.name, key_id=victim.tenant.key_id)
    if body is not None:
        body = {"tenant_id": made}

    response = http.request(method, path, json=body, headers=headers)

    assert_problem(response, 401, "unauthorized", field="Authorization")
    # Nothing was made or revoked: the tenant is still free to create, the key still works.
    created = http.post("/v1/admin/tenants", json={"tenant_id": made}, headers=ADMIN)
    assert created.status_code == 201, created.text
    assert http.get("/v1/subjects", headers=victim.headers).status_code == 200


def test_the_admin_token_is_not_an_api_key_and_an_api_key_is_not_the_admin_token(
    http: Client, victim: Seeded
) -> None:
    as_tenant = http.get("/v1/subjects", headers=ADMIN)
    as_admin = http.post(f"/v1/admin/tenants/{victim.tenant.name}/keys", headers=victim.headers)

    assert_problem(as_tenant, 401, "unauthorized", field="Authorization")
    assert_problem(as_admin, 401, "unauthorized", field="Authorization")
    assert answer(as_admin)[1]["detail"] == "wrong admin token"
