"""The conformance scenarios over HTTP on the cluster: every scenario of tests/conformance
but MCP's tools, each on a fresh tenant of the real app (API keys, the admin API) whose pool
logs in to the coordinator as sgam_app. The store's surface runs the same statements without
the HTTP layer, so the cluster runs the HTTP one alone."""

from __future__ import annotations

import importlib

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from store.db.clock import ManualClock
from tests.citus_helpers import single_node_tests
from tests.conformance.http_surface import HttpSurface
from tests.conformance.surfaces import FactSurface, Surface

SCENARIOS = (
    "all_or_nothing",
    "attribute_migrations",
    "conflicts",
    "episodes",
    "episodic_memory",
    "erasure",
    "expiry_and_retraction",
    "procedural_memory",
    "retention",
    "subject_merge",
    "weak_signals",
    "working_memory",
    "write_path",
)
"""The modules of tests/conformance that run here (``test_<name>.py``): all but MCP's tools."""

for _name in SCENARIOS:
    globals().update(single_node_tests(importlib.import_module(f"tests.conformance.test_{_name}")))


@pytest.fixture
def surface(http: TestClient[Litestar], clock: ManualClock) -> Surface:
    """A fresh tenant on the HTTP client, the app on the coordinator."""
    return HttpSurface(http, clock)


@pytest.fixture
def any_surface(surface: Surface) -> FactSurface:
    """The scenarios for every surface run over HTTP here too."""
    return surface
