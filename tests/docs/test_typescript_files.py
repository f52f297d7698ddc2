"""The TypeScript client's committed files keep up with the app and the docs.

Its OpenAPI document is the one the app serves (the types are generated from it, and
``tests/cli/test_typescript_client.py`` checks they are); the guide's example is the file the
client's own tests run.
"""

from __future__ import annotations

import re
from pathlib import Path

from clients.typescript.openapi import DOCUMENT, document_text

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "typescript.md"
EXAMPLE = ROOT / "clients" / "typescript" / "examples" / "quickstart.ts"


def test_the_committed_openapi_document_is_the_one_the_app_serves() -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == document_text(), (
        "clients/typescript/openapi.json is stale: `npm run regenerate` in clients/typescript"
        " writes it and the types (src/schema.ts) from the app"
    )


def test_the_guides_example_is_the_one_the_client_tests_run() -> None:
    blocks = re.findall(r"^```ts\n(.*?)^```", GUIDE.read_text(), flags=re.DOTALL | re.MULTILINE)
    assert EXAMPLE.read_text() in blocks
