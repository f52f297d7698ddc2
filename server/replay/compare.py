"""Replay results compared with expected ones as behaviour, not as floating-point noise.

Embedding scores differ in their last digits from one CPU to another, so:

- a JSON float matches within an absolute ``TOLERANCE`` (1e-4);
- a string under ``plan.reasons`` matches when its text outside decimal numbers is the same
  and each decimal number (a routing score such as ``(0.53)``) has as many places and is
  within one unit of its last printed digit, plus ``TOLERANCE``: a score on a rounding
  boundary may print either way. Numbers without a decimal point there (dates, times,
  counts) stay exact;
- everything else is exact: ids, values, integers (token counts), booleans, timestamps and
  the context block's text.

Each difference is reported with its path, ``$.result.results[1].score`` style.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

TOLERANCE = 1e-4
"""The absolute difference allowed between two floats, and added to a printed number's unit."""

_PRINTED_SCORES = ("plan", "reasons")
"""The keys under which strings may print scores; the strings below them are compared loosely."""

_DECIMAL = re.compile(r"(?<![\d.])-?\d+\.\d+(?!\.?\d)")

Path = tuple[str | int, ...]


def differences(actual: Any, expected: Any) -> list[str]:
    """Where ``actual`` differs from ``expected``: one line per difference, naming its path."""
    found: list[str] = []
    _walk(actual, expected, (), found)
    return found


def result_differences(actual: Sequence[Any], expected: Sequence[Any]) -> list[str]:
    """The differences of replay result lines, each prefixed with its result's number."""
    found = [
        f"result {number}: {difference}"
        for number, (got, want) in enumerate(zip(actual, expected, strict=False), start=1)
        for difference in differences(got, want)
    ]
    if len(actual) != len(expected):
        found.append(f"{len(actual)} results, {len(expected)} expected")
    return found


def _walk(actual: Any, expected: Any, path: Path, found: list[str]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, want in expected.items():
            if key in actual:
                _walk(actual[key], want, (*path, key), found)
            else:
                found.append(f"{_name(path)}: no key {key!r}")
        found.extend(
            f"{_name(path)}: unexpected key {key!r}" for key in actual if key not in expected
        )
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(actual) != len(expected):
            found.append(f"{_name(path)}: {len(actual)} items, {len(expected)} expected")
        for index, (got, want) in enumerate(zip(actual, expected, strict=False)):
            _walk(got, want, (*path, index), found)
    elif not _same(actual, expected, path):
        found.append(f"{_name(path)}: got {_text(actual)}, want {_text(expected)}")


def _same(actual: Any, expected: Any, path: Path) -> bool:
    if _is_number(actual) and _is_number(expected):
        if isinstance(actual, float) or isinstance(expected, float):
            return bool(abs(actual - expected) <= TOLERANCE)
        return bool(actual == expected)
    if isinstance(actual, str) and isinstance(expected, str) and _prints_scores(path):
        return same_printed_numbers(actual, expected)
    return type(actual) is type(expected) and bool(actual == expected)


def same_printed_numbers(actual: str, expected: str) -> bool:
    """The same text, each decimal printed to as many places and within a unit of the last."""
    if _DECIMAL.split(actual) != _DECIMAL.split(expected):
        return False
    pairs = zip(_DECIMAL.findall(actual), _DECIMAL.findall(expected), strict=True)
    return all(_close_printed(got, want) for got, want in pairs)


def _close_printed(got: str, want: str) -> bool:
    places = len(want.partition(".")[2])
    if len(got.partition(".")[2]) != places:
        return False
    unit = Decimal(1).scaleb(-places)
    return abs(Decimal(got) - Decimal(want)) <= unit + Decimal(str(TOLERANCE))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _prints_scores(path: Path) -> bool:
    return any(path[i : i + 2] == _PRINTED_SCORES for i in range(len(path) - 1))


def _name(path: Path) -> str:
    return "$" + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
