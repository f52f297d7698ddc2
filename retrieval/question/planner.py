"""Question planning (read path steps 1-3): which mode, which instants, subject and attributes.

Pure: no database and no model. This module only decides, and says why in ``QuestionPlan.reasons``:
the subject from ``retrieval.question.words``, the instants and any period from
``retrieval.question.times`` (dates themselves from ``retrieval.question.dates``, ranges from
``retrieval.question.periods``), the mode from which were set. A period read ("from 2004 to 2005",
"in 1985") has mode ``period`` and names its range in ``valid_from`` / ``valid_to`` (an open end is
left out); its ``valid_at`` is the range's start (or, with an open start, the second before its
end). Attributes the caller names are read as named; ``attributes`` that is empty counts as naming
none, and the reader then routes the question among the subject's keys
(``retrieval.routing.route``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from retrieval.question.dates import find_dates
from retrieval.question.periods import Period, check_period
from retrieval.question.times import question_times
from retrieval.question.words import (
    KnownSubject,
    SubjectMention,
    blank_mentions,
    choose_subject,
    find_subject_mentions,
)
from store.contract.reads import Mode, QuestionPlan, SubjectCandidate
from store.contract.times import parse_timestamp

_ONE_SECOND = timedelta(seconds=1)
NOW_KNOWN = "Nothing asks about past belief, so known-at is now."


def plan_question(
    question: str,
    *,
    now: datetime,
    subject: str | None = None,
    attributes: Sequence[str] | None = None,
    valid_at: datetime | None = None,
    known_at: datetime | None = None,
    known_subjects: Sequence[KnownSubject] = (),
    name_mentions: Sequence[SubjectMention] = (),
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
) -> QuestionPlan:
    """Decide mode, instants, period, subject and named attributes; explicit parameters win.

    ``valid_from`` / ``valid_to`` ask about a period (either end may be open); with
    ``valid_at`` too, or ending before it starts, InvalidInput.
    """
    now = parse_timestamp(now)
    start = parse_timestamp(valid_from) if valid_from is not None else None
    end = parse_timestamp(valid_to) if valid_to is not None else None
    check_period(start, end, valid_at=valid_at)
    reasons: dict[str, str] = {}

    mentions = (*find_subject_mentions(question, known_subjects), *name_mentions)
    weighed: tuple[SubjectMention, ...] = ()
    if subject is not None:
        reasons["subject"] = f"The caller named subject {subject!r}."
        mentions = (*mentions, *find_subject_mentions(question, [KnownSubject(subject)]))
    else:
        subject, reasons["subject"], weighed = choose_subject(mentions)

    dates = find_dates(blank_mentions(question, mentions), now=now)
    valid, known, period = question_times(
        dates,
        question=question,
        now=now,
        valid_at=valid_at,
        known_at=known_at,
        reasons=reasons,
        period=Period(start, end, (), "the caller's") if (start, end) != (None, None) else None,
    )
    mode: Mode
    if period is not None:
        mode = "period"
        reasons["mode"] = (
            "Period: a valid-time range was set (see valid_from, valid_to), so the read gives every"
            " value valid in it, each with its window"
            + (", as known at the known-at time." if known is not None else ", as known now.")
        )
        valid = period.valid_from or _before(period.valid_to)
        reasons.setdefault("known_at", NOW_KNOWN)
    elif known is not None:
        mode = "known_at"
        reasons["mode"] = (
            "Known-at: a known-at time was set (see known_at), so the read sees only what was"
            " recorded by then (system time)."
        )
        if valid is None:
            valid = known
            reasons["valid_at"] = (
                "Nothing set valid time, so it defaults to the known-at time:"
                " what was believed then about then."
            )
    elif valid is not None:
        mode = "point_in_time"
        reasons["mode"] = (
            "Point in time: a valid time was set (see valid_at), so the read asks what was true"
            " at that instant, as known now."
        )
        reasons.setdefault("known_at", NOW_KNOWN)
    else:
        mode = "current"
        reasons["mode"] = (
            "Current: no date in the question and no valid_at or known_at given,"
            " so the read asks what is true now."
        )
        reasons["valid_at"] = "No date was given, so valid time is now."
        reasons.setdefault("known_at", NOW_KNOWN)

    named = tuple(dict.fromkeys(attributes or ()))
    reasons["attributes"] = (
        f"The caller named {', '.join(named)}."
        if named
        else "No attribute was named, so the question is routed among the subject's keys."
    )
    return QuestionPlan(
        mode=mode,
        valid_at=valid if valid is not None else now,
        known_at=known if known is not None else now,
        subject=subject,
        attributes=named,
        routed=bool(named),
        reasons=reasons,
        valid_from=period.valid_from if period is not None else None,
        valid_to=period.valid_to if period is not None else None,
        subject_candidates=[
            SubjectCandidate(
                subject=m.subject,
                name=m.name or m.subject,
                text=m.text,
                how=m.how or ("an alias" if m.alias else "the id"),
                score=m.score,
            )
            for m in weighed
        ]
        or None,
    )


def _before(end: datetime | None) -> datetime | None:
    return end - _ONE_SECOND if end is not None else None
