"""Question planning (read path steps 1-3): which mode, which instants, subject and attributes.

Pure: no database and no model. This module only decides, and says why in
``QuestionPlan.reasons``: the subject from ``retrieval.question``, the instants from
``retrieval.question_times`` (dates themselves from ``retrieval.dates``), the mode from which
instants were set. Attributes the caller names are read as named; ``attributes`` that is
empty counts as naming none, and the reader then routes the question among the subject's
keys (``retrieval.route``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from retrieval.dates import find_dates
from retrieval.models import Mode, QuestionPlan
from retrieval.question import (
    KnownSubject,
    blank_mentions,
    choose_subject,
    find_subject_mentions,
)
from retrieval.question_times import question_times
from store.times import parse_timestamp

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
) -> QuestionPlan:
    """Decide mode, instants, subject and named attributes; explicit parameters win."""
    now = parse_timestamp(now)
    reasons: dict[str, str] = {}

    mentions = find_subject_mentions(question, known_subjects)
    if subject is not None:
        reasons["subject"] = f"The caller named subject {subject!r}."
        mentions = (*mentions, *find_subject_mentions(question, [KnownSubject(subject)]))
    else:
        subject, reasons["subject"] = choose_subject(mentions)

    dates = find_dates(blank_mentions(question, mentions), now=now)
    valid, known = question_times(
        dates,
        question=question,
        now=now,
        valid_at=valid_at,
        known_at=known_at,
        reasons=reasons,
    )
    mode: Mode
    if known is not None:
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
    )
