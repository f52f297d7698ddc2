"""``sgam eval`` and ``sgam bench`` come from evals/ through the ``sgam.commands`` entry points,
and say in one line which extra to install when it is missing."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from evals import extra
from server.cli import PLUGINS, app

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_entry_points_register_eval_and_bench_on_sgam() -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"][PLUGINS]
    installed = {entry.name: entry.value for entry in entry_points(group=PLUGINS)}
    assert (
        installed
        == declared
        == {
            "eval": "evals.cli_eval:eval_app",
            "bench": "evals.cli_bench:bench",
        }
    )
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert {"eval", "bench"} <= set(commands)
    assert {"leakage", "replay"} <= set(commands["eval"].commands)


def test_the_extra_names_the_modules_of_the_evals_extra() -> None:
    required = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    names = {requirement.split(">")[0].split("=")[0].strip() for requirement in required["evals"]}
    assert names == set(extra.MODULES)
    assert extra.missing_modules() == []  # the test environment installs the extra
    assert f"sgam[{extra.EXTRA}]" in required["dev"]


@pytest.mark.parametrize(
    ("command", "args"),
    [("eval", ["eval", "leakage", "--size", "quick"]), ("bench", ["bench", "--quick"])],
)
def test_without_the_extra_a_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str, args: list[str]
) -> None:
    monkeypatch.setattr(extra, "MODULES", ("matplotlib", "sgam_no_such_module"))
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        (
            f"error: sgam {command} needs the evals extra (sgam_no_such_module not installed):"
            " pip install -e '.[evals]'"
        )
    ]
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_help_needs_no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extra, "MODULES", ("sgam_no_such_module",))
    result = CliRunner().invoke(app, ["eval", "--help"])
    assert result.exit_code == 0
    assert "leakage" in result.output
