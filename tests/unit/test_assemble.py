"""Context assembly and snippets: the block's rules, pure (no database, no model)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest
from pydantic import BaseModel

from retrieval.context.assemble import Assembled, EvidenceCandidate, KeyFacts, assemble_context
from retrieval.context.block import compact_time
from retrieval.context.snippets import ELLIPSIS, mentions_value, split_sentences, trim_snippet
from retrieval.context.stale import SubjectValues, evidence_check
from store.contract.facts import Challenger
from tests.helpers import fact

E0_AT = datetime(2026, 5, 30, 8, tzinfo=UTC)
E1_AT = datetime(2026, 6, 1, 9, tzinfo=UTC)
E2_AT = datetime(2026, 6, 3, 10, tzinfo=UTC)
JUNE_2 = datetime(2026, 6, 2, 12, tzinfo=UTC)
NOW = datetime(2026, 6, 4, 12, tzinfo=UTC)

E1_TEXT = "Mira's passport renewal deadline is 2026-07-15. She booked an appointment."
E2_TEXT = "Mira corrected the deadline. It is now 2026-06-30."
E3_TEXT = "Mira prefers window seats on long flights."

OLD = "2026-07-15"
NEW = "2026-06-30"


def words(text: str) -> int:
    """A whitespace token counter."""
    return len(text.split())


def chars(text: str) -> int:
    """A character token counter."""
    return len(text)


def candidate(
    episode_id: str, at: datetime, text: str, score: float, *, source: bool = False
) -> EvidenceCandidate:
    return EvidenceCandidate(
        episode_id=episode_id, occurred_at=at, text=text, score=score, is_fact_source=source
    )


def seed_evidence() -> list[EvidenceCandidate]:
    """Similarity ranks the stale e1 above the correcting e2, as naive retrieval does."""
    return [
        candidate("e1", E1_AT, E1_TEXT, 0.91),
        candidate("e2", E2_AT, E2_TEXT, 0.74, source=True),
        candidate("e3", E1_AT, E3_TEXT, 0.30),
    ]


def current_key() -> KeyFacts:
    return KeyFacts(
        subject="mira",
        attribute="passport_deadline",
        fact=fact(NEW, source="e2", valid_from=E2_AT),
    )


def held(attribute: str, value: str, *, source: str) -> KeyFacts:
    """mira's ``attribute`` holding ``value`` since June 1, from episode ``source``."""
    return KeyFacts(
        "mira", attribute, fact(value, source=source, valid_from=E1_AT, attribute=attribute)
    )


def ever(**values: tuple[str, ...]) -> SubjectValues:
    """Every value each attribute of mira ever had (what holds comes from the keys)."""
    return SubjectValues(holding={}, ever=values)


DEADLINES = ever(passport_deadline=(OLD, NEW))


def assemble(
    keys: Sequence[KeyFacts],
    evidence: Sequence[EvidenceCandidate],
    *,
    valid_at: datetime = NOW,
    count_tokens: Callable[[str], int] = words,
    **options: Any,
) -> Assembled:
    options.setdefault("values", DEADLINES)
    options.setdefault("subject", "mira")
    options.setdefault("mode", "current" if valid_at == NOW else "point_in_time")
    result = assemble_context(
        keys=keys,
        evidence=evidence,
        valid_at=valid_at,
        known_at=NOW,
        count_tokens=count_tokens,
        **options,
    )
    assert result.tokens == count_tokens(result.block)
    return result


def _json(items: Sequence[BaseModel]) -> list[dict[str, Any]]:
    """Items as the answer's JSON carries them."""
    return [item.model_dump(mode="json") for item in items]


def evidence_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("[")]


def assert_never_unmarked(block: str, stale_value: str) -> None:
    for line in block.splitlines():
        if stale_value in line:
            assert "superseded" in line, line


# --- the seed case ---------------------------------------------------------------------------


def test_seed_case_block_marks_the_superseded_snippet() -> None:
    result = assemble([current_key()], seed_evidence())

    # Each quote is the sentence that states a value of mira's keys (else the whole text).
    assert result.block == "\n".join(
        [
            "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)",
            "Evidence:",
            "[e2] It is now 2026-06-30.",
            "[e1] superseded: Mira's passport renewal deadline is 2026-07-15.",
            "[e3] " + E3_TEXT,
        ]
    )
    assert_never_unmarked(result.block, OLD)
    assert [item.superseded for item in result.evidence] == [False, True, False]
    assert result.over_budget is False
    assert [f.value for f in result.facts] == [NEW]
    assert result.uncertain == []
    assert _json(result.citations) == [
        {"episode_id": "e2", "occurred_at": "2026-06-03T10:00:00Z", "role": "fact"},
        {"episode_id": "e1", "occurred_at": "2026-06-01T09:00:00Z", "role": "evidence"},
        {"episode_id": "e3", "occurred_at": "2026-06-01T09:00:00Z", "role": "evidence"},
    ]


def test_seed_case_drop_removes_the_stale_snippet_and_the_next_takes_its_place() -> None:
    result = assemble([current_key()], seed_evidence(), stale="drop", evidence_k=2)

    assert OLD not in result.block
    assert [item.episode_id for item in result.evidence] == ["e2", "e3"]
    assert [item.superseded for item in result.evidence] == [False, False]
    assert "e1" not in {c.episode_id for c in result.citations}


def test_a_snippet_with_both_the_current_and_a_stale_value_is_marked() -> None:
    both = "Mira moved the deadline from 2026-07-15 to 2026-06-30."
    result = assemble([current_key()], [candidate("e2", E2_AT, both, 0.9, source=True)])

    assert evidence_lines(result.block) == [f"[e2] superseded: {both}"]
    assert_never_unmarked(result.block, OLD)


def test_stale_values_match_case_insensitively_and_across_keys() -> None:
    tier = held("tier", "gold", source="e4")
    snippets = [
        candidate("e5", E1_AT, "Mira was on the SILVER tier.", 0.9),
        candidate("e1", E1_AT, E1_TEXT, 0.8),
        candidate("e6", E1_AT, "Mira is gold now.", 0.7),
    ]
    values = ever(passport_deadline=(OLD, NEW), tier=("Silver", "gold"))
    result = assemble(
        [current_key(), tier], snippets, evidence_k=5, values=values, max_superseded=5
    )

    marked = {item.episode_id: item.superseded for item in result.evidence}
    assert marked == {"e5": True, "e1": True, "e6": False}
    assert_never_unmarked(result.block, "SILVER")
    assert_never_unmarked(result.block, OLD)


# --- point in time and not known -------------------------------------------------------------


def test_point_in_time_marks_the_later_value() -> None:
    key = KeyFacts(
        subject="mira",
        attribute="passport_deadline",
        fact=fact(OLD, source="e1", valid_from=E1_AT, valid_to=E2_AT),
    )
    result = assemble([key], seed_evidence(), valid_at=JUNE_2)

    lines = result.block.splitlines()
    assert lines[0] == "mira as of 2026-06-02:"
    assert lines[1] == "passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03; source e1)"
    assert evidence_lines(result.block)[:2] == [
        "[e1] Mira's passport renewal deadline is 2026-07-15.",
        "[e2] superseded: It is now 2026-06-30.",
    ]
    assert_never_unmarked(result.block, NEW)


def test_a_key_with_no_fact_says_not_known_and_every_version_is_stale() -> None:
    key = KeyFacts(subject="mira", attribute="passport_deadline", fact=None)
    result = assemble([key], seed_evidence(), valid_at=E0_AT, max_superseded=5)

    assert result.block.splitlines()[:2] == [
        "mira as of 2026-05-30:",
        "passport_deadline: not known",
    ]
    assert result.facts == []
    assert [item.superseded for item in result.evidence] == [True, True, False]
    assert_never_unmarked(result.block, OLD)
    assert_never_unmarked(result.block, NEW)
    assert all(c.role == "evidence" for c in result.citations)


def test_an_other_version_with_the_chosen_value_is_not_stale() -> None:
    key = KeyFacts(
        subject="mira",
        attribute="passport_deadline",
        fact=fact(NEW, source="e2", valid_from=E2_AT),
    )
    result = assemble([key], seed_evidence(), values=ever(passport_deadline=(OLD, NEW, NEW)))

    assert [item.superseded for item in result.evidence] == [False, True, False]


def test_a_stale_value_inside_the_chosen_value_is_not_stale() -> None:
    values = SubjectValues(
        holding={"meeting_room": ("Room 4B",)}, ever={"meeting_room": ("4B", "Room 5", "Room 4B")}
    )
    check = evidence_check(values, routed=["meeting_room"])

    assert check.verdict("The meeting is in room 4b.") == "holds"
    assert check.verdict("Was it 4B or room 4B?") == "superseded"
    assert check.verdict("We used Room 5 before.") == "superseded"
    assert check.verdict("We used Room 50 before.") == "holds"


# --- disputed keys ---------------------------------------------------------------------------


def test_a_disputed_key_goes_under_uncertain_citing_both_sides() -> None:
    challenger = Challenger(
        conflict_id=uuid4(),
        value="2026-07-01",
        source_episode_id="e5",
        source_kind="message",
        evidence="the deadline is 2026-07-01",
        evidence_verified=True,
    )
    disputed = KeyFacts(
        subject="mira",
        attribute="passport_deadline",
        fact=fact(NEW, source="e2", valid_from=E2_AT, challengers=[challenger]),
    )
    city = held("city", "Lisbon", source="e4")
    result = assemble([disputed, city], [])

    lines = result.block.splitlines()
    assert lines[0] == "city: Lisbon (from 2026-06-01; source e4)"
    assert lines[1] == "Uncertain:"
    assert lines[2] == (
        "- passport_deadline: 2026-06-30 (source e2) vs 2026-07-01 (source e5),"
        " disputed from 2026-06-03"
    )
    assert len(lines) == 3
    assert [f.attribute for f in result.facts] == ["passport_deadline", "city"]
    [entry] = result.uncertain
    assert entry.subject == "mira"
    assert entry.attribute == "passport_deadline"
    assert entry.incumbent.value == NEW
    assert entry.incumbent.source_episode_id == "e2"
    assert [c.value for c in entry.challengers] == ["2026-07-01"]
    assert [c.source_episode_id for c in entry.challengers] == ["e5"]
    roles = {c.episode_id: c.role for c in result.citations}
    assert roles == {"e4": "fact", "e2": "fact", "e5": "challenger"}


# --- evidence order, cap and dedupe ----------------------------------------------------------


def test_fact_sources_come_first_then_by_score() -> None:
    snippets = [
        candidate("e7", E1_AT, "Seven.", 0.2),
        candidate("e8", E1_AT, "Eight.", 0.8),
        candidate("e2", E2_AT, E2_TEXT, 0.1, source=True),
        candidate("e9", E1_AT, "Nine.", 0.5),
    ]
    result = assemble([current_key()], snippets, evidence_k=4)

    assert [item.episode_id for item in result.evidence] == ["e2", "e8", "e9", "e7"]


def test_a_chosen_facts_source_counts_as_one_even_unflagged() -> None:
    snippets = [candidate("e8", E1_AT, "Eight.", 0.8), candidate("e2", E2_AT, E2_TEXT, 0.1)]
    result = assemble([current_key()], snippets)

    assert [item.episode_id for item in result.evidence] == ["e2", "e8"]


def test_fact_sources_keep_the_order_of_their_keys_whatever_their_scores() -> None:
    city = held("city", "Lisbon", source="e4")
    snippets = [
        candidate("e8", E1_AT, "Eight.", 0.9),
        candidate("e4", E1_AT, "Mira lives in Lisbon.", 0.6, source=True),
        candidate("e2", E2_AT, E2_TEXT, 0.3, source=True),
    ]
    result = assemble([current_key(), city], snippets)

    assert [(item.episode_id, item.score) for item in result.evidence] == [
        ("e2", 0.3),
        ("e4", 0.6),
        ("e8", 0.9),
    ]


def test_evidence_scores_are_rounded_to_six_places() -> None:
    result = assemble([current_key()], [candidate("e2", E2_AT, E2_TEXT, 0.123456789, source=True)])

    assert [item.score for item in result.evidence] == [0.123457]


def test_evidence_k_caps_the_lines() -> None:
    snippets = [candidate(f"e{i}", E1_AT, f"Note {i}.", 1 - i / 10) for i in range(3, 9)]

    assert len(assemble([current_key()], snippets, evidence_k=2).evidence) == 2
    assert len(assemble([current_key()], snippets).evidence) == 3
    none = assemble([current_key()], snippets, evidence_k=0)
    assert none.evidence == []
    assert "Evidence:" not in none.block


def test_evidence_never_repeats_an_episode() -> None:
    snippets = [
        candidate("e2", E2_AT, E2_TEXT, 0.9, source=True),
        candidate("e2", E2_AT, "It is now 2026-06-30.", 0.95),
        candidate("e3", E1_AT, E3_TEXT, 0.5),
        candidate("e3", E1_AT, "Window seats.", 0.4),
    ]
    result = assemble([current_key()], snippets)

    assert [item.episode_id for item in result.evidence] == ["e2", "e3"]
    assert result.evidence[0].snippet == "It is now 2026-06-30."
    assert [c.episode_id for c in result.citations] == ["e2", "e3"]


def test_snippets_are_one_line() -> None:
    snippets = [candidate("e3", E1_AT, "Mira prefers\nwindow   seats.\n", 0.5)]
    result = assemble([current_key()], snippets)

    assert evidence_lines(result.block) == ["[e3] Mira prefers window seats."]


# --- token budget ----------------------------------------------------------------------------


@pytest.mark.parametrize("count_tokens", [words, chars], ids=["words", "chars"])
def test_a_tight_budget_drops_superseded_lines_first(count_tokens: Callable[[str], int]) -> None:
    full = assemble([current_key()], seed_evidence(), count_tokens=count_tokens)
    lines = full.block.splitlines()
    assert lines[3].startswith("[e1] superseded:")
    without_stale = [*lines[:3], lines[4]]
    budget = count_tokens("\n".join(without_stale))

    result = assemble(
        [current_key()], seed_evidence(), count_tokens=count_tokens, token_budget=budget
    )

    assert result.block == "\n".join(without_stale)
    assert [item.episode_id for item in result.evidence] == ["e2", "e3"]
    assert result.over_budget is False
    assert result.tokens == budget
    assert "e1" not in {c.episode_id for c in result.citations}


@pytest.mark.parametrize("count_tokens", [words, chars], ids=["words", "chars"])
def test_then_evidence_is_cut_from_the_end(count_tokens: Callable[[str], int]) -> None:
    full = assemble([current_key()], seed_evidence(), count_tokens=count_tokens)
    lines = full.block.splitlines()
    budget = count_tokens("\n".join(lines[:3]))

    result = assemble(
        [current_key()], seed_evidence(), count_tokens=count_tokens, token_budget=budget
    )

    assert [item.episode_id for item in result.evidence] == ["e2"]
    assert result.block == "\n".join(lines[:3])


@pytest.mark.parametrize("count_tokens", [words, chars], ids=["words", "chars"])
def test_no_evidence_fits_leaves_the_facts_within_budget(
    count_tokens: Callable[[str], int],
) -> None:
    facts_only = assemble([current_key()], [], count_tokens=count_tokens)

    result = assemble(
        [current_key()], seed_evidence(), count_tokens=count_tokens, token_budget=facts_only.tokens
    )

    assert result.block == facts_only.block
    assert result.evidence == []
    assert "Evidence:" not in result.block
    assert result.over_budget is False


@pytest.mark.parametrize("count_tokens", [words, chars], ids=["words", "chars"])
def test_facts_alone_over_budget_returns_all_facts(count_tokens: Callable[[str], int]) -> None:
    keys = [
        current_key(),
        KeyFacts(subject="mira", attribute="city", fact=None),
        held("tier", "gold", source="e4"),
    ]
    result = assemble(keys, seed_evidence(), count_tokens=count_tokens, token_budget=5)

    assert result.over_budget is True
    assert result.block.splitlines() == [
        "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)",
        "city: not known",
        "tier: gold (from 2026-06-01; source e4)",
    ]
    assert result.evidence == []
    assert result.tokens == count_tokens(result.block) > 5
    assert [f.attribute for f in result.facts] == ["passport_deadline", "tier"]


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="offset"):
        assemble_context(
            keys=[],
            evidence=[],
            valid_at=datetime(2026, 6, 4),  # noqa: DTZ001 - the naive time under test
            known_at=NOW,
            count_tokens=words,
        )
    with pytest.raises(ValueError, match="evidence_k"):
        assemble([], [], evidence_k=-1)


# --- snippets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   \n ", []),
        ("No terminator here", ["No terminator here"]),
        (
            "The fee is 1.5 percent. It is due 2026-06-30. Then we are done!",
            ["The fee is 1.5 percent.", "It is due 2026-06-30.", "Then we are done!"],
        ),
        (
            "Is it due? Yes. 2026-06-30 is the day.",
            ["Is it due?", "Yes.", "2026-06-30 is the day."],
        ),
        (
            "Bring documents, e.g. the old passport. Done.",
            [
                "Bring documents, e.g. the old passport.",
                "Done.",
            ],
        ),
        ("Dr. Smith signed it. J. Doe did too.", ["Dr. Smith signed it.", "J. Doe did too."]),
        ('She said "done." Then left.', ['She said "done."', "Then left."]),
        ("First line\nwraps here.\n\nNew paragraph", ["First line wraps here.", "New paragraph"]),
        ("Items:\n- passport\n- visa", ["Items:", "- passport", "- visa"]),
        ("Version 2.0.1 ships. Cost $3.50 each.", ["Version 2.0.1 ships.", "Cost $3.50 each."]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_trim_picks_the_window_with_most_overlap() -> None:
    text = (
        "Mira flew to Lisbon. She liked the food. "
        "The passport deadline moved. It is now 2026-06-30. Nothing else changed."
    )

    assert trim_snippet(text, "What is Mira's passport deadline now?") == (
        "The passport deadline moved. It is now 2026-06-30."
    )
    assert trim_snippet(text, "When is Mira's passport deadline?") == (
        "She liked the food. The passport deadline moved."
    )
    assert trim_snippet(text, "passport deadline", max_sentences=1) == (
        "The passport deadline moved."
    )


def test_trim_ties_go_to_the_earliest_window() -> None:
    text = "Alpha one. Beta two. Gamma three. Delta four."

    assert trim_snippet(text, "unrelated words") == "Alpha one. Beta two."
    assert trim_snippet(text, "beta or gamma", max_sentences=1) == "Beta two."


def test_trim_keeps_short_text_whole() -> None:
    assert (
        trim_snippet("Mira corrected\nthe deadline.", "deadline") == "Mira corrected the deadline."
    )
    assert trim_snippet("", "deadline") == ""


def test_trim_cuts_at_a_word_boundary_with_an_ellipsis() -> None:
    text = "The passport deadline is 2026-06-30 according to the consulate letter."

    trimmed = trim_snippet(text, "passport deadline", max_chars=40)

    assert trimmed == "The passport deadline is 2026-06-30" + ELLIPSIS
    assert len(trimmed) <= 40
    assert trim_snippet("Supercalifragilistic", "x", max_chars=6) == "Super" + ELLIPSIS
    with pytest.raises(ValueError, match="max_sentences"):
        trim_snippet(text, "x", max_sentences=0)


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("It is now 2026-06-30.", "2026-06-30", True),
        ("due 2026-06-30T10:00Z", "2026-06-30", True),
        ("Moved to LISBON's office", "Lisbon", True),
        ("Lisbonese food", "Lisbon", False),
        ("paid 2025 dollars", "5", False),
        ("rate 1.50 now", "1.5", False),
        ("rate 21.5 now", "1.5", False),
        ("rate 1.5.", "1.5", True),
        ("short   answers please", "short answers", True),
        ("anything", "", False),
    ],
)
def test_mentions_value(text: str, value: str, found: bool) -> None:
    assert mentions_value(text, value) is found


# --- unverified evidence and citation times --------------------------------------------------


def test_unrouted_questions_label_the_evidence_unverified() -> None:
    result = assemble([], [candidate("e3", E1_AT, E3_TEXT, 0.5)], unverified=True)

    assert result.block.splitlines() == [
        "Evidence (unverified: no attribute matched the question):",
        "[e3] " + E3_TEXT,
    ]
    assert [item.unverified for item in result.evidence] == [True]
    assert assemble([], [candidate("e3", E1_AT, E3_TEXT, 0.5)]).evidence[0].unverified is False


def test_citation_times_come_from_the_episodes_when_given() -> None:
    result = assemble([current_key()], [], episode_times={"e2": E2_AT})
    unknown = assemble([current_key()], [])

    assert _json(result.citations) == [
        {"episode_id": "e2", "occurred_at": "2026-06-03T10:00:00Z", "role": "fact"}
    ]
    assert _json(unknown.citations) == [{"episode_id": "e2", "occurred_at": None, "role": "fact"}]


ANA = fact("Ana Rossi", source="p2", valid_from=E2_AT, attribute="president_of_italy")


# --- the block's format ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instant", "printed"),
    [
        (datetime(2026, 6, 3, tzinfo=UTC), "2026-06-03"),
        (datetime(2026, 6, 3, 10, tzinfo=UTC), "2026-06-03T10:00Z"),
        (datetime(2026, 6, 3, 10, 0, 5, tzinfo=UTC), "2026-06-03T10:00:05Z"),
        (datetime(2026, 6, 3, 0, 0, 0, 1000, tzinfo=UTC), "2026-06-03T00:00:00.001000Z"),
    ],
)
def test_instants_print_as_dates_at_midnight_and_minutes_when_seconds_are_zero(
    instant: datetime, printed: str
) -> None:
    assert compact_time(instant) == printed


@pytest.mark.parametrize(
    ("mode", "subject", "header"),
    [
        ("current", "mira", ""),
        ("point_in_time", "mira", "mira as of 2026-06-02:"),
        ("known_at", "mira", "mira as of 2026-06-02, as known on 2026-06-04:"),
        ("point_in_time", None, "As of 2026-06-02:"),
    ],
)
def test_the_header_names_the_subject_and_the_instants_only_when_a_time_was_asked(
    mode: str, subject: str | None, header: str
) -> None:
    result = assemble([], [], valid_at=JUNE_2, mode=mode, subject=subject)

    assert result.block == header


def test_no_subject_and_no_time_asked_leaves_no_header() -> None:
    result = assemble([], [candidate("e3", E1_AT, E3_TEXT, 0.5)], subject=None, unverified=True)

    assert result.block.splitlines()[0].startswith("Evidence (unverified")


def test_a_quote_is_the_sentence_that_states_a_value_not_the_whole_episode() -> None:
    text = (
        "We spoke about travel plans for the summer and the kids' school. "
        "Her passport deadline is 2026-06-30. She will book the appointment next week."
    )
    result = assemble([current_key()], [candidate("e2", E2_AT, text, 1.0, source=True)])

    assert evidence_lines(result.block) == ["[e2] Her passport deadline is 2026-06-30."]


def test_a_long_sentence_is_quoted_by_the_clause_around_its_value() -> None:
    text = (
        "After a long call with the consulate, which kept us waiting for most of the afternoon"
        " and asked for three more forms, the office confirmed that the passport deadline is"
        " 2026-06-30, although the letter will arrive later, by post, with every detail again."
    )
    result = assemble([current_key()], [candidate("e2", E2_AT, text, 1.0, source=True)])

    [line] = evidence_lines(result.block)
    assert "2026-06-30" in line
    assert len(line) < len(text)
    assert line.startswith("[e2] " + ELLIPSIS)


def test_a_value_another_key_holds_now_is_not_stale_though_an_unrouted_key_once_held_it() -> None:
    """Ana was prime minister, then president: the president line is not stale."""
    president = KeyFacts("italy", "president_of_italy", ANA)
    values = SubjectValues(
        holding={"president_of_italy": ("Ana Rossi",), "prime_minister_of_italy": ("Luca",)},
        ever={
            "president_of_italy": ("Marco Neri", "Ana Rossi"),
            "prime_minister_of_italy": ("Ana Rossi", "Luca"),
        },
    )
    snippets = [
        candidate("p2", E2_AT, "Ana Rossi was sworn in as President of Italy.", 1.0, source=True),
        candidate("m1", E1_AT, "Ana Rossi became Prime Minister of Italy.", 0.9),
        candidate("m0", E0_AT, "Marco Neri became President of Italy.", 0.8),
    ]
    result = assemble([president], snippets, values=values, subject="italy")

    assert [(i.episode_id, i.superseded) for i in result.evidence] == [
        ("p2", False),
        ("m1", False),
        ("m0", True),
    ]


def test_a_routed_keys_old_value_that_only_an_unrouted_key_holds_now_is_dropped() -> None:
    """Luca was president and is prime minister now: for the president question, ambiguous."""
    president = KeyFacts("italy", "president_of_italy", ANA)
    values = SubjectValues(
        holding={"president_of_italy": ("Ana Rossi",), "prime_minister_of_italy": ("Luca",)},
        ever={
            "president_of_italy": ("Luca", "Ana Rossi"),
            "prime_minister_of_italy": ("Luca",),
        },
    )
    snippets = [
        candidate("p1", E1_AT, "Luca became President of Italy.", 0.9),
        candidate("m1", E1_AT, "Luca is now Prime Minister of Italy.", 0.8),
    ]
    result = assemble([president], snippets, values=values, subject="italy")

    assert result.evidence == []


def test_every_value_of_the_subject_is_checked_whatever_was_routed() -> None:
    """Nothing routed: a line stating a value no key holds now is still marked."""
    values = SubjectValues(
        holding={"president_of_korea": ("Kim Dae-jung",)},
        ever={"president_of_korea": ("Kim Young-sam", "Kim Dae-jung")},
    )
    snippets = [
        candidate("k1", E1_AT, "Kim Young-sam became the President of South Korea.", 0.9),
        candidate("k2", E2_AT, "Kim Dae-jung is now the President of South Korea.", 0.8),
    ]
    result = assemble([], snippets, values=values, subject="korea", unverified=True)

    assert [(i.episode_id, i.superseded) for i in result.evidence] == [
        ("k1", True),
        ("k2", False),
    ]


def test_one_superseded_line_by_default_and_the_next_line_takes_the_others_place() -> None:
    snippets = [
        candidate("e1", E1_AT, E1_TEXT, 0.91),
        candidate("e0", E0_AT, "Back in May the deadline was 2026-07-15.", 0.9),
        candidate("e3", E1_AT, E3_TEXT, 0.3),
    ]
    result = assemble([current_key()], snippets)

    assert [(i.episode_id, i.superseded) for i in result.evidence] == [
        ("e1", True),
        ("e3", False),
    ]
    with pytest.raises(ValueError, match="max_superseded"):
        assemble([current_key()], snippets, max_superseded=-1)


def test_a_line_about_another_key_only_is_left_out_when_keys_were_routed() -> None:
    values = ever(passport_deadline=(OLD, NEW), home_city=("Tallinn",))
    snippets = [
        candidate("e4", E1_AT, "New address on file: Mira lives in Tallinn now.", 0.9),
        candidate("e3", E1_AT, E3_TEXT, 0.3),
    ]
    routed = assemble([current_key()], snippets, values=values)
    unrouted = assemble([], snippets, values=values, unverified=True)

    assert [item.episode_id for item in routed.evidence] == ["e3"]
    assert [item.episode_id for item in unrouted.evidence] == ["e4", "e3"]


def test_instants_print_to_the_minute_only_where_a_day_holds_two() -> None:
    asked_that_day = datetime(2026, 6, 3, 15, tzinfo=UTC)
    result = assemble([current_key()], [], valid_at=asked_that_day)

    assert result.block.splitlines() == [
        "mira as of 2026-06-03T15:00Z:",
        "passport_deadline: 2026-06-30 (from 2026-06-03T10:00Z; source e2)",
    ]
