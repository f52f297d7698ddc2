"""Episodes' vectors read in binary through the coordinator
(tests/store/test_episode_vectors_read.py): the floats stored, on the tenant's worker."""

from __future__ import annotations

from tests.citus_helpers import single_node_tests
from tests.store import test_episode_vectors_read as single_node

globals().update(single_node_tests(single_node))
