"""``sgam health``: classify memory health offline from a file of receipts and expectations."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from pydantic import ValidationError

from store.db.inputs import plain_reason

health_app = typer.Typer(
    help="Judge memory health from content-free receipts: one verdict per expected memory."
)

_Parsed = TypeVar("_Parsed")
_HEADER = ("case", "verdict", "operating_state", "check")


@health_app.command("classify")
def classify_file(
    file: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="A JSON health file: tenant_id, available, receipts, expectations.",
        ),
    ],
) -> None:
    """Print {"verdicts": [...]} for a health file, one verdict per expectation, in order.

    A malformed file exits with code 2 and names the first offending field.
    """
    from retrieval.memory_health.classifier import classify_all  # noqa: PLC0415 - keep --help fast
    from store.contract.health import HealthFile  # noqa: PLC0415

    health = _parse(file, HealthFile.model_validate_json)
    verdicts = classify_all(health.expectations, health.evidence(), tenant_id=health.tenant_id)
    typer.echo(json.dumps({"verdicts": [verdict.model_dump(mode="json") for verdict in verdicts]}))


@health_app.command("cases")
def run_fixture(
    file: Annotated[
        Path | None,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="A cases file (default: the nine built-in cases,"
            " retrieval/memory_health/cases.json).",
        ),
    ] = None,
) -> None:
    """Run the fixture cases and print a table; exit 1 when any verdict differs from its case."""
    from retrieval.memory_health.cases import CASES_PATH, HealthCases, run_cases  # noqa: PLC0415

    path = file or CASES_PATH
    cases = _parse(path, HealthCases.model_validate_json).cases
    results = run_cases(cases)
    rows = [
        (result.case.name, verdict.verdict, verdict.operating_state, "ok" if ok else "MISMATCH")
        for result in results
        for verdict, ok in zip(result.verdicts, result.matches(), strict=True)
    ]
    table = [_HEADER, *rows]
    widths = [max(len(row[column]) for row in table) for column in range(len(_HEADER))]
    for row in table:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        typer.echo("  ".join(cells).rstrip())
    mismatches = [line for result in results for line in result.mismatches()]
    for line in mismatches:
        typer.echo(line, err=True)
    if mismatches:
        typer.echo(f"{len(mismatches)} of {len(rows)} verdicts differ from {path}", err=True)
        raise typer.Exit(1)
    typer.echo(f"all {len(rows)} verdicts of {len(cases)} cases match", err=True)


def _parse(path: Path, validate: Callable[[bytes], _Parsed]) -> _Parsed:
    """A file parsed by ``validate``; a malformed one ends the command with exit code 2 and
    one line naming the first offending field."""
    try:
        return validate(path.read_bytes())
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or "(document)"
        more = error.error_count() - 1
        extra = f" (and {more} more)" if more else ""
        typer.echo(f"error: {path}: {field}: {plain_reason(first['msg'])}{extra}", err=True)
        raise typer.Exit(2) from None
