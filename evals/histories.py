"""Seeded memory histories with gold answers: the stale-fact leakage evaluation's input.

A history is a replay file (design section 9): ``define`` lines, every write (``episode``,
``update``, ``expire``) in system-time order with its ``now``, then ``context`` question lines
asked at the history's end, each carrying a ``gold`` answer that replay ignores::

    {"op": "context", "tenant": T, "question": "...", "subject": S, "valid_at": ...,
     "known_at": ..., "now": END, "gold": {"kind": "current" | "point_in_time" | "known_at",
     "subject": S, "attribute": A, "answer": VALUE | "not known" | "uncertain",
     "answers": [...], "values": [...], "other_tenant_values": [...]}}

``answers`` holds the values a correct reply may state: the one value, both disputed values
for "uncertain", none for "not known". ``values`` is every value the key ever had in the
tenant and ``other_tenant_values`` those it had only in other tenants: what a context block
must not present as the answer.

Question kinds: current (valid_at = known_at = the end); point in time (a past valid_at,
known now); known-at (a past known_at, valid then: what was believed that day about that day,
where delayed extractions and late challengers make the belief differ from today's view).
Past instants are noon UTC of a day on which the key records nothing, which is where a reader
puts a date named in words; the question names the same day. The keys themselves and their
gold rule are in ``evals.timelines``.

    python -m evals.histories --seed 7 --size quick --out quick.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from evals.phrasings import day_in_words
from evals.timelines import (
    NOT_KNOWN,
    SIZES,
    START,
    UNCERTAIN,
    Answer,
    Assertion,
    Episode,
    Expiry,
    KeyTimeline,
    SizeSpec,
    believed,
    build_timelines,
    day_of,
    noon,
)
from store.times import format_timestamp, parse_timestamp

__all__ = ["SIZES", "GeneratedHistory", "SizeSpec", "generate_history"]

QuestionKind = Literal["current", "point_in_time", "known_at"]
SizeName = Literal["quick", "default"]

# Per question kind: categories asked first, each up to a share of the kind's questions
# (at least one when there is one), then the categories that fill the rest, in order.
_SHARES: Mapping[QuestionKind, tuple[tuple[tuple[str, float], ...], tuple[str, ...]]] = {
    "current": ((("uncertain", 1 / 6), ("not_known", 1 / 6)), ("value",)),
    "point_in_time": ((("uncertain", 1 / 10), ("not_known", 1 / 6)), ("stale", "same")),
    "known_at": (
        (("belief_differs", 1 / 2), ("uncertain", 1 / 8), ("not_known", 1 / 8)),
        ("plain", "belief_differs"),
    ),
}


@dataclass(frozen=True)
class GeneratedHistory:
    """One generated history: its replay lines (JSON text, in order) and what they hold."""

    seed: int
    size: SizeSpec
    encoded: tuple[str, ...]
    summary: Mapping[str, int]

    def lines(self) -> list[dict[str, Any]]:
        """Every replay line in order: definitions, writes, then questions."""
        return [json.loads(line) for line in self.encoded]

    def questions(self) -> list[dict[str, Any]]:
        """The question lines (``op`` context, with ``gold``)."""
        return [line for line in self.lines() if line["op"] == "context"]

    def text(self) -> str:
        """The history as JSONL text: one line each, a newline after the last."""
        return "".join(f"{line}\n" for line in self.encoded)

    def write(self, path: Path) -> None:
        """Write the JSONL file (same seed and size, same bytes)."""
        path.write_text(self.text(), encoding="utf-8")


def generate_history(*, seed: int, size: SizeName | SizeSpec) -> GeneratedHistory:
    """A reproducible history with gold answers: same seed and size, byte-identical lines."""
    spec = SIZES[size] if isinstance(size, str) else size
    timelines = build_timelines(seed=seed, size=spec)
    writes = _writes(timelines)
    end = noon(day_of(max(parse_timestamp(line["now"]) for line in writes)) + 1)
    asked = _choose_all(timelines, size=spec, end=end, rng=random.Random(f"questions-{seed}"))
    lines = [*_definitions(timelines), *writes, *(_question(a, timelines, end) for a in asked)]
    encoded = tuple(json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in lines)
    return GeneratedHistory(seed, spec, encoded, _summary(timelines, writes, asked, len(lines)))


@dataclass(frozen=True)
class _Asked:
    """One question before it is worded: kind, key, day (None: now), answer, category."""

    kind: QuestionKind
    timeline: KeyTimeline
    day: int | None
    answer: Answer
    category: str
    wording: int  # phrasing and date style, drawn once


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


def _category(kind: QuestionKind, answer: Answer, *, now: Answer, other: Answer) -> str:
    """What a question tests; ``now`` is the current answer, ``other`` the point-in-time one."""
    if kind == "known_at" and answer != other:
        return "belief_differs"  # a delayed extraction or a late challenger
    if answer.answer in (UNCERTAIN, NOT_KNOWN):
        return answer.answer.replace(" ", "_")
    if kind == "current":
        return "value"
    if kind == "point_in_time":
        return "stale" if answer != now else "same"
    return "plain"


def _candidates(timeline: KeyTimeline, *, end: datetime, rng: random.Random) -> list[_Asked]:
    """One candidate question per kind and per stretch of days on which the key is quiet."""
    now = believed(timeline, valid_at=end, known_at=end)
    current = _category("current", now, now=now, other=now)
    found = [_Asked("current", timeline, None, now, current, wording=0)]
    breaks = sorted(timeline.busy_days() | {0, day_of(end)})
    for low, high in itertools.pairwise(breaks):
        if high - low < 2:
            continue
        day = rng.randint(low + 1, high - 1)
        past = believed(timeline, valid_at=noon(day), known_at=end)
        then = believed(timeline, valid_at=noon(day), known_at=noon(day))
        asked: tuple[tuple[QuestionKind, Answer], ...] = (
            ("point_in_time", past),
            ("known_at", then),
        )
        for kind, answer in asked:
            category = _category(kind, answer, now=now, other=past)
            found.append(_Asked(kind, timeline, day, answer, category, wording=0))
    return found


def _spread_keys(items: list[_Asked], rng: random.Random) -> list[_Asked]:
    """Shuffled, then each key's first item before any key's second, and so on."""
    rng.shuffle(items)
    seen: Counter[int] = Counter()
    ranked = []
    for item in items:
        ranked.append((seen[id(item.timeline)], item))
        seen[id(item.timeline)] += 1
    return [item for _, item in sorted(ranked, key=lambda pair: pair[0])]


def _choose(groups: Mapping[str, list[_Asked]], kind: QuestionKind, total: int) -> list[_Asked]:
    shares, fill = _SHARES[kind]
    chosen: list[_Asked] = []
    taken: dict[str, int] = {}
    for category, share in shares:
        want = min(len(groups.get(category, [])), max(1, round(total * share)))
        want = min(want, total - len(chosen))
        chosen += groups.get(category, [])[:want]
        taken[category] = want
    for category in (*fill, *(category for category, _ in shares)):
        rest = groups.get(category, [])[taken.get(category, 0) :]
        room = total - len(chosen)
        chosen += rest[:room]
        taken[category] = taken.get(category, 0) + min(room, len(rest))
    return chosen


def _choose_all(
    timelines: Sequence[KeyTimeline], *, size: SizeSpec, end: datetime, rng: random.Random
) -> list[_Asked]:
    """Per tenant, the size's number of questions of each kind; then all of them shuffled."""
    by_tenant: dict[str, list[_Asked]] = {}
    for timeline in timelines:
        by_tenant.setdefault(timeline.tenant, []).extend(_candidates(timeline, end=end, rng=rng))
    asked: list[_Asked] = []
    for found in by_tenant.values():
        for kind in _SHARES:
            groups: dict[str, list[_Asked]] = {}
            for item in found:
                if item.kind == kind:
                    groups.setdefault(item.category, []).append(item)
            ordered = {name: _spread_keys(items, rng) for name, items in sorted(groups.items())}
            asked += _choose(ordered, kind, getattr(size, kind))
    rng.shuffle(asked)
    return [replace(item, wording=rng.randrange(1_000_000)) for item in asked]


def _question(asked: _Asked, timelines: Sequence[KeyTimeline], end: datetime) -> dict[str, Any]:
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
    words = day_in_words(at.date(), asked.wording // len(table))
    question = wording.format(name=timeline.name, date=words)
    elsewhere = {
        value
        for other in timelines
        if (other.subject, other.spec.attribute) == (timeline.subject, spec.attribute)
        and other.tenant != timeline.tenant
        for value in other.values
    }
    return {
        "op": "context",
        "tenant": timeline.tenant,
        "question": question,
        "subject": timeline.subject,
        "valid_at": format_timestamp(at),
        "known_at": format_timestamp(at if asked.kind == "known_at" else end),
        "now": format_timestamp(end),
        "gold": {
            "kind": asked.kind,
            "subject": timeline.subject,
            "attribute": spec.attribute,
            "answer": asked.answer.answer,
            "answers": list(asked.answer.answers),
            "values": timeline.values,
            "other_tenant_values": sorted(elsewhere - set(timeline.values)),
        },
    }


def _summary(
    timelines: Sequence[KeyTimeline],
    writes: Sequence[Mapping[str, Any]],
    asked: Sequence[_Asked],
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
        **{f"questions_{kind}": sum(a.kind == kind for a in asked) for kind in _SHARES},
        "answers_value": answers["value"],
        "answers_not_known": answers[NOT_KNOWN],
        "answers_uncertain": answers[UNCERTAIN],
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
