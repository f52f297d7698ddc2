"""``sgam replay``: a replay file run on a fresh temporary database, its results compared."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from server.replay.compare import TOLERANCE, result_differences
from server.settings import Settings


def replay(
    trace: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="A .jsonl replay file.")
    ],
    out: Annotated[
        Path | None, typer.Option(help="Write result lines here instead of standard output.")
    ] = None,
    expected: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help=(
                "Compare with these result lines; exit 1 on any difference. Model scores vary"
                f" by CPU, so floats match within {TOLERANCE:g} and a decimal printed in a plan"
                f" reason within one unit of its last digit plus {TOLERANCE:g}; everything else"
                " must be equal."
            ),
        ),
    ] = None,
) -> None:
    """Run a replay file on a fresh temporary database; print one result line per input line.

    Each line is one operation (define, episode, update, current, at, history, profile,
    expire, retract, resolve, erase, search, context) for a tenant; the format is in
    docs/guides/import-replay.md.
    """
    from server.replay.runner import dumps, replay_file  # noqa: PLC0415 - keep --help fast

    wanted = None if expected is None else _expected_lines(expected)
    settings = Settings()
    embedder = settings.embedder().load()
    results = replay_file(trace, database_url=settings.database_url, embedder=embedder)
    lines = [dumps(result) for result in results]
    text = "".join(line + "\n" for line in lines)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
    if wanted is not None:
        differences = result_differences([json.loads(line) for line in lines], wanted)
        for difference in differences:
            typer.echo(difference, err=True)
        if differences:
            raise typer.Exit(1)
        typer.echo(f"all {len(lines)} results match {expected}", err=True)


def _expected_lines(path: Path) -> list[object]:
    """The result lines of an expected file (blank lines skipped)."""
    texts = [text for text in path.read_text(encoding="utf-8").splitlines() if text.strip()]
    try:
        return [json.loads(text) for text in texts]
    except json.JSONDecodeError as error:
        raise typer.BadParameter(f"not JSON lines: {error}", param_hint="--expected") from None
