"""Tenant isolation on the cluster: the single node's isolation and row-level security tests
(tests/store/test_tenant_isolation.py, tests/store/test_row_security.py), run on the
coordinator, whose queries reach the workers' shards (over HTTP: test_cluster_http.py).

Two tenants with the same keys and episode ids keep separate worlds; every tenant table shows
the pooled role only the tenant its transaction names, with a missing or wrong tenant nothing,
and with the application's own tenant filter taken out of every statement (each then a query
over every shard; a recursive CTE keeps it, as Citus requires) the shards' row-level security
alone keeps the other tenant's rows out.
"""

from __future__ import annotations

import re

import pytest
from psycopg_pool import ConnectionPool

from store.service import MemoryStore
from tests.citus_helpers import single_node_tests
from tests.store import test_row_security, test_tenant_isolation
from tests.store.test_row_security import (
    nothing_leaks_to_another_tenant,
    reads_of,
    remove_tenant_filters,
)

globals().update(single_node_tests(test_tenant_isolation))
globals().update(single_node_tests(test_row_security))

_RECURSIVE = re.compile(r"\bWITH\s+RECURSIVE\b", re.IGNORECASE)


@pytest.fixture
def unfiltered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The single node's, but a recursive CTE (a renamed attribute's walk) keeps its filters:
    Citus plans one only when it names the tenant, and refuses it otherwise."""
    return remove_tenant_filters(monkeypatch, keeping=_RECURSIVE)


def test_with_the_application_s_tenant_filter_removed_nothing_leaks(
    store: MemoryStore, seeded: str, owner_pool: ConnectionPool, unfiltered: list[int]
) -> None:
    """The single node's test, whose last check is looser here: every tenant of the run shares
    the cluster's database, so the same reads as the tables' owner, whom no policy holds, show
    some tenant's mira and e1, not necessarily the seeded one's; only the wall kept them out
    before."""
    other = nothing_leaks_to_another_tenant(store, seeded, unfiltered)
    owner = MemoryStore(owner_pool, clock=store.clock)
    leaked = reads_of(owner, other)
    assert None not in (leaked["current"], leaked["history"])
    # Some tenant's e1, which may be a stub (the erasure and purge tests leave theirs): found.
    assert owner.episodes.get(other, "e1").id == "e1"
    assert "mira" in leaked["subjects"]
