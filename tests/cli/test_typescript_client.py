"""The TypeScript client (clients/typescript): its generated types match the committed OpenAPI
document, and its npm tests pass against a real ``sgam serve``.

Needs Node and npm: outside CI these tests skip without them, saying so; under ``CI=true`` a
missing one fails (``.ci/run`` installs Debian's nodejs and npm). npm's cache is kept inside
the clone (``clients/typescript/.npm-cache``, ignored by git).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from server.client.errors import ERRORS as CLIENT_ERRORS
from store.contract.problems import ERRORS
from tests.conftest import ADMIN_TOKEN
from tests.mcp_helpers import sgam_serve

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NPM_SECONDS = 300
SUMMARY = re.compile(r"^\S+ (tests|pass|fail|skipped|todo|cancelled) (\d+)$", re.MULTILINE)


def npm_env(**extra: str) -> dict[str, str]:
    """This environment with npm's cache inside the clone and its network extras off."""
    settings = {
        "npm_config_cache": str(CLIENT / ".npm-cache"),
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }
    return {**os.environ, **settings, **extra}


def npm(
    *args: str, env: dict[str, str] | None = None, failure: str = ""
) -> subprocess.CompletedProcess[str]:
    """``npm args`` in clients/typescript; ``failure`` and its output in the failure message."""
    completed = subprocess.run(
        ["npm", *args],
        cwd=CLIENT,
        env=env or npm_env(),
        capture_output=True,
        text=True,
        timeout=NPM_SECONDS,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"{failure}npm {' '.join(args)}:\n{output}"
    return completed


@pytest.fixture(scope="module")
def installed() -> None:
    """``npm ci`` in clients/typescript, once for the module."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        message = (
            f"the TypeScript client's tests need {' and '.join(missing)}"
            " (Debian: apt-get install nodejs npm)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; under CI=true they must run")
        pytest.skip(message)
    npm("ci", "--no-progress")


def python_error_kinds() -> str:
    """The Python client's exception for each code, as the TypeScript tests compare it."""
    return json.dumps(
        {
            str(code): {
                "status": kind.status,
                "also": list(kind.also),
                "name": CLIENT_ERRORS[code].__name__,
                "parent": None if kind.parent is None else str(kind.parent),
            }
            for code, kind in ERRORS.items()
        }
    )


@pytest.mark.usefixtures("installed")
def test_the_committed_types_are_generated_from_the_committed_document() -> None:
    # openapi-typescript's --check: what it would write, compared with src/schema.ts
    stale = "clients/typescript/src/schema.ts is stale: run `npm run generate` there\n"
    npm("run", "generate", "--", "--check", failure=stale)


@pytest.mark.usefixtures("installed")
def test_the_npm_tests_pass_against_sgam_serve(conninfo: str) -> None:
    with sgam_serve(conninfo, admin_token=ADMIN_TOKEN) as url:
        env = npm_env(
            SGAM_URL=url, SGAM_ADMIN_TOKEN=ADMIN_TOKEN, SGAM_ERROR_KINDS=python_error_kinds()
        )
        completed = npm("test", env=env)
    counts = {name: int(count) for name, count in SUMMARY.findall(completed.stdout)}
    assert counts["fail"] == 0, completed.stdout
    assert counts["skipped"] == 0, completed.stdout
    assert counts["pass"] == counts["tests"] > 0, completed.stdout
