"""The ``sgam`` command line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated

import typer

from server.commands.admin import attribute_app, key_app, receipts_app, subjects_app, tenant_app
from server.commands.extractor import extractor_app
from server.commands.failures import run
from server.commands.health import health_app
from server.commands.imports import import_episodes
from server.commands.purge import purge
from server.commands.worker import worker
from server.mcp.cli import mcp
from server.replay.cli import replay
from server.settings import Settings

app = typer.Typer(
    name="sgam",
    help="SGAM: a temporal, cited memory server for AI agents.\n\n"
    "Start with `sgam serve`; settings come from SGAM_* environment variables and"
    " DATABASE_URL (unset = an embedded PostgreSQL in SGAM_DATA_DIR). A failure is one line;"
    " `--debug` anywhere shows its traceback.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
)
app.add_typer(tenant_app, name="tenant")
app.add_typer(key_app, name="key")
app.add_typer(receipts_app, name="receipts")
app.add_typer(attribute_app, name="attribute")
app.add_typer(subjects_app, name="subjects")
app.add_typer(health_app, name="health")
app.add_typer(extractor_app, name="extractor")
app.command("import")(import_episodes)
app.command()(worker)
app.command()(mcp)
app.command()(purge)
app.command()(replay)

PLUGINS = "sgam.commands"
"""The entry point group other packages add ``sgam`` commands through: a typer app becomes a
group of commands, a function one command. ``sgam eval`` and ``sgam bench`` come this way from
evals/, which the server never imports."""


def _add_plugins(app: typer.Typer) -> None:
    for entry in sorted(entry_points(group=PLUGINS), key=lambda entry: entry.name):
        command = entry.load()
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=entry.name)
        else:
            app.command(entry.name)(command)


_add_plugins(app)


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Interface to listen on (env SGAM_HOST, default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (env SGAM_PORT, default 8000).")] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Server processes, each with its own model copy (env SGAM_WORKERS, default 1)."
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Start the HTTP API (docs at /schema).

    Without DATABASE_URL it runs an embedded PostgreSQL in SGAM_DATA_DIR, kept across
    restarts; on its first start it creates a `default` tenant and prints that tenant's API
    key, once. Pending migrations are applied once, before the workers start, unless
    SGAM_MIGRATE_ON_START=false (then /readyz answers 503 until `sgam migrate` has run).
    One server per SGAM_DATA_DIR (a second is refused); SIGTERM and Ctrl-C stop the embedded
    database with the server.
    """
    from server.runtime.listen import AddressInUse, check_address  # noqa: PLC0415 - fast --help
    from server.runtime.shutdown import unwinding_on_stop_signals  # noqa: PLC0415

    settings = Settings()
    host, port = host or settings.host, port or settings.port
    try:
        check_address(host, port)
    except AddressInUse as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    with unwinding_on_stop_signals(), ExitStack() as owned:
        if settings.database_url is None:
            conninfo = owned.enter_context(
                _own_embedded_database(settings.data_dir, settings.embedded_shared_buffers)
            )
        else:
            conninfo = settings.conninfo()
        _serve(
            conninfo,
            settings=settings,
            host=host,
            port=port,
            workers=workers or settings.workers,
            log_level=log_level,
        )


@contextmanager
def _own_embedded_database(data_dir: Path, shared_buffers: str) -> Iterator[str]:
    """Lock the data directory for this process's life and run its database until the end.

    A data directory already served by another process ends the command with exit code 1.
    """
    from server.runtime.shutdown import stop_failing  # noqa: PLC0415 - keep --help fast
    from store.db.database import embedded_database  # noqa: PLC0415
    from store.db.datadir import DataDirInUse, hold_data_dir  # noqa: PLC0415

    with ExitStack() as owned:
        try:
            owned.enter_context(hold_data_dir(data_dir))
        except DataDirInUse as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from error
        gone = "the embedded PostgreSQL stopped and would not start again"
        yield owned.enter_context(
            embedded_database(
                data_dir, on_gone=lambda: stop_failing(gone), shared_buffers=shared_buffers
            )
        )


def _serve(
    conninfo: str, *, settings: Settings, host: str, port: int, workers: int, log_level: str
) -> None:
    import os  # noqa: PLC0415 - keep --help fast

    import uvicorn  # noqa: PLC0415

    from server.http.metrics import multiprocess_metrics  # noqa: PLC0415
    from server.runtime.bootstrap import DEFAULT_TENANT, prepare_database  # noqa: PLC0415
    from store.errors import DatabaseUnavailable  # noqa: PLC0415

    try:
        # The only migration of a server's start, before any worker exists.
        prepared = prepare_database(
            conninfo,
            apply_migrations=settings.migrate_on_start,
            create_default_tenant=settings.database_url is None,
            settings=settings,
        )
    except DatabaseUnavailable as error:  # a schema ahead, a refused migration, the app role
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from error
    base_url = f"http://{host}:{port}"
    if prepared.first_key is not None:
        typer.echo(
            f"Created tenant '{DEFAULT_TENANT}'. Its API key, shown only now:\n\n"
            f"    {prepared.first_key.api_key}\n\n"
            f"Keep it: export SGAM_KEY=<that key>. More with `sgam key create {DEFAULT_TENANT}`."
        )
    typer.echo(f"SGAM on {base_url} (docs: {base_url}/schema)")
    # Workers (and this process) read the database from the environment; the embedded server
    # stays owned by this process and stops when it ends, by a signal too.
    if settings.database_url is None:  # the pool logs in as the embedded database's sgam_app
        from store.db.roles import APP_ROLE, login_as  # noqa: PLC0415

        os.environ["SGAM_APP_DATABASE_URL"] = login_as(conninfo, APP_ROLE)
    os.environ["DATABASE_URL"] = conninfo
    with multiprocess_metrics(workers):  # /metrics sums over the workers
        uvicorn.run(
            "server.asgi:app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=log_level,
            lifespan="on",
            loop=settings.event_loop,
            http=settings.http_parser,
        )


@app.command()
def migrate() -> None:
    """Apply pending schema migrations to the configured database.

    Uses DATABASE_URL when set, else the embedded PostgreSQL in SGAM_DATA_DIR. A database
    migrated by a newer release is refused and left as it is. The episodes' full-text
    documents are rebuilt when SGAM_TEXT_SEARCH_CONFIG names another configuration.
    """
    from store.db.migrate import migrate_database  # noqa: PLC0415
    from store.errors import DatabaseUnavailable  # noqa: PLC0415

    settings = Settings()
    conninfo = settings.conninfo()
    try:
        applied = migrate_database(conninfo, text_search_config=settings.text_search_config)
    except DatabaseUnavailable as error:  # a schema ahead, or a migration refused
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from error
    if applied:
        for migration in applied:
            typer.echo(f"applied {migration.version:04d}_{migration.name}")
    else:
        typer.echo("no pending migrations")


@app.command()
def reembed(
    tenant: Annotated[
        list[str] | None, typer.Option(help="Tenant to re-embed (repeatable); default: all.")
    ] = None,
) -> None:
    """Give episodes vectors of the configured embedding model (after changing the model).

    Episodes that already have a vector of that model are skipped, so it can be re-run. A
    database with pending migrations is refused (run `sgam migrate`).
    """
    import psycopg  # noqa: PLC0415 - keep --help fast
    from tqdm import tqdm  # noqa: PLC0415

    from retrieval.search.reembed import reembed_tenant  # noqa: PLC0415
    from store.db.clock import wall_clock  # noqa: PLC0415
    from store.db.database import connect  # noqa: PLC0415
    from store.db.migrate import SchemaNotCurrent, require_current_schema  # noqa: PLC0415

    settings = Settings()
    conninfo = settings.conninfo()
    with psycopg.connect(conninfo) as conn:
        try:
            require_current_schema(conn)
        except SchemaNotCurrent as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from error
    embedder = settings.embedder().load()
    with connect(conninfo) as conn:
        tenants = tenant or [row[0] for row in conn.execute("SELECT tenant_id FROM tenants")]
        for name in tenants:
            with tqdm(desc=f"{name}: embedding", unit=" episodes") as bar:
                count = reembed_tenant(
                    conn, name, embedder=embedder, clock=wall_clock, progress=bar.update
                )
            typer.echo(f"{name}: {count} episodes embedded with {embedder.model_id}")


def main() -> None:
    """Entry point of the ``sgam`` console script: each failure one line, ``--debug`` anywhere
    for its traceback (``server.commands.failures``)."""
    sys.exit(run(app, sys.argv[1:]))


if __name__ == "__main__":
    main()
