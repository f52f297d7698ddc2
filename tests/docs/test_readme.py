"""Every code block of the README is run or validated by a test, and the README stays short.

Blocks are known by the section they sit in and their language. The curl tour and the Python
client example run against a real ``sgam serve`` in ``tests/cli/test_serve_tour.py``; the MCP
client's configuration starts ``sgam mcp`` in ``tests/cli/test_mcp.py``; the extraction
walkthrough runs against ``sgam extractor dev`` in ``tests/cli/test_extractor_dev.py``; the
others are checked here. A block added anywhere else fails
``test_every_readme_block_is_run_or_validated`` until a test covers it. The store example that
moved to the docs still runs here, as written.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from docs.hooks import cli_command, environment_names, subcommands
from server.commands.extractor import DEFAULT_PORT
from server.extraction.standin import STAND_IN_MODEL
from server.mcp.cli import McpSettings
from server.settings import Settings
from tests import mcp_helpers
from tests.cli import test_serve_tour

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PYTHON_GUIDE = ROOT / "docs" / "guides" / "python.md"
MAX_LINES = 200


@dataclass(frozen=True)
class Block:
    """A fenced code block: the ``## `` section it sits in, its language and its text."""

    section: str
    language: str
    text: str


def fenced_blocks(markdown: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order, with its section heading."""
    blocks: list[Block] = []
    lines: list[str] = []
    section, language = "", None
    for line in markdown.splitlines():
        if language is None:
            if line.startswith("## "):
                section = line[3:].strip()
            elif line.startswith("```"):
                language, lines = line[3:].strip(), []
        elif line.startswith("```"):
            blocks.append(Block(section, language, "\n".join(lines) + "\n"))
            language = None
        else:
            lines.append(line)
    assert language is None, "a fenced block is never closed"
    return blocks


COVERED = {
    ("Two commands", "bash"): "test_the_two_commands_are_the_scripts_that_serve_and_test",
    (
        "A five-minute tour",
        "bash",
    ): "tests/cli/test_serve_tour.py runs each step against sgam serve",
    ("Python client", "python"): "tests/cli/test_serve_tour.py runs it against sgam serve",
    ("MCP server", "json"): "test_the_mcp_configuration_is_valid; tests/cli/test_mcp.py starts it",
    ("Extraction", "bash"): "tests/cli/test_extractor_dev.py runs it; its exports validated here",
}
"""Each README block, by (section, language), and the test that runs or validates it."""


def readme_block(section: str, language: str) -> str:
    [block] = [
        block.text
        for block in fenced_blocks(README.read_text())
        if (block.section, block.language) == (section, language)
    ]
    return block


def test_every_readme_block_is_run_or_validated() -> None:
    found = [(block.section, block.language) for block in fenced_blocks(README.read_text())]
    assert sorted(found) == sorted(COVERED), (
        "each README code block needs a test that runs or validates it, listed in COVERED"
    )
    # The tests named above read the blocks under these very headings.
    assert test_serve_tour.TOUR_HEADING == "## A five-minute tour"
    assert test_serve_tour.PYTHON_HEADING == "## Python client"
    assert test_serve_tour.readme_block(test_serve_tour.TOUR_HEADING, "bash") == readme_block(
        "A five-minute tour", "bash"
    )
    assert test_serve_tour.readme_block(test_serve_tour.PYTHON_HEADING, "python") == (
        readme_block("Python client", "python")
    )


def test_the_readme_is_a_quickstart_of_at_most_200_lines() -> None:
    assert len(README.read_text().splitlines()) <= MAX_LINES


def test_the_readme_links_resolve() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the docs"
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert missing == []


def _commands(block: str) -> list[list[str]]:
    """Each line of a shell block as words, comments and blank lines left out."""
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_two_commands_are_the_scripts_that_serve_and_test() -> None:
    commands = _commands(readme_block("Two commands", "bash"))
    assert commands == [["./scripts/serve"], ["./scripts/test"]]
    for [command] in commands:
        script = ROOT / command
        assert script.is_file()
        assert os.access(script, os.X_OK), f"{command} is not executable"
        subprocess.run(["bash", "-n", str(script)], check=True)
        assert "source" in script.read_text()  # both install through scripts/_venv.sh
    # serve becomes the server the tour test starts; test runs the linters and pytest.
    assert 'exec .venv/bin/sgam serve "$@"' in (ROOT / "scripts" / "serve").read_text()
    test_script = (ROOT / "scripts" / "test").read_text()
    for tool in (".venv/bin/ruff check", ".venv/bin/mypy", '.venv/bin/pytest "$@"'):
        assert tool in test_script


def test_the_mcp_configuration_is_valid() -> None:
    config = json.loads(readme_block("MCP server", "json"))
    server = config["mcpServers"]["sgam"]
    assert server == mcp_helpers.readme_client_config()
    assert server["command"] == "sgam"
    [command] = server["args"]
    assert command in subcommands(cli_command())
    known = {
        env
        for name, field in McpSettings.model_fields.items()
        for env in environment_names(McpSettings, name, field)
    }
    assert set(server["env"]) == known
    settings = McpSettings(url=server["env"]["SGAM_URL"], key=server["env"]["SGAM_KEY"])
    assert settings.url == "http://127.0.0.1:8000"


def exported(block: str) -> dict[str, str]:
    """The variables a shell block's ``export`` lines set, each line's words in turn."""
    lines = [line for line in block.splitlines() if line.startswith("export ")]
    return {
        name: value
        for command in _commands("\n".join(lines))
        for name, value in (word.split("=", 1) for word in command[1:])
    }


def settings_from(variables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings of an environment holding ``variables`` and no other SGAM setting, after
    checking each variable is a setting's (a misspelt one would be ignored silently)."""
    known = {
        env
        for name, field in Settings.model_fields.items()
        for env in environment_names(Settings, name, field)
    }
    assert set(variables) <= known, f"not settings: {sorted(set(variables) - known)}"
    for name in os.environ:
        if name.startswith("SGAM_") or name == "DATABASE_URL":
            monkeypatch.delenv(name)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_the_extractor_configuration_is_valid_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    variables = exported(readme_block("Extraction", "bash"))
    settings = settings_from(variables, monkeypatch)
    assert (settings.extractor_url, settings.extractor_model) == (
        f"http://127.0.0.1:{DEFAULT_PORT}/v1",  # where sgam extractor dev listens
        STAND_IN_MODEL,
    )
    extractor = settings.extractor()
    assert extractor is not None, "the block configures an extractor"
    assert extractor.model == STAND_IN_MODEL


def test_the_docs_store_example_runs(tmp_path: Path) -> None:
    """The Python guide's in-process example, as written, on a fresh embedded database."""
    [example] = [
        block.text
        for block in fenced_blocks(PYTHON_GUIDE.read_text())
        if block.language == "python" and "open_store" in block.text
    ]
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path)  # the default data folder lands here
    completed = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "written 2026-06-30\n"
    assert (tmp_path / "sgam" / "postgres" / "PG_VERSION").exists()
