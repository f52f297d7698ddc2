"""``sgam worker``: an extraction worker process, beside or instead of the servers' own.

It takes jobs from the same PostgreSQL queue as every server process (``SKIP LOCKED``: no job
is taken twice) and needs the same extractor settings.
"""

from __future__ import annotations

import signal
from types import FrameType
from typing import Annotated

import typer

from server.settings import Settings


def worker(
    once: Annotated[
        bool, typer.Option(help="Work every due job, then exit (instead of polling until stopped).")
    ] = False,
) -> None:
    """Run an extraction worker: claim queued episodes, send them to the configured extractor
    (SGAM_EXTRACTOR_URL, SGAM_EXTRACTOR_MODEL), write what it proposes. Stops on SIGTERM or
    SIGINT after the job at hand."""
    from extraction.jobs import drain  # noqa: PLC0415 - keep --help fast
    from server.extraction.worker import METRICS, Worker, policy_from  # noqa: PLC0415
    from store.db.migrate import SchemaNotCurrent  # noqa: PLC0415
    from store.service import open_store  # noqa: PLC0415

    settings = Settings()
    extractor = settings.extractor()
    if extractor is None:
        typer.echo("error: no extractor is configured (set SGAM_EXTRACTOR_URL and"
                   " SGAM_EXTRACTOR_MODEL)", err=True)  # fmt: skip
        raise typer.Exit(2)
    policy = policy_from(settings)
    conninfo = settings.conninfo()
    try:
        with open_store(conninfo, max_connections=2) as store:
            if once:
                typer.echo(f"claimed {drain(store, extractor, policy, METRICS)} jobs")
                return
            loop = Worker(store, extractor, policy)

            def stop(signum: int, frame: FrameType | None) -> None:
                loop.stop()

            signal.signal(signal.SIGTERM, stop)
            signal.signal(signal.SIGINT, stop)
            loop.run()
    except SchemaNotCurrent as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from error
