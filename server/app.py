"""``create_app(settings)``: every route, dependency, error handler and the lifespan."""

from __future__ import annotations

from litestar import Litestar, Router
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.plugins.prometheus import PrometheusConfig

from retrieval.embeddings import Embedder
from server.auth import CLOCK_HEADER_PARAMETER, tenant_guard
from server.problems import EXCEPTION_HANDLERS
from server.resources import lifespan
from server.routes.admin import admin_router
from server.routes.attributes import attribute_routes
from server.routes.conflicts import conflict_routes
from server.routes.episodes import episode_routes
from server.routes.facts import fact_router
from server.routes.health import health_routes
from server.routes.retrieval import retrieval_routes
from server.routes.subjects import subject_routes
from server.settings import Settings
from store.clock import Clock, wall_clock

VERSION = "0.1.0"


def create_app(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock = wall_clock,
) -> Litestar:
    """The SGAM HTTP API. ``embedder`` and ``clock`` are for tests that share a loaded model."""
    tenant_api = Router(
        "/",
        route_handlers=[
            *attribute_routes,
            *episode_routes,
            fact_router,
            *subject_routes,
            *conflict_routes,
            *retrieval_routes,
        ],
        guards=[tenant_guard],
        parameters={"x_sgam_now": CLOCK_HEADER_PARAMETER},
        security=[{"ApiKey": []}],
    )
    # Route templates as labels, and none for unmatched paths: label values stay bounded.
    prometheus = PrometheusConfig(
        app_name="sgam", prefix="sgam_http", group_path=True, exclude_unhandled_paths=True
    )
    return Litestar(
        route_handlers=[tenant_api, admin_router, *health_routes],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan(settings, embedder=embedder, clock=clock)],
        middleware=[prometheus.middleware],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="SGAM",
            version=VERSION,
            description="Temporal, cited memory for AI agents: typed facts with validity and"
            " belief windows, exact reads, cited evidence and context blocks.",
            path="/schema",
            render_plugins=[ScalarRenderPlugin()],
            components=Components(
                security_schemes={
                    "ApiKey": SecurityScheme(
                        type="http", scheme="bearer", description="A tenant's API key."
                    ),
                    "AdminToken": SecurityScheme(
                        type="http", scheme="bearer", description="SGAM_ADMIN_TOKEN."
                    ),
                }
            ),
        ),
    )
