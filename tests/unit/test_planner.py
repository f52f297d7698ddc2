"""Question planning: mode, instants, subject and named attributes, each with its reason (no DB).

Routing a question to attributes by score is ``retrieval.routing.route``'s, tested in test_route.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from retrieval.question.dates import find_dates
from retrieval.question.planner import plan_question
from retrieval.question.words import KnownSubject, routing_text
from store.contract.times import TimestampError, parse_timestamp

NOW = parse_timestamp("2026-06-04T15:30:00Z")  # a Thursday
MIRA = KnownSubject("mira", aliases=("Mira Lopez",))
ACCOUNT = KnownSubject("account:42")


def ts(text: str) -> datetime:
    """A UTC instant from RFC 3339 text."""
    return parse_timestamp(text)


@pytest.mark.parametrize(
    ("question", "valid_at"),
    [
        ("What was Mira's passport deadline on June 2?", "2026-06-02T12:00:00Z"),
        ("As of April 21, 1980, what was her city?", "1980-04-21T12:00:00Z"),
        ("What was the tier on 2 June 2026?", "2026-06-02T12:00:00Z"),
        ("What was the tier on the 2nd of June?", "2026-06-02T12:00:00Z"),
        ("What was the tier on Dec 3rd, 2025?", "2025-12-03T12:00:00Z"),
        ("What was the tier on 2026-06-02?", "2026-06-02T12:00:00Z"),
        ("What was the tier on 06/02/2026?", "2026-06-02T12:00:00Z"),
        ("What was the tier on Monday?", "2026-06-01T12:00:00Z"),
        ("What was the tier last Monday?", "2026-06-01T12:00:00Z"),
        ("What was the tier at 2026-06-02T10:00:00+02:00?", "2026-06-02T08:00:00Z"),
        ("What was the tier at 2026-06-02 10:00?", "2026-06-02T10:00:00Z"),
    ],
)
def test_a_date_in_the_question_sets_valid_time(question: str, valid_at: str) -> None:
    plan = plan_question(question, now=NOW)
    assert plan.mode == "point_in_time"
    assert plan.valid_at == ts(valid_at)
    assert plan.known_at == NOW
    assert "valid time" in plan.reasons["valid_at"]


@pytest.mark.parametrize(
    ("question", "back"),
    [
        ("What was it last week?", timedelta(days=7)),
        ("What was her city yesterday?", timedelta(days=1)),
        ("What was the tier 3 days ago?", timedelta(days=3)),
        ("What was the tier two weeks ago?", timedelta(days=14)),
        ("What was the tier an hour ago?", timedelta(hours=1)),
        ("What was the tier last month?", NOW - ts("2026-05-04T15:30:00Z")),
        ("What was the tier last year?", NOW - ts("2025-06-04T15:30:00Z")),
    ],
)
def test_relative_dates_count_back_from_now(question: str, back: timedelta) -> None:
    plan = plan_question(question, now=NOW)
    assert plan.mode == "point_in_time"
    assert plan.valid_at == NOW - back
    assert "counted from now" in plan.reasons["valid_at"]


@pytest.mark.parametrize(
    ("question", "valid_at"),
    [
        ("What will her tier be next week?", "2026-06-11T15:30:00Z"),
        ("Where will she live in 2 days?", "2026-06-06T15:30:00Z"),
        ("Where will she live on 2026-12-24?", "2026-12-24T12:00:00Z"),
        ("What is planned for 2030-01-01T00:00:00Z?", "2030-01-01T00:00:00Z"),
    ],
)
def test_a_future_date_is_a_point_in_time(question: str, valid_at: str) -> None:
    plan = plan_question(question, now=NOW)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("point_in_time", ts(valid_at), NOW)


@pytest.mark.parametrize(
    ("question", "valid_at"),
    [
        ("What was the tier before 2026-05-01?", "2026-04-30T23:59:59Z"),
        ("What was the tier before June 2?", "2026-06-01T23:59:59Z"),
        ("What was her city prior to 1980?", "1979-12-31T23:59:59Z"),
        ("What was her city before last week?", "2026-05-28T15:29:59Z"),
        ("What was the tier before 2026-06-02T10:00:00Z?", "2026-06-02T09:59:59Z"),
        ("What was the tier after June 2?", "2026-06-03T00:00:00Z"),
        ("What was the tier after May 2026?", "2026-06-01T00:00:00Z"),
    ],
)
def test_before_and_after_move_off_the_named_period(question: str, valid_at: str) -> None:
    plan = plan_question(question, now=NOW)
    assert plan.mode == "point_in_time"
    assert plan.valid_at == ts(valid_at)


def test_no_date_reads_the_current_state() -> None:
    plan = plan_question("When is Mira's passport deadline?", now=NOW)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("current", NOW, NOW)
    assert "no date" in plan.reasons["mode"]


@pytest.mark.parametrize(
    "question",
    [
        "What do we know now about her?",  # "we" (Wednesday) and "now"
        "Are we done with the address?",
        "May I ask her birthday?",  # "May" the verb
        "She sat down for a second before answering.",  # "sat", "a second"
        "What did Jan say about dinner?",  # "Jan" the name
        "Let's march on with the ticket.",
        "Is June her sister?",
        "What is her tier today?",  # today is now
        "What is due on the 2nd?",  # no month: too vague to guess
        "What is the status of order 2024?",  # a number, not a year
        "She ordered 3 items for the sun deck.",
        "Call 555-1234 about tier 2.",
        "Where did she live at 10:00?",  # a time of day without a date
        "Can you raise her limit to 2000?",
    ],
)
def test_false_dates_are_ignored(question: str) -> None:
    plan = plan_question(question, now=NOW)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("current", NOW, NOW)


def test_subject_ids_are_not_read_as_dates() -> None:
    plan = plan_question(
        "What is the tier of account:2024?", now=NOW, known_subjects=[KnownSubject("account:2024")]
    )
    assert (plan.mode, plan.subject) == ("current", "account:2024")


@pytest.mark.parametrize(
    ("question", "instant"),
    [
        ("What did we believe on June 2 about the deadline?", "2026-06-02T12:00:00Z"),
        ("What did we know on 2026-06-02?", "2026-06-02T12:00:00Z"),
        ("As we understood it on June 2, where did Mira live?", "2026-06-02T12:00:00Z"),
        ("What was on record on Jan 5, 2026?", "2026-01-05T12:00:00Z"),
        ("What was known last week about her tier?", "2026-05-28T15:30:00Z"),
        ("What did the system think yesterday about her city?", "2026-06-03T15:30:00Z"),
        ("What had we recorded before June 2?", "2026-06-01T23:59:59Z"),
    ],
)
def test_belief_wording_sets_known_at(question: str, instant: str) -> None:
    plan = plan_question(question, now=NOW)
    assert plan.mode == "known_at"
    assert plan.known_at == ts(instant)
    assert plan.valid_at == plan.known_at  # given only known-at, valid time defaults to it
    assert "Belief wording" in plan.reasons["known_at"]
    assert "defaults to the known-at time" in plan.reasons["valid_at"]


def test_belief_wording_with_two_dates_splits_them() -> None:
    plan = plan_question("What did we believe on June 3 about her city on June 1?", now=NOW)
    assert plan.mode == "known_at"
    assert plan.known_at == ts("2026-06-03T12:00:00Z")
    assert plan.valid_at == ts("2026-06-01T12:00:00Z")


def test_belief_wording_without_a_date_is_current() -> None:
    plan = plan_question("What did we believe about her city?", now=NOW)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("current", NOW, NOW)
    assert "names no date" in plan.reasons["known_at"]


def test_present_tense_knowledge_is_not_belief_wording() -> None:
    plan = plan_question("What do we know about her city in 1980?", now=NOW)
    assert plan.mode == "period"
    assert (plan.valid_from, plan.valid_to, plan.known_at) == (
        ts("1980-01-01T00:00:00Z"),
        ts("1981-01-01T00:00:00Z"),
        NOW,
    )


def test_explicit_known_at_sets_the_mode_and_defaults_valid_at() -> None:
    known = ts("2026-06-02T00:00:00Z")
    plan = plan_question("Where does Mira live?", now=NOW, known_at=known)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("known_at", known, known)
    assert plan.reasons["known_at"] == "The caller gave known_at."


def test_explicit_valid_at_is_a_point_in_time() -> None:
    valid = ts("2026-06-02T09:00:00+02:00")
    plan = plan_question("Where does Mira live?", now=NOW, valid_at=valid)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("point_in_time", valid, NOW)
    assert plan.valid_at.utcoffset() == timedelta(0)


def test_explicit_times_win_over_the_question() -> None:
    valid, known = ts("2026-01-01T00:00:00Z"), ts("2026-02-01T00:00:00Z")
    plan = plan_question(
        "What did we believe on June 2 about her city in 1980?",
        now=NOW,
        valid_at=valid,
        known_at=known,
    )
    assert (plan.mode, plan.valid_at, plan.known_at) == ("known_at", valid, known)
    assert "yields" in plan.reasons["valid_at"]
    assert "yields" in plan.reasons["known_at"]


def test_explicit_valid_at_wins_over_a_date_in_the_question() -> None:
    valid = ts("2026-01-01T00:00:00Z")
    plan = plan_question("Where did she live on June 2?", now=NOW, valid_at=valid)
    assert (plan.mode, plan.valid_at, plan.known_at) == ("point_in_time", valid, NOW)
    assert "'June 2' yields" in plan.reasons["valid_at"]


def test_a_question_date_fills_valid_time_beside_an_explicit_known_at() -> None:
    known = ts("2026-06-02T00:00:00Z")
    plan = plan_question("Where did she live on 1980-04-21?", now=NOW, known_at=known)
    assert plan.mode == "known_at"
    assert (plan.valid_at, plan.known_at) == (ts("1980-04-21T12:00:00Z"), known)


def test_a_question_period_fills_valid_time_beside_an_explicit_known_at() -> None:
    known = ts("2026-06-02T00:00:00Z")
    plan = plan_question("Where did she live in 1980?", now=NOW, known_at=known)
    assert plan.mode == "period"
    assert (plan.valid_from, plan.valid_to, plan.known_at) == (
        ts("1980-01-01T00:00:00Z"),
        ts("1981-01-01T00:00:00Z"),
        known,
    )
    assert plan.reasons["known_at"] == "The caller gave known_at."


def test_an_explicit_valid_at_leaves_belief_wording_its_known_at() -> None:
    valid = ts("1980-01-01T00:00:00Z")
    plan = plan_question("What did we know on June 2?", now=NOW, valid_at=valid)
    assert (plan.mode, plan.valid_at, plan.known_at) == (
        "known_at",
        valid,
        ts("2026-06-02T12:00:00Z"),
    )


def test_naive_instants_are_refused() -> None:
    naive = datetime(2026, 6, 2)  # noqa: DTZ001 - the point of the test
    with pytest.raises(TimestampError, match="no UTC offset"):
        plan_question("Where does Mira live?", now=naive)
    with pytest.raises(TimestampError, match="no UTC offset"):
        plan_question("Where does Mira live?", now=NOW, valid_at=naive)
    with pytest.raises(TimestampError, match="no UTC offset"):
        plan_question("Where does Mira live?", now=NOW, known_at=naive)


def test_find_dates_explains_each_instant() -> None:
    (date,) = find_dates("What was it on June 2?", now=NOW)
    assert date.text == "June 2"
    assert date.instant == ts("2026-06-02T12:00:00Z")
    assert "noon UTC" in date.explanation


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("When is Mira's passport deadline?", "mira"),
        ("When is MIRA\u2019s passport deadline?", "mira"),
        ("where does mira live", "mira"),
        ("What is Mira Lopez's city?", "mira"),
        ("What is the tier of account:42?", "account:42"),
        ("What is the tier of account 42?", "account:42"),
        ("What is the tier of Account-42?", "account:42"),
        ("What is the tier of account_42?", "account:42"),
        ("Where does Miranda live?", None),  # word boundaries
        ("What is the tier of account 420?", None),
        ("Where does she live?", None),
    ],
)
def test_subjects_are_matched_in_the_question(question: str, subject: str | None) -> None:
    plan = plan_question(question, now=NOW, known_subjects=[MIRA, ACCOUNT])
    assert plan.subject == subject
    assert plan.reasons["subject"]


def test_an_alias_names_its_subject_in_the_reason() -> None:
    plan = plan_question("What is Mira Lopez's city?", now=NOW, known_subjects=[MIRA])
    assert plan.reasons["subject"] == "The question names 'Mira Lopez', an alias of subject 'mira'."


def test_the_longest_subject_name_wins() -> None:
    known = [KnownSubject("mira"), KnownSubject("mira_lopez")]
    plan = plan_question("Did Mira Lopez move?", now=NOW, known_subjects=known)
    assert plan.subject == "mira_lopez"
    assert "also names 'mira'" in plan.reasons["subject"]


def test_of_equally_long_subject_names_the_first_wins() -> None:
    known = [KnownSubject("tom"), KnownSubject("ana")]
    plan = plan_question("Did Ana or Tom move?", now=NOW, known_subjects=known)
    assert plan.subject == "ana"


def test_an_explicit_subject_wins() -> None:
    plan = plan_question("Where does Mira live?", now=NOW, subject="bob", known_subjects=[MIRA])
    assert plan.subject == "bob"
    assert plan.reasons["subject"] == "The caller named subject 'bob'."


def test_no_subject_says_so() -> None:
    plan = plan_question("Where does she live?", now=NOW, known_subjects=[MIRA])
    assert plan.subject is None
    assert "names no known subject" in plan.reasons["subject"]


def test_named_attributes_are_read_as_named_each_once() -> None:
    plan = plan_question(
        "Where does she live?", now=NOW, attributes=["birthday", "employer", "birthday"]
    )
    assert (plan.attributes, plan.routed) == (("birthday", "employer"), True)
    assert plan.reasons["attributes"] == "The caller named birthday, employer."


@pytest.mark.parametrize("attributes", [None, []])
def test_naming_no_attribute_leaves_the_question_to_routing(attributes: list[str] | None) -> None:
    plan = plan_question("Where does she live?", now=NOW, attributes=attributes)
    assert (plan.attributes, plan.routed) == ((), False)
    assert plan.reasons["attributes"] == (
        "No attribute was named, so the question is routed among the subject's keys."
    )


@pytest.mark.parametrize(
    "question",
    [
        "Where does she live?",
        "What did we believe on June 2 about Mira's city?",
        "What was the tier of account 42 before 2026-05-01?",
    ],
)
def test_every_choice_has_a_reason_in_sentences(question: str) -> None:
    plan = plan_question(question, now=NOW, known_subjects=[MIRA, ACCOUNT])
    reasons = plan.reasons
    assert set(reasons) == {"mode", "valid_at", "known_at", "subject", "attributes"}
    each = [reasons[key] for key in ("mode", "valid_at", "known_at", "subject", "attributes")]
    for reason in each:
        assert reason[0].isupper()
        assert reason.endswith(".")


def test_the_plan_in_json_keeps_its_reasons_in_the_order_they_were_settled() -> None:
    plan = plan_question(
        "What did we believe on June 2 about Mira's city?",
        now=NOW,
        known_subjects=[MIRA],
        attributes=["home_city", "shipping_address"],
    )
    data = json.loads(plan.model_dump_json())
    assert data == {
        "mode": "known_at",
        "valid_at": "2026-06-02T12:00:00Z",
        "known_at": "2026-06-02T12:00:00Z",
        "subject": "mira",
        "attributes": ["home_city", "shipping_address"],
        "routed": True,
        "reasons": plan.reasons,
    }
    # Known-at was settled from the question's words before the mode, valid time after it.
    assert list(data["reasons"]) == ["subject", "known_at", "mode", "valid_at", "attributes"]
    current = plan_question("Where does Mira live?", now=NOW, known_subjects=[MIRA])
    assert list(json.loads(current.model_dump_json())["reasons"]) == [
        "subject",
        "mode",
        "valid_at",
        "known_at",
        "attributes",
    ]


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("Where did Mira live in 1980?", "Where did live?"),
        ("As of April 21, 1980, what was Mira Lopez's city?", "what was city?"),
        ("What is account 42's tier?", "What is tier?"),
        (
            "What did we believe on June 2 about Mira\u2019s deadline?",
            "What did we believe about deadline?",
        ),
        ("Last week, what was the tier of account:42?", "what was the tier of?"),
        ("When does she need to renew her passport?", "When does she need to renew her passport?"),
        ("Mira on June 2", "Mira on June 2"),  # nothing would be left: keep the question
    ],
)
def test_routing_text_drops_subject_names_and_dates(question: str, text: str) -> None:
    assert routing_text(question, now=NOW, known_subjects=[MIRA, ACCOUNT]) == text


def test_routing_text_drops_an_explicit_subject() -> None:
    assert routing_text("Where does bob live?", now=NOW, subject="bob") == "Where does live?"


def test_utc_is_kept_for_offsets_in_now() -> None:
    now = datetime(2026, 6, 4, 17, 30, tzinfo=UTC).astimezone()
    plan = plan_question("Where does she live?", now=now)
    assert plan.valid_at == ts("2026-06-04T17:30:00Z")
    assert plan.valid_at.tzinfo is UTC
