"""The value conversions of an attribute migration, rule by rule and as properties (pure)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.attributes.conversions import Unconvertible, convert_value
from store.contract.values import ValueType, display, parse_value, same_value

S, D, DT, N, INT, B, E, J = (
    ValueType.STRING,
    ValueType.DATE,
    ValueType.DATETIME,
    ValueType.NUMBER,
    ValueType.INTEGER,
    ValueType.BOOLEAN,
    ValueType.ENUM,
    ValueType.JSON,
)


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        ("Oslo", S, S, "Oslo"),
        ("2026-06-30", S, D, "2026-06-30"),
        ("June 30, 2026", S, D, "2026-06-30"),
        ("30 June 2026", S, D, "2026-06-30"),
        ("2026-06-30", D, DT, "2026-06-30T00:00:00Z"),
        ("2026-06-30T00:00:00Z", DT, D, "2026-06-30"),
        ("2026-06-30", D, S, "2026-06-30"),
        (42, INT, N, 42),
        (2.0, N, INT, 2),
        (1.5, N, S, "1.5"),
        ("42", S, INT, 42),
        (" 7 ", S, N, 7),
        (True, B, S, "true"),
        ("False", S, B, False),
        ("gold", E, S, "gold"),
        ("gold", S, E, "gold"),
        ("Oslo", S, J, "Oslo"),
        ({"a": [1, 2]}, J, S, '{"a":[1,2]}'),
        ("5", J, INT, 5),
        (5, J, INT, 5),
        (12, INT, J, 12),
    ],
)
def test_each_rule_converts_as_documented(
    value: Any, source: ValueType, target: ValueType, expected: Any
) -> None:
    converted = convert_value(value, source=source, target=target, enum_values=["gold", "silver"])
    assert converted == expected
    assert type(converted) is type(expected)


@pytest.mark.parametrize(
    ("value", "source", "target", "reason"),
    [
        ("soon", S, D, "'soon' is not a date with a day, a month and a year"),
        ("tomorrow", S, D, "'tomorrow' is not a date with a day, a month and a year"),
        ("June 2026", S, D, "'June 2026' is not a date with a day, a month and a year"),
        ("June 30, 2026 10:00", S, D, "'June 30, 2026 10:00' has a time of day a date would lose"),
        (
            "2026-06-30T10:00:00Z",
            DT,
            D,
            "'2026-06-30T10:00:00Z' has a time of day a date would lose",
        ),
        (1.5, N, INT, "as integer: '1.5' is not an integer"),
        ("yes", S, B, "as boolean: 'yes' is not a boolean (true or false)"),
        ("bronze", E, E, "as enum: 'bronze' is not one of gold, silver"),
        (2**60 + 1, INT, N, "'1152921504606846977' is not exactly representable as a number"),
        ([1], J, INT, "as integer: '[1]' is not an integer"),
    ],
)
def test_values_no_rule_converts_say_why(
    value: Any, source: ValueType, target: ValueType, reason: str
) -> None:
    with pytest.raises(Unconvertible) as raised:
        convert_value(value, source=source, target=target, enum_values=["gold", "silver"])
    assert str(raised.value) == reason


def test_a_value_map_renames_values_before_the_new_type_parses_them() -> None:
    members = ["gold", "standard"]
    mapped = convert_value(
        "silver", source=E, target=E, enum_values=members, value_map={"silver": "standard"}
    )
    assert mapped == "standard"
    # Keys are the old value's text: a boolean is known by true/false, a number by its JSON.
    assert convert_value(True, source=B, target=S, value_map={"true": "yes"}) == "yes"
    assert convert_value(3, source=INT, target=S, value_map={"3": "three"}) == "three"
    # A mapped text must still parse under the new type.
    with pytest.raises(Unconvertible) as raised:
        convert_value("silver", source=E, target=E, enum_values=members, value_map={"silver": "x"})
    assert str(raised.value) == "as enum: 'x' is not one of gold, standard"


# -- properties ------------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=30)
_SAFE_INTEGERS = st.integers(min_value=-(2**53), max_value=2**53)
_DATES = st.dates(min_value=date(1900, 1, 1), max_value=date(2100, 12, 31)).map(
    lambda day: day.isoformat()
)
_STORED: dict[ValueType, st.SearchStrategy[Any]] = {
    S: _TEXT,
    D: _DATES,
    DT: st.datetimes(
        min_value=datetime(1900, 1, 1),  # noqa: DTZ001 - hypothesis bounds naive datetimes
        max_value=datetime(2100, 12, 31),  # noqa: DTZ001
    ).map(lambda moment: moment.replace(microsecond=0).isoformat() + "Z"),
    N: st.floats(allow_nan=False, allow_infinity=False, width=64).filter(
        lambda x: x == 0 or abs(x) > 1e-300
    ),
    INT: _SAFE_INTEGERS,
    B: st.booleans(),
    J: st.recursive(
        st.none() | st.booleans() | _SAFE_INTEGERS | _TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
        max_leaves=6,
    ),
}
_TARGETS = [S, D, DT, N, INT, B, J]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_STORED)), st.sampled_from(_TARGETS), st.data())
def test_a_conversion_either_yields_a_value_the_new_type_reads_back_or_says_why(
    source: ValueType, target: ValueType, data: st.DataObject
) -> None:
    value = data.draw(_STORED[source])
    stored = parse_value(display(value), source) if source != J else value
    try:
        converted = convert_value(stored, source=source, target=target)
    except Unconvertible as error:
        reason = str(error)
        assert reason
        return
    if target == J:
        assert same_value(converted, stored)
    else:
        assert same_value(parse_value(display(converted), target), converted)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(_STORED)), st.data())
def test_to_string_and_json_always_convert_and_json_keeps_the_value(
    source: ValueType, data: st.DataObject
) -> None:
    value = data.draw(_STORED[source])
    stored = parse_value(display(value), source) if source != J else value
    assert same_value(convert_value(stored, source=source, target=J), stored)
    assert convert_value(stored, source=source, target=S) == display(stored)


@settings(max_examples=200, deadline=None)
@given(_SAFE_INTEGERS, _DATES)
def test_round_trips_through_a_wider_type_come_back_unchanged(number: int, day: str) -> None:
    as_number = convert_value(number, source=INT, target=N)
    assert convert_value(as_number, source=N, target=INT) == number
    as_text = convert_value(number, source=INT, target=S)
    assert convert_value(as_text, source=S, target=INT) == number
    as_datetime = convert_value(day, source=D, target=DT)
    assert convert_value(as_datetime, source=DT, target=D) == day
    assert convert_value(convert_value(day, source=D, target=S), source=S, target=D) == day
