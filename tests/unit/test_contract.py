"""The contract package: light to import, self-contained, and the one table of error codes."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

import server.client
from server.client import errors as client_errors
from server.http.problems import status_of, store_error_handler
from store.contract.problems import (
    ERRORS,
    HTTP_STATUS_CODE,
    PROBLEM_MEDIA_TYPE,
    ErrorCode,
    Problem,
)
from store.errors import StoreError

CONTRACT = Path(__file__).resolve().parents[2] / "store" / "contract"
PROJECT = ("store", "retrieval", "server", "evals", "tests", "scripts")
HEAVY = ("psycopg", "numpy", "torch", "pgvector")
OUTSIDE = {"pydantic", "pydantic_core", "typing_extensions"}
"""What the contract may import besides the standard library and itself."""


def test_importing_the_client_loads_the_contract_and_nothing_else_of_the_project() -> None:
    probe = "import json, sys, server.client; print(json.dumps(sorted(sys.modules)))"
    loaded: list[str] = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            cwd=CONTRACT.parents[1],
        ).stdout
    )
    assert not [name for name in loaded if name.split(".")[0] in HEAVY]
    project = {name for name in loaded if name.split(".")[0] in PROJECT}
    allowed = {"store", "store.contract", "server", "server.client"}
    assert {
        name
        for name in project
        if name not in allowed and not name.startswith(("store.contract.", "server.client."))
    } == set()
    assert "store.contract.problems" in project


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: a relative import"
            found.add(node.module or "")
    return found


@pytest.mark.parametrize("path", sorted(CONTRACT.glob("*.py")), ids=lambda path: path.name)
def test_the_contract_imports_the_standard_library_pydantic_and_itself_only(path: Path) -> None:
    for module in _imports(path):
        top = module.split(".")[0]
        if top == "store":
            assert module.startswith("store.contract."), f"{path.name} imports {module}"
        else:
            assert top in sys.stdlib_module_names or top in OUTSIDE, f"{path.name}: {module}"


def test_the_contract_modules_stay_small() -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in CONTRACT.glob("*.py")}
    assert max(sizes.values()) <= 300, sizes


# -- the table of codes -------------------------------------------------------------------------


def _store_error(code: ErrorCode) -> StoreError:
    kind = type("Refusal", (StoreError,), {"code": code})
    error: StoreError = kind("refused", field="somewhere")
    return error


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_every_code_is_answered_with_its_status(code: ErrorCode) -> None:
    status = ERRORS[code].status
    assert status_of(_store_error(code)) == status
    request: Any = None  # the handler reads nothing from the request
    response = store_error_handler(request, _store_error(code))
    assert (response.status_code, response.media_type) == (status, PROBLEM_MEDIA_TYPE)
    assert response.content["code"] == code.value
    assert response.content["title"] == ERRORS[code].title


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_the_client_raises_the_exception_the_contract_names(code: ErrorCode) -> None:
    kind = ERRORS[code]
    body = {"type": f"urn:sgam:problem:{code}", "title": kind.title, "status": kind.status}
    body |= {"detail": "refused", "code": code.value}
    response = httpx.Response(kind.status, json=body, headers={"content-type": PROBLEM_MEDIA_TYPE})
    error = client_errors.error_from(response)
    assert type(error).__name__ == kind.name
    assert (error.status, error.code, error.detail) == (kind.status, code.value, "refused")
    if kind.parent is not None:
        assert isinstance(error, client_errors.ERRORS[kind.parent])
    # A bare status (a proxy's answer) reads as the code the contract gives that status.
    bare = client_errors.error_from(httpx.Response(kind.status, text="bad gateway"))
    assert bare.code == HTTP_STATUS_CODE[kind.status]


def test_the_client_exports_one_exception_per_code_by_the_contracts_name() -> None:
    names = {kind.name for kind in ERRORS.values()}
    assert names <= set(server.client.__all__)
    assert {getattr(server.client, name).__name__ for name in names} == names


def test_the_problem_schema_lists_every_code() -> None:
    description = Problem.model_fields["code"].description or ""
    assert all(code.value in description for code in ErrorCode)
