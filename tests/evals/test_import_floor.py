"""The bulk import's floor: COPY into fact_versions with every constraint in force, undone after."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from evals.bench.served.data import PERSON_WORDS, TENANT, slug
from evals.bench.served.imports import copy_floor
from store.service import MemoryStore


def _counts(conninfo: str) -> tuple[int, int]:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM fact_versions), (SELECT count(*) FROM episodes)"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_the_floor_copies_with_the_foreign_keys_in_force_and_leaves_nothing(
    store: MemoryStore, conninfo: str
) -> None:
    store.admin.create_tenant(TENANT)
    before = _counts(conninfo)
    # The attributes are not declared yet: a floor that skipped the foreign keys would pass.
    with pytest.raises(errors.ForeignKeyViolation):
        copy_floor(conninfo, 250)
    for words in PERSON_WORDS:
        store.admin.declare_attribute(TENANT, slug(words), {"value_type": "string"})
    assert copy_floor(conninfo, 250) > 0
    assert _counts(conninfo) == before  # rolled back: the episodes it cited and its rows
