"""The named context's few statements on the cluster (tests/store/test_named_context_reads.py):
BEGIN with the tenant's SET LOCAL in one query, the rename and survivor lookup in one, the
cited episodes' times, each on the coordinator and its workers."""

from __future__ import annotations

from tests.citus_helpers import single_node_tests
from tests.store import test_named_context_reads as single_node

globals().update(single_node_tests(single_node))
