"""Opaque cursors for paged lists: the last row's sort key, base64-encoded JSON.

A list ordered by (time, id) keys its cursor on both; a list ordered by a unique text (subjects)
keys it on that text alone.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any
from uuid import UUID

from store.contract.times import parse_timestamp
from store.errors import InvalidInput

MAX_LIMIT = 500


def encode_cursor(key: list[Any]) -> str:
    """A cursor that resumes after the row with sort key ``key`` (its time and id, or text)."""
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


def _not_issued() -> InvalidInput:
    return InvalidInput("not a cursor this server issued", field="cursor")


def _decode(cursor: str) -> Any:
    padded = cursor + "=" * (-len(cursor) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode()))


def decode_cursor(cursor: str) -> tuple[datetime, UUID]:
    """The (time, id) sort key inside a cursor; InvalidInput if this server did not issue it."""
    try:
        at, key = _decode(cursor)
        return parse_timestamp(at), UUID(key)
    except (binascii.Error, ValueError, TypeError, AttributeError, UnicodeDecodeError):
        raise _not_issued() from None


def decode_any_cursor(cursor: str) -> list[Any]:
    """The sort key inside a cursor, a list; InvalidInput if this server did not issue it."""
    try:
        key = _decode(cursor)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise _not_issued() from None
    if not isinstance(key, list):
        raise _not_issued()
    return key


def encode_text_cursor(key: str) -> str:
    """A cursor that resumes after the row whose unique text sort key is ``key``."""
    return encode_cursor([key])


def decode_text_cursor(cursor: str) -> str:
    """The text sort key inside a cursor; InvalidInput if this server did not issue it."""
    key = decode_any_cursor(cursor)
    if not (len(key) == 1 and isinstance(key[0], str)):
        raise _not_issued()
    text: str = key[0]
    return text


def check_limit(limit: int) -> int:
    """A page size between 1 and MAX_LIMIT."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    return limit
