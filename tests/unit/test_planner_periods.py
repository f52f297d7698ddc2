"""Question planning of periods: ranges, bare years and months, open ends (no DB)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import overload

import pytest

from retrieval.question.planner import plan_question
from store.contract.times import parse_timestamp
from store.errors import InvalidInput

NOW = parse_timestamp("2026-06-04T15:30:00Z")


@overload
def ts(text: str) -> datetime: ...
@overload
def ts(text: None) -> None: ...
def ts(text: str | None) -> datetime | None:
    """A UTC instant from RFC 3339 text (None stays None: an open end)."""
    return parse_timestamp(text) if text is not None else None


PERIODS = [
    ("Where did Ana work from 2004 to 2005?", "2004-01-01", "2006-01-01"),
    ("Where did Ana work in 2005 to 2006?", "2005-01-01", "2007-01-01"),
    ("Who led it between 2006 and 2009?", "2006-01-01", "2010-01-01"),
    ("Who led it from Mar 1998 to Sep 2004?", "1998-03-01", "2004-10-01"),
    ("Who led it from 2016 to Apr 2016?", "2016-01-01", "2016-05-01"),
    ("Who held the office from Jul 1907 to Jul 1908?", "1907-07-01", "1908-08-01"),
    ("Who was it during 2010?", "2010-01-01", "2011-01-01"),
    ("Who was it until 2012?", None, "2013-01-01"),
    ("Who has it been since 2019?", "2019-01-01", None),
    ("Who was Northwind's CEO in 1985?", "1985-01-01", "1986-01-01"),
    ("What was her plan in March 2014?", "2014-03-01", "2014-04-01"),
    ("What was her plan in May?", "2026-05-01", "2026-06-01"),  # this year's: already past
    ("Where did she live during summer 2024?", "2024-01-01", "2025-01-01"),
    ("What was the tier from June 1 to June 3?", "2026-06-01", "2026-06-04"),
    ("What was the tier from 2026-06-01 through 2026-06-02?", "2026-06-01", "2026-06-03"),
    ("What was her city from 1999 until 2001?", "1999-01-01", "2002-01-01"),
]


@pytest.mark.parametrize(("question", "start", "end"), PERIODS, ids=[p[0] for p in PERIODS])
def test_a_range_or_a_bare_year_or_month_is_a_period(
    question: str, start: str | None, end: str | None
) -> None:
    plan = plan_question(question, now=NOW)
    start_at = ts(f"{start}T00:00:00Z" if start else None)
    end_at = ts(f"{end}T00:00:00Z" if end else None)
    assert (plan.mode, plan.valid_from, plan.valid_to, plan.known_at) == (
        "period",
        start_at,
        end_at,
        NOW,
    )
    assert "names a period" in plan.reasons["valid_at"]
    # valid_at is the period's start, or the second before an end that has no start.
    assert plan.valid_at == (start_at or (end_at and end_at - timedelta(seconds=1)))


@pytest.mark.parametrize(
    ("question", "valid_at"),
    [
        ("What was the tier on 2026-06-02?", "2026-06-02T12:00:00Z"),
        ("What was the tier on June 2, 2026?", "2026-06-02T12:00:00Z"),
        ("What was her city before 2001?", "2000-12-31T23:59:59Z"),
        ("What was the tier after May 2026?", "2026-06-01T00:00:00Z"),
    ],
)
def test_a_full_date_and_before_or_after_stay_instants(question: str, valid_at: str) -> None:
    plan = plan_question(question, now=NOW)
    assert (plan.mode, plan.valid_at, plan.valid_from, plan.valid_to) == (
        "point_in_time",
        ts(valid_at),
        None,
        None,
    )


def test_a_range_is_never_a_belief_date() -> None:
    plan = plan_question("What was known about the office from Jul 1907 to Jul 1908?", now=NOW)
    assert (plan.mode, plan.valid_from, plan.valid_to, plan.known_at) == (
        "period",
        ts("1907-07-01T00:00:00Z"),
        ts("1908-08-01T00:00:00Z"),
        NOW,
    )


def test_belief_wording_still_sets_known_at_beside_a_period() -> None:
    plan = plan_question(
        "What did we believe on 2026-06-02 about her employer from 2004 to 2005?", now=NOW
    )
    assert (plan.mode, plan.valid_from, plan.valid_to, plan.known_at) == (
        "period",
        ts("2004-01-01T00:00:00Z"),
        ts("2006-01-01T00:00:00Z"),
        ts("2026-06-02T12:00:00Z"),
    )
    assert "Belief wording" in plan.reasons["known_at"]
    assert "as known at the known-at time" in plan.reasons["mode"]


def test_a_bare_year_beside_belief_wording_is_the_belief_date() -> None:
    plan = plan_question("What did we believe in 2005 about her city?", now=NOW)
    assert (plan.mode, plan.valid_at, plan.known_at) == (
        "known_at",
        ts("2005-07-01T12:00:00Z"),
        ts("2005-07-01T12:00:00Z"),
    )
    assert (plan.valid_from, plan.valid_to) == (None, None)


def test_an_explicit_period_wins_over_the_question() -> None:
    plan = plan_question(
        "Where did Ana work in 1985?",
        now=NOW,
        valid_from=ts("2004-01-01T00:00:00Z"),
        valid_to=ts("2006-01-01T00:00:00Z"),
    )
    assert (plan.mode, plan.valid_from, plan.valid_to) == (
        "period",
        ts("2004-01-01T00:00:00Z"),
        ts("2006-01-01T00:00:00Z"),
    )
    assert plan.reasons["valid_at"] == (
        "The caller gave a period: from 2004-01-01T00:00:00Z to 2006-01-01T00:00:00Z (not"
        " included). The question's period ('1985' means from 1985-01-01T00:00:00Z to"
        " 1986-01-01T00:00:00Z (not included)) yields."
    )


def test_an_explicit_open_ended_period_keeps_its_open_end() -> None:
    plan = plan_question("Where does Ana work?", now=NOW, valid_from=ts("2019-01-01T00:00:00Z"))
    assert (plan.mode, plan.valid_from, plan.valid_to, plan.valid_at) == (
        "period",
        ts("2019-01-01T00:00:00Z"),
        None,
        ts("2019-01-01T00:00:00Z"),
    )


def test_an_explicit_valid_at_wins_over_a_question_period() -> None:
    valid = ts("2005-03-01T00:00:00Z")
    plan = plan_question("Where did Ana work from 2004 to 2005?", now=NOW, valid_at=valid)
    assert (plan.mode, plan.valid_at, plan.valid_from, plan.valid_to) == (
        "point_in_time",
        valid,
        None,
        None,
    )
    assert "yields" in plan.reasons["valid_at"]


@pytest.mark.parametrize(
    ("times", "field"),
    [
        ({"valid_from": "2006-01-01T00:00:00Z", "valid_to": "2004-01-01T00:00:00Z"}, "valid_to"),
        ({"valid_from": "2006-01-01T00:00:00Z", "valid_to": "2006-01-01T00:00:00Z"}, "valid_to"),
        ({"valid_from": "2004-01-01T00:00:00Z", "valid_at": "2005-01-01T00:00:00Z"}, "valid_at"),
        ({"valid_to": "2004-01-01T00:00:00Z", "valid_at": "2003-01-01T00:00:00Z"}, "valid_at"),
    ],
)
def test_a_period_that_cannot_be_read_is_refused(times: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        plan_question(
            "Where did Ana work?",
            now=NOW,
            valid_at=ts(times.get("valid_at")),
            valid_from=ts(times.get("valid_from")),
            valid_to=ts(times.get("valid_to")),
        )
    assert refused.value.field == field


def test_the_plan_names_the_period_only_for_a_period_read() -> None:
    period = json.loads(plan_question("Where did Ana work until 2012?", now=NOW).model_dump_json())
    instant = json.loads(
        plan_question("Where did Ana work on 2012-05-01?", now=NOW).model_dump_json()
    )
    assert (period["mode"], period["valid_to"], "valid_from" in period) == (
        "period",
        "2013-01-01T00:00:00Z",
        False,
    )
    assert (instant["mode"], "valid_from" in instant, "valid_to" in instant) == (
        "point_in_time",
        False,
        False,
    )


@pytest.mark.parametrize(
    "question",
    [
        "Can you raise her limit to 2000?",  # "to" follows no date
        "Move tier 2 to 3 and 4.",
        "The order went from 20 to 30 units.",
    ],
)
def test_numbers_joined_by_range_words_are_not_periods(question: str) -> None:
    plan = plan_question(question, now=NOW)
    assert (plan.mode, plan.valid_at, plan.valid_from, plan.valid_to) == (
        "current",
        NOW,
        None,
        None,
    )
