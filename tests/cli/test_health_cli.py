"""``sgam health classify`` and ``sgam health cases`` as a shell user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from retrieval.memory_health.cases import CASES_PATH, load_cases
from server.cli import app

runner = CliRunner()


def _case_file(tmp_path: Path, name: str) -> Path:
    """The input of one fixture case, written as a health file."""
    (case,) = [case for case in load_cases() if case.name == name]
    path = tmp_path / f"{name}.json"
    path.write_text(case.input.model_dump_json(), encoding="utf-8")
    return path


def test_classify_prints_one_verdict_per_expectation(tmp_path: Path) -> None:
    path = _case_file(tmp_path, "healthy_working_memory")
    result = runner.invoke(app, ["health", "classify", str(path)])
    assert result.exit_code == 0, result.output
    verdicts = json.loads(result.stdout)["verdicts"]
    assert [(v["verdict"], v["layer"], v["operating_state"]) for v in verdicts] == [
        ("HEALTHY", "healthy", "healthy"),
        ("HEALTHY", "healthy", "investigate_execution"),
    ]
    assert set(verdicts[0]) == {
        "decision_id",
        "memory_type",
        "verdict",
        "layer",
        "receipt_id",
        "detail",
        "operating_state",
    }
    assert verdicts[0]["decision_id"] == "d0000000-0000-4000-8000-000000000001"
    assert verdicts[0]["memory_type"] == "working"
    assert "run-7f3a" not in result.stdout  # the thread's name never comes back


def test_classify_reports_an_unavailable_subsystem_as_unknown(tmp_path: Path) -> None:
    path = _case_file(tmp_path, "unavailable_evidence")
    result = runner.invoke(app, ["health", "classify", str(path)])
    assert result.exit_code == 0, result.output
    (verdict,) = json.loads(result.stdout)["verdicts"]
    assert (verdict["verdict"], verdict["receipt_id"], verdict["operating_state"]) == (
        "UNKNOWN",
        None,
        "uncertain",
    )


def test_a_malformed_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    data = json.loads(_case_file(tmp_path, "scope_violation").read_text(encoding="utf-8"))
    data["expectations"][0]["memory"]["attribute"] = "not an identifier"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["health", "classify", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path}: expectations.0.memory.semantic.attribute: ")
    assert "pattern" in lines[0]


def test_a_file_that_is_not_json_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    result = runner.invoke(app, ["health", "classify", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: (document): Invalid JSON")


def test_a_missing_required_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"tenant_id": "acme", "receipts": []}), encoding="utf-8")
    result = runner.invoke(app, ["health", "classify", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}: expectations: Field required"


def test_the_builtin_cases_pass() -> None:
    result = runner.invoke(app, ["health", "cases"])
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()
    assert rows[0].split() == ["case", "verdict", "operating_state", "check"]
    assert len(rows) == 1 + 10
    assert all(row.split()[-1] == "ok" for row in rows[1:])
    assert any(row.split()[:2] == ["read_failure", "READ_MISSING"] for row in rows)
    assert "all 10 verdicts of 9 cases match" in result.stderr


def test_a_cases_file_with_a_wrong_expectation_exits_1(tmp_path: Path) -> None:
    data = json.loads(CASES_PATH.read_text(encoding="utf-8"))
    (changed,) = [case for case in data["cases"] if case["name"] == "continuity_loss"]
    changed["expected"][0]["verdict"] = "HEALTHY"
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["health", "cases", str(path)])
    assert result.exit_code == 1
    rows = [row.split() for row in result.stdout.splitlines()]
    assert ["continuity_loss", "CONTINUITY_LOST", "fix_memory_first", "MISMATCH"] in rows
    assert sum(row[-1] == "MISMATCH" for row in rows) == 1
    assert (
        "continuity_loss[0]: expected HEALTHY/fix_memory_first,"
        " got CONTINUITY_LOST/fix_memory_first" in result.stderr
    )
    assert "1 of 10 verdicts differ" in result.stderr


def test_health_help_lists_both_commands() -> None:
    result = runner.invoke(app, ["health", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "classify" in result.output
    assert "cases" in result.output
