"""Whether a server sends OpenTelemetry traces, and what ``create_app`` adds when it does.

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set or
``SGAM_OTEL_TRACES`` is on. Off, the app gets nothing more and nothing of OpenTelemetry is
imported: the store's spans (``store.tracing``) stay a check of one global. On, the wiring comes
from ``server.runtime.tracing``, which needs the ``otel`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from litestar import Litestar
from litestar.plugins import PluginProtocol
from litestar.types import Middleware

from server.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""Either one set turns traces on (the exporter reads them, with the other OTEL_* variables)."""


@dataclass(frozen=True, slots=True)
class Traces:
    """What the app adds to trace its requests: none of it when traces are off."""

    plugins: Sequence[PluginProtocol] = ()
    middleware: Sequence[Middleware] = ()
    lifespans: Sequence[Callable[[Litestar], AbstractAsyncContextManager[None]]] = ()


def traces_wanted(settings: Settings) -> bool:
    """Whether the settings or the environment ask for traces."""
    return settings.otel_traces or any(os.environ.get(name) for name in ENDPOINT_VARIABLES)


def app_traces(settings: Settings, *, exporter: SpanExporter | None = None) -> Traces:
    """The app's tracing: off (nothing) unless wanted or ``exporter`` is given (tests: the
    spans go there instead of to OTLP)."""
    if exporter is None and not traces_wanted(settings):
        return Traces()
    try:
        from server.runtime.tracing import traced_app  # noqa: PLC0415 - only when on
    except ImportError as error:
        raise RuntimeError(
            "traces are on (SGAM_OTEL_TRACES or OTEL_EXPORTER_OTLP_ENDPOINT) but OpenTelemetry"
            f" is not installed ({error.name}): pip install -e '.[otel]'"
        ) from error
    plugin, middleware, lifespan = traced_app(exporter)
    return Traces(plugins=(plugin,), middleware=(middleware,), lifespans=(lifespan,))
