"""Dependencies resolved one after another, never in a task group.

Litestar resolves the dependencies of a handler in batches: those whose own dependencies are
resolved go together, and a batch of more than one runs in an anyio task group, one task each.
Every SGAM dependency is a plain function that reads the request (``server.auth.guard``,
``server.routes.common``, ``server.http.trace``): nothing in them waits, so the task group buys
no concurrency, and it cost a fact read about 0.1 ms and a named context 0.3 ms (``sgam
bench``'s profile: ``TaskGroup.start_soon`` and its exit). Each batch is split into batches
of one, in the same order: a dependency still comes after every dependency it takes.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.routes import HTTPRoute


def resolve_in_sequence(app: Litestar) -> None:
    """Split every HTTP handler's dependency batches into batches of one, order kept."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for _, kwargs_model in route.route_handler_map.values():
            kwargs_model.dependency_batches = [
                {dependency}
                for batch in kwargs_model.dependency_batches
                for dependency in sorted(batch, key=lambda dependency: dependency.key)
            ]
