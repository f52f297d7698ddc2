"""A request that records episodes with their candidates is one transaction: answered with an
error, it changed nothing; a candidate the rules refuse is a result, and the rest proceed."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from store.facts import candidates
from tests.conftest import ApiTenant
from tests.http_helpers import candidate, declare, tenant_rows

Client = TestClient[Litestar]


def _episode(episode_id: str, *updates: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": episode_id,
        "occurred_at": "2026-05-01T09:00:00Z",
        "text": f"Mira's note {episode_id}: good.",
        "updates": list(updates),
    }


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/episodes", _episode("one", candidate("mira", "n_str", "good"))),
        (
            "/v1/episodes/batch",
            {
                "episodes": [
                    _episode("first", candidate("mira", "n_str", "good")),
                    _episode("second", candidate("mira", "n_str", "better")),
                ]
            },
        ),
    ],
)
def test_a_database_refusal_while_applying_candidates_leaves_nothing_recorded(
    *,
    http: Client,
    api_tenant: ApiTenant,
    pool: ConnectionPool,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    body: dict[str, Any],
) -> None:
    declare(http, api_tenant.headers, "n_str", "string")
    before = tenant_rows(pool, api_tenant.name)
    real = candidates.lock_keys  # type: ignore[attr-defined]
    calls: list[object] = []

    def refusing(*args: Any, **kwargs: Any) -> Any:
        # The first episode's candidates are written; the last one's are refused.
        calls.append(kwargs["keys"])
        if len(calls) == len(body.get("episodes", [body])):
            raise psycopg.errors.CheckViolation("a value the database refuses")
        return real(*args, **kwargs)

    monkeypatch.setattr(candidates, "lock_keys", refusing)
    response = http.post(path, json=body, headers=api_tenant.headers)

    assert response.status_code == 409, response.text
    assert response.json()["code"] == "conflict"
    assert tenant_rows(pool, api_tenant.name) == before


def test_a_candidate_the_rules_refuse_is_a_result_and_the_rest_are_written(
    http: Client, api_tenant: ApiTenant
) -> None:
    declare(http, api_tenant.headers, "n_str", "string")
    declare(http, api_tenant.headers, "n_json", "json")
    body = _episode(
        "mixed", candidate("mira", "n_str", "good"), candidate("mira", "n_json", "1e400")
    )

    response = http.post("/v1/episodes", json=body, headers=api_tenant.headers)

    assert response.status_code == 200, response.text
    statuses = [(result["status"], result["field"]) for result in response.json()["results"]]
    assert statuses == [("written", None), ("invalid", "value")]
    fact = http.get("/v1/facts/mira/n_str", headers=api_tenant.headers)
    assert fact.json()["value"] == "good"
