"""Attribute migrations over HTTP and from ``sgam attribute migrate``: the problems' statuses
and members, the context call after a rename, the command. The migrations themselves are
scenarios of tests/conformance/test_attribute_migrations.py, run over HTTP too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from server.cli import app
from tests.http_helpers import (
    assert_problem,
    candidate,
    declare,
    make_tenant,
    record,
    tenant_rows,
)

Client = TestClient[Litestar]
runner = CliRunner()


def _seed(http: Client, headers: dict[str, str]) -> dict[str, Any]:
    declare(http, headers, "home_city", "string")
    recorded = record(
        http,
        headers,
        "ep-1",
        "Mira lives in Oslo; Ada in Turin.",
        updates=[candidate("mira", "home_city", "Oslo"), candidate("ada", "home_city", "Turin")],
    )
    return {r["fact"]["subject"]: r["fact"] for r in recorded["results"]}


def _migrate(http: Client, headers: dict[str, str], path: str, **body: Any) -> Any:
    return http.post(f"/v1/attributes/{path}/migrations", json=body, headers=headers)


def test_after_a_rename_the_context_call_asks_about_the_old_name_as_the_new(
    http: Client,
) -> None:
    tenant = make_tenant(http, "evolve")
    headers = tenant.headers
    _seed(http, headers)
    run = _migrate(http, headers, "home_city", attribute="city", value_type="string")
    assert run.status_code == 200, run.text
    context = http.post(
        "/v1/context",
        json={"question": "Where does Mira live?", "subject": "mira", "attributes": ["home_city"]},
        headers=headers,
    ).json()
    plan = context["plan"]
    assert (plan["attributes"], plan["migrated_from"]) == (
        ["city"],
        [{"attribute": "city", "migrated_from": "home_city"}],
    )
    assert [(f["attribute"], f["value"]) for f in context["facts"]] == [("city", "Oslo")]
    # A fact without a migration carries no migrated_from member at all.
    assert "migrated_from" not in http.get("/v1/facts/mira/city", headers=headers).json()


def test_unconvertible_values_answer_409_with_the_list_in_the_problem(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = make_tenant(http, "evolve")
    headers = tenant.headers
    facts = _seed(http, headers)
    before = tenant_rows(pool, tenant.name)
    refused = _migrate(http, headers, "home_city", value_type="integer")
    body = assert_problem(refused, 409, "conflict", field="keep_unconvertible")
    assert body["unconvertible"] == [
        {
            "fact_id": facts[subject]["fact_id"],
            "version_id": facts[subject]["version_id"],
            "subject": subject,
            "value": facts[subject]["value"],
            "reason": f"as integer: {facts[subject]['value']!r} is not an integer",
        }
        for subject in ("ada", "mira")
    ]
    assert tenant_rows(pool, tenant.name) == before
    retyped = http.put("/v1/attributes/home_city", json={"value_type": "date"}, headers=headers)
    problem = assert_problem(retyped, 409, "schema_change_requires_migration", field="value_type")
    assert "/v1/attributes/home_city/migrations" in problem["detail"]


@pytest.fixture
def database(conninfo: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI pointed at the module's migrated database."""
    monkeypatch.setenv("DATABASE_URL", conninfo)
    return conninfo


def test_sgam_attribute_migrate_dry_runs_refuses_and_runs(
    http: Client, database: str, tmp_path: Path
) -> None:
    tenant = make_tenant(http, "evolve")
    facts = _seed(http, tenant.headers)
    to = tmp_path / "city.json"
    to.write_text(json.dumps({"value_type": "enum", "enum_values": ["Oslo"]}), encoding="utf-8")
    command = ["attribute", "migrate", "home_city", "--to", str(to), "--tenant", tenant.name]
    dry = runner.invoke(app, [*command, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    report = json.loads(dry.stdout)
    assert (report["dry_run"], [u["subject"] for u in report["unconvertible"]]) == (
        True,
        ["ada"],
    )
    refused = runner.invoke(app, command)
    assert refused.exit_code == 2, refused.output
    assert json.loads(refused.stderr.split("\n", 1)[1]) == report["unconvertible"]
    kept = runner.invoke(app, [*command, "--keep-unconvertible"])
    assert kept.exit_code == 0, kept.output
    done = json.loads(kept.stdout)
    assert (done["dry_run"], done["converted"], done["unconvertible"]) == (
        False,
        report["converted"],
        report["unconvertible"],
    )
    read = http.get("/v1/facts/mira/home_city", headers=tenant.headers).json()
    assert (read["fact_id"], read["value"], read["schema_version"]) == (
        facts["mira"]["fact_id"],
        "Oslo",
        2,
    )
    assert "migrate" in runner.invoke(app, ["attribute", "--help"]).output


def test_sgam_attribute_migrate_analyzes_the_versions_it_wrote(
    http: Client, database: str, tmp_path: Path
) -> None:
    """The converted versions are new rows of fact_versions: the planner's statistics count
    them as soon as the command ends."""
    tenant = make_tenant(http, "analyzed")
    _seed(http, tenant.headers)
    to = tmp_path / "city.json"
    to.write_text(json.dumps({"value_type": "enum", "enum_values": ["Oslo", "Turin"]}), "utf-8")
    command = ["attribute", "migrate", "home_city", "--to", str(to), "--tenant", tenant.name]
    done = runner.invoke(app, command)
    assert done.exit_code == 0, done.output
    assert len(json.loads(done.stdout)["converted"]) == 2
    with psycopg.connect(database) as conn:
        counted = conn.execute(
            "SELECT reltuples::bigint, (SELECT count(*) FROM fact_versions) FROM pg_class"
            " WHERE relname = 'fact_versions'"
        ).fetchone()
    assert counted is not None
    assert counted[0] == counted[1]  # a small table's ANALYZE counts every row
