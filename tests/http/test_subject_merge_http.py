"""Subject merge over HTTP, through the client and from ``sgam subjects merge``.

What only HTTP shows: a refused merge is problem+json with its status, and the context call
asks about the duplicate's id as the survivor. The scenarios every surface shares are in
tests/conformance/test_subject_merge.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from server.cli import app
from server.client.sync import SGAMClient
from tests.http_helpers import assert_problem, candidate, declare, make_tenant, record, tenant_rows

Client = TestClient[Litestar]
runner = CliRunner()


def _seed(http: Client, headers: dict[str, str]) -> None:
    declare(http, headers, "home_city", "string")
    declare(http, headers, "passport_deadline", "date")
    record(
        http,
        headers,
        "ep-1",
        "Mira's passport deadline is 2026-07-15.",
        updates=[
            candidate(
                "mira",
                "passport_deadline",
                "2026-07-15",
                evidence="Mira's passport deadline is 2026-07-15.",
            )
        ],
    )
    record(
        http,
        headers,
        "ep-2",
        "M. Okafor lives in Lisbon.",
        occurred_at="2026-03-02T09:00:00Z",
        subjects=["m-okafor"],
        updates=[candidate("m-okafor", "home_city", "Lisbon", evidence="lives in Lisbon")],
    )


def test_a_merge_without_into_is_a_422_problem_and_refusals_keep_their_statuses(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = make_tenant(http, "merge")
    _seed(http, tenant.headers)
    before = tenant_rows(pool, tenant.name)

    def merge(subject: str, body: Any) -> Any:
        return http.post(f"/v1/subjects/{subject}/merge", json=body, headers=tenant.headers)

    assert_problem(merge("m-okafor", {}), 422, "invalid", field="into")
    assert_problem(merge("m-okafor", {"into": "m-okafor"}), 422, "invalid", field="into")
    assert_problem(merge("nobody", {"into": "mira"}), 404, "not_found", field="subject")
    assert tenant_rows(pool, tenant.name) == before
    assert merge("m-okafor", {"into": "mira"}).status_code == 200
    assert_problem(merge("m-okafor", {"into": "mira"}), 409, "conflict", field="subject")


def test_the_old_id_is_asked_about_as_the_survivor(http: Client) -> None:
    tenant = make_tenant(http, "merge")
    _seed(http, tenant.headers)
    with SGAMClient(str(http.base_url), tenant.headers["Authorization"][7:], http=http) as client:
        client.merge_subject("m-okafor", into="mira")

    def ask(subject: str) -> dict[str, Any]:
        response = http.post(
            "/v1/context",
            json={"question": "Where does she live?", "subject": subject, "evidence_k": 0},
            headers=tenant.headers,
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    by_old, by_survivor = ask("m-okafor"), ask("mira")
    assert [(f["subject"], f["value"]) for f in by_old["facts"]] == [("mira", "Lisbon")]
    assert by_old["block"] == by_survivor["block"]


@pytest.fixture
def database(conninfo: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI pointed at the module's migrated database."""
    monkeypatch.setenv("DATABASE_URL", conninfo)
    return conninfo


def test_sgam_subjects_merge_prints_the_receipt(http: Client, database: str) -> None:
    tenant = make_tenant(http, "merge")
    _seed(http, tenant.headers)
    command = ["subjects", "merge", "m-okafor", "--into", "mira", "--tenant", tenant.name]
    done = runner.invoke(app, command)
    assert done.exit_code == 0, done.output
    receipt = json.loads(done.stdout)
    assert {k: v for k, v in receipt.items() if k != "merge_id"} == {
        "merged": "m-okafor",
        "into": "mira",
        "versions_moved": 1,
        "conflicts_moved": 0,
        "episodes_linked": 1,
    }
    again = runner.invoke(app, command)
    assert again.exit_code == 1
    assert "already merged" in again.stderr
