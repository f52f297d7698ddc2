"""``sgam serve`` as a real process: first start prints a key, and the README's curl tour and
Python client example work against it.

Both are read from the README itself, so the documented commands are the tested ones.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
STARTUP_SECONDS = 120


@dataclass(frozen=True)
class Served:
    """A running ``sgam serve`` and what its first start printed."""

    url: str
    api_key: str
    banner: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _read_banner(process: subprocess.Popen[str]) -> str:
    """Standard output up to the 'SGAM on' line (the key comes before it)."""
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("SGAM on "):
            return "".join(lines)
    raise AssertionError(f"sgam serve exited before starting:\n{''.join(lines)}")


def _wait_ready(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, "sgam serve exited"
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError("sgam serve was not ready in time")


@contextmanager
def serving(data_dir: Path, extra_env: Mapping[str, str] | None = None) -> Iterator[Served]:
    """``sgam serve`` on a free port with a brand-new embedded data folder, in an environment
    without SGAM settings or DATABASE_URL beyond ``extra_env``, until the block ends."""
    port = _free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "DATABASE_URL" and not key.startswith("SGAM_")
    }
    env |= {"SGAM_DATA_DIR": str(data_dir), "SGAM_PORT": str(port), "HF_HUB_OFFLINE": "1"}
    sgam = Path(sys.executable).with_name("sgam")
    process = subprocess.Popen(
        [str(sgam), "serve", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env | dict(extra_env or {}),
    )
    try:
        banner = _read_banner(process)
        url = f"http://127.0.0.1:{port}"
        _wait_ready(url, process)
        [api_key] = re.findall(r"^\s+(sgam_\S+)$", banner, flags=re.MULTILINE)
        yield Served(url=url, api_key=api_key, banner=banner)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``sgam serve`` on a free port with a brand-new embedded data folder."""
    with serving(tmp_path_factory.mktemp("serve") / "postgres") as running:
        yield running


TOUR_HEADING = "## A five-minute tour"
PYTHON_HEADING = "## Python client"
JQ_STAND_IN = 'jq() { "$SGAM_PYTHON" -m json.tool; }'
"""Where jq is not installed (and not required: outside CI), the tour's bare ``| jq`` only
pretty-prints, which ``json.tool`` does as well."""


def readme_block(heading: str, language: str) -> str:
    """The one fenced block of ``language`` in the README section under ``heading``."""
    section = README.read_text().split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(rf"^```{language}\n(.*?)^```", section, flags=re.DOTALL | re.MULTILINE)
    return str(block)


def tour_steps() -> tuple[str, list[str]]:
    """The tour's setup lines and its commands, one per blank-line-separated paragraph."""
    setup, *steps = readme_block(TOUR_HEADING, "bash").strip().split("\n\n")
    return setup, steps


def run_step(setup: str, step: str, served: Served) -> Any:
    """Run one tour command as a newcomer would paste it; its output parsed as JSON."""
    return json.loads(run_shell(setup, step, served))


def run_shell(setup: str, step: str, served: Served) -> str:
    """Run the tour's setup lines and then ``step`` in bash, against ``served``; the output."""
    setup = re.sub(r"export SGAM_KEY=\S+", f"export SGAM_KEY={served.api_key}", setup)
    setup = setup.replace("http://127.0.0.1:8000", served.url)
    if shutil.which("jq") is None:
        assert os.environ.get("CI") != "true", "the tour pipes answers to jq: install jq"
        setup = f"{JQ_STAND_IN}\n{setup}"
    completed = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"{setup}\n{step}"],
        env={**os.environ, "SGAM_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_the_first_start_prints_a_key_for_the_default_tenant_and_the_docs_url(
    served: Served,
) -> None:
    assert "Created tenant 'default'" in served.banner
    assert f"(docs: {served.url}/schema)" in served.banner
    answer = httpx.get(
        f"{served.url}/v1/attributes", headers={"Authorization": f"Bearer {served.api_key}"}
    )
    assert answer.status_code == 200
    assert answer.json() == {"attributes": []}


def test_the_readme_tour_answers_as_documented(served: Served) -> None:
    assert shutil.which("curl") is not None, "the tour is written for curl: install it"
    setup, steps = tour_steps()
    assert len(steps) == 10
    assert all(step.rstrip().endswith("| jq") for step in steps)
    declared, e1, e2, e0, current, june_2, context, period, named, by_surname = (
        run_step(setup, step, served) for step in steps
    )

    assert declared["attribute"] == "passport_deadline"
    assert declared["schema_version"] == 1
    assert [result["status"] for result in e1["results"]] == ["written"]
    assert [result["status"] for result in e2["results"]] == ["written"]
    assert e2["results"][0]["fact"]["supersedes"] == e1["results"][0]["fact"]["fact_id"]
    [late] = e0["results"]
    assert (late["status"], late["fact"]["valid_to"]) == ("written", "2026-06-01T09:00:00Z")

    assert (current["value"], current["status"], current["source_episode_id"]) == (
        "2026-06-30",
        "current",
        "e2",
    )
    assert (june_2["value"], june_2["source_episode_id"]) == ("2026-07-15", "e1")

    block = context["block"]
    assert "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)" in (block)
    assert (
        "[e1] superseded (from 2026-06-01 until 2026-06-03): Her passport deadline is 2026-07-15."
        in block.splitlines()
    )
    assert {"episode_id": "e2", "occurred_at": "2026-06-03T10:00:00Z", "role": "fact"} in (
        context["citations"]
    )

    assert period["block"].splitlines()[:4] == [
        "mira from 2026-05-01 to 2026-07-01:",
        "passport_deadline: 2026-08-01 (from 2026-05-30 until 2026-06-01; source e0)",
        "passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03; source e1)",
        "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)",
    ]
    assert (period["plan"]["mode"], period["plan"]["valid_from"], period["plan"]["valid_to"]) == (
        "period",
        "2026-05-01T00:00:00Z",
        "2026-07-01T00:00:00Z",
    )

    assert (named["display_name"], named["aliases"]) == ("Mira Lindqvist", ["Dr. M. Lindqvist"])
    assert by_surname["plan"]["subject"] == "mira"
    assert "the last word of the name 'Mira Lindqvist'" in by_surname["plan"]["reasons"]["subject"]
    assert "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)" in by_surname["block"]


def test_the_readme_python_client_example_prints_what_it_says(served: Served) -> None:
    example = readme_block(PYTHON_HEADING, "python")
    assert "# written 2026-06-30" in example
    env = {key: value for key, value in os.environ.items() if not key.startswith("SGAM_")}
    env |= {"SGAM_URL": served.url, "SGAM_KEY": served.api_key}
    completed = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "written 2026-06-30\n"
