"""``create_app(settings)``: every route, dependency, error handler and the lifespan."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from litestar import Litestar, Router
from litestar.di import Provide
from litestar.exceptions import MethodNotAllowedException, NotFoundException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.plugins.prometheus import PrometheusConfig
from pydantic import BaseModel

from retrieval.search.embeddings import Embedder
from server.auth.guard import (
    CLOCK_HEADER_PARAMETER,
    admin_guard,
    provide_store,
    provide_tenant_id,
    provide_tenant_store,
    tenant_guard,
)
from server.http.api_reference import reference_files, reference_page
from server.http.body_scan import LIMITS_TEXT
from server.http.dependencies import resolve_in_sequence
from server.http.json_bodies import JsonBodyCheck
from server.http.openapi import ExactBodySchemaPlugin
from server.http.problems import EXCEPTION_HANDLERS, http_error_handler
from server.http.request_log import REQUEST_ID_RESPONSE_HEADER, RequestLog
from server.http.trace import provide_trace
from server.routes.admin import admin_routes
from server.routes.attributes import attribute_routes
from server.routes.checkpoints import checkpoint_routes
from server.routes.common import provide_read_times
from server.routes.decisions import decision_routes
from server.routes.episodes import episode_routes
from server.routes.facts import conflict_routes, fact_router
from server.routes.memory_health import memory_health_routes
from server.routes.probes import probe_routes
from server.routes.procedures import procedure_routes
from server.routes.retention import retention_routes
from server.routes.retrieval import retrieval_routes
from server.routes.subjects import subject_routes
from server.routes.weak_signals import weak_signal_routes
from server.runtime.resources import lifespan, provide_reader, provide_resources
from server.runtime.telemetry import app_traces
from server.settings import Settings
from server.ui.pages import routing_error, template_config
from server.ui.routes import ui_routers
from store.db.clock import Clock, wall_clock

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

VERSION = "0.1.0"


def pydantic_json(model: BaseModel) -> msgspec.Raw:
    """A response model as JSON in one pass of pydantic's serializer, embedded as is.

    The same JSON as Litestar's default (``model_dump(mode="json")``, then msgspec), without the
    intermediate dict: the fact read's serialization cost halves.
    """
    return msgspec.Raw(model.model_dump_json())


def create_app(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    clock: Clock = wall_clock,
    span_exporter: SpanExporter | None = None,
) -> Litestar:
    """The SGAM HTTP API. ``embedder`` and ``clock`` are for tests that share a loaded model;
    ``span_exporter`` for tests of its traces (they go there, on whatever the settings say)."""
    # A guard establishes the caller before the body is read; dependencies hand it on, in one
    # chain (``server.auth.guard``).
    tenant_api = Router(
        "/",
        route_handlers=[
            *attribute_routes,
            *episode_routes,
            fact_router,
            *subject_routes,
            *retention_routes,
            *conflict_routes,
            *weak_signal_routes,
            *retrieval_routes,
            *checkpoint_routes,
            *procedure_routes,
            *decision_routes,
            *memory_health_routes,
        ],
        guards=[tenant_guard],
        dependencies={
            "store": Provide(provide_tenant_store, sync_to_thread=False),
            "tenant_id": Provide(provide_tenant_id, sync_to_thread=False),
            "reader": Provide(provide_reader, sync_to_thread=False),
            "times": Provide(provide_read_times, sync_to_thread=False),
            "trace": Provide(provide_trace, sync_to_thread=False),
        },
        parameters={"x_sgam_now": CLOCK_HEADER_PARAMETER},
        security=[{"ApiKey": []}],
    )
    admin_api = Router(
        "/v1/admin",
        route_handlers=admin_routes,
        guards=[admin_guard],
        dependencies={"store": Provide(provide_store, sync_to_thread=False)},
        tags=["admin"],
        security=[{"AdminToken": []}],
    )
    # Route templates as labels, and none for unmatched paths: label values stay bounded.
    prometheus = PrometheusConfig(
        app_name="sgam", prefix="sgam_http", group_path=True, exclude_unhandled_paths=True
    )
    # OpenTelemetry, when on (``server.runtime.telemetry``): its lifespan instruments the
    # pools' driver, so it runs before the one that opens them.
    traces = app_traces(settings, exporter=span_exporter)
    app = Litestar(
        # The timeline pages (``server.ui``): signed in by session cookie, not in the OpenAPI
        # document, answering HTML (their own error pages) rather than problem+json.
        route_handlers=[tenant_api, admin_api, *probe_routes, *ui_routers(), reference_files()],
        template_config=template_config(),
        dependencies={"resources": Provide(provide_resources, sync_to_thread=False)},
        # A path or method no route answers is a page under /ui, a problem elsewhere.
        exception_handlers={
            **EXCEPTION_HANDLERS,
            NotFoundException: routing_error(http_error_handler),
            MethodNotAllowedException: routing_error(http_error_handler),
        },
        # After the guards, before a body is decoded: a body must be JSON, within the limits,
        # each key once.
        before_request=JsonBodyCheck(),
        type_encoders={BaseModel: pydantic_json},
        # Request bodies documented as pydantic validates them (``server.http.openapi``).
        plugins=[ExactBodySchemaPlugin(), *traces.plugins],
        lifespan=[*traces.lifespans, lifespan(settings, embedder=embedder, clock=clock)],
        middleware=[prometheus.middleware, *traces.middleware],
        response_headers=[REQUEST_ID_RESPONSE_HEADER],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="SGAM",
            version=VERSION,
            description="Temporal, cited memory for AI agents: typed facts with validity and"
            " belief windows, exact reads, cited evidence and context blocks.\n\n"
            f"Request bodies: at most {settings.max_body_bytes:,} bytes. {LIMITS_TEXT}",
            path="/schema",
            render_plugins=[reference_page()],
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
    resolve_in_sequence(app)
    # Around the whole app, routing included: route middleware never see a 404 or 405 the
    # router answers, and every answer carries X-Request-ID and gets its log line.
    app.asgi_handler = RequestLog(app.asgi_handler)
    return app
