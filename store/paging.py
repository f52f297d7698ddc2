"""Opaque cursors for paged lists: the last row's sort key, base64-encoded JSON."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from store.errors import InvalidInput

MAX_LIMIT = 500


def encode_cursor(key: list[Any]) -> str:
    """A cursor that resumes after the row with sort key ``key``."""
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> list[Any]:
    """The sort key inside a cursor; InvalidInput if it was not made by ``encode_cursor``."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidInput("not a cursor this server issued", field="cursor") from None
    if not isinstance(key, list):
        raise InvalidInput("not a cursor this server issued", field="cursor")
    return key


def check_limit(limit: int) -> int:
    """A page size between 1 and MAX_LIMIT."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    return limit
