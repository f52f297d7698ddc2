"""Every route of the HTTP contract, through the real app on the real database: happy paths.

The seed trace is replayed over HTTP, each line's ``now`` sent as ``X-SGAM-Now``, and every
response must equal the shipped replay result once ids are mapped: the replay counts ids
(``...0001``, ``...0002``) where the server draws random ones, so each counted id must stand
for one server id throughout. Then the routes the seed does not reach, each with a tenant of
its own and the clock header pinning system time, so whole bodies can be compared. Batches,
expiry, retraction, conflicts and erasure, which every surface answers the same way, are
scenarios of tests/conformance/, run over HTTP too.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.replay.compare import differences
from tests.conftest import ADMIN_TOKEN, ApiTenant

Client = TestClient[Litestar]
Json = dict[str, Any]

TRACES = Path(__file__).resolve().parents[2] / "evals" / "traces"
SEED = TRACES / "seed_mira.jsonl"
EXPECTED = TRACES / "seed_mira.expected.jsonl"

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CLOCK = "X-SGAM-Now"
COUNTED_ID = re.compile(r"^00000000-0000-0000-0000-[0-9]{12}$")
API_KEY = re.compile(r"^sgam_([0-9a-f]{32})_\S+$")
REPLAY_FIELDS = frozenset({"op", "tenant", "now"})

_tenant_numbers = itertools.count(1)


# -- helpers --------------------------------------------------------------------------------


def new_tenant(http: Client) -> ApiTenant:
    """A fresh tenant with one API key, made through the admin API."""
    name = f"api-{next(_tenant_numbers)}"
    created = http.post("/v1/admin/tenants", json={"tenant_id": name}, headers=ADMIN)
    assert created.status_code == 201, created.text
    issued = http.post(f"/v1/admin/tenants/{name}/keys", headers=ADMIN)
    assert issued.status_code == 201, issued.text
    body = issued.json()
    return ApiTenant(name, body["key_id"], {"Authorization": f"Bearer {body['api_key']}"})


def at(tenant: ApiTenant, now: str) -> dict[str, str]:
    """The tenant's headers with system time set to ``now``."""
    return {**tenant.headers, CLOCK: now}


def ok(response: httpx.Response, status: int = 200) -> Any:
    """The JSON body of a successful response."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    return response.json()


def problem(response: httpx.Response, status: int, code: str) -> Json:
    """The problem+json body of a failed response with ``status`` and ``code``."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/problem+json")
    body: Json = response.json()
    assert (body["status"], body["code"], body["type"]) == (
        status,
        code,
        f"urn:sgam:problem:{code}",
    ), body
    return body


def declare(http: Client, tenant: ApiTenant, now: str, attribute: str, **declaration: Any) -> Json:
    """Declare an attribute; the stored declaration."""
    body: Json = ok(
        http.put(f"/v1/attributes/{attribute}", json=declaration, headers=at(tenant, now))
    )
    return body


def record(http: Client, tenant: ApiTenant, now: str, **episode: Any) -> Json:
    """Record one episode (with any ``updates``); the recorded episode and its results."""
    body: Json = ok(http.post("/v1/episodes", json=episode, headers=at(tenant, now)))
    return body


def candidate(subject: str, attribute: str, value: str, valid_from: str, evidence: str) -> Json:
    """A strong MemoryUpdate asserting ``value`` from ``valid_from``."""
    return {
        "evidence": evidence,
        "subject": subject,
        "attribute": attribute,
        "current_value": None,
        "change": "update",
        "value": value,
        "valid_from": valid_from,
    }


def written(recorded: Json) -> Json:
    """The fact written by the one candidate sent with an episode."""
    [result] = recorded["results"]
    assert result["status"] == "written", result
    fact: Json = result["fact"]
    return fact


def uuid_text(value: Any) -> str:
    """``value`` if it is a UUID's canonical text."""
    assert isinstance(value, str), value
    assert str(UUID(value)) == value, value
    return value


def fact(**fields: Any) -> Json:
    """A fact as JSON: the defaults of a plain strong fact from a message, then ``fields``."""
    return {
        "retired_at": None,
        "supersedes": None,
        "ended_by": None,
        "ended_by_kind": None,
        "source_kind": "message",
        "evidence_verified": True,
        "schema_version": 1,
        "disputed": False,
        "challengers": [],
        "label": fields.get("status", "current"),
        **fields,
    }


def episode_body(**fields: Any) -> Json:
    """An episode as JSON: the defaults of a plain message, then ``fields``."""
    return {
        "kind": "message",
        "session_id": None,
        "subjects": [],
        "retention_class": "standard",
        "metadata": {},
        "erased_at": None,
        "purged_at": None,
        "embedding_truncated": False,
        "extraction": None,
        **fields,
    }


class IdMap:
    """Counted replay ids mapped to the server's random ids, one for one."""

    def __init__(self) -> None:
        self.forward: dict[str, str] = {}
        self.backward: dict[str, str] = {}

    def learn(self, expected: Any, actual: Any) -> None:
        """Pair the counted ids of ``expected`` with the ids at the same place in ``actual``."""
        if isinstance(expected, dict) and isinstance(actual, dict):
            for key in expected.keys() & actual.keys():
                self.learn(expected[key], actual[key])
        elif isinstance(expected, list) and isinstance(actual, list):
            for item, other in zip(expected, actual, strict=False):
                self.learn(item, other)
        elif isinstance(expected, str) and COUNTED_ID.match(expected) and isinstance(actual, str):
            uuid_text(actual)
            self.forward.setdefault(expected, actual)
            owner = self.backward.setdefault(actual, expected)
            assert owner == expected, f"server id {actual} stands for {owner} and {expected}"

    def apply(self, expected: Any) -> Any:
        """``expected`` with every learned counted id replaced by its server id."""
        if isinstance(expected, dict):
            return {key: self.apply(value) for key, value in expected.items()}
        if isinstance(expected, list):
            return [self.apply(item) for item in expected]
        if isinstance(expected, str):
            return self.forward.get(expected, expected)
        return expected


# -- the seed trace over HTTP ---------------------------------------------------------------


def _fields(line: Json, *drop: str) -> Json:
    return {key: value for key, value in line.items() if key not in REPLAY_FIELDS | set(drop)}


def replay_line(http: Client, headers: dict[str, str], line: Json) -> Any:
    """One replay line as its HTTP call; the body the replay writes as ``result``."""
    op = line["op"]
    key = f"/v1/facts/{line.get('subject')}/{line.get('attribute')}"
    if op == "define":
        return ok(
            http.put(
                f"/v1/attributes/{line['attribute']}",
                json=_fields(line, "attribute"),
                headers=headers,
            )
        )
    if op == "episode":
        recorded = ok(http.post("/v1/episodes", json=_fields(line), headers=headers))
        assert recorded.pop("results") == [], recorded
        # Never sent for extraction: the replay's episode has no such fields.
        assert (recorded.pop("extraction"), recorded.pop("extracted")) == (None, []), recorded
        return recorded
    if op == "update":
        body = ok(
            http.post(
                f"/v1/episodes/{line['episode']}/updates",
                json={"candidates": [line["candidate"]]},
                headers=headers,
            )
        )
        [result] = body["results"]
        return result
    if op == "current":
        return ok(http.get(key, headers=headers))
    if op == "at":
        params = {name: line[name] for name in ("valid_at", "known_at") if line.get(name)}
        if "known_at" not in line and "valid_at" in params:
            params["at"] = params.pop("valid_at")  # the alias, checked against the same results
        return ok(http.get(key, params=params, headers=headers))
    if op == "history":
        versions = ok(http.get(f"{key}/history", headers=headers))
        return {"subject": line["subject"], "attribute": line["attribute"], "versions": versions}
    if op == "profile":
        return ok(http.get(f"/v1/subjects/{line['subject']}/profile", headers=headers))
    if op == "search":
        return ok(http.post("/v1/evidence/search", json=_fields(line), headers=headers))
    if op == "context":
        return ok(http.post("/v1/context", json=_fields(line), headers=headers))
    raise AssertionError(f"the seed has no {op} line")


@dataclass(frozen=True)
class Seeded:
    """The tenant the seed trace was replayed into, and the HTTP body of each of its lines."""

    tenant: ApiTenant
    results: list[Any]


@pytest.fixture(scope="module")
def seed(http: Client) -> Seeded:
    """The seed replayed over HTTP, each line sent with the clock it sets or keeps."""
    tenant = new_tenant(http)
    now: str | None = None
    results = []
    for text in SEED.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        now = line.get("now", now)
        assert now is not None, "the seed sets the clock on its first line"
        results.append(replay_line(http, at(tenant, now), line))
    return Seeded(tenant, results)


def test_the_seed_trace_over_http_answers_the_shipped_results(seed: Seeded) -> None:
    expected = [json.loads(text) for text in EXPECTED.read_text(encoding="utf-8").splitlines()]
    assert [line["line"] for line in expected] == list(range(1, len(seed.results) + 1))
    assert all(line["ok"] for line in expected)
    ids = IdMap()
    for line, actual in zip(expected, seed.results, strict=True):
        ids.learn(line["result"], actual)
        assert differences(actual, ids.apply(line["result"])) == [], f"line {line['line']}"
    # fact ids 1, 3 and 6, version ids 2, 4, 5 and 7, decision ids 8 and 9: all distinct
    assert len(ids.forward) == 9


def test_at_is_an_alias_of_valid_at(http: Client, seed: Seeded) -> None:
    headers = at(seed.tenant, "2026-06-05T12:00:00Z")
    key = "/v1/facts/mira/passport_deadline"
    for instant in ("2026-05-31T00:00:00Z", "2026-06-02T00:00:00Z", "2026-06-10T00:00:00Z"):
        by_alias = ok(http.get(key, params={"at": instant}, headers=headers))
        assert by_alias == ok(http.get(key, params={"valid_at": instant}, headers=headers))
    june_2 = ok(http.get(key, params={"at": "2026-06-02T00:00:00Z"}, headers=headers))
    assert (june_2["value"], june_2["source_episode_id"]) == ("2026-07-15", "e1")


def test_only_known_at_reads_what_was_believed_then_about_then(http: Client, seed: Seeded) -> None:
    headers = at(seed.tenant, "2026-06-05T12:00:00Z")
    key = "/v1/facts/mira/passport_deadline"
    believed = ok(http.get(key, params={"known_at": "2026-06-02T00:00:00Z"}, headers=headers))
    explicit = ok(
        http.get(
            key,
            params={"valid_at": "2026-06-02T00:00:00Z", "known_at": "2026-06-02T00:00:00Z"},
            headers=headers,
        )
    )
    assert believed == explicit
    assert (believed["value"], believed["valid_to"], believed["status"]) == (
        "2026-07-15",
        None,
        "retired",
    )
    # Before anything was recorded nothing was known.
    problem(
        http.get(key, params={"known_at": "2026-06-01T00:00:00Z"}, headers=headers),
        404,
        "not_found",
    )


def test_context_reads_the_period_the_body_names_as_known_at_its_known_at(
    http: Client, seed: Seeded
) -> None:
    headers = at(seed.tenant, "2026-06-06T00:00:00Z")
    body = {
        "question": "What was Mira's passport deadline?",
        "subject": "mira",
        "valid_from": "2026-06-02T00:00:00Z",
        "valid_to": "2026-06-04T00:00:00Z",
        "evidence_k": 0,
    }
    now = ok(http.post("/v1/context", json=body, headers=headers))
    assert now["block"].splitlines() == [
        "mira from 2026-06-02 to 2026-06-04:",
        "passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03; source e1)",
        "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)",
    ]
    assert [fact["source_episode_id"] for fact in now["facts"]] == ["e1", "e2"]
    plan = {key: now["plan"][key] for key in ("mode", "valid_from", "valid_to", "known_at")}
    assert plan == {
        "mode": "period",
        "valid_from": "2026-06-02T00:00:00Z",
        "valid_to": "2026-06-04T00:00:00Z",
        "known_at": "2026-06-06T00:00:00Z",
    }
    # Before the correction was recorded, the first deadline was believed open ended.
    then = ok(
        http.post("/v1/context", json={**body, "known_at": "2026-06-03T00:00:00Z"}, headers=headers)
    )
    assert then["block"].splitlines() == [
        "mira from 2026-06-02 to 2026-06-04, as known on 2026-06-03:",
        "passport_deadline: 2026-07-15 (from 2026-06-01; source e1)",
    ]
    assert (then["plan"]["mode"], then["plan"]["known_at"]) == ("period", "2026-06-03T00:00:00Z")


def test_profile_takes_valid_at_and_known_at(http: Client, seed: Seeded) -> None:
    headers = at(seed.tenant, "2026-06-05T12:00:00Z")
    key = "/v1/facts/mira/passport_deadline"
    params = {"valid_at": "2026-06-02T00:00:00Z", "known_at": "2026-06-03T00:00:00Z"}
    profile = ok(http.get("/v1/subjects/mira/profile", params=params, headers=headers))
    assert profile == {
        "subject": "mira",
        "valid_at": "2026-06-02T00:00:00Z",
        "known_at": "2026-06-03T00:00:00Z",
        "facts": [ok(http.get(key, params=params, headers=headers))],
    }
    by_alias = ok(
        http.get(
            "/v1/subjects/mira/profile",
            params={"at": params["valid_at"], "known_at": params["known_at"]},
            headers=headers,
        )
    )
    assert by_alias == profile


# -- episodes -------------------------------------------------------------------------------


def test_batch_records_every_episode_in_order_and_applies_each_ones_candidates(
    http: Client,
) -> None:
    tenant = new_tenant(http)
    now = "2026-04-01T12:00:00Z"
    declare(http, tenant, now, "home_city", value_type="string", description="Where one lives")
    move = candidate("ada", "home_city", "Porto", "2026-04-01T08:00:00Z", "Ada moved to Porto.")
    body = {
        "episodes": [
            {
                "id": "b1",
                "occurred_at": "2026-04-01T08:00:00Z",
                "text": "Ada moved to Porto.",
                "session_id": "s-1",
                "subjects": ["ada"],
                "metadata": {"channel": "chat"},
                "updates": [move, {**move, "attribute": "shoe_size"}],
            },
            {
                "id": "b2",
                "occurred_at": "2026-04-01T09:00:00Z",
                "text": "The weather was fine.",
                "kind": "event",
            },
        ]
    }
    recorded = ok(http.post("/v1/episodes/batch", json=body, headers=at(tenant, now)))
    [first, second] = recorded["episodes"]
    [porto, unknown] = first.pop("results")
    assert first.pop("extracted") == second.pop("extracted") == []
    assert first == episode_body(
        id="b1",
        occurred_at="2026-04-01T08:00:00Z",
        recorded_at=now,
        session_id="s-1",
        subjects=["ada"],
        text="Ada moved to Porto.",
        content_hash=first["content_hash"],
        metadata={"channel": "chat"},
    )
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", first["content_hash"])
    assert second == episode_body(
        id="b2",
        occurred_at="2026-04-01T09:00:00Z",
        recorded_at=now,
        kind="event",
        text="The weather was fine.",
        content_hash=second["content_hash"],
        results=[],
    )
    assert porto == {
        "index": 0,
        "status": "written",
        "reason": None,
        "field": None,
        "conflict_id": None,
        "supporting_episode_ids": None,
        "fact": fact(
            fact_id=uuid_text(porto["fact"]["fact_id"]),
            version_id=uuid_text(porto["fact"]["version_id"]),
            subject="ada",
            attribute="home_city",
            value="Porto",
            valid_from="2026-04-01T08:00:00Z",
            valid_to=None,
            recorded_at=now,
            source_episode_id="b1",
            evidence="Ada moved to Porto.",
            status="current",
        ),
    }
    assert (unknown["index"], unknown["status"], unknown["fact"]) == (1, "invalid", None)
    assert unknown["field"] == "attribute", unknown
    assert "shoe_size" in unknown["reason"], unknown
    # Citations resolve: each episode reads back as recorded.
    for episode in (first, second):
        episode.pop("results", None)
        assert ok(http.get(f"/v1/episodes/{episode['id']}", headers=tenant.headers)) == episode


def test_an_episodes_answer_shows_the_subjects_its_candidates_added(http: Client) -> None:
    tenant = new_tenant(http)
    now = "2026-04-01T12:00:00Z"
    declare(http, tenant, now, "home_city", value_type="string", description="Where one lives")
    ada = candidate("ada", "home_city", "Porto", "2026-04-01T08:00:00Z", "Ada moved to Porto.")
    refused = {**ada, "subject": "cyd", "attribute": "shoe_size"}  # invalid: adds no subject
    alone = {
        "id": "s1",
        "occurred_at": "2026-04-01T08:00:00Z",
        "text": "Ada moved to Porto.",
        "updates": [ada],
    }
    braga = {**ada, "value": "Braga", "valid_from": "2026-04-01T09:00:00Z", "evidence": "Braga"}
    named = {
        **alone,
        "id": "s2",
        "occurred_at": "2026-04-01T09:00:00Z",
        "text": "Ada moved to Braga, Bob says.",
        "subjects": ["bob"],
        "updates": [braga, refused],
    }
    answers = [
        ok(http.post("/v1/episodes", json=alone, headers=at(tenant, now))),
        *ok(http.post("/v1/episodes/batch", json={"episodes": [named]}, headers=at(tenant, now)))[
            "episodes"
        ],
    ]
    assert [[r["status"] for r in answer["results"]] for answer in answers] == [
        ["written"],
        ["written", "invalid"],
    ]
    assert [answer["subjects"] for answer in answers] == [["ada"], ["ada", "bob"]]
    for answer in answers:
        read = ok(http.get(f"/v1/episodes/{answer['id']}", headers=tenant.headers))
        assert read["subjects"] == answer["subjects"]


# -- attributes -----------------------------------------------------------------------------


def test_attributes_are_declared_listed_and_published_as_the_update_schema_enum(
    http: Client,
) -> None:
    tenant = new_tenant(http)
    now = "2026-04-01T12:00:00Z"
    tier = declare(
        http,
        tenant,
        now,
        "tier",
        value_type="enum",
        enum_values=["gold", "silver"],
        description="Support tier",
        aliases=["plan"],
        on_equal_start="source_precedence",
    )
    assert tier == {
        "attribute": "tier",
        "description": "Support tier",
        "value_type": "enum",
        "enum_values": ["gold", "silver"],
        "aliases": ["plan"],
        "memory_type": "semantic",
        "on_equal_start": "source_precedence",
        "source_ranks": None,
        "retention_class": "standard",
        "weak_quorum": 2,
        "weak_window_days": 30,
        "on_unverified_evidence": None,
        "schema_version": 1,
        "created_at": now,
        "updated_at": now,
    }
    later = "2026-04-02T12:00:00Z"
    city = declare(http, tenant, now, "home_city", value_type="string", description="City")
    redeclared = declare(
        http,
        tenant,
        later,
        "tier",
        value_type="enum",
        enum_values=["gold", "silver", "bronze"],
        description="Support tier",
        aliases=["plan"],
        on_equal_start="source_precedence",
    )
    assert redeclared == {
        **tier,
        "enum_values": ["gold", "silver", "bronze"],
        "schema_version": 2,
        "updated_at": later,
    }
    listed = ok(http.get("/v1/attributes", headers=tenant.headers))
    assert listed == {"attributes": [city, redeclared]}

    schema = ok(http.get("/v1/memory-update-schema", headers=tenant.headers))
    assert schema["title"] == "MemoryUpdate"
    assert schema["properties"]["attribute"]["enum"] == ["home_city", "tier"]
    assert set(schema["required"]) >= {"evidence", "subject", "attribute", "change"}
    assert schema["properties"]["change"]["enum"] == ["new", "update", "no_change"]
    empty = ok(http.get("/v1/memory-update-schema", headers=new_tenant(http).headers))
    assert empty["properties"]["attribute"]["enum"] == []


# -- subjects -------------------------------------------------------------------------------


def test_subjects_page_by_id_with_limit_and_cursor(http: Client) -> None:
    tenant = new_tenant(http)
    now = "2026-04-01T12:00:00Z"
    for subject in ("cleo", "ada", "bo"):
        record(
            http,
            tenant,
            now,
            id=f"about-{subject}",
            occurred_at="2026-04-01T09:00:00Z",
            text=f"A note about {subject}.",
            subjects=[subject],
        )
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params: dict[str, str | int] = {"limit": 1}
        if cursor is not None:
            params["cursor"] = cursor
        page = ok(http.get("/v1/subjects", params=params, headers=tenant.headers))
        assert set(page) == {"subjects", "next_cursor"}
        assert len(page["subjects"]) <= 1
        seen += page["subjects"]
        cursor = page["next_cursor"]
        pages += 1
        if cursor is None:
            break
        assert pages < 5, "paging does not end"
    assert seen == ["ada", "bo", "cleo"]
    whole = ok(http.get("/v1/subjects", headers=tenant.headers))
    assert whole == {"subjects": ["ada", "bo", "cleo"], "next_cursor": None}
    # match: the subjects whose id (or a name) holds the text, paged the same way.
    declared = http.put(
        "/v1/subjects/bo", json={"display_name": "Bohdan Leone"}, headers=tenant.headers
    )
    assert declared.status_code == 200, declared.text
    found = ok(http.get("/v1/subjects", params={"match": "LEO"}, headers=tenant.headers))
    assert found == {"subjects": ["bo", "cleo"], "next_cursor": None}
    first = ok(
        http.get("/v1/subjects", params={"match": "leo", "limit": 1}, headers=tenant.headers)
    )
    assert first["subjects"] == ["bo"]
    rest = {"match": "leo", "cursor": first["next_cursor"]}
    assert ok(http.get("/v1/subjects", params=rest, headers=tenant.headers))["subjects"] == ["cleo"]


def test_export_holds_everything_about_the_subject(http: Client) -> None:
    tenant = new_tenant(http)
    declare(http, tenant, "2026-04-01T00:00:00Z", "home_city", value_type="string")
    first = record(
        http,
        tenant,
        "2026-04-01T10:00:00Z",
        id="porto",
        occurred_at="2026-04-01T09:00:00Z",
        text="Ada lives in Porto.",
        updates=[candidate("ada", "home_city", "Porto", "2026-04-01T09:00:00Z", "lives in Porto")],
    )
    second = record(
        http,
        tenant,
        "2026-04-05T10:00:00Z",
        id="lisbon",
        occurred_at="2026-04-05T09:00:00Z",
        text="Ada lives in Lisbon.",
        updates=[candidate("ada", "home_city", "Lisbon", "2026-04-05T09:00:00Z", "in Lisbon")],
    )
    record(
        http,
        tenant,
        "2026-04-05T10:00:00Z",
        id="other",
        occurred_at="2026-04-05T09:00:00Z",
        text="Bo lives elsewhere.",
        subjects=["bo"],
    )
    now = "2026-04-06T00:00:00Z"
    exported = ok(http.get("/v1/subjects/ada/export", headers=at(tenant, now)))
    key = "/v1/facts/ada/home_city"
    history = ok(http.get(f"{key}/history", headers=at(tenant, now)))
    profile = ok(http.get("/v1/subjects/ada/profile", headers=at(tenant, now)))
    episodes = [
        ok(http.get(f"/v1/episodes/{episode_id}", headers=tenant.headers))
        for episode_id in ("porto", "lisbon")
    ]
    for episode in episodes:  # the export holds the episodes, not their extraction state
        assert episode.pop("extraction") is None
    assert exported == {
        "subject": "ada",
        "exported_at": now,
        "facts": profile["facts"],
        "versions": history,
        "episodes": episodes,
        "conflicts": [],
        "outcomes": [],
        "weak_signals": [],
        "names": {"subject": "ada", "display_name": None, "aliases": [], "learned": []},
    }
    porto, lisbon = written(first)["fact_id"], written(second)["fact_id"]
    assert [(f["fact_id"], f["value"]) for f in exported["facts"]] == [(lisbon, "Lisbon")]
    assert [(v["fact_id"], v["value"], v["status"]) for v in history] == [
        (porto, "Porto", "retired"),  # as first recorded, open-ended
        (porto, "Porto", "past"),  # closed where Lisbon starts
        (lisbon, "Lisbon", "current"),
    ]
    assert [e["subjects"] for e in episodes] == [["ada"], ["ada"]]  # a candidate names its subject


# -- admin ----------------------------------------------------------------------------------


def test_admin_creates_tenants_and_issues_and_revokes_keys(http: Client) -> None:
    name = f"admin-made-{next(_tenant_numbers)}"
    now = "2026-04-01T12:00:00Z"
    admin = {**ADMIN, CLOCK: now}
    created = http.post("/v1/admin/tenants", json={"tenant_id": name}, headers=admin)
    assert ok(created, 201) == {"tenant_id": name, "on_unverified_evidence": "accept"}
    again = http.post("/v1/admin/tenants", json={"tenant_id": name}, headers=admin)
    problem(again, 409, "conflict")

    issued = ok(http.post(f"/v1/admin/tenants/{name}/keys", headers=admin), 201)
    key_id = uuid_text(issued["key_id"])
    token = API_KEY.fullmatch(issued["api_key"])
    assert token is not None, issued
    assert token.group(1) == UUID(key_id).hex, issued
    assert issued == {
        "key_id": key_id,
        "tenant_id": name,
        "created_at": now,
        "revoked_at": None,
        "api_key": issued["api_key"],
    }
    headers = {"Authorization": f"Bearer {issued['api_key']}"}
    assert ok(http.get("/v1/attributes", headers=headers)) == {"attributes": []}

    later = "2026-04-02T12:00:00Z"
    revoked = ok(http.delete(f"/v1/admin/keys/{key_id}", headers={**ADMIN, CLOCK: later}))
    assert revoked == {
        "key_id": key_id,
        "tenant_id": name,
        "created_at": now,
        "revoked_at": later,
        "status": "revoked",
    }
    problem(http.get("/v1/attributes", headers=headers), 401, "unauthorized")
    twice = http.delete(
        f"/v1/admin/keys/{key_id}", headers={**ADMIN, CLOCK: "2026-04-03T00:00:00Z"}
    )
    assert ok(twice) == {**revoked, "status": "unchanged"}
