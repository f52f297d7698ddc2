"""The project's own spans: each store call, each encoder call, each extraction job.

Off (the default) every helper here checks one module global and returns: no span is made and
nothing of OpenTelemetry is imported. ``server.runtime.tracing`` turns them on with a tracer
for as long as a server (or ``sgam worker``) runs, beside the ASGI and psycopg
instrumentations, whose spans these nest with.

A span's attributes carry the tenant and counts, never a subject, a text or a value; its
errors are kept as the exception's class, not its message (``record_exception=False``), since
a database error's detail can quote a row.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

TENANT: Final = "sgam.tenant_id"
"""The attribute naming the tenant a span works for."""

_tracer: Tracer | None = None
_OFF: Final = nullcontext()


def trace_with(tracer: Tracer | None) -> None:
    """Make the spans here with ``tracer`` from now on; None turns them off again."""
    global _tracer  # noqa: PLW0603 - one switch for the process, set by the server's lifespan
    _tracer = tracer


def tracing() -> bool:
    """Whether spans are being made."""
    return _tracer is not None


def span(
    name: str,
    attributes: Mapping[str, Any] | None = None,
    *,
    kind: Literal["internal", "client", "consumer"] = "internal",
) -> AbstractContextManager[None]:
    """A span around the block, the current one inside it; nothing when tracing is off.

    ``kind`` as OpenTelemetry's: ``consumer`` for work taken from a queue, which may start a
    trace of its own; ``client`` for a call to another service.
    """
    tracer = _tracer
    if tracer is None:
        return _OFF
    return _span(tracer, name, attributes, kind)


@contextmanager
def _span(
    tracer: Tracer, name: str, attributes: Mapping[str, Any] | None, kind: str
) -> Iterator[None]:
    from opentelemetry.trace import SpanKind  # noqa: PLC0415 - only when on

    with tracer.start_as_current_span(
        name,
        kind=SpanKind[kind.upper()],
        attributes=_kept(attributes),
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield
        except BaseException as error:
            _failed(current, type(error).__qualname__)
            raise


def span_until_done(
    name: str, future: Future[Any], attributes: Mapping[str, Any] | None = None
) -> None:
    """A span from now until ``future`` is done (answered, failed or cancelled), a child of
    the current one: work handed to another thread or process, awaited later."""
    tracer = _tracer
    if tracer is None:
        return
    started = tracer.start_span(name, attributes=_kept(attributes), record_exception=False)

    def done(finished: Future[Any]) -> None:
        if finished.cancelled():
            _failed(started, "cancelled")
        elif (error := finished.exception()) is not None:
            _failed(started, type(error).__qualname__)
        started.end()

    future.add_done_callback(done)


def _failed(failed: Span, error_type: str) -> None:
    """Mark a span failed by the error's class alone: no message, which may quote a row."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415 - only when on

    failed.set_attribute("error.type", error_type)
    failed.set_status(Status(StatusCode.ERROR))


def _kept(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """The attributes with a value (OpenTelemetry refuses None)."""
    return {key: value for key, value in (attributes or {}).items() if value is not None}
