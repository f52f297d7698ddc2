"""OpenTelemetry traces: a context call's span tree, named by routes, with nothing of a
subject, a text or a value in any span; and none of it unless asked for.

The app runs with OpenTelemetry's in-memory exporter in place of OTLP, everything else as
``sgam serve`` wires it (``server.runtime.tracing``): the spans are read once the app has shut
down, which sends what its batches held.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import pytest
from litestar.testing import TestClient
from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from extraction.extractor import PROMPT_VERSION, Extract, ExtractionFailed
from extraction.jobs import WorkPolicy, run_job
from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.runtime.telemetry import traces_wanted
from server.runtime.tracing import tracer_provider
from server.settings import Settings
from store.episodes.extraction import Queued
from store.service import MemoryStore
from store.tracing import trace_with, tracing
from tests import helpers
from tests.http_helpers import candidate, declare, make_tenant, record

SUBJECT = "zelda-quillfeather"
VALUE = "Vorpalmouth"
TEXT = "Zelda moved to Vorpalmouth, she said over the plumbago hedge."
QUESTION = "Which town does Zelda live in these days?"
REQUEST_ID = "trace-test-0001"
SECRETS = (SUBJECT, VALUE, "plumbago", "Zelda", QUESTION, "zelda")
"""The subject, the value, the episode's and the question's words: in no span."""
LOADED_WHEN_OFF = """
import sys
from server.app import create_app
from server.settings import Settings
create_app(Settings())
loaded = (
    "opentelemetry.sdk",
    "opentelemetry.exporter",
    "opentelemetry.instrumentation.psycopg",
    "opentelemetry.instrumentation.dbapi",
)
print(sorted(name for name in sys.modules if name.startswith(loaded)))
"""


@dataclass(frozen=True)
class Traced:
    tenant: str
    spans: list[ReadableSpan]


@pytest.fixture(scope="module")
def traced(api_settings: Settings, embedder: Embedder) -> Traced:
    """A tenant's episode and fact written, read back, a path no route has, and the context
    call, in an app whose spans go to memory; the tenant and every span."""
    exporter = InMemorySpanExporter()
    app = create_app(api_settings, embedder=embedder, span_exporter=exporter)
    with TestClient(app, raise_server_exceptions=False) as http:
        tenant = make_tenant(http, "traced")
        declare(http, tenant.headers, "home_town", "string", description="Where one lives")
        record(http, tenant.headers, "t1", TEXT, updates=[candidate(SUBJECT, "home_town", VALUE)])
        fact = http.get(f"/v1/facts/{SUBJECT}/home_town", headers=tenant.headers)
        assert (fact.status_code, fact.json()["value"]) == (200, VALUE)
        assert http.get(f"/v1/nowhere/{SUBJECT}", headers=tenant.headers).status_code == 404
        context = http.post(
            "/v1/context",
            json={"question": QUESTION, "subject": SUBJECT},
            headers={**tenant.headers, "X-Request-ID": REQUEST_ID},
        )
        assert context.status_code == 200, context.text
        assert VALUE in context.json()["block"]
    return Traced(tenant.name, list(exporter.get_finished_spans()))


def _one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    named = [span for span in spans if span.name == name]
    assert len(named) == 1, [span.name for span in spans]
    return named[0]


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def test_a_context_call_is_one_trace_of_its_request_store_calls_statements_and_encoder(
    traced: Traced,
) -> None:
    tenant, spans = traced.tenant, traced.spans

    request = _one(spans, "POST /v1/context")
    assert request.kind == SpanKind.SERVER
    assert request.parent is None
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/v1/context"
    assert request.attributes["sgam.tenant_id"] == tenant
    assert request.attributes["sgam.request_id"] == REQUEST_ID
    trace = [span for span in spans if span.context.trace_id == request.context.trace_id]
    by_id = {span.context.span_id: span for span in trace}

    # The request > the store's calls > their statements; the encoder's call in the request.
    store_calls = [span for span in trace if span.name.startswith("store ")]
    assert "store snapshot" in {span.name for span in store_calls}
    for call in store_calls:
        assert _parent(call) == request.context.span_id
        assert call.attributes is not None
        assert call.attributes["sgam.tenant_id"] == tenant
    statements = [span for span in trace if span.kind == SpanKind.CLIENT]
    assert statements
    for statement in statements:
        assert statement.attributes is not None
        assert statement.attributes["db.system"] == "postgresql"
        assert by_id[_parent(statement) or 0] in store_calls
    texts = [str((span.attributes or {})["db.statement"]) for span in statements]
    assert any("%(" in text or "%s" in text for text in texts), texts  # placeholders only
    encoder = _one(trace, "encoder")
    assert by_id[_parent(encoder) or 0] in [request, *store_calls]
    texts_encoded = (encoder.attributes or {})["sgam.encoder.texts"]
    assert isinstance(texts_encoded, int)
    assert texts_encoded >= 1
    assert {span.name for span in trace} == {
        request.name,
        "encoder",
        *(span.name for span in store_calls),
        *(span.name for span in statements),
    }

    # Routes name the other requests' spans, the method alone when none matched.
    names = {span.name for span in spans if span.kind == SpanKind.SERVER}
    assert {"GET /v1/facts/{subject}/{attribute}", "GET", "POST /v1/episodes"} <= names


def test_no_span_names_a_subject_a_text_or_a_value(traced: Traced) -> None:
    spans = traced.spans
    assert len(spans) > 20
    for span in spans:
        shown = json.dumps(
            {
                "name": span.name,
                "attributes": dict(span.attributes or {}),
                "events": [dict(event.attributes or {}) for event in span.events],
                "status": span.status.description,
            },
            default=str,
        )
        for secret in SECRETS:
            assert secret not in shown, (secret, shown)
    assert not any("http.target" in (span.attributes or {}) for span in spans)


def test_traces_are_off_unless_asked_for(
    api_settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert not traces_wanted(api_settings)
    assert traces_wanted(api_settings.model_copy(update={"otel_traces": True}))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert traces_wanted(api_settings)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")

    app = create_app(api_settings, embedder=embedder)
    assert "OpenTelemetryPlugin" not in {type(plugin).__name__ for plugin in app.plugins}
    with TestClient(app, raise_server_exceptions=False) as http:
        assert http.get("/healthz").status_code == 200
        assert not tracing()
        assert not PsycopgInstrumentor().is_instrumented_by_opentelemetry

    # Off, building the app loads neither OpenTelemetry's SDK nor its exporter nor the
    # driver's instrumentation: a process of its own shows what an app off loads. (Litestar
    # imports its own plugin's module, and with it the ASGI instrumentation's, to look for it.)
    loaded = subprocess.run(
        [sys.executable, "-c", LOADED_WHEN_OFF],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr


def _traced_jobs(
    store: MemoryStore, tenant: str, *extracts: Extract
) -> tuple[list[ReadableSpan], list[str | None]]:
    """One queued episode per ``extracts``, each worked with its extract under a tracer that
    sends to memory, as a server's worker thread works them; the spans, and how each ended."""
    helpers.declare(store, tenant, "home_town", "string")
    for number in range(len(extracts)):
        store.episodes.record_with_candidates(
            tenant,
            [({"id": f"j{number}", "occurred_at": "2026-05-28T09:00:00Z", "text": TEXT,
               "subjects": [SUBJECT]}, ())],
            queue=[Queued(PROMPT_VERSION)],
        )  # fmt: skip
    exporter = InMemorySpanExporter()
    provider = tracer_provider(exporter)
    trace_with(provider.get_tracer("test"))
    try:
        ends: list[str | None] = []
        for extract in extracts:
            (job,) = store.extraction.claim(wanted=1, lease=timedelta(minutes=1))
            results = run_job(store, extract, job, WorkPolicy(max_attempts=1))
            ends.append(None if results is None else results[0].status)
    finally:
        trace_with(None)
        provider.shutdown()
    return list(exporter.get_finished_spans()), ends


def test_an_extraction_job_is_a_trace_of_its_own_with_the_extractor_call_in_it(
    store: MemoryStore, tenant: str
) -> None:
    def extract(given: object) -> list[object]:
        return [
            {"evidence": "moved to Vorpalmouth", "subject": SUBJECT, "attribute": "home_town",
             "change": "new", "value": VALUE}
        ]  # fmt: skip

    def fail(given: object) -> list[object]:
        raise ExtractionFailed(f"timeout while reading about {SUBJECT} in {VALUE}")

    spans, ends = _traced_jobs(store, tenant, extract, fail)
    assert ends == ["written", None]

    jobs = [span for span in spans if span.name == "extraction job"]
    assert len(jobs) == 2
    for job in jobs:
        assert (job.kind, job.parent) == (SpanKind.CONSUMER, None)
        assert (job.attributes or {})["sgam.tenant_id"] == tenant
        inside = [span for span in spans if span.context.trace_id == job.context.trace_id]
        assert {span.name for span in inside} >= {"extraction job", "extractor"}
        for span in inside:
            assert span is job or _parent(span) == job.context.span_id, span.name
    calls = [
        next(
            span for span in spans
            if span.name == "extractor" and span.context.trace_id == job.context.trace_id
        )
        for job in sorted(jobs, key=lambda job: job.start_time or 0)
    ]  # fmt: skip
    assert [(call.kind, call.status.status_code) for call in calls] == [
        (SpanKind.CLIENT, StatusCode.UNSET),
        (SpanKind.CLIENT, StatusCode.ERROR),
    ]
    assert (calls[1].attributes or {})["error.type"] == "ExtractionFailed"
    # The claims outside a job start no trace; nothing of the episode is in a span.
    assert {span.context.trace_id for span in spans} == {job.context.trace_id for job in jobs}
    for span in spans:
        shown = json.dumps([span.name, dict(span.attributes or {}), span.status.description])
        assert not any(secret in shown for secret in SECRETS), shown
