"""Seeded memory histories with gold answers: the stale-fact leakage evaluation's input.

A history is a replay file (design section 9): ``define`` lines, every write (``episode``,
``update``, ``expire``) in system-time order with its ``now``, then ``context`` question lines
asked at the history's end, each carrying a ``gold`` answer that replay ignores::

    {"op": "context", "tenant": T, "question": "...", "subject": S, "valid_at": ...,
     "known_at": ..., "now": END, "gold": {"kind": "current" | "point_in_time" | "known_at",
     "subject": S, "attribute": A, "answer": VALUE | "not known" | "uncertain",
     "answers": [...], "values": [...], "other_tenant_values": [...],
     "held_by_other_keys": [...],
     "family": "customers" | "records"}}

``answers`` holds the values a correct reply may state: the one value, both disputed values for
"uncertain", none for "not known". ``values`` is every value the key ever had in the tenant and
``other_tenant_values`` those it had only in other tenants: what a context block must not present as
the answer. ``held_by_other_keys`` lists values that another key of the same subject holds at the
asked instant (a prime minister who is president later): stating one of them is no stale leak, since
it is current for that other key, though it is no answer either. ``family`` is the shape of history
the key belongs to, which the report breaks its figures down by: ``customers`` (a few attributes of
many people, with corrections, delayed extractions, disputes and expiries:
``evals.histories.timelines``) and ``records`` (places holding one to three of many similar roles,
decades of holders recorded out of order: ``evals.histories.records``). Every history holds both,
its questions mixed; each family draws from random streams of its own, so adding one leaves the
other's keys and questions as they were.

Question kinds: current (valid_at = known_at = the end); point in time (a past valid_at,
known now); known-at (a past known_at, valid then: what was believed that day about that day,
where delayed extractions and late challengers make the belief differ from today's view).
Past instants are noon UTC of a day on which the key records nothing, which is where a reader
puts a date named in words; the question names the same day. The keys themselves and their
gold rule are in ``evals.histories.timelines``; which questions are asked, in
``evals.histories.asking``.

    python -m evals.histories.generate --seed 7 --size quick --out quick.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from evals.histories.asking import (
    CUSTOMER_SHARES,
    Asked,
    QuestionKind,
    choose_questions,
    customer_candidates,
)
from evals.histories.phrasings import day_in_words
from evals.histories.record_phrasings import RECORDS
from evals.histories.records import RECORD_SHARES, build_records, record_candidates
from evals.histories.timelines import (
    NOT_KNOWN,
    SIZES,
    START,
    UNCERTAIN,
    Assertion,
    Episode,
    Expiry,
    KeyTimeline,
    RecordsSpec,
    SizeSpec,
    believed,
    build_timelines,
    day_of,
    noon,
)
from evals.leakage.gold_traces import GeneratedLines, encode_lines
from store.contract.times import format_timestamp, parse_timestamp

__all__ = ["SIZES", "GeneratedHistory", "RecordsSpec", "SizeSpec", "generate_history"]

SizeName = Literal["quick", "default"]


@dataclass(frozen=True)
class GeneratedHistory(GeneratedLines):
    """One generated history of the customers and records families."""

    size: SizeSpec


def _counts(spec: SizeSpec | RecordsSpec) -> dict[QuestionKind, int]:
    """Questions per tenant of each kind."""
    return {
        "current": spec.current,
        "point_in_time": spec.point_in_time,
        "known_at": spec.known_at,
    }


def generate_history(*, seed: int, size: SizeName | SizeSpec) -> GeneratedHistory:
    """A reproducible history with gold answers: same seed and size, byte-identical lines."""
    spec = SIZES[size] if isinstance(size, str) else size
    customers = build_timelines(seed=seed, size=spec)
    records = build_records(seed=seed, size=spec)
    timelines = [*customers, *records]
    writes = _writes(timelines)
    end = noon(day_of(max(parse_timestamp(line["now"]) for line in writes)) + 1)
    asked = choose_questions(
        customers,
        counts=_counts(spec),
        shares=CUSTOMER_SHARES,
        candidates=customer_candidates,
        end=end,
        rng=random.Random(f"questions-{seed}"),
    )
    if spec.records is not None:
        asked_records = choose_questions(
            records,
            counts=_counts(spec.records),
            shares=RECORD_SHARES,
            candidates=record_candidates,
            end=end,
            rng=random.Random(f"record-questions-{seed}"),
        )
        asked = _interleaved(asked, asked_records, random.Random(f"question-order-{seed}"))
    lines = [*_definitions(timelines), *writes, *(_question(a, timelines, end) for a in asked)]
    summary = _summary(timelines, writes, asked, len(lines))
    return GeneratedHistory(seed=seed, size=spec, encoded=encode_lines(lines), summary=summary)


def _interleaved(first: list[Asked], second: list[Asked], rng: random.Random) -> list[Asked]:
    """Both lists mixed at random, each keeping its own order (so its wording draws stay)."""
    sides = [0] * len(first) + [1] * len(second)
    rng.shuffle(sides)
    queues = (iter(first), iter(second))
    return [next(queues[side]) for side in sides]


def _definitions(timelines: Sequence[KeyTimeline]) -> list[dict[str, Any]]:
    now = format_timestamp(START - timedelta(days=1) + timedelta(hours=9))
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for timeline in timelines:
        spec = timeline.spec
        seen.setdefault(
            (timeline.tenant, spec.attribute),
            {"op": "define", "tenant": timeline.tenant, "attribute": spec.attribute}
            | spec.declaration()
            | {"now": now},
        )
    return list(seen.values())


def _candidate(timeline: KeyTimeline, assertion: Assertion) -> dict[str, Any]:
    """The update's MemoryUpdate; ``current_value`` and ``change`` are advisory."""
    before = [
        a
        for a in timeline.assertions
        if a.role != "challenger" and a.valid_from < assertion.valid_from
    ]
    previous = max(before, key=lambda a: a.valid_from).value if before else None
    return {
        "evidence": assertion.evidence,
        "subject": timeline.subject,
        "attribute": timeline.spec.attribute,
        "current_value": previous,
        "change": "new" if previous is None else "update",
        "value": assertion.value,
        "valid_from": format_timestamp(assertion.valid_from),
    }


def _writes(timelines: Sequence[KeyTimeline]) -> list[dict[str, Any]]:
    """Every write line in system-time order (an episode before its update); ids in that order."""
    events: list[tuple[datetime, int, KeyTimeline, Any]] = []
    for timeline in timelines:
        items: list[Any] = []
        for assertion in timeline.assertions:
            items += [assertion.episode, assertion]
        if timeline.expiry is not None:
            items += [timeline.expiry.episode, timeline.expiry]
        items += timeline.distractors
        for item in items:
            events.append((item.recorded_at, len(events), timeline, item))
    events.sort(key=lambda event: (event[0], event[1]))
    ids: dict[int, str] = {}
    lines: list[dict[str, Any]] = []
    for now, _, timeline, item in events:
        body: dict[str, Any]
        if isinstance(item, Assertion):
            body = {"op": "update", "tenant": timeline.tenant, "episode": ids[id(item.episode)]}
            body["candidate"] = _candidate(timeline, item)
        elif isinstance(item, Episode):
            ids[id(item)] = f"e{len(ids) + 1:05d}"
            body = {
                "op": "episode",
                "tenant": timeline.tenant,
                "id": ids[id(item)],
                "occurred_at": format_timestamp(item.occurred_at),
                "kind": item.kind,
                "text": item.text,
                "subjects": [item.subject],
            }
        else:
            assert isinstance(item, Expiry)
            body = {
                "op": "expire",
                "tenant": timeline.tenant,
                "subject": timeline.subject,
                "attribute": timeline.spec.attribute,
                "at": format_timestamp(item.at),
                "source_episode_id": ids[id(item.episode)],
            }
        lines.append(body | {"now": format_timestamp(now)})
    return lines


def _question(asked: Asked, timelines: Sequence[KeyTimeline], end: datetime) -> dict[str, Any]:
    """The question line: wording, explicit times and the gold answer."""
    timeline, spec = asked.timeline, asked.timeline.spec
    tables = {
        "current": spec.current,
        "point_in_time": spec.point_in_time,
        "known_at": spec.known_at,
    }
    table = tables[asked.kind]
    wording = table[asked.wording % len(table)]
    at = end if asked.day is None else noon(asked.day)
    styles = spec.date_styles
    words = day_in_words(at.date(), styles[(asked.wording // len(table)) % len(styles)])
    question = wording.format(name=timeline.name, date=words)
    elsewhere = {
        value
        for other in timelines
        if (other.subject, other.spec.attribute) == (timeline.subject, spec.attribute)
        and other.tenant != timeline.tenant
        for value in other.values
    }
    known_at = at if asked.kind == "known_at" else end
    held_by_other_keys = {
        value
        for other in timelines
        if (other.tenant, other.subject) == (timeline.tenant, timeline.subject)
        and other.spec.attribute != spec.attribute
        for value in believed(other, valid_at=at, known_at=known_at).answers
    }
    return {
        "op": "context",
        "tenant": timeline.tenant,
        "question": question,
        "subject": timeline.subject,
        "valid_at": format_timestamp(at),
        "known_at": format_timestamp(known_at),
        "now": format_timestamp(end),
        "gold": {
            "kind": asked.kind,
            "subject": timeline.subject,
            "attribute": spec.attribute,
            "answer": asked.answer.answer,
            "answers": list(asked.answer.answers),
            "values": timeline.values,
            "other_tenant_values": sorted(elsewhere - set(timeline.values)),
            "held_by_other_keys": sorted(held_by_other_keys - set(asked.answer.answers)),
            "family": spec.family,
        },
    }


def _summary(
    timelines: Sequence[KeyTimeline],
    writes: Sequence[Mapping[str, Any]],
    asked: Sequence[Asked],
    lines: int,
) -> dict[str, int]:
    """How much of each feature the history holds, and how many questions of each kind."""
    roles = Counter(a.role for t in timelines for a in t.assertions)
    ops = Counter(str(line["op"]) for line in writes)
    answers = Counter(
        a.answer.answer if a.answer.answer in (NOT_KNOWN, UNCERTAIN) else "value" for a in asked
    )
    return {
        "tenants": len({t.tenant for t in timelines}),
        "subjects": len({t.subject for t in timelines}),
        "attributes": len({t.spec.attribute for t in timelines}),
        "keys": len(timelines),
        "lines": lines,
        "episodes": ops["episode"],
        "updates": ops["update"],
        "expiries": ops["expire"],
        "corrections": roles["correction"],
        "delayed_extractions": sum(a.delayed for t in timelines for a in t.assertions),
        "conflicts": roles["challenger"],
        "distractors": sum(len(t.distractors) for t in timelines),
        "questions": len(asked),
        **{f"questions_{kind}": sum(a.kind == kind for a in asked) for kind in CUSTOMER_SHARES},
        "answers_value": answers["value"],
        "answers_not_known": answers[NOT_KNOWN],
        "answers_uncertain": answers[UNCERTAIN],
        **_records_summary(timelines, asked),
    }


def _records_summary(timelines: Sequence[KeyTimeline], asked: Sequence[Asked]) -> dict[str, int]:
    """The public-records family's part: places, roles, late records, people in two roles."""
    records = [t for t in timelines if t.spec.family == RECORDS]
    places: dict[tuple[str, str], list[KeyTimeline]] = {}
    for timeline in records:
        places.setdefault((timeline.tenant, timeline.subject), []).append(timeline)
    held = [Counter(value for key in keys for value in key.values) for keys in places.values()]
    two_roles = sum(any(count > 1 for count in names.values()) for names in held)
    return {
        "records_subjects": len({t.subject for t in records}),
        "records_keys": len(records),
        "records_out_of_order": sum(a.delayed for t in records for a in t.assertions),
        "records_same_person": two_roles,
        "questions_records": sum(a.timeline.spec.family == RECORDS for a in asked),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Write a history to a JSONL file and print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--size", choices=sorted(SIZES), default="quick")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    history = generate_history(seed=args.seed, size=args.size)
    history.write(args.out)
    json.dump(dict(history.summary), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
