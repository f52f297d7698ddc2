"""Every handler resolves its dependencies one at a time, each after those it takes."""

from __future__ import annotations

from litestar.routes import HTTPRoute

from server.app import create_app
from server.settings import Settings


def test_every_dependency_is_resolved_alone_after_the_ones_it_takes() -> None:
    app = create_app(Settings())
    orders: dict[str, list[str]] = {}
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for method, (_, kwargs_model) in route.route_handler_map.items():
            batches = kwargs_model.dependency_batches
            # A batch of more than one runs in a task group (server.http.dependencies).
            assert [len(batch) for batch in batches] == [1] * len(batches), (method, route.path)
            order = [dependency.key for batch in batches for dependency in batch]
            for position, batch in enumerate(batches):
                for dependency in batch:
                    taken = {sub.key for sub in dependency.dependencies}
                    assert taken <= set(order[:position]), (method, route.path, dependency.key)
            orders[f"{method} {route.path}"] = order
    # The fact read takes its store, times and trace: more than one after the store.
    assert orders["GET /v1/facts/{subject:str}/{attribute:str}"][:2] == ["tenant_id", "store"]
    assert {"times", "trace"} <= set(orders["GET /v1/facts/{subject:str}/{attribute:str}"])
