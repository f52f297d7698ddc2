"""Scoring contexts: one answer rule for every system, stale and cross-tenant leakage, Wilson
intervals and the per-system summary (pure: the SGAM blocks come from the real assembler)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest

from evals.leakage.lines import baseline_context
from evals.leakage.scoring import (
    Gold,
    Kind,
    QuestionResult,
    answer_of,
    answer_present,
    correct,
    cross_tenant_leak,
    score_question,
    stale_leak,
    wilson,
)
from evals.leakage.summary import summarize
from retrieval.context.assemble import EvidenceCandidate, KeyFacts, assemble_context
from retrieval.context.stale import SubjectValues
from store.contract.facts import Challenger, Fact
from tests.helpers import fact

E1_AT = datetime(2026, 6, 1, 9, tzinfo=UTC)
E2_AT = datetime(2026, 6, 3, 10, tzinfo=UTC)
JUNE_2 = datetime(2026, 6, 2, 12, tzinfo=UTC)
NOW = datetime(2026, 6, 4, 12, tzinfo=UTC)

OLD = "2026-07-15"
NEW = "2026-06-30"
CHALLENGER = "2026-07-01"
E1_TEXT = "Mira's passport renewal deadline is 2026-07-15. She booked an appointment."
E2_TEXT = "Mira corrected the passport deadline. It is now 2026-06-30."
E1_QUOTE = "Mira's passport renewal deadline is 2026-07-15."
E3_TEXT = "Mira said on the phone the deadline is 2026-07-01."
KEY = {"subject": "mira", "attribute": "passport_deadline"}


def evidence(*items: tuple[str, datetime, str]) -> list[EvidenceCandidate]:
    return [
        EvidenceCandidate(episode_id=episode, occurred_at=at, text=text, score=1.0 - i / 10)
        for i, (episode, at, text) in enumerate(items)
    ]


E1 = ("e1", E1_AT, E1_TEXT)
E2 = ("e2", E2_AT, E2_TEXT)
E3 = ("e3", E2_AT, E3_TEXT)


def block(
    chosen: Fact | None,
    others: Sequence[str],
    found: list[EvidenceCandidate],
    *,
    valid_at: datetime = NOW,
) -> str:
    """SGAM's context block for mira.passport_deadline, from the real assembler."""
    key = KeyFacts("mira", "passport_deadline", chosen)
    return assemble_context(
        keys=[key],
        evidence=found,
        valid_at=valid_at,
        known_at=NOW,
        subject="mira",
        mode="current" if valid_at == NOW else "point_in_time",
        values=SubjectValues(holding={}, ever={"passport_deadline": tuple(others)}),
        count_tokens=lambda text: len(text.split()),
    ).block


def gold(
    answer: str,
    answers: Sequence[str],
    *,
    kind: Kind = "current",
    values: Sequence[str] = (OLD, NEW),
    other_tenant_values: Sequence[str] = (),
) -> Gold:
    return Gold.from_json(
        {
            "kind": kind,
            **KEY,
            "answer": answer,
            "answers": list(answers),
            "values": list(values),
            "other_tenant_values": list(other_tenant_values),
        }
    )


def test_sgam_current_block_answers_with_its_key_line_and_its_superseded_evidence_is_ignored() -> (
    None
):
    context = block(fact(NEW, source="e2", valid_from=E2_AT), [OLD], evidence(E1, E2))
    assert context.splitlines() == [
        "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)",
        "Evidence:",
        "[e2] It is now 2026-06-30.",
        f"[e1] superseded: {E1_QUOTE}",
    ]
    assert answer_of(context, **KEY, values=[OLD, NEW]) == NEW
    assert stale_leak(context, gold(NEW, [NEW])) == ([], [])


def test_superseded_lines_are_skipped_even_before_the_key_line() -> None:
    context = f"- [e1, 2026-06-01T09:00:00Z] superseded: {E1_TEXT}\n{E2_TEXT}"
    assert answer_of(context, **KEY, values=[OLD, NEW]) == NEW
    assert answer_of(f"SUPERSEDED {E1_TEXT}", **KEY, values=[OLD, NEW]) == "not known"


def test_point_in_time_block_answers_with_the_value_then_and_marks_the_later_one() -> None:
    then = fact(OLD, source="e1", valid_from=E1_AT, valid_to=E2_AT)
    context = block(then, [NEW], evidence(E2, E1), valid_at=JUNE_2)
    assert "passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03" in context
    assert "[e2] superseded: It is now 2026-06-30." in context
    expected = gold(OLD, [OLD], kind="point_in_time")
    assert answer_of(context, **KEY, values=[OLD, NEW]) == OLD
    assert stale_leak(context, expected) == ([], [])


def test_a_key_with_no_fact_answers_not_known() -> None:
    context = block(None, [OLD, NEW], evidence(E1, E2))
    assert "passport_deadline: not known" in context.splitlines()
    assert answer_of(context, **KEY, values=[OLD, NEW]) == "not known"
    expected = gold("not known", [], kind="known_at")
    assert correct("not known", expected)
    assert stale_leak(context, expected) == ([], [])


def test_not_known_counts_only_on_the_asked_keys_line() -> None:
    context = f"mira.employer: not known\nmira2.passport_deadline: not known\n{E1_TEXT}"
    assert answer_of(context, **KEY, values=[OLD, NEW]) == OLD


def test_a_disputed_key_answers_uncertain_and_its_sides_do_not_leak() -> None:
    challenger = Challenger(
        conflict_id=uuid4(),
        value=CHALLENGER,
        source_episode_id="e3",
        source_kind="message",
        evidence=CHALLENGER,
        evidence_verified=True,
    )
    disputed = fact(NEW, source="e2", valid_from=E2_AT, challengers=[challenger])
    context = block(disputed, [OLD], evidence(E1, E2, E3))
    assert context.splitlines()[:2] == [
        "Uncertain:",
        (
            "- passport_deadline: 2026-06-30 (source e2) vs 2026-07-01 (source e3),"
            " disputed from 2026-06-03"
        ),
    ]
    values = [OLD, NEW, CHALLENGER]
    expected = gold("uncertain", [NEW, CHALLENGER], values=values)
    assert answer_of(context, **KEY, values=values) == "uncertain"
    assert correct("uncertain", expected)
    assert not correct(NEW, expected)
    assert stale_leak(context, expected) == ([], [])
    # The old value on an unmarked line still leaks under "uncertain" gold.
    assert stale_leak(f"{context}\n{E1_TEXT}", expected) == ([OLD], [E1_TEXT])


def test_a_marked_line_or_an_uncertain_key_is_a_stale_mention_not_a_leak() -> None:
    context = "\n".join(
        [
            "Uncertain:",
            f"- passport_deadline: {OLD} (source e1); newer evidence e2 may change it",
            "Evidence:",
            f"[e1] uncertain: {E1_QUOTE}",
            f"[e2] newer than memory: {E2_TEXT}",
            f"[e0] older than the value since 2026-06-01: Back then it was {CHALLENGER}.",
        ]
    )
    expected = gold(NEW, [NEW], values=[OLD, NEW, CHALLENGER])
    assert stale_leak(context, expected) == ([], [])
    found, lines = stale_leak(context, expected, strict=True)
    assert (sorted(found), len(lines)) == (sorted([OLD, CHALLENGER]), 3)
    # The uncertain key answers "uncertain", not the value memory holds.
    assert answer_of(context, **KEY, values=[OLD, NEW, CHALLENGER]) == "uncertain"
    assert answer_present(context, expected)
    # The same text without the block's heading and marks leaks on both readings.
    bare = "\n".join(line.split(": ", 1)[-1] for line in context.splitlines()[1:])
    assert stale_leak(bare, expected)[0] == stale_leak(bare, expected, strict=True)[0] != []


def test_a_mark_counts_only_right_after_the_citation_and_the_section_ends_at_a_non_item() -> None:
    expected = gold(NEW, [NEW], values=[OLD, NEW])
    # "uncertain" inside the quote is no mark; a line after the section is no item.
    assert stale_leak(f"[e1] She was uncertain: {E1_QUOTE}", expected)[0] == [OLD]
    after = f"Uncertain:\n- passport_deadline: {NEW} (source e2)\n{E1_TEXT}"
    assert stale_leak(after, expected) == ([OLD], [E1_TEXT])


def test_a_baseline_answers_with_the_first_value_in_its_snippets_and_leaks_the_stale_one() -> None:
    current = gold(NEW, [NEW])
    similar = baseline_context([E1_TEXT, E2_TEXT])  # the old episode is the more similar
    assert answer_of(similar, **KEY, values=[OLD, NEW]) == OLD
    assert not correct(OLD, current)
    assert stale_leak(similar, current) == ([OLD], [E1_TEXT])
    newest_first = baseline_context([E2_TEXT, E1_TEXT])
    assert answer_of(newest_first, **KEY, values=[OLD, NEW]) == NEW
    assert stale_leak(newest_first, current) == ([OLD], [E1_TEXT])


def test_on_a_line_with_several_values_the_first_written_wins_and_whole_tokens_only() -> None:
    values = ["Porto", "Madrid", "Acme", "Acme Corp"]
    assert answer_of("Mira moved from Porto to Madrid.", **KEY, values=values) == "Porto"
    assert answer_of("Mira moved from Madrid to Porto.", **KEY, values=values) == "Madrid"
    assert answer_of("She joined acme corp.", **KEY, values=values) == "Acme Corp"
    assert answer_of("She visited Portofino.", **KEY, values=values) == "not known"


def test_a_date_value_inside_a_timestamp_is_metadata_not_a_statement() -> None:
    # The key changed on 2026-06-03, which is also one of its old values.
    values = ["2026-06-03", NEW]
    context = block(fact(NEW, source="e2", valid_from=E2_AT), ["2026-06-03"], evidence(E2))
    assert "(from 2026-06-03; source e2)" in context
    assert answer_of(context, **KEY, values=values) == NEW
    assert stale_leak(context, gold(NEW, [NEW], values=values)) == ([], [])
    assert answer_of("Renew by 2026-06-03.", **KEY, values=values) == "2026-06-03"
    # A key whose values are timestamps is matched on the timestamps themselves.
    stamps = ["2026-06-03T10:00:00Z", "2026-07-01T10:00:00Z"]
    assert answer_of("due 2026-07-01T10:00:00Z", **KEY, values=stamps) == stamps[1]


def test_leaked_lines_are_reported_as_written() -> None:
    line = f"- [e1, 2026-06-01T09:00:00Z] {E1_TEXT}"
    assert stale_leak(f"{line}\n{E2_TEXT}", gold(NEW, [NEW])) == ([OLD], [line])


def test_not_known_gold_makes_every_value_stale() -> None:
    expected = gold("not known", [], kind="point_in_time")
    assert stale_leak(E2_TEXT, expected) == ([NEW], [E2_TEXT])
    assert answer_of(E2_TEXT, **KEY, values=[OLD, NEW]) == NEW
    assert not correct(NEW, expected)


def test_another_tenants_value_leaks_on_any_line_superseded_or_not() -> None:
    expected = gold(NEW, [NEW], other_tenant_values=["2026-09-25", "2026-10-05"])
    context = f"{E2_TEXT}\n- [x9, 2026-06-01T09:00:00Z] superseded: due 2026-10-05"
    assert cross_tenant_leak(context, expected) == ["2026-10-05"]
    assert cross_tenant_leak(E2_TEXT, expected) == []
    assert cross_tenant_leak("Ticket 2026-10-055 closed.", expected) == []


def test_correct_compares_values_without_case_or_spacing() -> None:
    expected = gold("Acme Corp", ["Acme Corp"], values=["Globex", "Acme Corp"])
    assert correct("acme  corp", expected)
    assert not correct("Globex", expected)
    assert not correct("not known", expected)
    assert not correct("not known", gold("uncertain", [OLD, NEW]))


def test_gold_is_checked_when_parsed() -> None:
    good: dict[str, Any] = {
        "kind": "current",
        **KEY,
        "answer": NEW,
        "answers": [NEW],
        "values": [OLD, NEW],
        "other_tenant_values": [],
    }
    assert correct(NEW, good)
    with pytest.raises(ValueError, match="unknown question kind 'future'"):
        Gold.from_json({**good, "kind": "future"})
    with pytest.raises(ValueError, match="lists no acceptable values"):
        Gold.from_json({**good, "answer": "not known"})
    with pytest.raises(ValueError, match="lists no acceptable value"):
        Gold.from_json({**good, "answers": []})


def test_score_question_fills_the_whole_result_and_round_trips_through_json() -> None:
    expected = gold(NEW, [NEW], other_tenant_values=["2026-10-05"])
    context = baseline_context([E1_TEXT, E2_TEXT, "Omar's deadline is 2026-10-05."])
    result = score_question(
        system="dm",
        tenant="acme",
        question="When is Mira's passport deadline?",
        gold=expected,
        context=context,
        tokens=42,
        latency_ms=3.5,
    )
    assert result == QuestionResult(
        system="dm",
        tenant="acme",
        kind="current",
        subject="mira",
        attribute="passport_deadline",
        question="When is Mira's passport deadline?",
        gold_answer=NEW,
        answer=OLD,
        correct=False,
        stale_leak=True,
        leaked_values=(OLD,),
        leaked_lines=(E1_TEXT,),
        cross_tenant_leak=True,
        cross_tenant_values=("2026-10-05",),
        tokens=42,
        latency_ms=3.5,
        answer_present=True,  # E2 states NEW; the answer read first is E1's OLD all the same
        evidence_leak=True,  # a raw episode line, not a key line
        stale_mention=True,  # a baseline writes no marks: mention and leakage agree
        context=context,
        answer_line=E1_TEXT,  # the first line stating one of the key's values decided it
        leak_mentions=("stating",),
    )
    assert result.to_json()["leaked_values"] == [OLD]
    assert result.to_json()["leak_in_passing"] is False
    assert QuestionResult.from_json(result.to_json()) == result


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Wilson 95% bounds (z = 1.96) as tabulated; 81/263 is Newcombe (1998), Table I.
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
    ],
)
def test_wilson_matches_published_bounds(successes: int, n: int, low: float, high: float) -> None:
    assert wilson(successes, n) == pytest.approx((low, high), abs=5e-5)


def test_wilson_over_no_trials_is_the_whole_range_and_bad_counts_are_refused() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="0 <= successes <= n"):
        wilson(11, 10)
    with pytest.raises(ValueError, match="0 <= successes <= n"):
        wilson(-1, 10)


def row(
    system: str,
    kind: Kind,
    *,
    right: bool,
    stale: bool = False,
    cross: bool = False,
    tokens: int,
    latency_ms: float,
) -> QuestionResult:
    return QuestionResult(
        system=system,
        tenant="acme",
        kind=kind,
        subject="mira",
        attribute="passport_deadline",
        question="When is Mira's passport deadline?",
        gold_answer=NEW,
        answer=NEW if right else OLD,
        correct=right,
        stale_leak=stale,
        leaked_values=(OLD,) if stale else (),
        leaked_lines=(E1_TEXT,) if stale else (),
        cross_tenant_leak=cross,
        cross_tenant_values=("2026-10-05",) if cross else (),
        tokens=tokens,
        latency_ms=latency_ms,
        answer_present=right,
        stale_mention=stale,
    )


def test_summarize_gives_shares_intervals_and_percentiles_per_system_in_order() -> None:
    results = [
        row("dm", "current", right=False, stale=True, tokens=50, latency_ms=2.0),
        row("sgam", "current", right=True, tokens=100, latency_ms=10.0),
        row("sgam", "current", right=False, stale=True, tokens=200, latency_ms=20.0),
        row("sgam", "point_in_time", right=True, tokens=300, latency_ms=30.0),
        row("sgam", "known_at", right=True, cross=True, tokens=400, latency_ms=40.0),
    ]
    summary = summarize(results)
    assert list(summary) == ["systems"]
    assert list(summary["systems"]) == ["dm", "sgam"]
    sgam = dict(summary["systems"]["sgam"])
    # Every request named the subject: its figures are the total's.
    assert sgam.pop("subject") == {
        "given": {k: v for k, v in sgam.items() if k not in ("families", "leak_verdicts")}
    }
    assert sgam == {
        "questions": 4,
        "stale_leakage": 0.25,
        "stale_leakage_ci": pytest.approx([0.0456, 0.6994], abs=5e-5),
        "stale_mention": 0.25,
        "stale_mention_ci": pytest.approx([0.0456, 0.6994], abs=5e-5),
        "answer_present": 0.75,
        "answer_present_ci": pytest.approx([0.3006, 0.9544], abs=5e-5),
        "current_accuracy": 0.5,
        "current_accuracy_ci": pytest.approx([0.0945, 0.9055], abs=5e-5),
        "current_questions": 2,
        "point_in_time_accuracy": 1.0,
        "point_in_time_accuracy_ci": pytest.approx([0.2065, 1.0], abs=5e-5),
        "point_in_time_questions": 1,
        "known_at_accuracy": 1.0,
        "known_at_accuracy_ci": pytest.approx([0.2065, 1.0], abs=5e-5),
        "known_at_questions": 1,
        "cross_tenant_leakage": 0.25,
        "cross_tenant_leakage_ci": pytest.approx([0.0456, 0.6994], abs=5e-5),
        "context_tokens_p50": 250.0,
        "context_tokens_p95": pytest.approx(385.0),
        "latency_p50_ms": 25.0,
        "latency_p95_ms": pytest.approx(38.5),
        "families": {},  # no gold named a family
        # A line never classified (no leak_mentions) counts as a statement: the scorer's reading.
        "leak_verdicts": {"leaks": 1, "in_passing": 0, "stating": 1},
    }
    dm = summary["systems"]["dm"]
    assert (dm["questions"], dm["stale_leakage"], dm["current_accuracy"]) == (1, 1.0, 0.0)
    # No point-in-time question: no accuracy, the interval says nothing.
    assert dm["point_in_time_accuracy"] is None
    assert dm["point_in_time_accuracy_ci"] == [0.0, 1.0]
    assert dm["point_in_time_questions"] == 0
    assert (dm["context_tokens_p50"], dm["latency_p95_ms"]) == (50.0, 2.0)


def test_summarize_gives_each_family_the_totals_figures_of_its_own_questions() -> None:
    customers = [
        replace(
            row("sgam", "current", right=True, tokens=100, latency_ms=10.0), family="customers"
        ),
        replace(
            row("sgam", "known_at", right=True, tokens=300, latency_ms=30.0), family="customers"
        ),
    ]
    records = [
        replace(
            row("sgam", "current", right=False, stale=True, tokens=200, latency_ms=20.0),
            family="records",
        ),
        replace(
            row("sgam", "point_in_time", right=True, tokens=400, latency_ms=40.0), family="records"
        ),
    ]
    unlabelled = row("sgam", "current", right=True, tokens=500, latency_ms=50.0)
    summary = summarize([records[0], customers[0], unlabelled, records[1], customers[1]])
    sgam = summary["systems"]["sgam"]
    assert sgam["questions"] == 5  # the total counts the question without a family too
    assert list(sgam["families"]) == ["customers", "records"]
    for name, rows in (("customers", customers), ("records", records)):
        alone = summarize([replace(r, family=None) for r in rows])["systems"]["sgam"]
        assert sgam["families"][name] == {
            k: v for k, v in alone.items() if k not in ("families", "leak_verdicts")
        }
    assert sgam["families"]["records"]["stale_leakage"] == 0.5
    assert sgam["families"]["records"]["current_accuracy"] == 0.0
    assert sgam["families"]["customers"]["point_in_time_accuracy"] is None
    assert sgam["families"]["customers"]["point_in_time_questions"] == 0


def test_the_family_travels_from_gold_to_the_result_and_back() -> None:
    labelled = Gold.from_json({**asdict(gold(NEW, [NEW])), "family": "records"})
    assert labelled.family == "records"
    assert gold(NEW, [NEW]).family is None
    result = score_question(
        system="sgam",
        tenant="acme",
        question="When is Mira's passport deadline?",
        gold=labelled,
        context="",
        tokens=0,
        latency_ms=0.0,
    )
    assert result.family == "records"
    assert QuestionResult.from_json(result.to_json()) == result
    unlabelled = {k: v for k, v in result.to_json().items() if k != "family"}
    assert QuestionResult.from_json(unlabelled) == replace(result, family=None)


def test_summarize_of_nothing_has_no_systems() -> None:
    assert summarize([]) == {"systems": {}}


@pytest.mark.parametrize("n", [1, 3, 7, 10, 49, 600, 1000])
def test_a_wilson_interval_always_holds_its_share(n: int) -> None:
    for successes in (0, n // 3, n):
        low, high = wilson(successes, n)
        assert 0.0 <= low <= successes / n <= high <= 1.0


def test_another_keys_line_is_neither_an_answer_nor_a_leak() -> None:
    """Ana was prime minister before she became president: the prime minister line is not
    an answer to the president question, and her name on it is not stale."""
    key = {"subject": "italy", "attribute": "president_of_italy"}
    values = ["Ana Rossi", "Marco Neri"]
    context = "\n".join(
        [
            "italy:",
            "prime_minister_of_italy: Marco Neri (from 1990-05-01; source m2)",
            "president_of_italy: Ana Rossi (from 1995-05-01; source p2)",
        ]
    )
    expected = Gold.from_json(
        {
            "kind": "current",
            **key,
            "answer": "Ana Rossi",
            "answers": ["Ana Rossi"],
            "values": values,
        }
    )
    assert answer_of(context, **key, values=values) == "Ana Rossi"
    assert stale_leak(context, expected) == ([], [])
    # Unmarked evidence stating Marco still leaks: only key lines say which key they state.
    assert stale_leak(f"{context}\n- [p1] Marco Neri became president.", expected)[0] == [
        "Marco Neri"
    ]
    # A baseline's raw line that happens to start with a word and a colon is not a key line.
    assert answer_of("News: Marco Neri took office.", **key, values=values) == "Marco Neri"


def test_a_key_lines_window_and_an_evidence_citation_are_metadata() -> None:
    values = ["2026-06-03", NEW]
    context = "\n".join(
        [
            "mira as of 2026-06-03T12:00Z:",
            "passport_deadline: 2026-06-30 (from 2026-06-03 until 2026-07-01; source e2)",
            "Evidence:",
            "- [e2] It is now 2026-06-30.",
        ]
    )
    assert answer_of(context, **KEY, values=values) == NEW
    assert stale_leak(context, gold(NEW, [NEW], values=values)) == ([], [])
    assert answer_of("passport_deadline: not known", **KEY, values=values) == "not known"


def test_the_result_names_the_line_that_decided_the_answer_and_how_each_leaked_line_reads() -> None:
    seats = {
        "kind": "current",
        "subject": "lena",
        "attribute": "seat_count",
        "answer": "920",
        "answers": ["920"],
        "values": ["355", "920"],
    }
    key_line = "seat_count: 920 (from 2025-04-01; source e7)"
    passing = "[e3] Lena remembered when the account had only 355 seats."
    stating = "[e2] Lena's account now pays for 355 seats."
    context = "\n".join(["Facts:", key_line, "Evidence:", passing])
    result = score_question(
        system="sgam", tenant="acme", question="How many seats?", gold=seats,
        context=context, tokens=9, latency_ms=1.0,
    )  # fmt: skip
    assert (result.answer, result.answer_line) == ("920", key_line)
    assert (result.stale_leak, result.leaked_lines) == (True, (passing,))
    assert result.leak_mentions == ("in passing",)
    assert result.leak_in_passing  # the verdict stands, resting on a mention in passing

    both = score_question(
        system="dm", tenant="acme", question="How many seats?", gold=seats,
        context="\n".join([stating, passing]), tokens=9, latency_ms=1.0,
    )  # fmt: skip
    assert (both.answer, both.answer_line) == ("355", stating)
    assert both.leak_mentions == ("stating", "in passing")
    assert not both.leak_in_passing

    nothing = score_question(
        system="dm", tenant="acme", question="How many seats?", gold=seats,
        context="Lena joined in spring.", tokens=4, latency_ms=1.0,
    )  # fmt: skip
    assert (nothing.answer, nothing.answer_line, nothing.leak_mentions) == ("not known", None, ())
