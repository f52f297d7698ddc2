"""The ASGI entry point for process managers: ``uvicorn --factory server.asgi:app``.

Settings come from the environment when a worker starts, not at import; so does the log's
JSON format (``server.runtime.logs``), after uvicorn set up its own loggers. Once the app has
started, the process's heap is frozen (``server.runtime.heap``).
"""

from __future__ import annotations

from litestar import Litestar

from server.app import create_app
from server.runtime.heap import freeze_started_heap
from server.runtime.logs import configure_logging
from server.settings import Settings


def app() -> Litestar:
    """The app configured from the environment (``SGAM_*`` and ``DATABASE_URL``)."""
    configure_logging()
    built = create_app(Settings())
    # After the lifespan opened everything (Litestar runs startup hooks after it).
    built.on_startup.append(freeze_started_heap)
    return built
