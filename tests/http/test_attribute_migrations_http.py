"""Attribute migrations over HTTP and from ``sgam attribute migrate``: the refused PUT, the
migration route's dry run and run, the listed refusal, and the old name's dual reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def test_a_put_that_changes_the_type_or_the_name_is_refused_and_changes_nothing(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = make_tenant(http, "evolve")
    _seed(http, tenant.headers)
    before = tenant_rows(pool, tenant.name)
    retyped = http.put(
        "/v1/attributes/home_city", json={"value_type": "date"}, headers=tenant.headers
    )
    body = assert_problem(retyped, 409, "schema_change_requires_migration", field="value_type")
    assert "/v1/attributes/home_city/migrations" in body["detail"]
    renamed = http.put(
        "/v1/attributes/home_city",
        json={"attribute": "city", "value_type": "string"},
        headers=tenant.headers,
    )
    assert_problem(renamed, 409, "schema_change_requires_migration", field="attribute")
    assert tenant_rows(pool, tenant.name) == before


def test_the_migration_route_dry_runs_then_renames_and_the_old_name_answers_from_the_new(
    http: Client,
) -> None:
    tenant = make_tenant(http, "evolve")
    headers = tenant.headers
    facts = _seed(http, headers)
    dry = _migrate(http, headers, "home_city", attribute="city", value_type="string", dry_run=True)
    assert dry.status_code == 200, dry.text
    report = dry.json()
    assert (report["dry_run"], report["migration_id"], report["migrated_from"]) == (
        True,
        None,
        "home_city",
    )
    assert http.get("/v1/facts/mira/city", headers=headers).status_code == 404
    run = _migrate(http, headers, "home_city", attribute="city", value_type="string")
    assert run.status_code == 200, run.text
    done = run.json()
    same = {"dry_run", "migration_id", "dual_read_until"}
    assert {k: v for k, v in done.items() if k not in same} == {
        k: v for k, v in report.items() if k not in same
    }
    assert [(c["subject"], c["fact_id"]) for c in done["converted"]] == [
        ("ada", facts["ada"]["fact_id"]),
        ("mira", facts["mira"]["fact_id"]),
    ]
    # The old name reads the new one and says so: the fact, its history, and a write.
    read = http.get("/v1/facts/mira/home_city", headers=headers).json()
    assert (read["attribute"], read["value"], read["migrated_from"], read["schema_version"]) == (
        "city",
        "Oslo",
        "home_city",
        2,
    )
    assert "migrated_from" not in http.get("/v1/facts/mira/city", headers=headers).json()
    history = http.get("/v1/facts/mira/home_city/history", headers=headers).json()
    assert [(f["attribute"], f["schema_version"], f["migrated_from"]) for f in history] == [
        ("home_city", 1, "home_city"),
        ("city", 2, "home_city"),
    ]
    profile = http.get("/v1/subjects/mira/profile", headers=headers).json()
    assert [(f["attribute"], f["migrated_from"]) for f in profile["facts"]] == [
        ("city", "home_city")
    ]
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
    moved = candidate("mira", "home_city", "Bergen", valid_from="2026-04-01T00:00:00Z")
    written = http.post(
        "/v1/episodes/ep-1/updates", json={"candidates": [moved]}, headers=headers
    ).json()
    [result] = written["results"]
    assert (result["status"], result["migrated_from"], result["fact"]["attribute"]) == (
        "written",
        "home_city",
        "city",
    )
    assert http.get("/v1/facts/mira/city", headers=headers).json()["value"] == "Bergen"


def test_unconvertible_values_answer_409_with_the_list_unless_kept(
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
    assert http.get("/v1/facts/mira/home_city", headers=headers).json() == facts["mira"]
    kept = _migrate(http, headers, "home_city", value_type="integer", keep_unconvertible=True)
    assert kept.status_code == 200, kept.text
    answer = kept.json()
    assert (answer["kept_unconvertible"], answer["converted"], answer["schema_version"]) == (
        True,
        [],
        2,
    )
    assert [u["fact_id"] for u in answer["unconvertible"]] == [
        facts["ada"]["fact_id"],
        facts["mira"]["fact_id"],
    ]
    still = http.get("/v1/facts/mira/home_city", headers=headers).json()
    assert still == {**facts["mira"], "unconvertible": True}


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
