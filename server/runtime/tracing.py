"""OpenTelemetry traces of a server process, through the libraries' own instrumentations.

- Each request is a server span (the ASGI instrumentation, through Litestar's OpenTelemetry
  plugin, around routing). It starts named by its method alone; once routed, it takes the
  route's template (``POST /v1/context``, ``GET /v1/facts/{subject}/{attribute}``, never the
  path), the tenant once the guard named one, and the request's id (``X-Request-ID``).
- Each store call is a span (``store.tracing``), and each statement in it a span of psycopg's
  instrumentation: the SQL text with its placeholders (parameters are not recorded, and the
  SQL comments that would carry the trace are off).
- Each encoder call is a span from the caller's side, queue included; each extraction job a
  span, the extractor's call in it.

A trace starts only with a request or an extraction job (``StartsTraces``): a statement or a
store call outside them (the database watch's pings, the extraction queue's polls) is not
recorded. Before export, spans lose what could quote a subject, a text or a value
(``Redacted``): the URL's path and query the ASGI instrumentation records, and errors'
messages. Probes (``/healthz``, ``/readyz``, ``/metrics``) are not traced.

Spans go to OTLP over HTTP, configured by the standard variables (``OTEL_EXPORTER_OTLP_*``,
``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``), in batches.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import anyio.to_thread
from litestar import Litestar
from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from opentelemetry.context import Context
from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import (
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
)
from opentelemetry.trace import Link, Span, SpanKind, Status, get_current_span
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

from server.runtime.logs import REQUEST_ID
from store.tracing import TENANT, trace_with

REQUEST_ID_ATTRIBUTE: Final = "sgam.request_id"
HTTP_ROUTE: Final = "http.route"
URL_ATTRIBUTES: Final = frozenset({"http.target", "http.url", "url.path", "url.query", "url.full"})
"""What the ASGI instrumentation records of the URL: a path names subjects, a query holds text."""
ERROR_DETAIL: Final = frozenset({"exception.message", "exception.stacktrace", "exception.escaped"})
"""What an error event records besides the exception's class: its message may quote a row."""
UNTRACED_PATHS: Final = ("^/healthz$", "^/readyz$", "^/metrics$")

_Lifespan = Callable[[Litestar], AbstractAsyncContextManager[None]]


class StartsTraces(Sampler):
    """A trace starts with a request (a server span) or a job taken from the extraction queue
    (a consumer span); any other span is recorded only inside one (``ParentBased``)."""

    def should_sample(  # noqa: PLR0917 - the signature of OpenTelemetry's Sampler
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        """Record a request's or a job's span; drop any other that would start a trace."""
        if kind in (SpanKind.SERVER, SpanKind.CONSUMER):
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, trace_state)
        return SamplingResult(Decision.DROP, None, trace_state)

    def get_description(self) -> str:
        """The sampler's name, as OpenTelemetry's samplers give one."""
        return "StartsTraces"


class Redacted(SpanExporter):
    """Hands spans on to ``exporter`` without the URL's path and query nor errors' messages."""

    def __init__(self, exporter: SpanExporter) -> None:
        self._exporter = exporter

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export the spans, redacted."""
        return self._exporter.export([redacted(span) for span in spans])

    def shutdown(self) -> None:
        """Shut the exporter down."""
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the exporter."""
        return self._exporter.force_flush(timeout_millis)


def redacted(span: ReadableSpan) -> ReadableSpan:
    """``span`` without the attributes in ``URL_ATTRIBUTES``, its events' ``ERROR_DETAIL``,
    and its status's description (an error's message)."""
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=_without(span.attributes, URL_ATTRIBUTES),
        events=[
            Event(event.name, _without(event.attributes, ERROR_DETAIL), event.timestamp)
            for event in span.events
        ],
        links=span.links,
        kind=span.kind,
        instrumentation_scope=span.instrumentation_scope,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
    )


def _without(attributes: Attributes, dropped: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in (attributes or {}).items() if key not in dropped}


def tracer_provider(exporter: SpanExporter | None = None) -> TracerProvider:
    """The process's provider: spans sampled by ``StartsTraces``, batched and redacted, to
    ``exporter`` or else OTLP over HTTP as the ``OTEL_EXPORTER_OTLP_*`` variables say."""
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter,
        )

        exporter = OTLPSpanExporter()
    provider = TracerProvider(
        sampler=ParentBased(root=StartsTraces()), resource=_resource(), shutdown_on_exit=False
    )
    provider.add_span_processor(BatchSpanProcessor(Redacted(exporter)))
    return provider


def _resource() -> Resource:
    """The environment's resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), named ``sgam``
    when it names no service."""
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        return Resource.create({SERVICE_NAME: "sgam"})
    return resource


def _unrouted(scope: Scope) -> tuple[str, dict[str, Any]]:
    """The request span's name before routing: its method alone, as OpenTelemetry's HTTP
    conventions name a request whose route is unknown (a 404 keeps it)."""
    return str(scope.get("method", "HTTP")), {}


def _request_id(span: Span, scope: Mapping[str, Any]) -> None:
    """Give the request span the request's id (``server.http.request_log`` set it)."""
    if (request_id := REQUEST_ID.get()) is not None:
        span.set_attribute(REQUEST_ID_ATTRIBUTE, request_id)


def route_span(app: ASGIApp) -> ASGIApp:
    """Route middleware: name the request's span by its route template, and give it the
    tenant the guard established as the answer starts (the span ends with the answer)."""

    async def named(scope: Scope, receive: Receive, send: Send) -> None:
        current = get_current_span()
        if not current.is_recording():
            await app(scope, receive, send)
            return
        template = scope["path_template"]
        current.update_name(f"{scope.get('method', 'HTTP')} {template}")
        current.set_attribute(HTTP_ROUTE, template)

        async def send_with_tenant(message: Message) -> None:
            if message["type"] == "http.response.start":
                tenant_id = (scope.get("state") or {}).get("tenant_id")
                if tenant_id is not None:
                    current.set_attribute(TENANT, tenant_id)
            await send(message)

        await app(scope, receive, send_with_tenant)

    return named


def traced_app(
    exporter: SpanExporter | None = None,
) -> tuple[OpenTelemetryPlugin, Callable[[ASGIApp], ASGIApp], _Lifespan]:
    """What ``create_app`` adds: the request spans' plugin, the middleware that names them,
    and the lifespan that instruments psycopg and the store while the app runs."""
    provider = tracer_provider(exporter)
    plugin = OpenTelemetryPlugin(
        OpenTelemetryConfig(
            tracer_provider=provider,
            scope_span_details_extractor=_unrouted,
            server_request_hook_handler=_request_id,
            exclude=list(UNTRACED_PATHS),
            exclude_spans=["receive", "send"],
        )
    )
    return plugin, route_span, _lifespan(provider)


def _lifespan(provider: TracerProvider) -> _Lifespan:
    """Instrument psycopg and the store before the pools open; after they closed, undo it
    and send what is left (``sgam serve`` opens them after this: ``server.app``)."""

    @asynccontextmanager
    async def traced(app: Litestar) -> AsyncIterator[None]:
        # No SQL comments: they would make each statement's text unique to its trace.
        PsycopgInstrumentor().instrument(
            tracer_provider=provider, enable_commenter=False, capture_parameters=False
        )
        trace_with(provider.get_tracer("sgam"))
        try:
            yield
        finally:
            trace_with(None)
            PsycopgInstrumentor().uninstrument()
            await anyio.to_thread.run_sync(provider.shutdown)

    return traced
