"""``app_client``: the SGAM API in process, driven through the typed client as a user drives it.

The app is ``create_app(settings)`` with its lifespan run inside Litestar's ``TestClient``
(ASGI, no network), so every call goes through the real routes, auth, error mapping and
store. It takes the one ``Settings`` object the server takes, not options of its own: what
a caller sets (database, clock header, admin token, pool size) means what it means for
``sgam serve``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.client import SGAMClient
from server.settings import Settings
from store.db.clock import Clock, wall_clock


@contextmanager
def app_client(
    settings: Settings, *, embedder: Embedder | None = None, clock: Clock = wall_clock
) -> Iterator[SGAMClient]:
    """An ``SGAMClient`` on the app built from ``settings``, open while the block runs.

    The client carries ``settings.admin_token`` for the admin calls and no API key. A tenant's
    key makes a client on the same app: ``SGAMClient(client.base_url, key.api_key,
    http=client.http)``. ``embedder`` shares a loaded model; ``clock`` is the server's wall
    clock (the ``X-SGAM-Now`` header, when ``settings.allow_clock_header`` is on, overrides
    it per request). An exception raised inside the app propagates to the caller.
    """
    token = settings.admin_token.get_secret_value() if settings.admin_token else None
    with TestClient(create_app(settings, embedder=embedder, clock=clock)) as http:
        yield SGAMClient(str(http.base_url), admin_token=token, http=http)
