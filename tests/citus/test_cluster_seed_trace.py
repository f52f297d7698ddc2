"""The seed's trace replayed on the cluster: every result as shipped (scores within noise),
and the single node's assertions about it (tests/cli/test_seed_trace.py) on the cluster's
results."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from tests.citus_helpers import replay_as, single_node_tests
from tests.cli import test_seed_trace as single_node

globals().update(single_node_tests(single_node, reading="results"))


@pytest.fixture(scope="module")
def results(pool: ConnectionPool, embedder: Embedder) -> list[dict[str, Any]]:
    """The seed trace replayed on the coordinator, in a tenant of its own."""
    return replay_as(pool, single_node.SEED, "seed-trace", embedder)
