"""``sgam import``: load a history of episodes and their candidates from a JSON-lines file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from server.settings import Settings


def import_episodes(
    file: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="A .jsonl file: one episode a line, with its `tenant` and `updates`.",
        ),
    ],
    embed: Annotated[
        bool,
        typer.Option(
            help="Embed the new episodes once the facts are committed (else `sgam reembed`"
            " gives them vectors later)."
        ),
    ] = True,
    batch: Annotated[int, typer.Option(min=1, help="Episode texts per model call.")] = 256,
) -> None:
    """Import episodes with their candidates: every line in one transaction, then embed.

    Each line is one JSON object: an episode's fields (id, occurred_at, text, kind,
    session_id, subjects, retention_class, metadata), the `tenant` it belongs to (which must
    exist) and its `updates` (MemoryUpdate candidates). The outcome is what recording each
    episode and applying its candidates one call at a time, in file order, would give at one
    system time. A bad line is reported with its number and nothing is written; refused
    candidates are listed by line. While it runs, writes to its tenants wait. A database with
    pending migrations is refused (run `sgam migrate`).
    """
    from tqdm import tqdm  # noqa: PLC0415 - keep --help fast

    from store.db.statistics import EMBEDDED, IMPORTED, analyze  # noqa: PLC0415
    from store.errors import StoreError  # noqa: PLC0415
    from store.service import open_store  # noqa: PLC0415

    settings = Settings()
    conninfo = settings.conninfo()
    embedder = settings.embedder()  # loaded once the facts are in
    try:
        with open_store(conninfo, embedder=embedder, max_connections=2) as store:
            started = time.perf_counter()
            with file.open(encoding="utf-8") as lines:
                result = store.episodes.import_lines(lines)
            elapsed = time.perf_counter() - started
            analyze(conninfo, IMPORTED)  # the planner's statistics, before the first read
            written = result.candidates.get("written", 0)
            outcomes = ", ".join(f"{count} {status}" for status, count in result.candidates.items())
            typer.echo(
                f"imported {result.lines} lines in {elapsed:.2f} s: {result.episodes_recorded}"
                f" new episodes; candidates: {outcomes or 'none'}"
                f" ({written / elapsed:,.0f} facts written/s)"
            )
            for refused in result.refused:
                where = f" ({refused.field})" if refused.field else ""
                typer.echo(
                    f"line {refused.line}, candidate {refused.index}: {refused.status}{where}:"
                    f" {refused.reason}",
                    err=True,
                )
            if not embed or not result.recorded:
                return
            embedder.load()
            started = time.perf_counter()
            with tqdm(total=len(result.recorded), desc="embedding", unit=" episodes") as bar:
                embedded = store.episodes.embed(result.recorded, batch=batch, progress=bar.update)
            elapsed = time.perf_counter() - started
            analyze(conninfo, EMBEDDED)
            typer.echo(
                f"embedded {embedded} episodes in {elapsed:.1f} s ({embedded / elapsed:,.1f}"
                f" episodes/s) with {embedder.model_id}"
            )
    except StoreError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from error
