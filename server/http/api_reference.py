"""The API reference page, ``/schema``: Swagger UI, its files served by the app itself.

The script, stylesheet and icon come from the ``swagger-ui-bundle`` package (a pinned Swagger UI
build in a wheel), under ``/schema/swagger-ui/``: the page loads nothing from another site, so
it works offline and behind a firewall. The OpenAPI document is in the page itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from litestar import Router
from litestar.datastructures import CacheControlHeader
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

ASSETS: Final = "/schema/swagger-ui"
"""Where the app serves Swagger UI's files."""


def reference_page() -> SwaggerRenderPlugin:
    """Swagger UI at ``/schema`` (and ``/schema/swagger``), from the app's own files."""
    return SwaggerRenderPlugin(
        js_url=f"{ASSETS}/swagger-ui-bundle.js",
        css_url=f"{ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>",
        path="/swagger",
    )


def reference_files() -> Router:
    """Swagger UI's files from the package; they hold nothing of a tenant's: cached a day."""
    return create_static_files_router(
        path=ASSETS,
        directories=[Path(swagger_ui_path)],
        cache_control=CacheControlHeader(max_age=86400, public=True),
        include_in_schema=False,
    )
