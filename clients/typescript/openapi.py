"""Write ``clients/typescript/openapi.json``: the OpenAPI document the server serves at
``/schema/openapi.json``, which the client's types (``src/schema.ts``) are generated from.

``npm run regenerate`` in clients/typescript runs it, then generates the types; by hand, from
the repository root::

    .venv/bin/python -m clients.typescript.openapi
    cd clients/typescript && npm run generate

``tests/docs/test_typescript_files.py`` fails while the committed document is not the app's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from docs.hooks import openapi_document

DOCUMENT: Final = Path(__file__).resolve().parent / "openapi.json"


def document_text() -> str:
    """The app's OpenAPI document as the committed file holds it."""
    return json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    DOCUMENT.write_text(document_text(), encoding="utf-8")
