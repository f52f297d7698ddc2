"""Checking call arguments: bodies, ids and instants become InvalidInput naming the field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from pydantic import BaseModel, TypeAdapter, ValidationError

from store.contract.common import Identifier
from store.contract.times import TimestampError, parse_timestamp
from store.contract.values import MAX_QUOTE, quote
from store.errors import InvalidInput

M = TypeVar("M", bound=BaseModel)
_IDENTIFIER: TypeAdapter[str] = TypeAdapter(Identifier)

MAX_REASON = 200
"""The longest reason or detail a client gets: it says what is wrong, not what was sent."""
_LONG_RUN = re.compile(rf"\S{{{MAX_QUOTE + 1},}}")


def user_reason(message: str, given: object = None) -> str:
    """``message`` as a client reads it: the input it echoes (``given``) cut, and short."""
    if isinstance(given, str) and len(given) > MAX_QUOTE:
        cut = given[: MAX_QUOTE - 1] + "…"
        message = message.replace(repr(given), quote(given)).replace(given, cut)
    message = _LONG_RUN.sub(lambda run: run.group()[: MAX_QUOTE - 1] + "…", message)
    return message if len(message) <= MAX_REASON else message[: MAX_REASON - 1] + "…"


_LIBRARY_PREFIXES = ("Value error, ", "Assertion failed, ")


def plain_reason(message: str) -> str:
    """A validator's message as it wrote it, without the prefix pydantic puts before it."""
    for prefix in _LIBRARY_PREFIXES:
        if message.startswith(prefix):
            return message.removeprefix(prefix)
    return message


def first_error(error: ValidationError) -> tuple[str, str | None]:
    """The first failure of a validation: its reason for a client, and the dotted field."""
    first = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return user_reason(plain_reason(first["msg"]), first.get("input")), field


def parse_input(model: type[M], data: M | Mapping[str, Any], *, field_prefix: str = "") -> M:
    """Validate a request body; a broken one is InvalidInput naming the first field at fault."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as error:
        reason, field = first_error(error)
        raise InvalidInput(
            reason, field=(field_prefix + (field or "")).strip(".") or None
        ) from None


def check_identifier(value: str, field: str) -> str:
    """Refuse an id outside 1-200 characters of ``A-Z a-z 0-9 _ . : @ -``."""
    try:
        return _IDENTIFIER.validate_python(value)
    except ValidationError:
        raise InvalidInput(
            f"{field} must be 1-200 characters of A-Z a-z 0-9 _ . : @ -", field=field
        ) from None


def parse_instant(value: datetime | str | None, field: str) -> datetime | None:
    """An optional timestamp argument in UTC; a naive or malformed one is InvalidInput."""
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except TimestampError as error:
        raise InvalidInput(user_reason(str(error), value), field=field) from None


def read_times(
    valid_at: datetime | str | None, known_at: datetime | str | None
) -> tuple[datetime | None, datetime | None]:
    return parse_instant(valid_at, "valid_at"), parse_instant(known_at, "known_at")


def parse_uuid(value: UUID | str, field: str) -> UUID:
    """An id given as a UUID or its text; anything else is InvalidInput."""
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError:
        raise InvalidInput(f"{field} must be a UUID", field=field) from None
