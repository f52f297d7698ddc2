"""A real ``sgam serve`` and ``sgam mcp`` as processes, for the MCP tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from server.client import SGAMClient
from store.contract.results import ApiKeyIssued
from tests.cli.test_process_ownership import _free_port as free_port
from tests.conftest import ADMIN_TOKEN, app_url

SGAM = Path(sys.executable).with_name("sgam")
README = Path(__file__).resolve().parent.parent / "README.md"
STARTUP_SECONDS = 120
SETUP_AT = "2026-06-01T09:00:05Z"
E1_AT = "2026-06-01T09:00:10Z"
E2_AT = "2026-06-03T10:00:10Z"
SEED_EPISODES = (
    (
        E1_AT,
        "e1",
        "2026-06-01T09:00:00Z",
        "Mira prefers concise answers. Her passport deadline is 2026-07-15.",
        "2026-07-15",
        "Her passport deadline is 2026-07-15.",
    ),
    (
        E2_AT,
        "e2",
        "2026-06-03T10:00:00Z",
        "Update from Mira: the consulate moved her passport deadline to 2026-06-30.",
        "2026-06-30",
        "moved her passport deadline to 2026-06-30",
    ),
)
"""The seed trace: (system time, id, occurred_at, text, value from occurred_at, evidence)."""


@dataclass(frozen=True)
class Served:
    """A running ``sgam serve`` and the key of its tenant ``mcp``."""

    url: str
    key: ApiKeyIssued


def readme_client_config() -> dict[str, Any]:
    """The desktop client's configuration of ``sgam mcp`` as the README shows it."""
    section = README.read_text().split("## MCP server", 1)[1]
    [block] = re.findall(r"```json\n(.*?)```", section.split("\n## ", 1)[0], flags=re.DOTALL)
    config: dict[str, Any] = json.loads(block)["mcpServers"]["sgam"]
    return config


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any SGAM setting or database, plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "DATABASE_URL" and not key.startswith("SGAM_")
    }
    return env | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"} | extra


def wait_until(what: str, ready: Callable[[], bool], *, process: subprocess.Popen[bytes]) -> None:
    """Poll ``ready`` until it holds; fail if the process ends or time runs out."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{what} exited with {process.returncode}"
        try:
            if ready():
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{what} was not ready in time")


@contextmanager
def running(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """The command as a process for the block's length; interrupted (then killed) after it."""
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def sgam_serve(conninfo: str, *, admin_token: str) -> Iterator[str]:
    """``sgam serve`` on ``conninfo`` with the admin API and the clock header on; its URL."""
    port = free_port()
    env = clean_env(
        DATABASE_URL=conninfo,
        SGAM_APP_DATABASE_URL=app_url(conninfo),
        SGAM_PORT=str(port),
        SGAM_ADMIN_TOKEN=admin_token,
        SGAM_ALLOW_CLOCK_HEADER="true",
        SGAM_TORCH_THREADS="1",
    )
    url = f"http://127.0.0.1:{port}"
    with running([str(SGAM), "serve", "--log-level", "warning"], env) as process:
        wait_until(
            "sgam serve",
            lambda: httpx.get(f"{url}/readyz", timeout=2).status_code == 200,
            process=process,
        )
        yield url


@contextmanager
def sgam_mcp_http(url: str, key: str) -> Iterator[str]:
    """``sgam mcp --http`` calling the SGAM at ``url`` with ``key``; its MCP endpoint."""
    port = free_port()
    env = clean_env(SGAM_URL=url, SGAM_KEY=key)
    endpoint = f"http://127.0.0.1:{port}/mcp"
    command = [str(SGAM), "mcp", "--http", "--port", str(port)]
    with running(command, env) as process:
        wait_until(
            "sgam mcp --http",
            lambda: httpx.post(endpoint, json={}, timeout=2).status_code == 401,
            process=process,
        )
        yield endpoint


def _candidate(value: str, *, valid_from: str, evidence: str) -> dict[str, Any]:
    return {
        "evidence": evidence,
        "subject": "mira",
        "attribute": "passport_deadline",
        "change": "update",
        "value": value,
        "valid_from": valid_from,
    }


@contextmanager
def serve_seeded(conninfo: str) -> Iterator[Served]:
    """``sgam serve`` whose tenant ``mcp`` holds the seed trace: e1 says the passport deadline
    is 2026-07-15 from June 1, e2 corrects it to 2026-06-30 from June 3."""
    with sgam_serve(conninfo, admin_token=ADMIN_TOKEN) as url:
        with SGAMClient(url, admin_token=ADMIN_TOKEN) as admin:
            admin.create_tenant("mcp")
            key = admin.create_key("mcp")
        with SGAMClient(url, key.api_key) as client:
            client.with_now(SETUP_AT).declare_attribute(
                "passport_deadline", "date", description="Date the passport must be renewed"
            )
            for at, episode_id, occurred_at, text, value, evidence in SEED_EPISODES:
                client.with_now(at).record_episode(
                    text,
                    occurred_at,
                    id=episode_id,
                    subjects=["mira"],
                    updates=[_candidate(value, valid_from=occurred_at, evidence=evidence)],
                )
        yield Served(url, key)
