"""Liveness (``/healthz``), readiness (``/readyz``: database, schema, model), ``/metrics``."""

from __future__ import annotations

import psycopg
from litestar import MediaType, Response, get
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import SkipValidation
from litestar.plugins.prometheus import PrometheusController
from litestar.types import ControllerRouterHandler

from server.runtime.resources import Resources
from store.contract.problems import Health, Readiness


@get("/healthz", sync_to_thread=False, tags=["health"])
def healthz() -> Health:
    """The process is up: a liveness check that never asks the database (``/readyz`` does)."""
    return Health(status="ok")


@get(
    "/readyz",
    sync_to_thread=True,
    tags=["health"],
    responses={503: ResponseSpec(Readiness, description="Not ready; the checks say why.")},
)
def readyz(resources: NamedDependency[SkipValidation[Resources]]) -> Response[Readiness]:
    """200 when the database answers, no migration is pending and the model is loaded; else 503.

    While the database watch says it is down, that is the answer, at once.
    """
    pending: int | None = None
    detail = None
    down = resources.database_down()
    if down is not None:
        detail = f"database: {down}"
    else:
        try:
            pending = resources.pending_migrations()
        except psycopg.Error as error:  # the pool's timeout is one too
            detail = f"database: {type(error).__name__}"
    ready = pending == 0 and resources.embedder.loaded
    body = Readiness(
        status="ready" if ready else "not_ready",
        database=pending is not None,
        migrations_pending=pending,
        model_loaded=resources.embedder.loaded,
        detail=detail,
    )
    return Response(body, status_code=200 if ready else 503)


class MetricsController(PrometheusController):
    """Litestar's Prometheus exposition, documented as the text it answers rather than JSON."""

    @get(media_type=MediaType.TEXT, tags=["health"])
    async def get(self) -> Response[bytes]:
        """Prometheus metrics in the text exposition format."""
        response: Response[bytes] = await PrometheusController.get.fn(self)
        return response


probe_routes: list[ControllerRouterHandler] = [healthz, readyz, MetricsController]
