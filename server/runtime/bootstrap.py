"""Getting a database ready to serve: migrations, and on a first embedded start a tenant and key."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from server.runtime.resources import api_login
from server.settings import Settings
from store.contract.results import ApiKeyIssued
from store.db.database import check_app_role, make_pool
from store.db.migrate import migrate, pending_migrations, refuse_schema_ahead
from store.service import MemoryStore

DEFAULT_TENANT = "default"


@dataclass(frozen=True, slots=True)
class Prepared:
    """What preparing the database did."""

    migrations_applied: int
    first_key: ApiKeyIssued | None


def prepare_database(
    conninfo: str,
    *,
    apply_migrations: bool,
    create_default_tenant: bool,
    settings: Settings | None = None,
) -> Prepared:
    """Apply pending migrations (if allowed); with ``create_default_tenant`` and no tenant yet
    on a migrated database, make one.

    The default tenant's API key is returned once (only its hash is stored). A schema ahead of
    this code raises ``SchemaNotCurrent``; one behind it (migrations not allowed) is left for
    ``/readyz`` to report. A refused migration raises ``MigrationFailed``, and a URL role that
    cannot work as the application role ``DatabaseUnavailable``, each naming the fix; so does,
    given the server's ``settings``, a pool login that could leave row-level security
    (``api_login``), before any worker starts.
    """
    with psycopg.connect(conninfo) as conn:
        if apply_migrations:
            config = None if settings is None else settings.text_search_config
            applied = migrate(conn, text_search_config=config)
        else:
            applied = []
            refuse_schema_ahead(conn)
        if pending_migrations(conn):  # not ready: /readyz will say so
            return Prepared(migrations_applied=0, first_key=None)
        has_tenant = conn.execute("SELECT EXISTS (SELECT 1 FROM tenants)").fetchone()
    check_app_role(conninfo)
    if settings is not None:
        api_login(settings, conninfo)
    first_key = None
    if create_default_tenant and has_tenant is not None and not has_tenant[0]:
        with make_pool(conninfo, max_size=1) as pool:
            store = MemoryStore(pool)
            store.admin.create_tenant(DEFAULT_TENANT)
            first_key = store.admin.create_api_key(DEFAULT_TENANT)
    return Prepared(migrations_applied=len(applied), first_key=first_key)
