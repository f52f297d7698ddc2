"""Opaque cursors for paged lists: the last row's (time, id) sort key, base64-encoded JSON."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any
from uuid import UUID

from store.errors import InvalidInput
from store.times import parse_timestamp

MAX_LIMIT = 500


def encode_cursor(key: list[Any]) -> str:
    """A cursor that resumes after the row with sort key ``key`` (its time and id)."""
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, UUID]:
    """The (time, id) sort key inside a cursor; InvalidInput if this server did not issue it."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        at, key = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return parse_timestamp(at), UUID(key)
    except (binascii.Error, ValueError, TypeError, AttributeError, UnicodeDecodeError):
        raise InvalidInput("not a cursor this server issued", field="cursor") from None


def check_limit(limit: int) -> int:
    """A page size between 1 and MAX_LIMIT."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    return limit
