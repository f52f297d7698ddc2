"""A tenant's schema read by its stamp on the cluster (tests/store/test_schema_stamp.py): the
stamp and the whole schema with it are statements on one tenant's shard, whatever worker holds
it."""

from __future__ import annotations

from tests.citus_helpers import single_node_tests
from tests.store import test_schema_stamp as single_node

globals().update(single_node_tests(single_node))
