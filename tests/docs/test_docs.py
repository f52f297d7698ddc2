"""The docs site builds cleanly and documents everything the code offers.

Every route (with the module that owns it), every OpenAPI operation, every ``sgam`` command and
option, and every setting with its environment variables must appear in the site; the table of
routes and their owners must match the app exactly, both ways. No database is needed: the app's
routes and OpenAPI document are built from its handlers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from litestar.routes import HTTPRoute

from docs.hooks import (
    cli_command,
    cli_page,
    environment_names,
    http_api_page,
    openapi_document,
    operations,
    parameter_names,
    settings_models,
    settings_page,
    walk_commands,
)
from server.app import create_app
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
ROUTES_PAGE = ROOT / "docs" / "reference" / "routes.md"
DESIGN_PAGE = ROOT / "docs" / "design.md"
ROW = re.compile(r"^\| `(GET|PUT|POST|PATCH|DELETE) (\S+)` \| `([\w.]+)` \|", re.MULTILINE)


def _owner(handler: Any) -> str:
    """The module that defines a route handler; Litestar's own routes are ``litestar``."""
    function = getattr(handler.fn, "func", handler.fn)  # unwrap a sync handler's wrapper
    module = str(function.__module__)
    return "litestar" if module.split(".", maxsplit=1)[0] == "litestar" else module


@cache
def app_routes() -> frozenset[tuple[str, str, str]]:
    """Every (METHOD, path, owner) the app serves, paths as the OpenAPI document writes them."""
    routes = set()
    for route in create_app(Settings()).routes:
        if not isinstance(route, HTTPRoute):
            continue
        path = re.sub(r":\w+\}", "}", route.path)
        for handler in route.route_handlers:
            for method in handler.http_methods - {"OPTIONS", "HEAD"}:
                routes.add((method, path, _owner(handler)))
    return frozenset(routes)


@cache
def document() -> dict[str, Any]:
    return openapi_document()


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            **{key: value for key, value in os.environ.items() if not key.startswith("SGAM_")},
            "NO_MKDOCS_2_WARNING": "1",
        },
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    for page in ("reference/http-api", "reference/cli", "reference/settings", "design"):
        assert (tmp_path / f"{page}.html").is_file()  # use_directory_urls: false
    # Nothing is loaded from another site: no scripts, stylesheets, fonts or images.
    for html in tmp_path.rglob("*.html"):
        loaded = re.findall(
            r"<(?:script|img|link)\b[^>]*(?:src|href)=\"(https?:)?//", html.read_text()
        )
        assert loaded == [], html


def test_the_routes_table_matches_the_app_both_ways() -> None:
    rows = ROW.findall(ROUTES_PAGE.read_text())
    assert len(rows) == len(set(rows)), "a route is listed twice"
    listed = {(method, path) for method, path, _ in rows}
    assert len(listed) == len(rows), "a route is listed with two owners"
    assert set(rows) == app_routes()


def test_every_api_route_is_an_operation_of_the_http_api_reference() -> None:
    page = http_api_page(document())
    documented = {(method, path) for method, path, _ in operations(document())}
    for method, path in documented:
        assert f"### `{method} {path}`" in page
    served = {
        (method, path) for method, path, owner in app_routes() if owner.startswith("server.routes.")
    }
    assert served == documented


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    page = cli_page()
    commands = list(walk_commands(cli_command()))
    assert len(commands) > 20
    for name, command in commands:
        section = page.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        for parameter in getattr(command, "params", []):
            for flag in parameter_names(parameter):
                assert f"`{flag}`" in section, (name, flag)


@pytest.mark.parametrize("model", settings_models(), ids=lambda model: model.__name__)
def test_every_setting_and_its_environment_variables_are_in_the_settings_reference(
    model: Any,
) -> None:
    page = settings_page()
    for name, field in model.model_fields.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        for env in environment_names(model, name, field):
            assert f"`{env}`" in row
        assert field.description
        assert " ".join(field.description.split())[:40] in row


def test_the_design_sections_the_code_cites_exist() -> None:
    cited = set()
    for package in ("store", "retrieval", "server", "evals"):
        for source in (ROOT / package).rglob("*.py"):
            cited |= set(re.findall(r"design section\s+(\d+)", source.read_text()))
    assert cited
    design = DESIGN_PAGE.read_text()
    for number in cited:
        assert re.search(rf"^## {number}\. .*\{{#[\w-]+\}}$", design, flags=re.MULTILINE), number
    assert "{#invariants}" in design
