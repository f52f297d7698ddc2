"""``sgam purge``: delete what retention classes no longer keep, every tenant, once."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from server.commands.admin import configured_store
from server.settings import Settings
from store.contract.governance import TenantPurge


def _line(counts: TenantPurge) -> str:
    return (
        f"{counts.tenant_id}: {counts.episodes_stubbed + counts.episodes_deleted} episodes"
        f" ({counts.episodes_stubbed} kept as stubs), {counts.vectors_deleted} vectors,"
        f" {counts.fact_versions_deleted} fact versions ({counts.facts_purged} facts whole),"
        f" {counts.receipts_deleted} receipts, {counts.weak_signals_deleted} weak signals,"
        f" {counts.extraction_jobs_deleted} extraction jobs"
    )


def purge(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would go; delete nothing.")
    ] = False,
) -> None:
    """Purge every tenant: expired episode text and vectors, expired fact versions, receipts
    and finished extraction jobs past SGAM_RECEIPT_RETENTION_DAYS, stale weak signals.

    Subjects under legal hold are skipped. A tenant whose purge fails is rolled back and named
    on stderr, the others are purged all the same, and the command exits 1. Exits 3 when
    another purge is running.
    """
    settings = Settings()
    # One connection holds the purge's lock while the other works tenant by tenant.
    with configured_store(connections=2) as store:
        report = store.retention.purge(
            receipt_retention=timedelta(days=settings.receipt_retention_days), dry_run=dry_run
        )
    if report is None:
        typer.echo("another purge is running; try again later", err=True)
        raise typer.Exit(3)
    verb = "would delete" if dry_run else "deleted"
    for counts in report.tenants:
        typer.echo(f"{verb} {_line(counts)}")
    for failure in report.failed:
        typer.echo(f"error: tenant {failure.tenant_id} was not purged: {failure.detail}", err=True)
    if dry_run:
        typer.echo("dry run: nothing was deleted")
    if report.failed:
        raise typer.Exit(1)
