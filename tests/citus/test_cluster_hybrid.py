"""Lexical and hybrid evidence on the cluster: the single node's tests, on a tenant's shard.

The full-text column and its (tenant, document) GIN index are distributed with ``episodes``;
a lexical or hybrid search names its tenant in every CTE, so it runs on the tenant's worker.
"""

from __future__ import annotations

from tests.citus_helpers import single_node_tests
from tests.store import test_hybrid_evidence

globals().update(single_node_tests(test_hybrid_evidence))
