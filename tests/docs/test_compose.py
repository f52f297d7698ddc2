"""The Docker deployment: the compose file, the Dockerfile and the build context agree.

No Docker engine is needed: the files are parsed, and a compose client, where one is
installed, validates and interpolates the compose file (that needs no engine either).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def compose_file() -> dict[str, Any]:
    """The compose file as YAML, before any variable is interpolated."""
    loaded = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def service(name: str) -> dict[str, Any]:
    """One service of the compose file."""
    found = compose_file()["services"][name]
    assert isinstance(found, dict)
    return found


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, arguments = (pending + line).partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def arguments_of(keyword: str) -> list[str]:
    """The arguments of every instruction named ``keyword``, in order."""
    return [arguments for name, arguments in dockerfile_instructions() if name == keyword]


def build_stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's instructions split into its stages, each starting at a FROM."""
    stages: list[list[tuple[str, str]]] = []
    for instruction in dockerfile_instructions():
        if instruction[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def sent_to_build(path: str) -> bool:
    """Whether ``docker build`` sends ``path`` (relative to the context) under .dockerignore.

    Docker's rule: the last pattern that matches the path or one of its parent folders wins,
    and a pattern starting with ``!`` re-includes. fnmatch stands in for Go's filepath.Match:
    its ``*`` also crosses ``/``, which gives the same answers for this file's patterns.
    """
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    parts = path.split("/")
    prefixes = ["/".join(parts[: end + 1]) for end in range(len(parts))]
    sent = True
    for pattern in patterns:
        include = pattern.startswith("!")
        glob = pattern.removeprefix("!")
        if any(fnmatch.fnmatchcase(prefix, glob) for prefix in prefixes):
            sent = include
    return sent


def test_compose_runs_the_server_and_the_pgvector_image() -> None:
    compose = compose_file()
    assert set(compose["services"]) == {"db", "sgam"}
    assert service("db")["image"] == "pgvector/pgvector:pg17"
    assert service("sgam")["build"] == "."
    assert service("sgam")["ports"] == ["8000:8000"]
    assert ("EXPOSE", "8000") in dockerfile_instructions()
    for name in ("db", "sgam"):
        assert service(name)["restart"] in {"always", "unless-stopped"}


def test_the_database_lives_in_a_named_volume() -> None:
    compose = compose_file()
    assert service("db")["volumes"] == ["pgdata:/var/lib/postgresql/data"]
    assert "pgdata" in compose["volumes"]


def test_the_server_waits_for_a_healthy_database() -> None:
    assert service("sgam")["depends_on"] == {"db": {"condition": "service_healthy"}}


def test_both_services_have_health_checks() -> None:
    db_check = service("db")["healthcheck"]["test"]
    assert db_check[0] == "CMD-SHELL"
    assert db_check[1].startswith("pg_isready ")
    sgam_check = service("sgam")["healthcheck"]
    assert sgam_check["test"][:3] == ["CMD", "python", "-c"]
    assert "urllib.request.urlopen('http://127.0.0.1:8000/readyz'" in sgam_check["test"][3]
    # A first start migrates and loads the model before it is ready.
    assert "start_period" in sgam_check


def test_database_url_names_the_db_service_and_its_credentials() -> None:
    db_env = service("db")["environment"]
    url = urlsplit(service("sgam")["environment"]["DATABASE_URL"])
    assert url.scheme == "postgresql"
    assert url.hostname == "db"
    assert url.port == 5432
    assert url.username == db_env["POSTGRES_USER"]
    assert url.password == db_env["POSTGRES_PASSWORD"]
    assert url.path == "/" + db_env["POSTGRES_DB"]


def test_the_admin_token_is_required_and_has_no_default() -> None:
    token = service("sgam")["environment"]["SGAM_ADMIN_TOKEN"]
    assert token.startswith("${SGAM_ADMIN_TOKEN:?")
    assert token.endswith("}")


def test_the_image_installs_the_cpu_torch_pinned_by_constraints() -> None:
    runs = arguments_of("RUN")
    [torch_step] = [run for run in runs if "torch==" in run]
    # --index-url, not --extra-index-url: PyPI's torch for Linux is the CUDA build.
    assert f"--index-url {CPU_TORCH_INDEX}" in torch_step
    assert "--extra-index-url" not in torch_step
    assert "s/^torch==//p' constraints.txt" in torch_step
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text(encoding="utf-8").split()
    [project_step] = [run for run in runs if "pip install -c constraints.txt ." in run]
    assert "torch.version.cuda is not None" in project_step
    assert runs.index(torch_step) < runs.index(project_step)


def test_the_final_stage_runs_offline_as_a_user_and_serves_on_port_8000() -> None:
    assert arguments_of("ARG") == ["PYTHON_IMAGE=python:3.12-slim"]
    assert arguments_of("FROM") == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]
    final = build_stages()[-1]
    env = " ".join(arguments for name, arguments in final if name == "ENV").split()
    assert "HF_HUB_OFFLINE=1" in env
    [user] = [arguments for name, arguments in final if name == "USER"]
    assert user not in {"root", "0"}
    runs = " ".join(arguments for name, arguments in final if name == "RUN")
    assert re.search(rf"useradd [^&]* {user}( |$)", runs), "USER names no user the stage adds"
    [healthcheck] = [arguments for name, arguments in final if name == "HEALTHCHECK"]
    assert "CMD " in healthcheck
    assert "urllib.request.urlopen('http://127.0.0.1:8000/readyz'" in healthcheck
    [command] = [arguments for name, arguments in final if name == "CMD"]
    assert json.loads(command) == ["sgam", "serve", "--host", "0.0.0.0", "--port", "8000"]
    assert final[-1][0] == "CMD"


def test_the_build_context_holds_the_sources_and_nothing_else() -> None:
    copied = [
        source
        for arguments in arguments_of("COPY")
        if not arguments.startswith("--from=")
        for source in shlex.split(arguments)[:-1]
    ]
    assert copied, "the Dockerfile copies nothing from the context"
    for source in copied:
        assert sent_to_build(source.removeprefix("./")), source
    for needed in (
        "store/migrations/0001_fact_store.sql",
        "evals/traces/seed_mira.jsonl",
        "server/cli.py",
    ):
        assert sent_to_build(needed), needed
    for left_out in (
        ".git/HEAD",
        ".venv/bin/python",
        "evals/results/cache/vectors.npy",
        "evals/results/evidence.json",
        "store/__pycache__/facts.cpython-312.pyc",
        "sgam.egg-info/PKG-INFO",
        ".mypy_cache/3.11/store",
        "tests/docs/test_compose.py",
        ".env",
    ):
        assert not sent_to_build(left_out), left_out


@pytest.fixture(scope="module")
def compose_cli() -> list[str]:
    """The compose client: the docker plugin, else the standalone docker-compose."""
    if shutil.which("docker") is not None:
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose") is not None:
        return ["docker-compose"]
    pytest.skip("no compose client: neither the docker compose plugin nor docker-compose")


def run_compose(
    compose_cli: list[str], tmp_path: Path, *arguments: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the compose client on the compose file with exactly the given variables set."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if name not in {"SGAM_ADMIN_TOKEN", "POSTGRES_PASSWORD", "SGAM_WORKERS"}
    }
    empty_env_file = tmp_path / "empty.env"
    empty_env_file.touch()  # a developer's .env must not change what is tested
    return subprocess.run(
        [*compose_cli, "--env-file", str(empty_env_file), "-f", str(COMPOSE_FILE), *arguments],
        capture_output=True,
        text=True,
        env={**kept, **env},
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_compose_config_is_valid(compose_cli: list[str], tmp_path: Path) -> None:
    checked = run_compose(compose_cli, tmp_path, "config", "-q", SGAM_ADMIN_TOKEN="t" * 24)
    assert checked.returncode == 0, checked.stderr


def test_compose_refuses_to_start_without_an_admin_token(
    compose_cli: list[str], tmp_path: Path
) -> None:
    checked = run_compose(compose_cli, tmp_path, "config", "-q")
    assert checked.returncode != 0
    assert "SGAM_ADMIN_TOKEN" in checked.stderr


def test_compose_passes_the_password_and_token_through(
    compose_cli: list[str], tmp_path: Path
) -> None:
    token = "a" * 32
    resolved = run_compose(
        compose_cli, tmp_path, "config", SGAM_ADMIN_TOKEN=token, POSTGRES_PASSWORD="s3cret"
    )
    assert resolved.returncode == 0, resolved.stderr
    services = yaml.safe_load(resolved.stdout)["services"]
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == "s3cret"
    assert services["sgam"]["environment"]["DATABASE_URL"] == (
        "postgresql://sgam:s3cret@db:5432/sgam"
    )
    assert services["sgam"]["environment"]["SGAM_ADMIN_TOKEN"] == token


def test_the_api_pool_logs_in_as_sgam_app_which_the_init_script_makes() -> None:
    db_env = service("db")["environment"]
    app = urlsplit(service("sgam")["environment"]["SGAM_APP_DATABASE_URL"])
    assert (app.scheme, app.hostname, app.port, app.path) == (
        "postgresql",
        "db",
        5432,
        "/" + db_env["POSTGRES_DB"],
    )
    assert app.username == "sgam_app"
    [mounted] = service("db")["configs"]
    assert mounted["target"].startswith("/docker-entrypoint-initdb.d/")
    script = " ".join(compose_file()["configs"][mounted["source"]]["content"].split())
    assert script.startswith(f"CREATE ROLE sgam_app LOGIN PASSWORD '{app.password}'")
    assert "NOSUPERUSER NOBYPASSRLS" in script
