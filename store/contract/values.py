"""Typed values: candidates carry strings, the store keeps normalized JSON values.

"Same value" means equal canonical forms, so ``1.50`` equals ``1.5`` for a number and
``2026-06-30T12:00:00+02:00`` equals ``2026-06-30T10:00:00Z`` for a datetime.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from store.contract.times import TimestampError, format_timestamp, parse_timestamp

JsonValue = Any  # str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]

MAX_DIGITS = 100
MAX_JSON_DEPTH = 32
MAX_JSON_INTEGER_DIGITS = 4_000
"""Python converts at most 4,300 digits of an integer by default; stay under it."""
MAX_QUOTE = 80
"""How much of an input a reason quotes; longer inputs are cut with an ellipsis."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_INTEGER = re.compile(r"[+-]?\d+")


class ValueType(StrEnum):
    """The value types an attribute can declare."""

    STRING = "string"
    DATE = "date"
    DATETIME = "datetime"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ENUM = "enum"
    JSON = "json"


class ValueParseError(ValueError):
    """A value that does not parse as its attribute's type."""


def parse_value(text: str, value_type: ValueType, *, enum_values: Sequence[str] = ()) -> JsonValue:
    """Parse ``text`` by ``value_type`` into its normalized JSON value, or raise ValueParseError."""
    parser = _PARSERS[value_type]
    return parser(text, enum_values)


def canonical(value: JsonValue) -> str:
    """The form "same value" compares: sorted-key compact JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def same_value(left: JsonValue, right: JsonValue) -> bool:
    """Whether two normalized values are the same value.

    Numbers compare by value, as jsonb does: a value parsed as the float ``1e+20`` is the one
    stored and read back as the integer ``100000000000000000000`` (jsonb keeps numbers as
    numerics), so asserting it again is a repeat, not a different value. ``true`` is not ``1``.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same_value, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


def display(value: JsonValue) -> str:
    """The value as one line of text (strings bare, everything else as JSON)."""
    return value if isinstance(value, str) else canonical(value)


def quote(text: str) -> str:
    """``text`` quoted for a reason, cut to ``MAX_QUOTE`` characters with an ellipsis."""
    if len(text) <= MAX_QUOTE:
        return repr(text)
    return repr(text[: MAX_QUOTE - 1]) + "…"


def _string(text: str, _: Sequence[str]) -> JsonValue:
    if not text:
        raise ValueParseError("a string value must not be empty")
    _refuse_unstorable_text(text)
    return text


def _refuse_unstorable_text(text: str) -> None:
    # PostgreSQL text and jsonb hold neither NUL nor a surrogate without its pair.
    if "\x00" in text:
        raise ValueParseError("a value must not contain NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueParseError("a value must not contain an unpaired surrogate") from None


def _date(text: str, _: Sequence[str]) -> JsonValue:
    stripped = text.strip()
    if not _DATE.fullmatch(stripped):
        raise ValueParseError(f"{quote(text)} is not a date in YYYY-MM-DD form")
    try:
        return date.fromisoformat(stripped).isoformat()
    except ValueError:
        raise ValueParseError(f"{quote(text)} is not a calendar date") from None


def _datetime(text: str, _: Sequence[str]) -> JsonValue:
    try:
        return format_timestamp(parse_timestamp(text))
    except TimestampError as error:
        raise ValueParseError(str(error)) from None


def _integer(text: str, _: Sequence[str]) -> JsonValue:
    stripped = text.strip()
    if not _INTEGER.fullmatch(stripped):
        raise ValueParseError(f"{quote(text)} is not an integer")
    if len(stripped.lstrip("+-")) > MAX_DIGITS:
        raise ValueParseError(f"an integer value has at most {MAX_DIGITS} digits")
    return int(stripped)


def _number(text: str, _: Sequence[str]) -> JsonValue:
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        raise ValueParseError(f"{quote(text)} is not a number") from None
    if not number.is_finite():
        raise ValueParseError(f"{quote(text)} is not a finite number")
    as_float = float(number)
    if not math.isfinite(as_float):
        raise ValueParseError(f"{quote(text)} is out of range for a number")
    if as_float == 0.0 and number != 0:
        raise ValueParseError(f"{quote(text)} is too small for a number: it would be 0")
    if number == number.to_integral_value() and abs(number) < 2**53:
        return int(number)
    return as_float


def _boolean(text: str, _: Sequence[str]) -> JsonValue:
    lowered = text.strip().lower()
    if lowered not in {"true", "false"}:
        raise ValueParseError(f"{quote(text)} is not a boolean (true or false)")
    return lowered == "true"


def _enum(text: str, enum_values: Sequence[str]) -> JsonValue:
    if text not in enum_values:
        raise ValueParseError(f"{quote(text)} is not one of {', '.join(enum_values)}")
    return text


def _json(text: str, _: Sequence[str]) -> JsonValue:
    try:
        value: JsonValue = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=_json_float,
            parse_int=_json_integer,
        )
    except ValueParseError:
        raise
    except json.JSONDecodeError as error:
        raise ValueParseError(
            f"{quote(text)} is not JSON: {error.msg} at character {error.pos}"
        ) from None
    except RecursionError:
        raise ValueParseError(f"a JSON value nests at most {MAX_JSON_DEPTH} levels") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueParseError(f"a JSON value nests at most {MAX_JSON_DEPTH} levels")
    stored = canonical(value)  # the text jsonb receives, built once for both checks
    if "\\u0000" in stored:
        raise ValueParseError("a value must not contain NUL characters")
    _refuse_unstorable_text(stored)
    return value


def _json_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise ValueParseError(f"the number {quote(literal)} is out of range")
    mantissa = literal.lower().partition("e")[0]
    if number == 0.0 and mantissa.strip("-+0.") != "":
        raise ValueParseError(f"the number {quote(literal)} is too small: it would be 0")
    return number


def _json_integer(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_JSON_INTEGER_DIGITS:
        raise ValueParseError(f"a JSON integer has at most {MAX_JSON_INTEGER_DIGITS} digits")
    return int(literal)


def check_stored_object(value: JsonValue, name: str, *, max_depth: int, max_bytes: int) -> None:
    """Raise ValueError (worded with ``name``) unless ``value`` can be stored as jsonb and read
    back: at most ``max_depth`` levels, no NUL, no unpaired surrogate, ``max_bytes`` as JSON."""
    if json_depth(value) > max_depth:
        raise ValueError(f"{name} may nest at most {max_depth} levels deep")
    stored = canonical(value)
    if "\\u0000" in stored:
        raise ValueError(f"{name} must not contain NUL characters")
    try:
        size = len(stored.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{name} must not contain an unpaired surrogate") from None
    if size > max_bytes:
        raise ValueError(f"{name} may take at most {max_bytes} bytes as JSON")


def has_nul(value: JsonValue) -> bool:
    """Whether a JSON value holds a NUL character anywhere (PostgreSQL text refuses it)."""
    return "\\u0000" in canonical(value)


def json_depth(value: JsonValue) -> int:
    """Nesting depth of a JSON value, iteratively (a scalar is 0)."""
    deepest = 0
    pending: list[tuple[JsonValue, int]] = [(value, 0)]
    while pending:
        item, level = pending.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            pending.append((child, level + 1))
        if children:
            deepest = max(deepest, level + 1)
    return deepest


def _refuse_constant(name: str) -> JsonValue:
    raise ValueParseError(f"{name} is not valid JSON")


_PARSERS = {
    ValueType.STRING: _string,
    ValueType.DATE: _date,
    ValueType.DATETIME: _datetime,
    ValueType.INTEGER: _integer,
    ValueType.NUMBER: _number,
    ValueType.BOOLEAN: _boolean,
    ValueType.ENUM: _enum,
    ValueType.JSON: _json,
}
