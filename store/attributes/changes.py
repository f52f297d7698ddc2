"""Attribute migrations: a new declaration (type, enum members, name) applied to the facts an
attribute holds, in one transaction per attribute and tenant.

Every current version of the attribute's facts (current knowledge, whatever its valid window) is
converted by ``store.attributes.conversions``: a converted one is retired and a new version of the
same fact (same windows, supersedes, ended_by and source) is inserted under the new name and schema
version, leaving a write receipt. A dry run plans the same and writes nothing, so its report is what
the run does. Values that do not convert refuse the run, or stay as they are (keep_unconvertible).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import psycopg

from store.attributes.conversions import Unconvertible, convert_value
from store.attributes.registry import (
    DECLARED,
    INSERT_ATTRIBUTE,
    UPDATE_ATTRIBUTE,
    declaration_params,
    get_attribute,
)
from store.contract.facts import Attribute, Fact
from store.contract.governance import (
    AttributeChange,
    ConvertedValue,
    MigrationResult,
    UnconvertibleValue,
)
from store.db.clock import Clock
from store.db.locks import lock_keys, lock_tenants
from store.errors import Conflict, InvalidInput, UnconvertibleValues
from store.facts import versions
from store.facts.temporal import Plan
from store.facts.versions import IdFactory, as_version
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE


def plan_conversions(
    current: Sequence[Fact], *, old: Attribute, change: AttributeChange
) -> tuple[list[ConvertedValue], list[UnconvertibleValue]]:
    """Which current versions convert to the new declaration (and to what), and which do not."""
    converted: list[ConvertedValue] = []
    refused: list[UnconvertibleValue] = []
    for fact in sorted(current, key=lambda f: (f.subject, f.valid_from, str(f.version_id))):
        try:
            value = convert_value(
                fact.value,
                source=old.value_type,
                target=change.value_type,
                enum_values=change.enum_values,
                value_map=change.value_map,
            )
        except Unconvertible as error:
            refused.append(
                UnconvertibleValue(
                    fact_id=fact.fact_id,
                    version_id=fact.version_id,
                    subject=fact.subject,
                    value=fact.value,
                    reason=str(error),
                )
            )
        else:
            converted.append(
                ConvertedValue(
                    fact_id=fact.fact_id,
                    version_id=fact.version_id,
                    subject=fact.subject,
                    value=fact.value,
                    converted_value=value,
                )
            )
    return converted, refused


def migrate_attribute(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    attribute: str,
    *,
    change: AttributeChange,
    dry_run: bool,
    keep_unconvertible: bool,
    clock: Clock,
    new_id: IdFactory,
    dual_read: timedelta,
) -> MigrationResult:
    """Apply (or, on a dry run, plan) ``change`` to the tenant's ``attribute`` and its facts.

    A run holds the tenant's lock exclusively, as a bulk import does, and no key's: the tenant's
    key writers wait for its commit, then read the new declaration, so none writes under the old
    one a fact the migration did not see. A dry run holds the tenant's lock shared.
    """
    if dry_run:
        lock_keys(conn, tenant_id=tenant_id, keys=[])
    else:
        lock_tenants(conn, [tenant_id])
    conn.execute(
        "SELECT 1 FROM attributes WHERE tenant_id = %(tenant_id)s AND attribute = %(attribute)s"
        " FOR UPDATE",
        {"tenant_id": tenant_id, "attribute": attribute},
    )
    old = get_attribute(conn, tenant_id, attribute)
    target = change.attribute or attribute
    _check_change(conn, tenant_id, old, change=change, target=target)
    subjects = [
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT subject FROM fact_versions WHERE tenant_id = %(tenant_id)s"
            " AND attribute = %(attribute)s AND retired_at IS NULL ORDER BY subject",
            {"tenant_id": tenant_id, "attribute": attribute},
        )
    ]
    keys = [(s, name) for s in subjects for name in dict.fromkeys((attribute, target))]
    now, current, refused_keys = versions.hold_keys(
        conn, clock, tenant_id=tenant_id, keys=keys, locked=True
    )
    for error in refused_keys.values():
        raise error
    _refuse_pending(conn, tenant_id, attribute, now=now)
    facts = [fact for (_, name), found in current.items() if name == attribute for fact in found]
    converted, unconvertible = plan_conversions(facts, old=old, change=change)
    result = MigrationResult(
        migration_id=None if dry_run else new_id(),
        dry_run=dry_run,
        attribute=target,
        migrated_from=attribute if target != attribute else None,
        from_schema_version=old.schema_version,
        schema_version=old.schema_version + 1,
        from_value_type=old.value_type,
        value_type=change.value_type,
        converted=converted,
        unconvertible=unconvertible,
        kept_unconvertible=keep_unconvertible and bool(unconvertible),
        dual_read_until=now + dual_read if target != attribute else None,
    )
    if dry_run:
        return result
    if unconvertible and not keep_unconvertible:
        raise UnconvertibleValues(
            f"{len(unconvertible)} value(s) of {attribute!r} cannot convert to the new"
            " declaration; map them in value_map, or keep them with keep_unconvertible",
            field="keep_unconvertible",
            unconvertible=[item.model_dump(mode="json") for item in unconvertible],
        )
    _write_declaration(conn, tenant_id, old, change=change, target=target, now=now)
    _rewrite_facts(conn, tenant_id, facts, result=result, now=now, new_id=new_id)
    _record(conn, tenant_id, result, now=now)
    return result


def _check_change(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    old: Attribute,
    *,
    change: AttributeChange,
    target: str,
) -> None:
    if target != old.attribute:
        taken = conn.execute(
            "SELECT 1 FROM attributes WHERE tenant_id = %(tenant_id)s"
            " AND attribute = %(attribute)s",
            {"tenant_id": tenant_id, "attribute": target},
        ).fetchone()
        if taken is not None:
            raise Conflict(f"attribute {target!r} already exists", field="attribute")
    elif not change.value_map and all(
        getattr(old, name) == getattr(change, name) for name in DECLARED
    ):
        raise InvalidInput(
            "the declaration changes nothing: a migration changes the name, the value type,"
            " the enum members or maps values",
            field="value_type",
        )


_PENDING = """
SELECT
    (SELECT count(*) FROM conflicts WHERE tenant_id = %(tenant_id)s
        AND attribute = %(attribute)s AND status = 'open'),
    (SELECT count(*) FROM weak_signals WHERE tenant_id = %(tenant_id)s
        AND attribute = %(attribute)s AND expires_at > %(now)s)
"""


def _refuse_pending(
    conn: psycopg.Connection[Any], tenant_id: str, attribute: str, *, now: datetime
) -> None:
    """Conflict while values wait outside the facts: open conflicts' challengers and live
    buffered weak signals, which would keep the old type (or name) past the migration."""
    row = conn.execute(
        _PENDING, {"tenant_id": tenant_id, "attribute": attribute, "now": now}
    ).fetchone()
    conflicts, signals = row if row is not None else (0, 0)
    if conflicts or signals:
        raise Conflict(
            f"attribute {attribute!r} has {conflicts} open conflict(s) and {signals} buffered"
            " weak signal(s); resolve the conflicts and let the signals be promoted or expire"
            " before migrating it",
            field="attribute",
        )


def _write_declaration(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    old: Attribute,
    *,
    change: AttributeChange,
    target: str,
    now: datetime,
) -> None:
    params = declaration_params(tenant_id, target, change, now=now)
    if target == old.attribute:
        conn.execute(UPDATE_ATTRIBUTE, params)
        return
    created = {"schema_version": old.schema_version + 1, "created_at": old.created_at}
    conn.execute(INSERT_ATTRIBUTE, params | created)
    conn.execute(
        "UPDATE attributes SET renamed_to = %(target)s, updated_at = %(now)s"
        " WHERE tenant_id = %(tenant_id)s AND attribute = %(attribute)s",
        {"tenant_id": tenant_id, "attribute": old.attribute, "target": target, "now": now},
    )


def _rewrite_facts(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    facts: Sequence[Fact],
    *,
    result: MigrationResult,
    now: datetime,
    new_id: IdFactory,
) -> None:
    by_version = {fact.version_id: fact for fact in facts}
    writes = versions.PendingWrites(tenant_id=tenant_id, now=now, new_id=new_id)
    written = []
    for item in result.converted:
        fact = by_version[item.version_id]
        old = as_version(fact)
        new = replace(
            old,
            value=item.converted_value,
            schema_version=result.schema_version,
            version_id=None,
        )
        plan = Plan("written", retire=(old,), insert=(new,), shown=new)
        shown = writes.add(plan, subject=fact.subject, attribute=result.attribute, current=[fact])
        if shown is not None:
            written.append(
                touched.fact_written(
                    fact.subject,
                    result.attribute,
                    version_id=shown,
                    now=now,
                    source_episode_id=fact.source_episode_id,
                )
            )
    writes.flush(conn)
    receipts.leave_receipts(conn, tenant_id, written, action="write", trace=NO_TRACE, now=now)


def _record(
    conn: psycopg.Connection[Any], tenant_id: str, result: MigrationResult, *, now: datetime
) -> None:
    conn.execute(
        """
        INSERT INTO attribute_migrations (
            tenant_id, migration_id, attribute, migrated_from, from_schema_version,
            schema_version, from_value_type, value_type, converted, kept_fact_ids, migrated_at,
            dual_read_until
        ) VALUES (
            %(tenant_id)s, %(migration_id)s, %(attribute)s, %(migrated_from)s,
            %(from_schema_version)s, %(schema_version)s, %(from_value_type)s, %(value_type)s,
            %(converted)s, %(kept_fact_ids)s, %(now)s, %(dual_read_until)s
        )
        """,
        {
            "tenant_id": tenant_id,
            "migration_id": result.migration_id,
            "attribute": result.attribute,
            "migrated_from": result.migrated_from,
            "from_schema_version": result.from_schema_version,
            "schema_version": result.schema_version,
            "from_value_type": str(result.from_value_type),
            "value_type": str(result.value_type),
            "converted": len(result.converted),
            "kept_fact_ids": sorted({item.fact_id for item in result.unconvertible}, key=str),
            "now": now,
            "dual_read_until": result.dual_read_until or now,
        },
    )
