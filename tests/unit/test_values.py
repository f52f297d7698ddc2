"""Values parse by their attribute's type and compare in normalized form (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.contract.times import TimestampError, format_timestamp, parse_timestamp
from store.contract.values import ValueParseError, ValueType, canonical, parse_value, same_value


@pytest.mark.parametrize(
    ("value_type", "text", "expected"),
    [
        (ValueType.STRING, "short answers", "short answers"),
        (ValueType.DATE, "2026-06-30", "2026-06-30"),
        (ValueType.DATE, " 2026-06-30 ", "2026-06-30"),
        (ValueType.DATETIME, "2026-06-30T12:00:00+02:00", "2026-06-30T10:00:00Z"),
        (ValueType.DATETIME, "2026-06-30T10:00:00.250Z", "2026-06-30T10:00:00.250000Z"),
        (ValueType.INTEGER, "+42", 42),
        (ValueType.INTEGER, "-7", -7),
        (ValueType.NUMBER, "1.50", 1.5),
        (ValueType.NUMBER, "2.000", 2),
        (ValueType.NUMBER, "1e3", 1000),
        (ValueType.BOOLEAN, "true", True),
        (ValueType.BOOLEAN, "FALSE", False),
        (ValueType.JSON, '["csv", {"b": 1, "a": 2}]', ["csv", {"b": 1, "a": 2}]),
    ],
)
def test_values_parse_to_their_normalized_form(
    value_type: ValueType, text: str, expected: object
) -> None:
    assert parse_value(text, value_type) == expected


def test_enum_values_must_be_exact_members() -> None:
    assert parse_value("gold", ValueType.ENUM, enum_values=["gold", "silver"]) == "gold"
    with pytest.raises(ValueParseError, match="not one of gold, silver"):
        parse_value("Gold", ValueType.ENUM, enum_values=["gold", "silver"])


@pytest.mark.parametrize(
    ("value_type", "text"),
    [
        (ValueType.STRING, ""),
        (ValueType.DATE, "2026-02-30"),
        (ValueType.DATE, "30/06/2026"),
        (ValueType.DATE, "2026-06-30T00:00:00Z"),
        (ValueType.DATETIME, "2026-06-30T10:00:00"),
        (ValueType.DATETIME, "tomorrow"),
        (ValueType.INTEGER, "4.0"),
        (ValueType.INTEGER, "four"),
        (ValueType.NUMBER, "NaN"),
        (ValueType.NUMBER, "1e999"),
        (ValueType.NUMBER, "twelve"),
        (ValueType.BOOLEAN, "yes"),
        (ValueType.JSON, "{not json"),
        (ValueType.JSON, "NaN"),
    ],
)
def test_unparsable_values_are_refused(value_type: ValueType, text: str) -> None:
    with pytest.raises(ValueParseError):
        parse_value(text, value_type)


def test_same_value_compares_normalized_forms() -> None:
    assert same_value(parse_value("1.50", ValueType.NUMBER), parse_value("1.5", ValueType.NUMBER))
    assert same_value(
        parse_value("2026-06-30T12:00:00+02:00", ValueType.DATETIME),
        parse_value("2026-06-30T10:00:00Z", ValueType.DATETIME),
    )
    assert same_value(
        parse_value('{"a": 1, "b": [1, 2]}', ValueType.JSON),
        parse_value('{"b":[1,2],"a":1}', ValueType.JSON),
    )
    assert not same_value(parse_value("true", ValueType.BOOLEAN), 1)
    assert not same_value("2026-06-30", "2026-07-15")


def test_numbers_compare_by_value_as_jsonb_keeps_them() -> None:
    # "1e20" parses to the float 1e+20; jsonb stores it as a numeric and reads it back as the
    # integer 10**20. Asserting it again is the same value (it once opened a conflict).
    parsed = parse_value("1e20", ValueType.NUMBER)
    assert same_value(parsed, 10**20)
    assert same_value(parse_value('{"x": [1e20]}', ValueType.JSON), {"x": [10**20]})
    assert not same_value(1, True)
    assert not same_value(1, "1")
    assert not same_value([1], [1, 2])
    assert not same_value({"a": 1}, {"b": 1})
    assert not same_value(None, 0)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)


@given(_JSON, _JSON)
def test_same_value_is_canonical_equality_up_to_how_a_number_is_written(
    left: object, right: object
) -> None:
    assert same_value(left, left)
    assert same_value(left, right) == same_value(right, left)
    if canonical(left) == canonical(right):
        assert same_value(left, right)
    # A value read back from jsonb: every integral float as the integer it is.
    assert same_value(left, _as_jsonb_reads(left))


def _as_jsonb_reads(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_as_jsonb_reads(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_jsonb_reads(item) for key, item in value.items()}
    return value


def test_timestamps_normalize_offsets_to_utc_and_print_with_z() -> None:
    parsed = parse_timestamp("2026-06-01T11:00:00+02:00")
    assert parsed == datetime(2026, 6, 1, 9, tzinfo=UTC)
    assert format_timestamp(parsed) == "2026-06-01T09:00:00Z"
    assert format_timestamp(parse_timestamp("2026-06-01T09:00:00-05:30")) == (
        "2026-06-01T14:30:00Z"
    )


@pytest.mark.parametrize("text", ["2026-06-01T09:00:00", "2026-06-01", "June 1", "", 1780000000])
def test_naive_or_malformed_timestamps_are_refused(text: object) -> None:
    with pytest.raises(TimestampError):
        parse_timestamp(text)
