"""``sgam extractor dev``: the README's raw-text walkthrough, as written, against real processes.

The README's Extraction block starts the rule-based stand-in, points ``sgam serve`` at it and
posts raw text with ``extract: now``; here each line runs as the README writes it (on free ports
instead of 8081 and 8000), and the extracted fact is read back.
"""

from __future__ import annotations

import json
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI
from typer.testing import CliRunner

from server.cli import app
from server.commands.extractor import DEFAULT_PORT
from server.extraction.rules import rule_based
from server.extraction.standin import FINGERPRINT, STAND_IN_MODEL, stand_in
from tests.cli.test_serve_tour import _free_port, run_shell, serving, tour_steps
from tests.docs.test_readme import exported, readme_block


@dataclass(frozen=True)
class Walkthrough:
    """The README block's lines: start the stand-in, point the server at it, then the steps."""

    stand_in: list[str]
    exports: dict[str, str]
    serve: list[str]
    steps: str


def walkthrough() -> Walkthrough:
    """The README's Extraction block, read as a newcomer would run it."""
    setup, steps = readme_block("Extraction", "bash").strip().split("\n\n")
    starting, export, serve = (shlex.split(line, comments=True) for line in setup.splitlines())
    assert export[0] == "export"
    return Walkthrough(starting, exported(shlex.join(export)), serve, steps)


@pytest.fixture
def stand_in_process() -> Iterator[tuple[int, subprocess.Popen[str], str]]:
    """``sgam extractor dev`` as the README starts it, on a free port; its port, process and
    what it printed on starting."""
    command = walkthrough().stand_in
    assert command == [".venv/bin/sgam", "extractor", "dev", "&"]
    port = _free_port()
    sgam = Path(sys.executable).with_name("sgam")
    process = subprocess.Popen(
        [str(sgam), *command[1:-1], "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    banner: list[str] = []
    for line in process.stdout:
        banner.append(line)
        if line.strip().startswith("export "):
            break
    try:
        yield port, process, "".join(banner)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        process.stdout.close()


def _documents(output: str) -> list[Any]:
    """The JSON documents printed one after another."""
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    at = 0
    while rest := output[at:].lstrip():
        document, at = decoder.raw_decode(output, len(output) - len(rest))
        documents.append(document)
    return documents


def test_the_readme_walkthrough_extracts_a_fact_from_raw_text_with_the_stand_in(
    stand_in_process: tuple[int, subprocess.Popen[str], str], tmp_path: Path
) -> None:
    port, process, banner = stand_in_process
    assert "a rule-based stand-in for an extraction model, not a model" in banner
    assert f"http://127.0.0.1:{port}/v1" in banner
    steps = walkthrough()
    assert steps.serve == ["./scripts/serve", "&"]
    here = f"http://127.0.0.1:{port}/v1"
    exports = {
        name: value.replace(f"http://127.0.0.1:{DEFAULT_PORT}/v1", here)
        for name, value in steps.exports.items()
    }
    assert exports == {"SGAM_EXTRACTOR_URL": here, "SGAM_EXTRACTOR_MODEL": STAND_IN_MODEL}

    with serving(tmp_path / "postgres", exports) as served:
        setup, _ = tour_steps()
        declared, recorded = _documents(run_shell(setup, steps.steps, served))
        fact = httpx.get(
            f"{served.url}/v1/facts/mira/city",
            headers={"Authorization": f"Bearer {served.api_key}"},
        ).json()

    assert declared["attribute"] == "city"
    assert recorded["results"] == []  # no candidate was sent: only the text
    [extracted] = recorded["extracted"]
    assert extracted["status"] == "written"
    assert (extracted["fact"]["value"], extracted["fact"]["source_episode_id"]) == ("Tromsø", "r1")
    assert recorded["extraction"]["status"] == "done"
    assert (fact["value"], fact["status"], fact["source_episode_id"]) == ("Tromsø", "current", "r1")
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=30)
    said = f"stand-in (rule-based, not a model) answered {STAND_IN_MODEL}: 1 candidate(s)"
    assert said in output.splitlines()


def test_the_stand_in_names_itself_in_every_answer() -> None:
    """What an OpenAI client reads back says it came from the stand-in, not a model."""
    with stand_in(rule_based) as running:
        client = OpenAI(base_url=running.base_url, api_key="unset", max_retries=0)
        [listed] = client.models.list().data
        completion = client.chat.completions.create(
            model="any", messages=[{"role": "user", "content": "hello"}]
        )
    assert listed.id == STAND_IN_MODEL
    assert completion.system_fingerprint == FINGERPRINT
    assert "rule-based, not a model" in completion.model
    assert completion.choices[0].message.content == '{"updates": []}'


def test_a_port_in_use_is_one_clear_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["extractor", "dev", "--port", str(port)])
    assert result.exit_code == 1
    assert result.output.startswith(f"error: cannot listen on 127.0.0.1:{port}:")
