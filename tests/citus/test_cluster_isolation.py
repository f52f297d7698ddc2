"""Tenant isolation on the cluster: the single node's isolation and row-level security tests
(tests/store/test_tenant_isolation.py, tests/store/test_row_security.py), run on the
coordinator, whose queries reach the workers' shards (over HTTP: test_cluster_http.py).

Two tenants with the same keys and episode ids keep separate worlds; every tenant table shows
the pooled role only the tenant its transaction names, with a missing or wrong tenant nothing,
and with the application's own tenant filter taken out of every statement (each then a query
over every shard) the shards' row-level security alone keeps the other tenant's rows out.
"""

from __future__ import annotations

from tests.citus_helpers import single_node_tests
from tests.store import test_row_security, test_tenant_isolation

globals().update(single_node_tests(test_tenant_isolation))
globals().update(single_node_tests(test_row_security))
