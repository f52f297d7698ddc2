"""Value conversions of a schema change: a stored value under a new declaration (pure).

The rules, applied in order to one stored value:

1. ``value_map``: a value whose text (strings bare, anything else as compact JSON, booleans
   ``true``/``false``) is a key of the map is replaced by the map's text, which is then parsed
   by the new type like any candidate's value. This is how removed enum members are renamed.
2. Same type: the value stays as stored; an enum member must still be a member.
3. To ``string``: the value's text. To ``json``: the value as stored (a string stays a JSON
   string, so no text is reinterpreted).
4. ``date`` to ``datetime``: midnight UTC of the day. ``datetime`` to ``date``: the UTC day,
   only at exactly midnight UTC (any other time of day would be lost).
5. ``integer`` to ``number``: the same number, refused if a float could not hold it exactly.
   ``number`` to ``integer``: only a whole number.
6. ``string`` to ``date``: an ISO date, or a written date with day, month and a four-digit
   year ("June 30, 2026", "30 June 2026") read by dateparser; relative words ("tomorrow") and
   dates with a time of day are refused.
7. Everything else: the value's text parsed by the new type, as a candidate's value would be
   (``"42"`` becomes the integer 42; ``"yes"`` is no boolean and stays unconvertible).

A value that no rule converts raises ``Unconvertible`` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, time

from store.contract.values import JsonValue, ValueParseError, ValueType, display, parse_value, quote

_YEAR = re.compile(r"(?<!\d)[12]\d{3}(?!\d)")


class Unconvertible(ValueError):
    """A stored value the new declaration cannot hold; its message is the reason."""


def convert_value(
    value: JsonValue,
    *,
    source: ValueType,
    target: ValueType,
    enum_values: Sequence[str] = (),
    value_map: Mapping[str, str] | None = None,
) -> JsonValue:
    """``value`` (stored under ``source``) as the new declaration stores it, by the module's
    rules; Unconvertible with the reason when none applies."""
    text = display(value)  # the text a value_map and a conversion to string know it by
    try:
        if value_map and text in value_map:
            return parse_value(value_map[text], target, enum_values=enum_values)
        return _convert(value, text, source=source, target=target, enum_values=enum_values)
    except ValueParseError as error:
        raise Unconvertible(f"as {target}: {error}") from None


def _convert(
    value: JsonValue,
    text: str,
    *,
    source: ValueType,
    target: ValueType,
    enum_values: Sequence[str],
) -> JsonValue:
    if source == target and target != ValueType.ENUM:
        return value
    if target == ValueType.STRING:
        return parse_value(text, target)
    if target == ValueType.JSON:
        return value
    if source == ValueType.DATE and target == ValueType.DATETIME:
        return parse_value(f"{text}T00:00:00Z", target)
    if source == ValueType.DATETIME and target == ValueType.DATE:
        return _day_of(text)
    if source == ValueType.INTEGER and target == ValueType.NUMBER:
        converted = parse_value(text, target)
        if converted != value:
            raise Unconvertible(f"{quote(text)} is not exactly representable as a number")
        return converted
    if target == ValueType.INTEGER and isinstance(value, float) and value.is_integer():
        return parse_value(str(int(value)), target)
    if source == ValueType.STRING and target == ValueType.DATE:
        return _written_date(text)
    if source == ValueType.JSON and isinstance(value, str):
        return parse_value(value, target, enum_values=enum_values)
    return parse_value(text, target, enum_values=enum_values)


def _day_of(text: str) -> str:
    instant = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    if instant.timetz().replace(tzinfo=None) != time(0):
        raise Unconvertible(f"{quote(text)} has a time of day a date would lose")
    return instant.date().isoformat()


def _written_date(text: str) -> str:
    try:
        return str(parse_value(text, ValueType.DATE))
    except ValueParseError:
        pass
    if not _YEAR.search(text):
        raise Unconvertible(f"{quote(text)} is not a date with a day, a month and a year")
    from dateparser import parse  # noqa: PLC0415 - a heavy import, needed by this rule only

    try:
        parsed = parse(
            text,
            languages=["en"],
            settings={"STRICT_PARSING": True, "REQUIRE_PARTS": ["day", "month", "year"]},
        )
    except (ValueError, OverflowError):  # a date past the calendar's range
        parsed = None
    if parsed is None:
        raise Unconvertible(f"{quote(text)} is not a date with a day, a month and a year")
    if parsed.time() != time(0):
        raise Unconvertible(f"{quote(text)} has a time of day a date would lose")
    return str(parsed.date().isoformat())
