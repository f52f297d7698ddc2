"""``sgam tenant``, ``sgam key`` and the other operator commands run from a shell on the server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import psycopg
import typer

from server.settings import Settings
from store.contract.results import ApiKeyIssued
from store.service import MemoryStore

tenant_app = typer.Typer(
    help="Create tenants (each key, and so each call, belongs to one) and change their settings."
)
key_app = typer.Typer(help="Issue and revoke API keys (shown once, stored hashed).")


def _conninfo() -> str:
    """The configured database's URL, as the operator commands log in (the tables' owner in
    the embedded default)."""
    return Settings().conninfo()


@contextmanager
def configured_store(connections: int = 1) -> Iterator[MemoryStore]:
    """The configured store; a refusal ends the command with its message and exit code 1.

    A database whose schema is not current (pending migrations) is refused before anything is
    written: only ``sgam migrate`` and ``sgam serve`` migrate.
    """
    from store.errors import StoreError  # noqa: PLC0415
    from store.service import open_store  # noqa: PLC0415

    try:
        with open_store(_conninfo(), max_connections=connections) as store:
            yield store
    except StoreError as error:
        field = f" (field {error.field})" if error.field else ""
        typer.echo(f"error: {error}{field}", err=True)
        raise typer.Exit(1) from error


def _echo_key(issued: ApiKeyIssued) -> None:
    typer.echo(f"key_id:  {issued.key_id}\napi_key: {issued.api_key}  (shown once)")


class UnverifiedEvidence(StrEnum):
    """What a tenant does with a candidate whose evidence is not in its episode's text."""

    accept = "accept"
    refuse = "refuse"


UNVERIFIED_HELP = (
    "accept: store such candidates, labelled unverified; refuse: answer them as invalid."
    " An attribute's own on_unverified_evidence wins over the tenant's."
)


@tenant_app.command("create")
def create_tenant(
    tenant_id: Annotated[str, typer.Argument(help="The new tenant's id, e.g. acme.")],
    with_key: Annotated[bool, typer.Option(help="Also issue an API key for it.")] = True,
    on_unverified_evidence: Annotated[
        UnverifiedEvidence, typer.Option(help=UNVERIFIED_HELP)
    ] = UnverifiedEvidence.accept,
) -> None:
    """Create a tenant and (by default) print an API key for it, once."""
    with configured_store() as store:
        store.admin.create_tenant(tenant_id, on_unverified_evidence=on_unverified_evidence.value)
        issued = store.admin.create_api_key(tenant_id) if with_key else None
    typer.echo(f"tenant {tenant_id} created")
    if issued is not None:
        _echo_key(issued)


@tenant_app.command("show")
def show_tenant(
    tenant_id: Annotated[str, typer.Argument(help="The tenant's id.")],
) -> None:
    """Print a tenant's settings."""
    with configured_store() as store:
        policy = store.admin.unverified_evidence(tenant_id)
    typer.echo(f"tenant {tenant_id}\non_unverified_evidence: {policy}")


@tenant_app.command("set")
def set_tenant(
    tenant_id: Annotated[str, typer.Argument(help="The tenant's id.")],
    on_unverified_evidence: Annotated[UnverifiedEvidence, typer.Option(help=UNVERIFIED_HELP)],
) -> None:
    """Change a tenant's settings; later writes follow them, stored facts keep their label."""
    with configured_store() as store:
        store.admin.set_unverified_evidence(tenant_id, on_unverified_evidence.value)
        policy = store.admin.unverified_evidence(tenant_id)
    typer.echo(f"tenant {tenant_id}\non_unverified_evidence: {policy}")


@key_app.command("create")
def create_key(
    tenant_id: Annotated[str, typer.Argument(help="The tenant the key will act for.")],
) -> None:
    """Issue an API key for a tenant and print it, once."""
    with configured_store() as store:
        issued = store.admin.create_api_key(tenant_id)
    _echo_key(issued)


@key_app.command("revoke")
def revoke_key(
    key_id: Annotated[str, typer.Argument(help="The key_id printed when the key was issued.")],
) -> None:
    """Revoke an API key; its next call is refused (401)."""
    with configured_store() as store:
        revoked = store.admin.revoke_api_key(key_id)
    typer.echo(f"key {revoked.key_id} of tenant {revoked.tenant_id} revoked")


receipts_app = typer.Typer(
    help="Keep receipts within their retention (`sgam purge` does this and more), and rotate"
    " a tenant's receipt secret."
)


@receipts_app.command("purge")
def purge_receipts(
    days: Annotated[
        int | None,
        typer.Option(min=1, help="Keep this many days (env SGAM_RECEIPT_RETENTION_DAYS, 90)."),
    ] = None,
) -> None:
    """Delete every tenant's receipts older than the retention, and the decisions left empty.

    Runs as the database URL's own role, like migrations: it purges all tenants at once. The
    full retention purge (`sgam purge`) deletes these receipts too, tenant by tenant.
    """
    from datetime import UTC, datetime, timedelta  # noqa: PLC0415 - keep --help fast

    from store.db.database import connect  # noqa: PLC0415
    from store.errors import StoreError, translate  # noqa: PLC0415
    from store.governance.receipts import purge_receipts as purge  # noqa: PLC0415

    settings = Settings()
    kept = timedelta(days=days or settings.receipt_retention_days)
    conninfo = settings.conninfo()
    try:
        with connect(conninfo) as conn:
            deleted = purge(conn, None, before=datetime.now(UTC) - kept)
    except psycopg.Error as error:
        failure: StoreError = translate(error)
        typer.echo(f"error: {failure}", err=True)
        raise typer.Exit(1) from error
    typer.echo(f"deleted {deleted} receipts older than {kept.days} days")


@receipts_app.command("rotate-secret")
def rotate_receipt_secret(
    tenant: Annotated[str, typer.Argument(help="The tenant whose receipt secret to rotate.")],
) -> None:
    """Start a tenant's next receipt secret: receipts made from now on are hashed with it, and
    those made before keep their version and still compare. Other server processes take it up
    within a minute."""
    with configured_store() as store:
        rotated = store.receipts.rotate_secret(tenant)
    typer.echo(
        f"receipt secret of tenant {rotated.tenant_id} is now version {rotated.secret_version}"
    )


attribute_app = typer.Typer(
    help="Change an attribute's declaration with its facts (schema evolution). Not the"
    " database's `sgam migrate`."
)


@attribute_app.command("migrate")
def migrate_attribute(
    attribute: Annotated[str, typer.Argument(help="The attribute to change, e.g. home_city.")],
    to: Annotated[
        Path,
        typer.Option(
            "--to",
            exists=True,
            dir_okay=False,
            help="JSON file with the new declaration (value_type, enum_values, ...; `attribute`"
            " for a new name; `value_map` of old values to new ones).",
        ),
    ],
    tenant: Annotated[str, typer.Option(help="The tenant whose attribute it is.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would change; change nothing.")
    ] = False,
    keep_unconvertible: Annotated[
        bool,
        typer.Option(
            "--keep-unconvertible",
            help="Leave values that cannot convert under the old declaration instead of"
            " refusing the migration.",
        ),
    ] = False,
) -> None:
    """Convert an attribute's facts to a new declaration in one transaction; print the report.

    Values that cannot convert are listed and refuse the migration (exit 2) unless
    --keep-unconvertible.
    """
    from datetime import timedelta  # noqa: PLC0415 - keep --help fast

    from store.errors import UnconvertibleValues  # noqa: PLC0415

    try:
        change = json.loads(to.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise typer.BadParameter(f"not a JSON declaration: {error}", param_hint="--to") from None
    window = timedelta(days=Settings().attribute_dual_read_days)
    with configured_store() as store:
        try:
            result = store.admin.migrate_attribute(
                tenant,
                attribute,
                change,
                dry_run=dry_run,
                keep_unconvertible=keep_unconvertible,
                dual_read=window,
            )
        except UnconvertibleValues as error:
            typer.echo(f"error: {error}", err=True)
            typer.echo(json.dumps(error.unconvertible, indent=2), err=True)
            raise typer.Exit(2) from error
    if result.converted and not result.dry_run:
        from store.db.statistics import analyze  # noqa: PLC0415

        analyze(_conninfo(), ["fact_versions"])  # the converted versions are new rows
    typer.echo(result.model_dump_json(indent=2))


subjects_app = typer.Typer(
    help="Name a subject, or fold a duplicate into another (as the subject routes do)."
)


@subjects_app.command("name")
def name_subject(
    subject: Annotated[str, typer.Argument(help="The subject's id.")],
    tenant: Annotated[str, typer.Option(help="The tenant the subject belongs to.")],
    display_name: Annotated[
        str | None, typer.Option("--display-name", help="How the subject is written in full.")
    ] = None,
    alias: Annotated[
        list[str] | None, typer.Option("--alias", help="Another name; repeat for several.")
    ] = None,
) -> None:
    """Declare the subject's display name and aliases (replacing those declared before); print
    every name it has."""
    with configured_store() as store:
        result = store.subjects.declare_names(
            tenant, subject, {"display_name": display_name, "aliases": alias or []}
        )
    typer.echo(result.model_dump_json(indent=2))


@subjects_app.command("merge")
def merge_subject(
    subject: Annotated[str, typer.Argument(help="The duplicate's id; it will name the survivor.")],
    into: Annotated[str, typer.Option("--into", help="The survivor's id.")],
    tenant: Annotated[str, typer.Option(help="The tenant both subjects belong to.")],
) -> None:
    """Move the duplicate's facts, conflicts and episode links to the survivor; print it all."""
    with configured_store() as store:
        result = store.subjects.merge(tenant, subject, into=into)
    typer.echo(result.model_dump_json(indent=2))
