"""Builders for the HTTP tests: tenants through the admin API, seeded data, problem checks."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient
from psycopg import sql
from psycopg_pool import ConnectionPool

from tests.conftest import ADMIN_TOKEN, ApiTenant
from tests.helpers import owner_connection

Client = TestClient[Litestar]
PROBLEM_MEDIA_TYPE = "application/problem+json"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
UNSET: Any = object()
"""``assert_problem(field=UNSET)``: the problem must carry no ``field``."""
SEEDED_AT = {"X-SGAM-Now": "2026-03-05T00:00:00Z"}
"""The system time of ``seed``'s writes: fixed, so that fixed read times come after it on any
date the tests run."""
READ_AT = {"X-SGAM-Now": "2027-01-01T00:00:00Z"}
"""A fixed system time for reads, so that two reads of unchanged state answer the same.

It falls after ``SEEDED_AT``, but a write at the wall clock may fall after it: a test whose
reads at ``READ_AT`` must see a write sets that write's clock before it."""

DEPENDENCIES = frozenset({"store", "tenant_id", "reader", "times", "trace", "resources"})
"""The names routes are injected with; ``dependency_names`` of the app must be these."""

_numbers = itertools.count(1)


def dependency_names(app: Litestar) -> set[str]:
    """Every name that some route of ``app`` is offered a dependency under."""
    return {
        name
        for route in app.routes
        for handler in getattr(route, "route_handlers", ())
        for name in handler.resolve_dependencies()
    }


def make_tenant(http: httpx.Client, prefix: str = "http") -> ApiTenant:
    """A fresh tenant and one API key for it, made through the admin API."""
    name = f"{prefix}-{next(_numbers)}"
    created = http.post("/v1/admin/tenants", json={"tenant_id": name}, headers=ADMIN)
    assert created.status_code == 201, created.text
    issued = http.post(f"/v1/admin/tenants/{name}/keys", headers=ADMIN)
    assert issued.status_code == 201, issued.text
    body = issued.json()
    return ApiTenant(name, body["key_id"], {"Authorization": f"Bearer {body['api_key']}"})


def assert_problem(
    response: httpx.Response, status: int, code: str, *, field: str | None = None
) -> dict[str, Any]:
    """Assert an RFC 9457 problem with ``status`` and ``code``; ``field`` when one is given.

    With ``field=None`` the problem's ``field`` is not checked; pass ``UNSET`` to require that
    it has none.
    """
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith(PROBLEM_MEDIA_TYPE), response.headers
    body: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail", "code"} <= body.keys(), body
    assert body["status"] == status, body
    assert body["code"] == code, body
    assert body["type"] == f"urn:sgam:problem:{code}", body
    assert isinstance(body["title"], str), body
    assert body["title"], body
    assert isinstance(body["detail"], str), body
    assert body["detail"], body
    if field is UNSET:
        assert "field" not in body, body
    elif field is not None:
        assert body.get("field") == field, body
    return body


def declare(
    http: Client, headers: dict[str, str], attribute: str, value_type: str, **extra: Any
) -> dict[str, Any]:
    """Declare an attribute; the stored declaration."""
    response = http.put(
        f"/v1/attributes/{attribute}",
        json={"value_type": value_type, "description": f"the {attribute}", **extra},
        headers=headers,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def record(
    http: Client,
    headers: dict[str, str],
    episode_id: str,
    text: str,
    *,
    occurred_at: str = "2026-03-01T09:00:00Z",
    updates: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Record an episode with its candidates; the recorded episode and results."""
    body = {"id": episode_id, "occurred_at": occurred_at, "text": text, **extra}
    if updates is not None:
        body["updates"] = updates
    response = http.post("/v1/episodes", json=body, headers=headers)
    assert response.status_code == 200, response.text
    recorded: dict[str, Any] = response.json()
    return recorded


def candidate(
    subject: str, attribute: str, value: str | None, *, evidence: str = "", **extra: Any
) -> dict[str, Any]:
    """A MemoryUpdate proposing ``value`` for ``subject.attribute``."""
    return {
        "evidence": evidence,
        "subject": subject,
        "attribute": attribute,
        "change": "update",
        "value": value,
        **extra,
    }


@dataclass(frozen=True)
class Seeded:
    """What ``seed`` wrote for one tenant, by name."""

    tenant: ApiTenant
    fact_ids: dict[str, str]
    """``subject.attribute`` -> the fact_id current for it."""
    conflict_id: str
    subjects: tuple[str, ...]
    episodes: tuple[str, ...]
    attributes: tuple[str, ...]

    @property
    def headers(self) -> dict[str, str]:
        """The tenant's API-key headers."""
        return self.tenant.headers


def seed(
    http: Client,
    tenant: ApiTenant,
    *,
    city: str,
    deadline: str,
    rival_deadline: str,
    words: str,
    own_subject: str,
    own_episode: str,
    own_attribute: str,
) -> Seeded:
    """The same shape of memory for every tenant; values, words and own names differ.

    Shared: attributes ``home_city`` (string) and ``passport_deadline`` (date, reject on equal
    starts), subject ``mira``, episodes ``ep-1`` to ``ep-3``, and an open conflict on
    ``mira.passport_deadline``. The tenant's own: ``own_attribute``, a subject ``own_subject``
    and an episode ``own_episode`` whose text holds ``words``. Everything is written at
    ``SEEDED_AT``.
    """
    headers = {**tenant.headers, **SEEDED_AT}
    declare(http, headers, "home_city", "string")
    declare(http, headers, "passport_deadline", "date")
    declare(http, headers, own_attribute, "string")
    start = "2026-03-01T09:00:00Z"
    batch = [
        {
            "id": "ep-1",
            "occurred_at": start,
            "text": f"Mira moved to {city}. {words}",
            "subjects": ["mira"],
            "updates": [
                candidate("mira", "home_city", city),
                candidate("mira", "passport_deadline", deadline),
            ],
        },
        {
            "id": "ep-2",
            "occurred_at": start,
            "text": f"Another note says the deadline is {rival_deadline}. {words}",
            "updates": [candidate("mira", "passport_deadline", rival_deadline)],
        },
        {
            "id": own_episode,
            "occurred_at": "2026-03-02T09:00:00Z",
            "text": f"{own_subject} lives in {city}. {words}",
            "subjects": [own_subject],
            "updates": [
                candidate(own_subject, "home_city", city),
                candidate(own_subject, own_attribute, words),
            ],
        },
        {
            "id": "ep-3",
            "occurred_at": start,
            "text": f"A plain note from {city}. {words}",
            "subjects": ["mira"],
        },
    ]
    response = http.post("/v1/episodes/batch", json={"episodes": batch}, headers=headers)
    assert response.status_code == 200, response.text
    first, rival, own, _ = (episode["results"] for episode in response.json()["episodes"])
    assert [r["status"] for r in [*first, *rival, *own]] == [
        "written",
        "written",
        "conflict",
        "written",
        "written",
    ], response.text
    facts = {
        "mira.home_city": first[0]["fact"]["fact_id"],
        "mira.passport_deadline": first[1]["fact"]["fact_id"],
        f"{own_subject}.home_city": own[0]["fact"]["fact_id"],
        f"{own_subject}.{own_attribute}": own[1]["fact"]["fact_id"],
    }
    conflict = rival[0]
    return Seeded(
        tenant,
        facts,
        conflict["conflict_id"],
        subjects=("mira", own_subject),
        episodes=("ep-1", "ep-2", "ep-3", own_episode),
        attributes=("home_city", own_attribute, "passport_deadline"),
    )


def answer(response: httpx.Response) -> tuple[int, Any]:
    """A response's status and its JSON body (or text when it is not JSON)."""
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


def holdings(http: Client, seeded: Seeded) -> dict[str, Any]:
    """Everything the tenant holds, as its own key reads it at one fixed system time.

    Evidence search over every episode counts them all (``scope_size``), so an episode
    recorded under an unexpected id shows up too.
    """
    headers = {**seeded.headers, **READ_AT}

    def read(path: str) -> tuple[int, Any]:
        return answer(http.get(path, headers=headers))

    search = http.post(
        "/v1/evidence/search", json={"query": "where does mira live", "k": 50}, headers=headers
    )
    return {
        "attributes": read("/v1/attributes"),
        "schema": read("/v1/memory-update-schema"),
        "subjects": read("/v1/subjects"),
        "conflicts": read("/v1/conflicts?status=all"),
        "exports": {s: read(f"/v1/subjects/{s}/export") for s in seeded.subjects},
        "episodes": {e: read(f"/v1/episodes/{e}") for e in seeded.episodes},
        "histories": {
            f"{s}.{a}": read(f"/v1/facts/{s}/{a}/history")
            for s in seeded.subjects
            for a in seeded.attributes
        },
        "evidence": answer(search),
    }


_TENANT_TABLES = """
SELECT table_name FROM information_schema.columns
WHERE table_schema = 'public' AND column_name = 'tenant_id'
ORDER BY table_name
"""


def tenant_rows(pool: ConnectionPool, tenant_id: str) -> dict[str, list[str]]:
    """Every row of the tenant in every table with a ``tenant_id``, as sorted JSON, by table.

    One round trip: the state a refused request must leave exactly as it found it.
    """
    with owner_connection(pool) as conn:
        tables = [str(row[0]) for row in conn.execute(_TENANT_TABLES)]
        query = sql.SQL(" UNION ALL ").join(
            sql.SQL(
                "SELECT {name}::text, to_jsonb(t)::text FROM {table} AS t"
                " WHERE t.tenant_id = %(tenant_id)s"
            ).format(name=sql.Literal(table), table=sql.Identifier(table))
            for table in tables
        )
        found: dict[str, list[str]] = {table: [] for table in tables}
        for table, row in conn.execute(query, {"tenant_id": tenant_id}):
            found[table].append(row)
    return {table: sorted(rows) for table, rows in found.items()}
