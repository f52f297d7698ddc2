"""The HTTP API on the cluster: the single node's tests of tests/http/test_http_api.py (the
seed trace over HTTP, reads at known and valid times, batches, attributes, subjects, export,
the admin API) and of tests/http/test_http_isolation.py (tenant isolation), the real app with
API keys and the admin API, its pool logging in to the coordinator as sgam_app."""

from __future__ import annotations

from tests.citus_helpers import single_node_tests
from tests.http import test_http_api, test_http_isolation

globals().update(single_node_tests(test_http_isolation))
globals().update(single_node_tests(test_http_api))
