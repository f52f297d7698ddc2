"""Whether a leaked line states its stale value or mentions it in passing
(``evals.leakage.passing``).

The function's cues were chosen on the customers family's sentence tables
(``evals.histories.phrasings``: distractors are mentions in passing; changes, corrections and dated
changes are statements). The cases below it was not designed around: sentences written apart
from those tables, and lines the seed-7 quick run's baselines and noisy arm leaked on the
records and careers families (each a statement of a holder or a period). The agreement on them
is what the report's accounting can be trusted to; the misses are kept as cases, not fixed away.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from evals.histories.phrasings import ATTRIBUTES
from evals.leakage.passing import IN_PASSING, STATING, mention_kind

pytestmark = pytest.mark.unit

# Written apart from the phrasing tables: (line, stale value, how a reader takes it).
WRITTEN = [
    ("Lena laughed about the days of 280 seats.", "280", IN_PASSING),
    ("Back in the day, Omar's team squeezed into 120 seats.", "120", IN_PASSING),
    ("Omar keeps a photo from Porto on the desk.", "Porto", IN_PASSING),
    ("Mira's sister still lives in Porto.", "Porto", IN_PASSING),
    ("An archived contract with Mira lists the starter plan.", "starter", IN_PASSING),
    ("Mira told the story of the year she was on the free plan.", "free", IN_PASSING),
    ("Mira recalled paying for 310 seats before the merger.", "310", IN_PASSING),
    ("Mira flew over Oslo on the way home.", "Oslo", IN_PASSING),
    ("[e00031] Mira reminisced about the premium tier.", "premium", IN_PASSING),
    ("Nobody misses the basic plan, Mira said.", "basic", IN_PASSING),
    ("Mira used to pay for 200 seats.", "200", IN_PASSING),
    ("Mira wondered whether 450 seats would have been cheaper.", "450", IN_PASSING),
    ("Mira once lived in Porto, a long time ago.", "Porto", IN_PASSING),
    ("Mira's account is on the enterprise plan.", "enterprise", STATING),
    ("Billing confirmed that Mira pays for 340 seats.", "340", STATING),
    ("Mira lives in Porto.", "Porto", STATING),
    ("Mira's new home is in Lyon.", "Lyon", STATING),
    ("Mira upgraded to the business plan last week.", "business", STATING),
    ("Mira's team grew to 420 seats.", "420", STATING),
    ("Mira is based in Oslo these days.", "Oslo", STATING),
    ("Mira downgraded to the starter plan.", "starter", STATING),
    ("Seats on Mira's account: 275.", "275", STATING),
    ("Mira compared the pro plan with what she has today.", "pro", STATING),
    ("plan: pro (from 2025-03-02; source u7)", "pro", STATING),
]

# Lines the seed-7 quick run leaked on (records, careers; 24 of 168 drawn at random), each
# stating a holder or a period.
LEAKED: list[tuple[str, list[str]]] = [
    (line, values)
    for line, values in json.loads((Path(__file__).parent / "leaked_lines_seed7.json").read_text())
]

# Misses on first run (every one a mention in passing taken as a statement, the safe side: the
# report's count of verdicts resting on mentions in passing is a lower bound).
MISSED = [
    "Lena laughed about the days of 280 seats.",
    "Back in the day, Omar's team squeezed into 120 seats.",
    "Omar keeps a photo from Porto on the desk.",
    "Mira's sister still lives in Porto.",
    "An archived contract with Mira lists the starter plan.",
    "Mira told the story of the year she was on the free plan.",
    "Mira flew over Oslo on the way home.",
]

HELD_OUT = WRITTEN + [(line, values[0], STATING) for line, values in LEAKED]


def _agreement(cases: Sequence[tuple[str, str, str]]) -> tuple[int, list[str]]:
    misses = [line for line, value, kind in cases if mention_kind(line, [value]) != kind]
    return len(cases) - len(misses), misses


def test_held_out_lines_are_classified_as_a_reader_takes_them() -> None:
    agreed, misses = _agreement(HELD_OUT)
    # Measured on first run, before any change: see MISSED below for the ones it gets wrong.
    assert agreed >= len(HELD_OUT) - len(MISSED), misses
    assert set(misses) <= set(MISSED), misses


def test_no_held_out_statement_is_taken_for_a_mention_in_passing() -> None:
    statements = [(line, value, kind) for line, value, kind in HELD_OUT if kind == STATING]
    assert _agreement(statements) == (len(statements), [])


def test_every_line_leaked_by_the_quick_run_on_records_and_careers_is_a_statement() -> None:
    for line, values in LEAKED:
        assert mention_kind(line, values) == STATING, line


def test_the_design_tables_distractors_are_in_passing_and_changes_statements() -> None:
    distractors = [t for spec in ATTRIBUTES for t in spec.distractors]
    statements = [t for spec in ATTRIBUTES for t in (*spec.changes, *spec.corrections, *spec.dated)]
    fill = {"name": "Lena Berg", "value": "Valencia", "date": "3 March 2025"}
    passing = [mention_kind("[e12] " + t.format(**fill), ["Valencia"]) for t in distractors]
    stated = [mention_kind("[e12] " + t.format(**fill), ["Valencia"]) for t in statements]
    assert stated == [STATING] * len(statements)
    # Two distractors carry no cue the function reads ("is changing trains in ...", "said the
    # ... plan had confused everyone"): they count as statements, the scorer's own reading.
    assert passing.count(STATING) == 2


def test_only_the_sentence_holding_the_value_is_read() -> None:
    line = "[e4] Lena now pays for 300 seats. She remembered when the account had only 280 seats."
    assert mention_kind(line, ["280"]) == IN_PASSING
    assert mention_kind(line, ["300"]) == STATING
    assert mention_kind(line, ["280", "300"]) == STATING  # one sentence states a value


def test_a_key_line_and_a_line_without_the_value_are_statements() -> None:
    assert mention_kind("seat_count: 280 (from 2025-01-01; source e4)", ["280"]) == STATING
    assert mention_kind("Lena remembered the old office.", ["280"]) == STATING
