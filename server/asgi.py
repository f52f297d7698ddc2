"""The ASGI entry point for process managers: ``uvicorn --factory server.asgi:app``.

Settings come from the environment when a worker starts, not at import.
"""

from __future__ import annotations

from litestar import Litestar

from server.app import create_app
from server.settings import Settings


def app() -> Litestar:
    """The app configured from the environment (``SGAM_*`` and ``DATABASE_URL``)."""
    return create_app(Settings())
