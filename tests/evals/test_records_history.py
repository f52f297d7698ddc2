"""The public-records family of generated histories: its shape, its phrasings and its gold.

``test_histories`` checks every family's gold answers against a reference store and the real
one; here, what the records family must contain: places holding one to three of many roles,
successive holders since 1950 recorded out of order, and people who hold two roles in turn.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

import pytest

from evals.histories.generate import SIZES, GeneratedHistory, generate_history
from evals.histories.record_phrasings import PLACES, RECORDS

Line = dict[str, Any]
Key = tuple[str, str, str]
RECORD_SUBJECTS = frozenset(place.subject for place in PLACES)
ISO_DAY = re.compile(r"\d{4}-\d\d-\d\d")


@pytest.fixture(scope="module", params=["quick", "default"])
def history(request: pytest.FixtureRequest) -> GeneratedHistory:
    """Each size's history (seed 7)."""
    return generate_history(seed=7, size=request.param)


def _records(history: GeneratedHistory) -> tuple[list[Line], list[Line], list[Line]]:
    """The family's definitions, updates (in arrival order) and questions."""
    lines = history.lines()
    defines = [
        line
        for line in lines
        if line["op"] == "define" and line["description"].startswith("Who or what holds")
    ]
    updates = [
        line
        for line in lines
        if line["op"] == "update" and line["candidate"]["subject"] in RECORD_SUBJECTS
    ]
    questions = [line for line in lines if line["op"] == "context"]
    return defines, updates, [q for q in questions if q["gold"]["family"] == RECORDS]


def _by_key(updates: list[Line]) -> dict[Key, list[Line]]:
    found: dict[Key, list[Line]] = defaultdict(list)
    for line in updates:
        candidate = line["candidate"]
        found[line["tenant"], candidate["subject"], candidate["attribute"]].append(line)
    return found


def test_each_tenant_declares_many_roles_and_each_place_holds_one_to_three(
    history: GeneratedHistory,
) -> None:
    defines, updates, _ = _records(history)
    size = history.size
    assert size.records is not None
    per_tenant = Counter(line["tenant"] for line in defines)
    assert set(per_tenant) == {"acme", "globex"}
    if size == SIZES["default"]:
        assert all(50 <= count <= 70 for count in per_tenant.values()), per_tenant
        assert 60 <= history.summary["records_subjects"] <= 80
    for line in defines:
        assert line["value_type"] == "string"
        assert line["description"] == f"Who or what holds the role: {line['aliases'][0]}"
    held: dict[tuple[str, str], set[str]] = defaultdict(set)
    for tenant, subject, attribute in _by_key(updates):
        held[tenant, subject].add(attribute)
    assert set(Counter(len(keys) for keys in held.values())) == {1, 2, 3}
    assert len(held) == size.tenants * size.records.subjects
    # Shared places hold the same keys in both tenants, with other holders.
    keys = _by_key(updates)
    shared = {s for t, s in held if t == "acme"} & {s for t, s in held if t == "globex"}
    assert len(shared) == size.records.shared
    for subject in shared:
        assert held["acme", subject] == held["globex", subject]
        for attribute in held["acme", subject]:
            acme, globex = (
                {u["candidate"]["value"] for u in keys[tenant, subject, attribute]}
                for tenant in ("acme", "globex")
            )
            assert not acme & globex
    # The roles' names are the brief's shape: president_of_..., ceo_of_..., secretary_general...
    attributes = {line["attribute"] for line in defines}
    assert all(re.fullmatch(r"[a-z_]+_of_[a-z_]+", name) for name in attributes)


def test_holders_succeed_each_other_since_1950_and_arrive_out_of_order(
    history: GeneratedHistory,
) -> None:
    _, updates, _ = _records(history)
    episodes = {(line["tenant"], line["id"]): line for line in history.lines() if "id" in line}
    overtaken = 0
    midnight = 0
    for changes in _by_key(updates).values():
        starts = [datetime.fromisoformat(u["candidate"]["valid_from"]) for u in changes]
        assert 5 <= len(changes) <= 15
        assert len(set(starts)) == len(starts)
        assert min(starts) >= datetime(1950, 1, 1, tzinfo=UTC)
        assert (max(starts) - min(starts)).days > 10 * 365  # decades, not days
        midnight += sum(start.hour == start.minute == 0 for start in starts)
        # Out of order: some change arrives after a later one of its key.
        overtaken += any(later < earlier for earlier, later in itertools.pairwise(starts))
        values = [u["candidate"]["value"] for u in changes]
        assert len(set(values)) == len(values)
        for update in changes:
            episode = episodes[update["tenant"], update["episode"]]
            assert episode["occurred_at"] == update["candidate"]["valid_from"]
            assert update["candidate"]["evidence"] == episode["text"]
            assert update["candidate"]["value"] in episode["text"]
            assert update["candidate"]["change"] in {"new", "update"}
    keys = len(_by_key(updates))
    assert overtaken >= keys / 3
    assert 0 < midnight < sum(len(c) for c in _by_key(updates).values()) / 2
    assert history.summary["records_out_of_order"] > 0


def test_no_name_is_part_of_another_at_its_place_and_one_person_may_hold_two_roles(
    history: GeneratedHistory,
) -> None:
    _, updates, _ = _records(history)
    by_place: dict[str, set[str]] = defaultdict(set)
    for line in updates:
        by_place[line["candidate"]["subject"]].add(line["candidate"]["value"])
    for names in by_place.values():
        for name in names:
            assert not [other for other in names if other != name and name in other]
    # Someone leaves one role of a place and later takes another role of the same place.
    keys = _by_key(updates)
    turns = []
    for (tenant, subject, attribute), changes in keys.items():
        ordered = sorted(changes, key=lambda u: u["candidate"]["valid_from"])
        left = {
            before["candidate"]["value"]: after["candidate"]["valid_from"]
            for before, after in itertools.pairwise(ordered)
        }
        for (t, s, other), rest in keys.items():
            if (t, s) != (tenant, subject) or other == attribute:
                continue
            turns += [
                (subject, attribute, other)
                for u in rest
                if u["candidate"]["value"] in left
                and u["candidate"]["valid_from"] > left[u["candidate"]["value"]]
            ]
    assert turns
    assert history.summary["records_same_person"] >= 1


def test_questions_name_the_place_in_words_in_mixed_phrasings(history: GeneratedHistory) -> None:
    _, _, questions = _records(history)
    size = history.size
    assert size.records is not None
    kinds = Counter(q["gold"]["kind"] for q in questions)
    per = size.records
    assert kinds == {
        "current": size.tenants * per.current,
        "point_in_time": size.tenants * per.point_in_time,
        "known_at": size.tenants * per.known_at,
    }
    for question in questions:
        text, subject = question["question"], question["subject"]
        assert subject in RECORD_SUBJECTS
        assert subject.replace("_", " ") in text.casefold()
        assert not ISO_DAY.search(text)  # dates in words
    multi_word = [q for q in questions if "_" in q["subject"]]
    assert multi_word
    [place] = [p for p in PLACES if p.subject == multi_word[0]["subject"]]
    assert place.name in multi_word[0]["question"]  # "South Korea", as written
    texts = [q["question"] for q in questions]
    assert any(t.startswith("The name of the current ") and t.endswith(" is") for t in texts)
    assert any(t.startswith("Who is the ") and t.endswith("?") for t in texts)
    assert any(re.fullmatch(r"As of [^:]+: The .+ is", t) for t in texts)
    assert any(t.startswith(("What did we believe on", "As we understood it on")) for t in texts)
    # Mixed with the other family, not after it.
    families = [q["gold"]["family"] for q in history.questions()]
    assert families != sorted(families)
    assert families != sorted(families, reverse=True)


def test_some_questions_ask_before_the_first_holder_or_before_the_archive_told(
    history: GeneratedHistory,
) -> None:
    _, updates, questions = _records(history)
    first = {
        key: min(u["candidate"]["valid_from"] for u in changes)
        for key, changes in _by_key(updates).items()
    }
    before_first = [
        q
        for q in questions
        if q["gold"]["kind"] == "point_in_time"
        and q["valid_at"] < first[q["tenant"], q["subject"], q["gold"]["attribute"]]
    ]
    assert before_first
    assert all(q["gold"]["answer"] == "not known" for q in before_first)
    assert all(q["valid_at"] >= "1950-01-01" for q in questions)
    assert all(q["gold"]["answer"] != "uncertain" for q in questions)  # no disputes here
    # Known-at: what the archive had told by then, not yet the latest holder.
    latest = {
        key: max(changes, key=lambda u: u["candidate"]["valid_from"])["candidate"]["value"]
        for key, changes in _by_key(updates).items()
    }
    differs = [
        q
        for q in questions
        if q["gold"]["kind"] == "known_at"
        and q["gold"]["answer"] != latest[q["tenant"], q["subject"], q["gold"]["attribute"]]
    ]
    assert differs
