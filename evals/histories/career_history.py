"""The careers family as a replay file: people's and organisations' roles told in paragraphs.

The lines (design section 9, plus a ``subject`` line that declares a subject's names as ``PUT
/v1/subjects/{subject}`` does)::

    {"op": "define", ...}                    every role the family's keys hold
    {"op": "subject", "subject": S, "display_name": ..., "aliases": [...]}
    {"op": "episode", ...} {"op": "update", ...}    a paragraph, then the facts it is the source of
    {"op": "context", "question": ..., ["subject": S,] "now": END, "gold": {...}}

Half the subjects have their names declared; the other half are known by name only from the
``subject_name`` their candidates carry (the name as the paragraph writes it). Paragraphs are
an archive read during the history (recorded on days 2-150 from
``evals.histories.timelines.START``, in
an order of their own). Every question is asked twice, with ``subject`` and without (its gold
says which name form it uses); it carries no ``valid_at`` or ``known_at``: the server reads the
time from its words. Gold is the shape ``evals.leakage.scoring.Gold`` reads, with ``kind`` current,
point_in_time or period, the period or instant asked, ``name_form``, ``style`` (the
phrasing) and ``written_differently`` (the key's values some paragraph writes otherwise than
stored).

    python -m evals.histories.career_history --seed 7 --size quick --out careers.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from evals.histories.career_questions import Asked, choose, question_text, stale
from evals.histories.career_text import Paragraph, paragraphs
from evals.histories.careers import CAREER_SIZES, CAREERS, CareerKey, CareersSpec, build_careers
from evals.histories.timelines import START
from evals.leakage.gold_traces import GeneratedLines, encode_lines
from store.contract.times import format_timestamp

TENANT = "archive"
"""The family's tenant: a trace of its own, so no other family's subjects are among its names."""
_RECORDED_DAYS = (2, 150)
_HOURS = (8, 9, 10, 11, 13, 14, 15, 16, 17)


@dataclass(frozen=True)
class GeneratedCareers(GeneratedLines):
    """The careers family's replay lines: definitions, names, writes, then questions."""

    spec: CareersSpec


def generate_careers(*, seed: int, size: str | CareersSpec) -> GeneratedCareers:
    """A reproducible careers history with gold: same seed and size, byte-identical lines."""
    spec = CAREER_SIZES[size] if isinstance(size, str) else size
    keys = build_careers(seed=seed, spec=spec)
    rng = random.Random(f"career-text-{seed}")
    subjects = list(dict.fromkeys(key.subject for key in keys))
    written = [
        paragraph
        for subject in subjects
        for paragraph in paragraphs([key for key in keys if key.subject is subject], rng)
    ]
    writes = _writes(written, rng)
    last = max(datetime.fromisoformat(line["now"]) for line in writes)
    end = datetime.combine(last.date() + timedelta(days=1), time(12), UTC)
    forms = _forms(written)
    asked = choose(keys, count=spec.questions, rng=random.Random(f"career-questions-{seed}"))
    wording = random.Random(f"career-wording-{seed}")
    questions = [
        line
        for item in asked
        for line in _questions(item, question_text(item, wording), forms, end)
    ]
    # People and organisations alternate: this takes about half of each.
    declared = [subject for number, subject in enumerate(subjects) if number % 4 in (0, 3)]
    before = format_timestamp(START - timedelta(hours=14))
    names = [
        {
            "op": "subject",
            "tenant": TENANT,
            "subject": subject.subject,
            "display_name": subject.display_name,
            "aliases": [],
            "now": before,
        }
        for subject in declared
    ]
    lines = [*_definitions(keys), *names, *writes, *questions]
    summary = _summary(keys, written, asked, declared=len(declared), lines=len(lines))
    return GeneratedCareers(seed=seed, spec=spec, encoded=encode_lines(lines), summary=summary)


def _definitions(keys: Sequence[CareerKey]) -> list[dict[str, Any]]:
    now = format_timestamp(START - timedelta(hours=15))
    roles = {key.role.attribute: key.role for key in keys}
    return [
        {"op": "define", "tenant": TENANT, "attribute": name}
        | roles[name].declaration()
        | {"now": now}
        for name in sorted(roles)
    ]


def _writes(written: Sequence[Paragraph], rng: random.Random) -> list[dict[str, Any]]:
    """Each paragraph and its updates, recorded on days of the archive's reading in an order of
    their own; ids in recording order."""
    instants = [
        START
        + timedelta(
            days=rng.randrange(*_RECORDED_DAYS),
            hours=rng.choice(_HOURS),
            minutes=rng.randrange(60),
        )
        for _ in written
    ]
    lines: list[dict[str, Any]] = []
    for number, (when, paragraph) in enumerate(
        sorted(zip(instants, written, strict=True), key=lambda pair: pair[0])
    ):
        episode = f"c{number + 1:05d}"
        now = format_timestamp(when)
        occurred = datetime.combine(paragraph.written_at, time(9), UTC)
        lines.append(
            {
                "op": "episode",
                "tenant": TENANT,
                "id": episode,
                "occurred_at": format_timestamp(occurred),
                "kind": "file",
                "text": paragraph.text,
                "subjects": [paragraph.subject.subject],
                "now": now,
            }
        )
        for fact in paragraph.facts:
            lines.append(
                {
                    "op": "update",
                    "tenant": TENANT,
                    "episode": episode,
                    "candidate": _candidate(paragraph, fact.key, fact.index, fact.evidence),
                    "now": now,
                }
            )
    return lines


def _candidate(paragraph: Paragraph, key: CareerKey, index: int, evidence: str) -> dict[str, Any]:
    """The fact's MemoryUpdate; ``current_value`` and ``change`` are advisory."""
    held = key.held[index]
    previous = key.held[index - 1].value if index > 0 else None
    start = datetime.combine(held.start, time(0), UTC)
    return {
        "evidence": evidence,
        "subject": key.subject.subject,
        "attribute": key.role.attribute,
        "current_value": previous,
        "change": "new" if previous is None else "update",
        "value": held.value,
        "valid_from": format_timestamp(start),
        "subject_name": paragraph.subject_name,
    }


def _forms(written: Sequence[Paragraph]) -> dict[str, set[str]]:
    """Each value, every way a paragraph writes it."""
    forms: dict[str, set[str]] = {}
    for paragraph in written:
        for value, form in paragraph.forms.items():
            forms.setdefault(value, set()).add(form)
    return forms


def _questions(
    asked: Asked, question: str, forms: Mapping[str, set[str]], end: datetime
) -> list[dict[str, Any]]:
    """The question twice: with its subject named by ``subject``, then without."""
    key = asked.key
    gold: dict[str, Any] = {
        "kind": asked.kind,
        "subject": key.subject.subject,
        "attribute": key.role.attribute,
        "answer": asked.answers[0],
        "answers": list(asked.answers),
        "values": key.values,
        "family": CAREERS,
        "name_form": asked.form,
        "style": asked.style,
        "written_differently": sorted(
            value for value in key.values if any(form != value for form in forms.get(value, ()))
        ),
    }
    if asked.kind == "period":
        gold["valid_from"] = _midnight(asked.valid_from)
        gold["valid_to"] = _midnight(asked.valid_to)
    elif asked.kind == "point_in_time":
        gold["valid_at"] = _midnight(asked.day, hour=12)
    line = {"op": "context", "tenant": TENANT, "question": question}
    now = {"now": format_timestamp(end)}
    return [
        line | {"subject": key.subject.subject} | now | {"gold": gold},
        line | now | {"gold": gold},
    ]


def _midnight(day: date | None, *, hour: int = 0) -> str | None:
    return None if day is None else format_timestamp(datetime.combine(day, time(hour), UTC))


def _summary(
    keys: Sequence[CareerKey],
    written: Sequence[Paragraph],
    asked: Sequence[Asked],
    *,
    declared: int,
    lines: int,
) -> dict[str, int]:
    """How much the family holds, and how its questions are spread."""
    subjects = {key.subject.subject: key.subject for key in keys}
    forms = Counter(item.form for item in asked)
    kinds = Counter(item.kind for item in asked)
    return {
        "careers_subjects": len(subjects),
        "careers_people": sum(s.kind == "person" for s in subjects.values()),
        "careers_declared": declared,
        "careers_attributes": len({key.role.attribute for key in keys}),
        "careers_keys": len(keys),
        "careers_values": sum(len(key.held) for key in keys),
        "careers_episodes": len(written),
        "careers_lines": lines,
        "careers_questions": len(asked),
        "careers_asked": 2 * len(asked),
        **{f"careers_questions_{kind}": kinds[kind] for kind in sorted(kinds)},
        **{f"careers_form_{form}": forms[form] for form in sorted(forms)},
        "careers_stale_values": sum(len(stale(item)) for item in asked),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Write the careers family's replay lines to a JSONL file and print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--size", choices=sorted(CAREER_SIZES), default="quick")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    careers = generate_careers(seed=args.seed, size=args.size)
    args.out.write_text(careers.text(), encoding="utf-8")
    json.dump(dict(careers.summary), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
