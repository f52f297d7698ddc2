"""Bad input on every route: the documented problem+json, and nothing changed.

A whole-request failure answers ``application/problem+json`` with ``type``, ``title``,
``status``, ``detail``, a stable ``code`` and, where one field is at fault, ``field`` (a
dotted body path, or a query, path or header name). A bad candidate is not such a failure:
it is an ``invalid`` result inside a 200. No input may make the server answer 5xx, and a
refused request leaves every row of the tenant as it was.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.http.body_scan import MAX_DEPTH
from server.settings import Settings
from store.contract.common import MAX_METADATA_DEPTH
from store.contract.times import TimestampError, parse_timestamp
from tests.http_helpers import (
    ADMIN,
    DEPENDENCIES,
    PROBLEM_MEDIA_TYPE,
    READ_AT,
    UNSET,
    Client,
    Seeded,
    assert_problem,
    candidate,
    declare,
    make_tenant,
    record,
    seed,
    tenant_rows,
)

CODES = {
    400: "invalid",
    403: "forbidden",
    404: "not_found",
    405: "invalid",
    409: "conflict",
    413: "too_large",
    422: "invalid",
}
ANY: Any = object()
"""``Bad.field``: the problem may or may not name a field (a rule across several fields)."""
NO_JSON: Any = object()

EPISODE = {"id": "bad-ep", "occurred_at": "2026-03-05T00:00:00Z", "text": "a bad episode"}
EXPIRE = {"at": "2026-05-01T00:00:00Z", "source_episode_id": "ep-3"}
SEARCH = {"query": "where does mira live"}
CONTEXT = {"question": "Where does mira live?"}
NAIVE = "2026-03-01T09:00:00"
PERIOD_BACKWARDS = {"valid_from": "2006-01-01T00:00:00Z", "valid_to": "2004-01-01T00:00:00Z"}
PERIOD_EMPTY = {"valid_from": "2006-01-01T00:00:00Z", "valid_to": "2006-01-01T00:00:00Z"}
PERIOD_AND_INSTANT = {"valid_to": "2006-01-01T00:00:00Z", "valid_at": "2005-01-01T00:00:00Z"}
OVERFLOWING = "9999-12-31T23:59:59-23:59"
"""A valid RFC 3339 instant whose UTC form is past year 9999."""
UNHELD_UUID = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True)
class Bad:
    """One bad request and the problem it must get."""

    method: str
    path: str
    status: int
    field: str | None
    """The field the problem names; None: it names none; ANY: not checked."""
    json: Any = NO_JSON
    content: bytes | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    admin: bool = False
    unmade_tenant: str | None = None
    """A tenant the request would have created: it must still not exist."""
    code: str | None = None
    """The problem's code when it is not the status's own (``CODES``)."""


def cursor_of(key: list[str]) -> str:
    """A cursor as the server encodes one, around ``key``."""
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


TIME_CURSOR = cursor_of(["2026-01-01T00:00:00Z", "00000000-0000-4000-8000-000000000000"])
TEXT_CURSOR = cursor_of(["mira"])


def with_(base: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """``base`` with keys replaced, or removed where the value is ``NO_JSON``."""
    merged = {**base, **changes}
    return {k: v for k, v in merged.items() if v is not NO_JSON}


def _cases(prefix: str, *cases: tuple[str, Bad]) -> list[Any]:
    return [pytest.param(bad, id=f"{prefix}-{name}") for name, bad in cases]


FACT = "/v1/facts/mira/home_city"
PROFILE = "/v1/subjects/mira/profile"

BAD_INPUT = [
    *_cases(
        "declare-attribute",
        (
            "value-type-number",
            Bad("PUT", "/v1/attributes/new_attr", 422, "value_type", {"value_type": 5}),
        ),
        (
            "value-type-unknown",
            Bad("PUT", "/v1/attributes/new_attr", 422, "value_type", {"value_type": "colour"}),
        ),
        ("value-type-missing", Bad("PUT", "/v1/attributes/new_attr", 422, "value_type", {})),
        (
            "unknown-field",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "colour",
                {"value_type": "string", "colour": "red"},
            ),
        ),
        (
            "enum-without-values",
            Bad("PUT", "/v1/attributes/new_attr", 422, ANY, {"value_type": "enum"}),
        ),
        (
            "values-on-a-string",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                ANY,
                {"value_type": "string", "enum_values": ["a"]},
            ),
        ),
        (
            "aliases-not-a-list",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "aliases",
                {"value_type": "string", "aliases": "x"},
            ),
        ),
        (
            "policy-unknown",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "on_equal_start",
                {"value_type": "string", "on_equal_start": "newest"},
            ),
        ),
        (
            "memory-type-unknown",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "memory_type",
                {"value_type": "string", "memory_type": "long"},
            ),
        ),
        (
            "description-too-long",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "description",
                {"value_type": "string", "description": "x" * 2001},
            ),
        ),
        (
            "description-with-nul",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "description",
                {"value_type": "string", "description": "a\u0000b"},
            ),
        ),
        (
            "rank-of-unknown-kind",
            Bad(
                "PUT",
                "/v1/attributes/new_attr",
                422,
                "source_ranks.email.[key]",
                {"value_type": "string", "source_ranks": {"email": 1}},
            ),
        ),
        (
            "name-with-space",
            Bad("PUT", "/v1/attributes/new%20attr", 422, "attribute", {"value_type": "string"}),
        ),
        (
            "name-of-300",
            Bad("PUT", "/v1/attributes/" + "a" * 300, 422, "attribute", {"value_type": "string"}),
        ),
        (
            "type-change",
            Bad(
                "PUT",
                "/v1/attributes/home_city",
                409,
                "value_type",
                {"value_type": "date"},
                code="schema_change_requires_migration",
            ),
        ),
        (
            "rename",
            Bad(
                "PUT",
                "/v1/attributes/home_city",
                409,
                "attribute",
                {"attribute": "city", "value_type": "string"},
                code="schema_change_requires_migration",
            ),
        ),
    ),
    *_cases(
        "migrate-attribute",
        (
            "unknown-attribute",
            Bad("POST", "/v1/attributes/nope/migrations", 404, "attribute", {"value_type": "date"}),
        ),
        (
            "unconvertible",
            Bad(
                "POST",
                "/v1/attributes/home_city/migrations",
                409,
                "keep_unconvertible",
                {"value_type": "integer"},
            ),
        ),
        (
            "value-map-of-numbers",
            Bad(
                "POST",
                "/v1/attributes/home_city/migrations",
                422,
                "value_map.Lisbon",
                {"value_type": "string", "value_map": {"Lisbon": 5}},
            ),
        ),
        (
            "name-taken",
            Bad(
                "POST",
                "/v1/attributes/home_city/migrations",
                409,
                "attribute",
                {"attribute": "passport_deadline", "value_type": "string"},
            ),
        ),
    ),
    *_cases(
        "record-episode",
        (
            "naive-occurred-at",
            Bad("POST", "/v1/episodes", 422, "occurred_at", with_(EPISODE, occurred_at=NAIVE)),
        ),
        (
            "date-only-occurred-at",
            Bad(
                "POST", "/v1/episodes", 422, "occurred_at", with_(EPISODE, occurred_at="2026-03-01")
            ),
        ),
        (
            "garbage-occurred-at",
            Bad(
                "POST", "/v1/episodes", 422, "occurred_at", with_(EPISODE, occurred_at="yesterday")
            ),
        ),
        (
            "overflowing-occurred-at",
            Bad(
                "POST", "/v1/episodes", 422, "occurred_at", with_(EPISODE, occurred_at=OVERFLOWING)
            ),
        ),
        (
            "occurred-at-missing",
            Bad("POST", "/v1/episodes", 422, "occurred_at", with_(EPISODE, occurred_at=NO_JSON)),
        ),
        ("text-a-number", Bad("POST", "/v1/episodes", 422, "text", with_(EPISODE, text=5))),
        ("text-empty", Bad("POST", "/v1/episodes", 422, "text", with_(EPISODE, text=""))),
        (
            "text-with-nul",
            Bad("POST", "/v1/episodes", 422, "text", with_(EPISODE, text="a\u0000b")),
        ),
        ("kind-unknown", Bad("POST", "/v1/episodes", 422, "kind", with_(EPISODE, kind="email"))),
        ("id-with-space", Bad("POST", "/v1/episodes", 422, "id", with_(EPISODE, id="bad ep"))),
        ("id-of-300", Bad("POST", "/v1/episodes", 422, "id", with_(EPISODE, id="e" * 300))),
        (
            "session-with-space",
            Bad("POST", "/v1/episodes", 422, "session_id", with_(EPISODE, session_id="a b")),
        ),
        (
            "subject-with-space",
            Bad("POST", "/v1/episodes", 422, "subjects.0", with_(EPISODE, subjects=["a b"])),
        ),
        (
            "subjects-a-string",
            Bad("POST", "/v1/episodes", 422, "subjects", with_(EPISODE, subjects="mira")),
        ),
        (
            "metadata-a-list",
            Bad("POST", "/v1/episodes", 422, "metadata", with_(EPISODE, metadata=[])),
        ),
        (
            "metadata-with-nul",
            Bad(
                "POST", "/v1/episodes", 422, "metadata", with_(EPISODE, metadata={"k": "a\u0000b"})
            ),
        ),
        (
            "metadata-too-deep",
            Bad(
                "POST",
                "/v1/episodes",
                422,
                "metadata",
                with_(EPISODE, metadata={"a": json.loads("[" * 40 + "]" * 40)}),
            ),
        ),
        (
            "updates-not-a-list",
            Bad("POST", "/v1/episodes", 422, "updates", with_(EPISODE, updates={})),
        ),
        (
            "updates-101",
            Bad("POST", "/v1/episodes", 422, "updates", with_(EPISODE, updates=[{}] * 101)),
        ),
        ("unknown-field", Bad("POST", "/v1/episodes", 422, "colour", with_(EPISODE, colour="red"))),
        (
            "tenant-in-body",
            Bad("POST", "/v1/episodes", 422, "tenant_id", with_(EPISODE, tenant_id="other")),
        ),
        (
            "id-reused-with-other-text",
            Bad("POST", "/v1/episodes", 409, "id", with_(EPISODE, id="ep-1")),
        ),
    ),
    *_cases(
        "record-batch",
        ("empty", Bad("POST", "/v1/episodes/batch", 422, "episodes", {"episodes": []})),
        ("missing", Bad("POST", "/v1/episodes/batch", 422, "episodes", {})),
        ("not-a-list", Bad("POST", "/v1/episodes/batch", 422, "episodes", {"episodes": EPISODE})),
        (
            "101",
            Bad(
                "POST",
                "/v1/episodes/batch",
                422,
                "episodes",
                {"episodes": [with_(EPISODE, id=f"bad-{i}") for i in range(101)]},
            ),
        ),
        (
            "second-naive",
            Bad(
                "POST",
                "/v1/episodes/batch",
                422,
                "episodes.1.occurred_at",
                {"episodes": [EPISODE, with_(EPISODE, id="bad-2", occurred_at=NAIVE)]},
            ),
        ),
        (
            "second-unknown-field",
            Bad(
                "POST",
                "/v1/episodes/batch",
                422,
                "episodes.1.colour",
                {"episodes": [EPISODE, with_(EPISODE, id="bad-2", colour="red")]},
            ),
        ),
        (
            "second-reuses-id",
            Bad(
                "POST",
                "/v1/episodes/batch",
                409,
                "episodes.1.id",
                {"episodes": [EPISODE, with_(EPISODE, id="ep-1")]},
            ),
        ),
        (
            "unknown-field",
            Bad(
                "POST",
                "/v1/episodes/batch",
                422,
                "colour",
                {"episodes": [EPISODE], "colour": "red"},
            ),
        ),
    ),
    *_cases(
        "read-episode",
        ("id-with-space", Bad("GET", "/v1/episodes/a%20b", 422, "episode_id")),
        ("id-of-300", Bad("GET", "/v1/episodes/" + "e" * 300, 422, "episode_id")),
        ("unknown", Bad("GET", "/v1/episodes/ep-nobody", 404, "episode_id")),
    ),
    *_cases(
        "apply-updates",
        ("empty", Bad("POST", "/v1/episodes/ep-1/updates", 422, "candidates", {"candidates": []})),
        ("missing", Bad("POST", "/v1/episodes/ep-1/updates", 422, "candidates", {})),
        (
            "not-a-list",
            Bad("POST", "/v1/episodes/ep-1/updates", 422, "candidates", {"candidates": "x"}),
        ),
        (
            "101",
            Bad("POST", "/v1/episodes/ep-1/updates", 422, "candidates", {"candidates": [{}] * 101}),
        ),
        (
            "unknown-field",
            Bad(
                "POST",
                "/v1/episodes/ep-1/updates",
                422,
                "colour",
                {"candidates": [{}], "colour": "red"},
            ),
        ),
        (
            "unknown-episode",
            Bad(
                "POST",
                "/v1/episodes/ep-nobody/updates",
                404,
                "episode_id",
                {"candidates": [candidate("mira", "home_city", "Porto")]},
            ),
        ),
        (
            "episode-with-space",
            Bad(
                "POST",
                "/v1/episodes/a%20b/updates",
                422,
                "episode_id",
                {"candidates": [candidate("mira", "home_city", "Porto")]},
            ),
        ),
        # The body is an array of objects: a candidate that is not one fails the whole body.
        (
            "candidate-not-an-object",
            Bad(
                "POST",
                "/v1/episodes/ep-1/updates",
                422,
                "candidates.0",
                {"candidates": ["mira lives in Porto"]},
            ),
        ),
    ),
    *_cases(
        "erase-episode",
        ("id-with-space", Bad("DELETE", "/v1/episodes/a%20b", 422, "episode_id")),
        ("id-of-300", Bad("DELETE", "/v1/episodes/" + "e" * 300, 422, "episode_id")),
        ("unknown", Bad("DELETE", "/v1/episodes/ep-nobody", 404, "episode_id")),
    ),
    *_cases(
        "read-fact",
        ("naive-valid-at", Bad("GET", f"{FACT}?valid_at={NAIVE}", 422, "valid_at")),
        ("naive-known-at", Bad("GET", f"{FACT}?known_at={NAIVE}", 422, "known_at")),
        ("naive-at", Bad("GET", f"{FACT}?at={NAIVE}", 422, "at")),
        ("date-only-valid-at", Bad("GET", f"{FACT}?valid_at=2026-03-01", 422, "valid_at")),
        ("garbage-valid-at", Bad("GET", f"{FACT}?valid_at=tomorrow", 422, "valid_at")),
        ("overflowing-valid-at", Bad("GET", f"{FACT}?valid_at={OVERFLOWING}", 422, "valid_at")),
        (
            "valid-at-and-at",
            Bad("GET", f"{FACT}?valid_at=2026-04-01T00:00:00Z&at=2026-04-01T00:00:00Z", 422, "at"),
        ),
        ("subject-with-space", Bad("GET", "/v1/facts/a%20b/home_city", 422, "subject")),
        ("subject-of-300", Bad("GET", "/v1/facts/" + "s" * 300 + "/home_city", 422, "subject")),
        ("attribute-non-ascii", Bad("GET", "/v1/facts/mira/h%C3%B6me", 422, "attribute")),
        ("unknown-attribute", Bad("GET", "/v1/facts/mira/undeclared", 404, "attribute")),
    ),
    *_cases(
        "read-history",
        ("subject-with-space", Bad("GET", "/v1/facts/a%20b/home_city/history", 422, "subject")),
        (
            "attribute-of-300",
            Bad("GET", "/v1/facts/mira/" + "a" * 300 + "/history", 422, "attribute"),
        ),
    ),
    *_cases(
        "expire",
        ("naive-at", Bad("POST", f"{FACT}/expire", 422, "at", with_(EXPIRE, at=NAIVE))),
        ("at-a-number", Bad("POST", f"{FACT}/expire", 422, "at", with_(EXPIRE, at=5))),
        ("at-missing", Bad("POST", f"{FACT}/expire", 422, "at", with_(EXPIRE, at=NO_JSON))),
        (
            "source-missing",
            Bad(
                "POST",
                f"{FACT}/expire",
                422,
                "source_episode_id",
                with_(EXPIRE, source_episode_id=NO_JSON),
            ),
        ),
        (
            "source-with-space",
            Bad(
                "POST",
                f"{FACT}/expire",
                422,
                "source_episode_id",
                with_(EXPIRE, source_episode_id="a b"),
            ),
        ),
        (
            "source-unknown",
            Bad(
                "POST",
                f"{FACT}/expire",
                404,
                "source_episode_id",
                with_(EXPIRE, source_episode_id="ep-nobody"),
            ),
        ),
        (
            "unknown-attribute",
            Bad("POST", "/v1/facts/mira/undeclared/expire", 404, "attribute", EXPIRE),
        ),
        (
            "subject-with-space",
            Bad("POST", "/v1/facts/a%20b/home_city/expire", 422, "subject", EXPIRE),
        ),
        (
            "unknown-field",
            Bad("POST", f"{FACT}/expire", 422, "colour", with_(EXPIRE, colour="red")),
        ),
    ),
    *_cases(
        "retract",
        ("neither", Bad("POST", f"{FACT}/retract", 422, "fact_id", {})),
        (
            "both",
            Bad(
                "POST",
                f"{FACT}/retract",
                422,
                "fact_id",
                {"fact_id": UNHELD_UUID, "valid_from": "2026-03-01T09:00:00Z"},
            ),
        ),
        ("fact-id-not-a-uuid", Bad("POST", f"{FACT}/retract", 422, "fact_id", {"fact_id": "xyz"})),
        ("fact-id-a-number", Bad("POST", f"{FACT}/retract", 422, "fact_id", {"fact_id": 5})),
        (
            "naive-valid-from",
            Bad("POST", f"{FACT}/retract", 422, "valid_from", {"valid_from": NAIVE}),
        ),
        ("unknown-fact", Bad("POST", f"{FACT}/retract", 404, "fact_id", {"fact_id": UNHELD_UUID})),
        (
            "nothing-starts-then",
            Bad(
                "POST", f"{FACT}/retract", 404, "valid_from", {"valid_from": "2026-01-01T00:00:00Z"}
            ),
        ),
        (
            "unknown-field",
            Bad(
                "POST", f"{FACT}/retract", 422, "colour", {"fact_id": UNHELD_UUID, "colour": "red"}
            ),
        ),
    ),
    *_cases(
        "list-subjects",
        ("limit-0", Bad("GET", "/v1/subjects?limit=0", 422, "limit")),
        ("limit-negative", Bad("GET", "/v1/subjects?limit=-1", 422, "limit")),
        ("limit-501", Bad("GET", "/v1/subjects?limit=501", 422, "limit")),
        ("limit-a-word", Bad("GET", "/v1/subjects?limit=ten", 422, "limit")),
        ("cursor-garbage", Bad("GET", "/v1/subjects?cursor=!!!", 422, "cursor")),
        ("cursor-not-json", Bad("GET", "/v1/subjects?cursor=AAAA", 422, "cursor")),
        ("cursor-of-conflicts", Bad("GET", f"/v1/subjects?cursor={TIME_CURSOR}", 422, "cursor")),
        ("cursor-too-long", Bad("GET", "/v1/subjects?cursor=" + "A" * 1001, 422, "cursor")),
    ),
    *_cases(
        "read-profile",
        ("naive-valid-at", Bad("GET", f"{PROFILE}?valid_at={NAIVE}", 422, "valid_at")),
        ("naive-known-at", Bad("GET", f"{PROFILE}?known_at={NAIVE}", 422, "known_at")),
        ("naive-at", Bad("GET", f"{PROFILE}?at={NAIVE}", 422, "at")),
        (
            "valid-at-and-at",
            Bad(
                "GET", f"{PROFILE}?valid_at=2026-04-01T00:00:00Z&at=2026-04-01T00:00:00Z", 422, "at"
            ),
        ),
        ("subject-with-space", Bad("GET", "/v1/subjects/a%20b/profile", 422, "subject")),
    ),
    *_cases(
        "export-subject",
        ("subject-with-space", Bad("GET", "/v1/subjects/a%20b/export", 422, "subject")),
        ("unknown", Bad("GET", "/v1/subjects/nobody/export", 404, "subject")),
    ),
    *_cases(
        "erase-subject",
        ("subject-with-space", Bad("DELETE", "/v1/subjects/a%20b", 422, "subject")),
        ("subject-of-300", Bad("DELETE", "/v1/subjects/" + "s" * 300, 422, "subject")),
    ),
    *_cases(
        "list-conflicts",
        ("status-unknown", Bad("GET", "/v1/conflicts?status=closed", 422, "status")),
        ("limit-0", Bad("GET", "/v1/conflicts?limit=0", 422, "limit")),
        ("limit-501", Bad("GET", "/v1/conflicts?limit=501", 422, "limit")),
        ("cursor-garbage", Bad("GET", "/v1/conflicts?cursor=!!!", 422, "cursor")),
        ("cursor-of-subjects", Bad("GET", f"/v1/conflicts?cursor={TEXT_CURSOR}", 422, "cursor")),
        ("subject-with-space", Bad("GET", "/v1/conflicts?subject=a%20b", 422, "subject")),
        ("attribute-with-space", Bad("GET", "/v1/conflicts?attribute=a%20b", 422, "attribute")),
    ),
    *_cases(
        "resolve-conflict",
        (
            "choose-both",
            Bad("POST", "/v1/conflicts/{conflict}/resolve", 422, "choose", {"choose": "both"}),
        ),
        ("choose-missing", Bad("POST", "/v1/conflicts/{conflict}/resolve", 422, "choose", {})),
        (
            "choose-a-number",
            Bad("POST", "/v1/conflicts/{conflict}/resolve", 422, "choose", {"choose": 1}),
        ),
        (
            "unknown-field",
            Bad(
                "POST",
                "/v1/conflicts/{conflict}/resolve",
                422,
                "colour",
                {"choose": "incumbent", "colour": "red"},
            ),
        ),
        (
            "unknown-conflict",
            Bad(
                "POST",
                f"/v1/conflicts/{UNHELD_UUID}/resolve",
                404,
                "conflict_id",
                {"choose": "incumbent"},
            ),
        ),
        (
            "id-not-a-uuid",
            Bad(
                "POST",
                "/v1/conflicts/not-a-uuid/resolve",
                422,
                "conflict_id",
                {"choose": "incumbent"},
            ),
        ),
    ),
    *_cases(
        "evidence-search",
        ("query-missing", Bad("POST", "/v1/evidence/search", 422, "query", {})),
        ("query-empty", Bad("POST", "/v1/evidence/search", 422, "query", {"query": ""})),
        ("query-a-number", Bad("POST", "/v1/evidence/search", 422, "query", {"query": 5})),
        ("query-too-long", Bad("POST", "/v1/evidence/search", 422, "query", {"query": "q" * 4001})),
        ("k-0", Bad("POST", "/v1/evidence/search", 422, "k", with_(SEARCH, k=0))),
        ("k-51", Bad("POST", "/v1/evidence/search", 422, "k", with_(SEARCH, k=51))),
        ("k-a-word", Bad("POST", "/v1/evidence/search", 422, "k", with_(SEARCH, k="five"))),
        (
            "mode-unknown",
            Bad("POST", "/v1/evidence/search", 422, "mode", with_(SEARCH, mode="semantic")),
        ),
        ("mode-null", Bad("POST", "/v1/evidence/search", 422, "mode", with_(SEARCH, mode=None))),
        (
            "naive-occurred-from",
            Bad(
                "POST",
                "/v1/evidence/search",
                422,
                "occurred_from",
                with_(SEARCH, occurred_from=NAIVE),
            ),
        ),
        (
            "naive-occurred-to",
            Bad(
                "POST", "/v1/evidence/search", 422, "occurred_to", with_(SEARCH, occurred_to=NAIVE)
            ),
        ),
        (
            "subject-with-space",
            Bad("POST", "/v1/evidence/search", 422, "subject", with_(SEARCH, subject="a b")),
        ),
        (
            "session-with-space",
            Bad("POST", "/v1/evidence/search", 422, "session_id", with_(SEARCH, session_id="a b")),
        ),
        (
            "unknown-field",
            Bad("POST", "/v1/evidence/search", 422, "colour", with_(SEARCH, colour="red")),
        ),
    ),
    *_cases(
        "context",
        ("question-missing", Bad("POST", "/v1/context", 422, "question", {})),
        ("mode-unknown", Bad("POST", "/v1/context", 422, "mode", with_(CONTEXT, mode="bm25"))),
        ("mode-a-list", Bad("POST", "/v1/context", 422, "mode", with_(CONTEXT, mode=["hybrid"]))),
        ("question-empty", Bad("POST", "/v1/context", 422, "question", {"question": ""})),
        (
            "question-too-long",
            Bad("POST", "/v1/context", 422, "question", {"question": "q" * 4001}),
        ),
        (
            "naive-valid-at",
            Bad("POST", "/v1/context", 422, "valid_at", with_(CONTEXT, valid_at=NAIVE)),
        ),
        (
            "naive-known-at",
            Bad("POST", "/v1/context", 422, "known_at", with_(CONTEXT, known_at=NAIVE)),
        ),
        (
            "naive-valid-from",
            Bad("POST", "/v1/context", 422, "valid_from", with_(CONTEXT, valid_from=NAIVE)),
        ),
        (
            "period-ending-before-it-starts",
            Bad("POST", "/v1/context", 422, "valid_to", with_(CONTEXT, **PERIOD_BACKWARDS)),
        ),
        (
            "empty-period",
            Bad("POST", "/v1/context", 422, "valid_to", with_(CONTEXT, **PERIOD_EMPTY)),
        ),
        (
            "period-beside-valid-at",
            Bad("POST", "/v1/context", 422, "valid_at", with_(CONTEXT, **PERIOD_AND_INSTANT)),
        ),
        (
            "token-budget-15",
            Bad("POST", "/v1/context", 422, "token_budget", with_(CONTEXT, token_budget=15)),
        ),
        (
            "token-budget-too-big",
            Bad("POST", "/v1/context", 422, "token_budget", with_(CONTEXT, token_budget=32769)),
        ),
        (
            "evidence-k-negative",
            Bad("POST", "/v1/context", 422, "evidence_k", with_(CONTEXT, evidence_k=-1)),
        ),
        (
            "evidence-k-21",
            Bad("POST", "/v1/context", 422, "evidence_k", with_(CONTEXT, evidence_k=21)),
        ),
        (
            "attributes-a-string",
            Bad("POST", "/v1/context", 422, "attributes", with_(CONTEXT, attributes="home_city")),
        ),
        (
            "attribute-with-space",
            Bad("POST", "/v1/context", 422, "attributes.0", with_(CONTEXT, attributes=["a b"])),
        ),
        (
            "subject-with-space",
            Bad("POST", "/v1/context", 422, "subject", with_(CONTEXT, subject="a b")),
        ),
        ("unknown-field", Bad("POST", "/v1/context", 422, "colour", with_(CONTEXT, colour="red"))),
    ),
    *_cases(
        "clock-header",
        ("naive", Bad("GET", "/v1/subjects", 422, "X-SGAM-Now", headers={"X-SGAM-Now": NAIVE})),
        ("garbage", Bad("GET", "/v1/subjects", 422, "X-SGAM-Now", headers={"X-SGAM-Now": "now"})),
        (
            "overflowing",
            Bad("GET", "/v1/subjects", 422, "X-SGAM-Now", headers={"X-SGAM-Now": OVERFLOWING}),
        ),
    ),
    *_cases(
        "create-tenant",
        (
            "id-with-space",
            Bad("POST", "/v1/admin/tenants", 422, "tenant_id", {"tenant_id": "a b"}, admin=True),
        ),
        ("id-missing", Bad("POST", "/v1/admin/tenants", 422, "tenant_id", {}, admin=True)),
        (
            "id-a-number",
            Bad("POST", "/v1/admin/tenants", 422, "tenant_id", {"tenant_id": 5}, admin=True),
        ),
        (
            "unknown-field",
            Bad(
                "POST",
                "/v1/admin/tenants",
                422,
                "colour",
                {"tenant_id": "unmade-1", "colour": "red"},
                admin=True,
                unmade_tenant="unmade-1",
            ),
        ),
        (
            "exists",
            Bad(
                "POST", "/v1/admin/tenants", 409, "tenant_id", {"tenant_id": "{tenant}"}, admin=True
            ),
        ),
    ),
    # The path names the tenant {tenant} (section 8), so a problem with it names "tenant".
    *_cases(
        "create-key",
        (
            "unknown-tenant",
            Bad(
                "POST",
                "/v1/admin/tenants/unmade-2/keys",
                404,
                "tenant",
                admin=True,
                unmade_tenant="unmade-2",
            ),
        ),
        (
            "tenant-with-space",
            Bad("POST", "/v1/admin/tenants/a%20b/keys", 422, "tenant", admin=True),
        ),
        (
            "tenant-of-300",
            Bad("POST", "/v1/admin/tenants/" + "t" * 300 + "/keys", 422, "tenant", admin=True),
        ),
    ),
    *_cases(
        "revoke-key",
        ("id-not-a-uuid", Bad("DELETE", "/v1/admin/keys/not-a-uuid", 422, "key_id", admin=True)),
        ("unknown", Bad("DELETE", f"/v1/admin/keys/{UNHELD_UUID}", 404, "key_id", admin=True)),
    ),
]


@dataclass
class World:
    """The module's tenant: seeded once; every refusal must leave its rows as they are."""

    seeded: Seeded
    pool: ConnectionPool
    rows: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        """The tenant's id."""
        return self.seeded.tenant.name

    def changes(self) -> dict[str, dict[str, list[str]]]:
        """The tenant's rows gone and added since the last look, by table (empty: none)."""
        before, self.rows = self.rows, tenant_rows(self.pool, self.name)
        return {
            table: {
                "gone": [row for row in rows if row not in self.rows[table]],
                "added": [row for row in self.rows[table] if row not in rows],
            }
            for table, rows in before.items()
            if rows != self.rows[table]
        }


@pytest.fixture(scope="module")
def world(http: Client, pool: ConnectionPool) -> World:
    """A tenant holding facts, a conflict, and attributes of every troublesome type."""
    seeded = seed(
        http,
        make_tenant(http, "err"),
        city="Lisbon",
        deadline="2026-07-15",
        rival_deadline="2026-06-30",
        words="harbour lighthouse",
        own_subject="only-a",
        own_episode="ep-a-only",
        own_attribute="a_note",
    )
    for attribute, value_type in (("seen_at", "datetime"), ("visits", "integer"), ("blob", "json")):
        declare(http, seeded.headers, attribute, value_type)
    world = World(seeded, pool)
    world.changes()
    return world


def _fill(text: str, world: World) -> str:
    return text.replace("{conflict}", world.seeded.conflict_id).replace("{tenant}", world.name)


def send(http: Client, world: World, bad: Bad) -> httpx.Response:
    """Send ``bad`` with the world tenant's key (or the admin token)."""
    headers = {**(ADMIN if bad.admin else world.seeded.headers), **bad.headers}
    body = bad.json
    if isinstance(body, dict):
        body = {k: _fill(v, world) if isinstance(v, str) else v for k, v in body.items()}
    if body is not NO_JSON:
        return http.request(bad.method, _fill(bad.path, world), json=body, headers=headers)
    return http.request(bad.method, _fill(bad.path, world), content=bad.content, headers=headers)


def _expect_problem(response: httpx.Response, bad: Bad) -> dict[str, Any]:
    expected_field = None if bad.field is ANY else (UNSET if bad.field is None else bad.field)
    code = bad.code or CODES[bad.status]
    return assert_problem(response, bad.status, code, field=expected_field)


@pytest.mark.parametrize("bad", BAD_INPUT)
def test_bad_input_gets_its_problem_and_changes_nothing(
    http: Client, world: World, bad: Bad
) -> None:
    response = send(http, world, bad)

    changes = world.changes()
    _expect_problem(response, bad)
    assert changes == {}
    if bad.unmade_tenant is not None:
        keys = http.post(f"/v1/admin/tenants/{bad.unmade_tenant}/keys", headers=ADMIN)
        assert keys.status_code == 404, keys.text


# -- whole bodies that are not what a route reads ---------------------------------------------

BODY_ROUTES = {
    "declare-attribute": ("PUT", "/v1/attributes/new_attr"),
    "migrate-attribute": ("POST", "/v1/attributes/home_city/migrations"),
    "record-episode": ("POST", "/v1/episodes"),
    "record-batch": ("POST", "/v1/episodes/batch"),
    "apply-updates": ("POST", "/v1/episodes/ep-1/updates"),
    "expire": ("POST", f"{FACT}/expire"),
    "retract": ("POST", f"{FACT}/retract"),
    "resolve-conflict": ("POST", "/v1/conflicts/{conflict}/resolve"),
    "evidence-search": ("POST", "/v1/evidence/search"),
    "context": ("POST", "/v1/context"),
    "create-tenant": ("POST", "/v1/admin/tenants"),
}
JSON_TYPE = {"content-type": "application/json"}
DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_FIELD = ".".join(["0"] * MAX_DEPTH)
"""Where ``DEEP`` passes the depth limit: the first element of each array open there."""
OVERSIZE = json.dumps({"pad": "x" * (300 * 1024)}).encode()

WHOLE_BODIES = {
    "malformed-json": (b'{"text": ', 400),
    "invalid-utf8": (b'{"text": "\xff\xfe"}', 400),
    "lone-surrogate": (b'{"text": "\\ud800"}', 400),
    "nested-too-deep": (DEEP, 422),
    "an-array": (b"[]", 422),
    "a-string": (b'"text"', 422),
    "null": (b"null", 422),
    "a-number": (b"1", 422),
    "no-body": (b"", 422),
    "oversize": (OVERSIZE, 413),
}


@pytest.mark.parametrize("kind", list(WHOLE_BODIES))
@pytest.mark.parametrize("route", list(BODY_ROUTES))
def test_a_body_that_is_not_the_routes_json_object_is_refused_whole(
    http: Client, world: World, route: str, kind: str
) -> None:
    method, path = BODY_ROUTES[route]
    content, status = WHOLE_BODIES[kind]
    bad = Bad(
        method,
        path,
        status,
        DEEP_FIELD if kind == "nested-too-deep" else None,
        content=content,
        headers=JSON_TYPE,
        admin=route == "create-tenant",
    )

    response = send(http, world, bad)

    changes = world.changes()
    problem = _expect_problem(response, bad)
    if kind == "no-body":
        assert problem["detail"] == "the request needs a JSON body"
    if kind == "oversize":
        assert problem["detail"] == "the body is over the limit of 262144 bytes"
    assert changes == {}


# -- the clock header, on every route ---------------------------------------------------------

EVERY_ROUTE: dict[str, tuple[str, str, Any]] = {
    "declare-attribute": ("PUT", "/v1/attributes/new_attr", {"value_type": "string"}),
    "migrate-attribute": (
        "POST",
        "/v1/attributes/home_city/migrations",
        {"attribute": "town", "value_type": "string"},
    ),
    "list-attributes": ("GET", "/v1/attributes", NO_JSON),
    "memory-update-schema": ("GET", "/v1/memory-update-schema", NO_JSON),
    "record-episode": ("POST", "/v1/episodes", EPISODE),
    "record-batch": ("POST", "/v1/episodes/batch", {"episodes": [EPISODE]}),
    "read-episode": ("GET", "/v1/episodes/ep-1", NO_JSON),
    "apply-updates": (
        "POST",
        "/v1/episodes/ep-1/updates",
        {"candidates": [candidate("mira", "home_city", "Porto")]},
    ),
    "erase-episode": ("DELETE", "/v1/episodes/ep-3", NO_JSON),
    "read-fact": ("GET", FACT, NO_JSON),
    "read-history": ("GET", f"{FACT}/history", NO_JSON),
    "expire": ("POST", f"{FACT}/expire", EXPIRE),
    "retract": ("POST", f"{FACT}/retract", {"valid_from": "2026-03-01T09:00:00Z"}),
    "list-subjects": ("GET", "/v1/subjects", NO_JSON),
    "read-profile": ("GET", PROFILE, NO_JSON),
    "export-subject": ("GET", "/v1/subjects/mira/export", NO_JSON),
    "erase-subject": ("DELETE", "/v1/subjects/mira", NO_JSON),
    "list-conflicts": ("GET", "/v1/conflicts", NO_JSON),
    "resolve-conflict": ("POST", "/v1/conflicts/{conflict}/resolve", {"choose": "challenger"}),
    "evidence-search": ("POST", "/v1/evidence/search", SEARCH),
    "context": ("POST", "/v1/context", CONTEXT),
    "create-tenant": ("POST", "/v1/admin/tenants", {"tenant_id": "unmade-3"}),
    "create-key": ("POST", "/v1/admin/tenants/{tenant}/keys", NO_JSON),
}
"""Every route that reads the store, with a request that would succeed (and write, for most)."""


@pytest.mark.parametrize("route", list(EVERY_ROUTE))
def test_a_naive_clock_header_is_422_on_every_route_and_changes_nothing(
    http: Client, world: World, route: str
) -> None:
    method, path, body = EVERY_ROUTE[route]
    admin = route.startswith("create-")
    bad = Bad(method, path, 422, "X-SGAM-Now", body, headers={"X-SGAM-Now": NAIVE}, admin=admin)

    response = send(http, world, bad)

    changes = world.changes()
    problem = _expect_problem(response, bad)
    assert "no UTC offset" in problem["detail"]
    assert changes == {}
    if admin:
        made = http.post("/v1/admin/tenants/unmade-3/keys", headers=ADMIN)
        assert made.status_code == 404, made.text


# -- routes and methods that do not exist -----------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        pytest.param("GET", "/v1/nope", 404, None, id="unknown-path"),
        pytest.param("GET", "/v2/subjects", 404, None, id="unknown-version"),
        pytest.param("GET", "/v1/facts/mira", 404, None, id="fact-without-attribute"),
        pytest.param("PUT", "/v1/subjects", 405, {"GET"}, id="put-subjects"),
        pytest.param("GET", "/v1/episodes", 405, {"POST"}, id="get-episodes"),
        pytest.param("PATCH", FACT, 405, {"GET"}, id="patch-fact"),
        pytest.param("GET", "/v1/evidence/search", 405, {"POST"}, id="get-search"),
        pytest.param("DELETE", "/v1/attributes/home_city", 405, {"PUT"}, id="delete-attribute"),
        pytest.param("POST", "/healthz", 405, {"GET"}, id="post-healthz"),
    ],
)
def test_an_unknown_route_is_404_and_a_wrong_method_405_as_problems(
    http: Client, world: World, *, method: str, path: str, status: int, allow: set[str] | None
) -> None:
    response = http.request(method, path, headers=world.seeded.headers)

    changes = world.changes()
    assert_problem(response, status, CODES[status], field=UNSET)
    if allow is not None:
        assert {m.strip() for m in response.headers["allow"].split(",")} >= allow
    assert changes == {}


# -- a server that keeps the admin API and the clock header off -------------------------------


@pytest.fixture(scope="module")
def locked_http(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """The app with no admin token and the clock header off (the defaults)."""
    settings = api_settings.model_copy(update={"admin_token": None, "allow_clock_header": False})
    with TestClient[Litestar](
        create_app(settings, embedder=embedder), raise_server_exceptions=False
    ) as client:
        yield client


def test_a_disabled_admin_api_and_clock_header_are_403(locked_http: Client, world: World) -> None:
    tenant = locked_http.post("/v1/admin/tenants", json={"tenant_id": "unmade-4"}, headers=ADMIN)
    clock = locked_http.get(
        "/v1/subjects", headers={**world.seeded.headers, "X-SGAM-Now": "2026-04-01T00:00:00Z"}
    )

    assert_problem(tenant, 403, "forbidden", field="Authorization")
    assert_problem(clock, 403, "forbidden", field="X-SGAM-Now")
    assert locked_http.get("/v1/subjects", headers=world.seeded.headers).status_code == 200
    assert world.changes() == {}


# -- time query parameters: read at the edge by the store's parser ----------------------------

TIME_READS = {"read-fact": FACT, "read-profile": PROFILE}
TIME_PARAMETERS = ("valid_at", "at", "known_at")
BAD_TIMES = {
    "naive": NAIVE,
    "date-only": "2026-03-01",
    "a-word": "tomorrow",
    "overflowing": OVERFLOWING,
    "empty": "",
}


def refusal(text: str) -> str:
    """Why the store's own parser refuses ``text``."""
    with pytest.raises(TimestampError) as refused:
        parse_timestamp(text)
    return str(refused.value)


@pytest.mark.parametrize("bad", list(BAD_TIMES))
@pytest.mark.parametrize("parameter", TIME_PARAMETERS)
@pytest.mark.parametrize("route", list(TIME_READS))
def test_a_bad_time_parameter_is_422_naming_it_with_the_stores_reason(
    http: Client, world: World, route: str, parameter: str, bad: str
) -> None:
    response = http.get(
        TIME_READS[route], params={parameter: BAD_TIMES[bad]}, headers=world.seeded.headers
    )

    problem = assert_problem(response, 422, "invalid", field=parameter)
    assert problem["detail"] == refusal(BAD_TIMES[bad])
    assert world.changes() == {}


@pytest.mark.parametrize("parameter", TIME_PARAMETERS)
@pytest.mark.parametrize("route", list(TIME_READS))
def test_a_time_without_an_offset_is_refused_not_guessed(
    http: Client, world: World, route: str, parameter: str
) -> None:
    response = http.get(TIME_READS[route], params={parameter: NAIVE}, headers=world.seeded.headers)

    problem = assert_problem(response, 422, "invalid", field=parameter)
    assert problem["detail"] == f"{NAIVE} has no UTC offset; add one (e.g. 'Z' or '+02:00')"


SPELLINGS_OF_APRIL_1 = [
    "2026-04-01T02:00:00+02:00",
    "2026-03-31T19:00:00-05:00",
    "2026-04-01T00:00:00.000000Z",
    "2026-04-01 00:00:00+00:00",
    "2026-04-01T00:00Z",
    "20260401T000000Z",
]
"""Other spellings of 2026-04-01T00:00:00Z that the store's parser reads (ISO 8601's basic
format too), so the edge must read them alike."""


@pytest.mark.parametrize("spelling", SPELLINGS_OF_APRIL_1)
@pytest.mark.parametrize("parameter", TIME_PARAMETERS)
@pytest.mark.parametrize("route", list(TIME_READS))
def test_a_time_in_any_offset_the_store_reads_is_the_same_instant_in_utc(
    http: Client, world: World, route: str, parameter: str, spelling: str
) -> None:
    assert parse_timestamp(spelling) == parse_timestamp("2026-04-01T00:00:00Z")
    headers = {**world.seeded.headers, **READ_AT}

    def read(instant: str) -> Any:
        response = http.get(TIME_READS[route], params={parameter: instant}, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    assert read(spelling) == read("2026-04-01T00:00:00Z")


def test_a_profile_echoes_its_times_in_utc(http: Client, world: World) -> None:
    params = {"at": "2026-04-01T02:00:00+02:00", "known_at": "2026-05-01T00:00:00-01:00"}

    response = http.get(PROFILE, params=params, headers={**world.seeded.headers, **READ_AT})

    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["valid_at"], body["known_at"]) == ("2026-04-01T00:00:00Z", "2026-05-01T01:00:00Z")


@pytest.mark.parametrize(
    ("query", "at_fault"),
    [
        pytest.param({"valid_at": "tomorrow", "at": "2026-04-01T00:00:00Z"}, "at", id="both"),
        pytest.param({"at": "tomorrow", "known_at": "never"}, "at", id="at-first"),
        pytest.param({"valid_at": "tomorrow", "known_at": "never"}, "valid_at", id="valid-at-next"),
    ],
)
@pytest.mark.parametrize("route", list(TIME_READS))
def test_of_several_bad_times_the_first_in_a_fixed_order_is_named(
    http: Client, world: World, route: str, query: dict[str, str], at_fault: str
) -> None:
    response = http.get(TIME_READS[route], params=query, headers=world.seeded.headers)

    assert_problem(response, 422, "invalid", field=at_fault)


# -- body fields named like a dependency ------------------------------------------------------


NAMED_LIKE_A_DEPENDENCY = [
    pytest.param(path, body, name, id=f"{route}-{name}")
    for route, (path, body) in {
        "record-episode": ("/v1/episodes", EPISODE),
        "context": ("/v1/context", CONTEXT),
        "create-tenant": ("/v1/admin/tenants", {"tenant_id": "unmade-5"}),
    }.items()
    for name in sorted(DEPENDENCIES)
    if name not in body
]
"""Litestar takes an invalid value named like a dependency for a server fault; these are not."""


@pytest.mark.parametrize(("path", "body", "name"), NAMED_LIKE_A_DEPENDENCY)
def test_a_body_field_named_like_a_dependency_is_422_naming_it(
    http: Client, world: World, path: str, body: dict[str, Any], name: str
) -> None:
    headers = ADMIN if path.startswith("/v1/admin/") else world.seeded.headers

    response = http.post(path, json={**body, name: "x"}, headers=headers)

    changes = world.changes()
    assert_problem(response, 422, "invalid", field=name)
    assert changes == {}
    made = http.post("/v1/admin/tenants/unmade-5/keys", headers=ADMIN)
    assert made.status_code == 404, made.text


# -- per-candidate outcomes: results inside a 200 ---------------------------------------------


def test_a_bad_candidate_is_an_invalid_result_inside_a_200_not_a_problem(
    http: Client, world: World
) -> None:
    # Which candidates are invalid, and why, is a scenario of tests/conformance/test_write_path.py.
    response = http.post(
        "/v1/episodes/ep-1/updates",
        json={"candidates": [candidate("mira", "visits", "many")]},
        headers=world.seeded.headers,
    )

    changes = world.changes()
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    [result] = response.json()["results"]
    assert (result["index"], result["status"], result["field"]) == (0, "invalid", "value")
    assert changes == {}


def test_a_candidate_with_a_nul_character_is_an_invalid_result_and_the_others_stand(
    http: Client,
) -> None:
    tenant = make_tenant(http, "err-nul")
    declare(http, tenant.headers, "home_city", "string")
    record(http, tenant.headers, "ep-1", "Mira moved to Porto.")

    response = http.post(
        "/v1/episodes/ep-1/updates",
        json={
            "candidates": [
                candidate("mira", "home_city", "Porto"),
                candidate("mira", "home_city", "Fa\u0000ro"),
                candidate("mira", "home_city", "Faro", evidence="Mira\u0000"),
            ]
        },
        headers=tenant.headers,
    )

    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [(r["status"], r["field"]) for r in results] == [
        ("written", None),
        ("invalid", "value"),
        ("invalid", "evidence"),
    ]
    assert [
        f["value"]
        for f in http.get("/v1/facts/mira/home_city/history", headers=tenant.headers).json()
    ] == ["Porto"]


def test_an_episode_with_bad_candidates_is_recorded_and_each_candidate_answers(
    http: Client,
) -> None:
    tenant = make_tenant(http, "err-episode")
    declare(http, tenant.headers, "home_city", "string")

    response = http.post(
        "/v1/episodes",
        json={
            **EPISODE,
            "updates": [candidate("mira", "undeclared", "x"), {"subject": "mira"}],
        },
        headers=tenant.headers,
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert [(r["index"], r["status"], r["field"]) for r in body["results"]] == [
        (0, "invalid", "attribute"),
        (1, "invalid", "evidence"),
    ]
    assert http.get("/v1/episodes/bad-ep", headers=tenant.headers).json()["text"] == EPISODE["text"]
    assert http.get("/v1/subjects", headers=tenant.headers).json()["subjects"] == []


def test_resolving_a_settled_conflict_again_is_409_and_changes_nothing(
    http: Client, pool: ConnectionPool
) -> None:
    seeded = seed(
        http,
        make_tenant(http, "err-resolve"),
        city="Lisbon",
        deadline="2026-07-15",
        rival_deadline="2026-06-30",
        words="harbour",
        own_subject="only-a",
        own_episode="ep-a-only",
        own_attribute="a_note",
    )
    path = f"/v1/conflicts/{seeded.conflict_id}/resolve"
    first = http.post(path, json={"choose": "challenger"}, headers=seeded.headers)
    assert first.status_code == 200, first.text
    before = tenant_rows(pool, seeded.tenant.name)

    again = http.post(path, json={"choose": "incumbent"}, headers=seeded.headers)

    assert_problem(again, 409, "conflict", field="conflict_id")
    assert tenant_rows(pool, seeded.tenant.name) == before


def test_metadata_as_deep_as_allowed_reads_back_whole(http: Client) -> None:
    tenant = make_tenant(http, "err-deep")
    metadata: dict[str, Any] = {"level": 1}
    deepest = metadata
    for level in range(2, MAX_METADATA_DEPTH + 1):
        deepest["next"] = {"level": level}
        deepest = deepest["next"]

    recorded = record(
        http, tenant.headers, "deep", "deep metadata", subjects=["mira"], metadata=metadata
    )
    read = http.get("/v1/episodes/deep", headers=tenant.headers)
    exported = http.get("/v1/subjects/mira/export", headers=tenant.headers)

    assert recorded["metadata"] == metadata
    assert read.status_code == 200, read.text
    assert read.json()["metadata"] == metadata
    assert exported.status_code == 200, exported.text
    assert exported.json()["episodes"][0]["metadata"] == metadata


# -- hostile input: never a 5xx ---------------------------------------------------------------

VALID_BODIES: dict[str, dict[str, Any]] = {
    "declare-attribute": {"value_type": "string", "description": "d", "aliases": ["a"]},
    "record-episode": {**EPISODE, "subjects": ["mira"], "metadata": {"k": "v"}},
    "record-batch": {"episodes": [EPISODE]},
    "apply-updates": {"candidates": [candidate("mira", "home_city", "Porto")]},
    "expire": EXPIRE,
    "retract": {"valid_from": "2026-03-01T09:00:00Z"},
    "resolve-conflict": {"choose": "incumbent"},
    "evidence-search": {**SEARCH, "subject": "mira", "k": 3, "occurred_from": NAIVE + "Z"},
    "context": {**CONTEXT, "subject": "mira", "attributes": ["home_city"], "token_budget": 64},
    "create-tenant": {"tenant_id": "hostile-made"},
}
HOSTILE_VALUES: list[Any] = [
    None,
    True,
    -1,
    10**30,
    1e308,
    "",
    "\u0000",
    "x" * 20_000,
    {},
    [],
    [[[[[[[[]]]]]]]],
    {"$ne": 1},
    "' OR 1=1 --",
    "../../etc/passwd",
    "2026-02-30T25:61:00Z",
    OVERFLOWING,
    "0001-01-01T00:00:00+14:00",
    "\U0001f4a9" * 50,
]
HOSTILE_WHOLE: list[bytes] = [
    DEEP,
    b'{"a": ' + b"[" * 900 + b"]" * 900 + b"}",
    b"\xef\xbb\xbf{}",
    b'{"a": 1, "a": 2}',
    b'{"k": 1' + b"0" * 5000 + b"}",
    b'{"k": 1e99999}',
    b'{"store": 1}',
    b'{"resources": 1}',
    b'{"tenant_id": "x"}',
    b'{"data": 1}',
    b'{"__proto__": {"admin": true}}',
    b"\x00\x00\x00",
]
HOSTILE_PATHS = [
    "%00",
    "%FF",
    "%2e%2e",
    "a%2Fb",
    "\U0001f4a9",
    "x" * 5000,
    "-",
    ".",
    "@:",
]
HOSTILE_QUERIES = [
    "valid_at=%00",
    "valid_at=%FF",
    "valid_at=" + OVERFLOWING.replace("+", "%2B"),
    "known_at=0001-01-01T00:00:00%2B14:00",
    "at=9999-12-31T23:59:59Z&known_at=0001-01-01T00:00:00Z",
    "valid_at=2026-01-01T00:00:00Z&valid_at=2026-02-01T00:00:00Z",
    "limit=" + "9" * 5000,
    "limit=1e3",
    "cursor=%FF%FE",
    "cursor=" + "W" * 999,
    "status=%00",
    "subject=" + "s" * 5000,
]
GET_ROUTES = {
    "read-fact-subject": ("/v1/facts/{x}/home_city", "mira"),
    "read-fact-attribute": ("/v1/facts/mira/{x}", "home_city"),
    "read-history": ("/v1/facts/{x}/home_city/history", "mira"),
    "read-profile": ("/v1/subjects/{x}/profile", "mira"),
    "export-subject": ("/v1/subjects/{x}/export", "mira"),
    "read-episode": ("/v1/episodes/{x}", "ep-1"),
    "list-subjects": ("/v1/subjects", ""),
    "list-conflicts": ("/v1/conflicts", ""),
}
"""GET routes: the path, and the name that fills its one variable part."""


def _bodies(route: str) -> Iterator[tuple[str, bytes]]:
    valid = VALID_BODIES[route]
    for key in valid:
        for value in HOSTILE_VALUES:
            yield f"{key}={value!r:.40}", json.dumps({**valid, key: value}).encode()
    if route in {"apply-updates", "record-batch"}:
        outer = "candidates" if route == "apply-updates" else "episodes"
        [inner] = valid[outer]
        for key in inner:
            for value in HOSTILE_VALUES:
                body = {**valid, outer: [{**inner, key: value}]}
                yield f"{outer}.0.{key}={value!r:.40}", json.dumps(body).encode()
    # Litestar names a body field after the handler parameter it fills; fields named like
    # the app's dependencies must still be plain unknown fields.
    for name in ("store", "resources", "tenant_id", "data", "request"):
        yield f"{name}=1", json.dumps({**valid, name: 1}).encode()
    for whole in HOSTILE_WHOLE:
        yield f"body={whole[:40]!r}", whole


@pytest.fixture(scope="module")
def target(http: Client) -> Seeded:
    """A tenant of its own for hostile input, which may well write."""
    return seed(
        http,
        make_tenant(http, "err-hostile"),
        city="Lisbon",
        deadline="2026-07-15",
        rival_deadline="2026-06-30",
        words="harbour",
        own_subject="only-a",
        own_episode="ep-a-only",
        own_attribute="a_note",
    )


def _refusals_that_break_the_contract(
    responses: Iterator[tuple[str, httpx.Response]],
) -> list[str]:
    broken = []
    for label, response in responses:
        if response.status_code >= 500:
            broken.append(f"{label}: {response.status_code}")
        elif response.status_code >= 400 and not response.headers["content-type"].startswith(
            PROBLEM_MEDIA_TYPE
        ):
            broken.append(f"{label}: {response.status_code} not a problem")
    return broken


@pytest.mark.parametrize("route", list(VALID_BODIES))
def test_hostile_bodies_never_get_a_5xx(http: Client, target: Seeded, route: str) -> None:
    method, path = BODY_ROUTES[route]
    headers = {**(ADMIN if route == "create-tenant" else target.headers), **JSON_TYPE}
    path = path.replace("{conflict}", target.conflict_id)

    broken = _refusals_that_break_the_contract(
        (label, http.request(method, path, content=body, headers=headers))
        for label, body in _bodies(route)
    )

    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("route", list(GET_ROUTES))
def test_hostile_paths_and_queries_never_get_a_5xx(
    http: Client, target: Seeded, route: str
) -> None:
    template, name = GET_ROUTES[route]
    paths = [template.replace("{x}", part) for part in HOSTILE_PATHS] if name else []
    paths += [f"{template.replace('{x}', name)}?{query}" for query in HOSTILE_QUERIES]

    broken = _refusals_that_break_the_contract(
        (path[:80], http.get(path, headers=target.headers)) for path in paths
    )

    assert not broken, "\n".join(broken)
