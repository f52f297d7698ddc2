"""Evidence judged sentence by sentence: folded value matching, other periods' sentences, time
marks for what the store never learned, and a challenger's wording. Pure (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from retrieval.context.assemble import Assembled, EvidenceCandidate, KeyFacts, assemble_context
from retrieval.context.folding import content_tokens, fold, value_needle
from retrieval.context.marks import LINE_MARKS, is_marked
from retrieval.context.stale import SubjectValues, Window, evidence_check
from tests.helpers import fact

NOW = datetime(2026, 6, 10, tzinfo=UTC)


def at(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def evidence_lines(result: Assembled) -> list[str]:
    return [line for line in result.block.splitlines() if line.startswith("[")]


# --- folding -------------------------------------------------------------------------------


def test_folding_maps_every_span_back_to_the_text_as_written() -> None:
    text = "She studied at the  Université d\u2019Oslo , Blindern."
    folded = fold(text)

    assert folded.text == "she studied at the universite d'oslo, blindern."
    start = folded.text.index("universite")
    end = folded.text.index("blindern") + len("blindern")
    assert text[slice(*folded.span(start, end))] == "Université d\u2019Oslo , Blindern"


@pytest.mark.parametrize(
    ("value", "needle", "tokens"),
    [
        ("The Hague", "hague", ("hague",)),
        ("A", "a", ()),  # an article alone is kept
        (
            "University of Oslo, Blindern",
            "university of oslo, blindern",
            ("university", "oslo", "blindern"),
        ),
        ("Kristin M. Berg", "kristin m. berg", ("kristin", "berg")),
        ("Room 5", "room 5", ("room",)),
    ],
)
def test_a_values_needle_and_distinctive_words(
    value: str, needle: str, tokens: tuple[str, ...]
) -> None:
    assert value_needle(value) == needle
    assert content_tokens(needle) == tokens


OSLO = "University of Oslo, Blindern"


@pytest.mark.parametrize(
    ("sentence", "variant"),
    [
        ("She joined the UNIVERSITY OF OSLO, BLINDERN.", "case"),
        ("She joined University of Oslo , Blindern.", "spacing before punctuation"),
        ("She joined University  of\tOslo,   Blindern.", "runs of whitespace"),
        ("She joined Univérsity of Ösló, Blindern.", "diacritics"),
        ("She joined the Blindern campus of the University of Oslo.", "distinctive words"),
    ],
)
def test_a_stale_value_written_another_way_is_still_superseded(sentence: str, variant: str) -> None:
    values = SubjectValues(holding={"employer": ("Statoil",)}, ever={"employer": (OSLO, "Statoil")})
    check = evidence_check(values, routed=["employer"])

    assert check.verdict(sentence) == "superseded", variant


@pytest.mark.parametrize(
    ("sentence", "value"),
    [
        ("The Beatles played in Hamburg.", "Beatles"),  # an article before the value
        ("They moved to Hague last year.", "The Hague"),  # the stored value's article left out
        ("Ålesund is her home now.", "Alesund"),
        ("Kristin Berg chairs the board.", "Kristin M. Berg"),  # an initial left out
    ],
)
def test_a_value_written_another_way_is_stated(sentence: str, value: str) -> None:
    values = SubjectValues(holding={"x": ("Other",)}, ever={"x": (value, "Other")})

    assert evidence_check(values, routed=["x"]).verdict(sentence) == "superseded"


@pytest.mark.parametrize(
    ("holding", "stale", "sentence"),
    [
        # A stale value inside the answer's mention, the answer written out.
        (OSLO, "University of Oslo", "She works at the University of Oslo , Blindern."),
        ("Kim Dae-jung", "Kim", "KIM DAE-JUNG is president."),
        # A longer stale value that contains the answer: the answer's words are its own.
        ("University of Oslo", OSLO, "She is at the University of Oslo; the Blindern office shut."),
        # Words of another value written out do not make a third.
        ("Ana Ferri", "Ana Rossi", "Ana Ferri met Luca Rossi."),
    ],
)
def test_matching_never_marks_the_answer_itself(holding: str, stale: str, sentence: str) -> None:
    values = SubjectValues(holding={"x": (holding,)}, ever={"x": (stale, holding)})

    assert evidence_check(values, routed=["x"]).verdict(sentence) == "holds"


def test_a_value_found_by_its_words_covers_no_value_written_out() -> None:
    """The safe side: the answer's words may frame a stale value, which is then marked."""
    values = SubjectValues(holding={"x": (OSLO,)}, ever={"x": ("University of Oslo", OSLO)})
    check = evidence_check(values, routed=["x"])

    assert check.states_routed_holding("The Blindern campus of the University of Oslo.")
    assert check.verdict("The Blindern campus of the University of Oslo.") == "superseded"
    assert check.verdict("Ana and Rossi took office.") == "holds"  # no value of x


def test_a_value_written_out_beside_its_own_words_is_judged_as_written() -> None:
    values = SubjectValues(holding={"room": ("Room 4B",)}, ever={"room": ("4B", "Room 4B")})

    assert evidence_check(values, routed=["room"]).verdict("Was it 4B or room 4B?") == (
        "superseded"
    )


# --- paragraphs naming several periods -----------------------------------------------------

CAREER = (
    "In 2009 she joined Statoil as an analyst. "
    "In March 2014 she became head of research at DNB. "
    "In May 2016 she moved to the Norges Bank. "
    "She lives in Bergen."
)
PERIODS: dict[str, tuple[Window, ...]] = {
    "Statoil": ((at(2009), at(2014, 3)),),
    "DNB": ((at(2014, 3), at(2016, 5)),),
    "Norges Bank": ((at(2016, 5), None),),
}


def career(valid_at: datetime, holder: str, *, source: str = "c1") -> Assembled:
    """The employer question about ``valid_at``, asked of one paragraph and its key."""
    (window,) = PERIODS[holder]
    key = KeyFacts(
        "ida",
        "employer",
        fact(holder, source=source, valid_from=window[0], valid_to=window[1], attribute="employer"),
    )
    values = SubjectValues(holding={}, ever={"employer": tuple(PERIODS)}, periods=PERIODS)
    return assemble_context(
        keys=[key],
        evidence=[
            EvidenceCandidate("c1", at(2020), CAREER, 0.9, is_fact_source=source == "c1"),
            EvidenceCandidate("c2", at(2021), "Back in 2009 Statoil hired her.", 0.8),
        ],
        valid_at=valid_at,
        known_at=NOW,
        count_tokens=words,
        subject="ida",
        mode="point_in_time",
        now=NOW,
        values=values,
        question="Where did Ida work?",
    )


def test_a_career_paragraph_is_quoted_by_the_sentence_of_the_asked_period() -> None:
    result = career(at(2015, 6), "DNB")

    assert evidence_lines(result) == [
        "[c1] In March 2014 she became head of research at DNB.",
        "[c2] superseded (from 2009-01-01 until 2014-03-01): Back in 2009 Statoil hired her.",
    ]


@pytest.mark.parametrize(
    ("valid_at", "holder", "answer"),
    [
        (at(2010), "Statoil", "In 2009 she joined Statoil as an analyst."),
        (at(2020), "Norges Bank", "In May 2016 she moved to the Norges Bank."),
    ],
)
def test_no_sentence_of_another_period_is_shown_unmarked(
    valid_at: datetime, holder: str, answer: str
) -> None:
    result = career(valid_at, holder)

    assert evidence_lines(result)[0] == f"[c1] {answer}"
    for line in evidence_lines(result):
        for other in set(PERIODS) - {holder}:
            if other in line:
                assert line.split("] ", 1)[1].startswith("superseded ("), line


def test_a_line_whose_only_value_is_of_another_period_carries_that_period() -> None:
    text = "Ida was at DNB then. It was a busy year."
    key = KeyFacts(
        "ida",
        "employer",
        fact("Norges Bank", source="n1", valid_from=at(2016, 5), attribute="employer"),
    )
    result = assemble_context(
        keys=[key],
        evidence=[EvidenceCandidate("e5", at(2015), text, 0.9)],
        valid_at=NOW,
        known_at=NOW,
        count_tokens=words,
        values=SubjectValues(holding={}, ever={"employer": tuple(PERIODS)}, periods=PERIODS),
    )

    assert evidence_lines(result) == [
        "[e5] superseded (from 2014-03-01 until 2016-05-01): Ida was at DNB then."
    ]
    assert [item.mark for item in result.evidence] == [
        "superseded (from 2014-03-01 until 2016-05-01)"
    ]


# --- evidence the store never learned ------------------------------------------------------

SHOWN_SINCE = at(2026, 6, 3)


def deadline(*candidates: EvidenceCandidate) -> Assembled:
    key = KeyFacts(
        "mira", "passport_deadline", fact("2026-06-30", source="e2", valid_from=SHOWN_SINCE)
    )
    return assemble_context(
        keys=[key],
        evidence=[
            EvidenceCandidate("e2", SHOWN_SINCE, "It is now 2026-06-30.", 0.5, is_fact_source=True),
            *candidates,
        ],
        valid_at=NOW,
        known_at=NOW,
        count_tokens=words,
        subject="mira",
        values=SubjectValues(holding={}, ever={"passport_deadline": ("2026-06-30",)}),
        evidence_k=5,
    )


ABOUT = frozenset({"passport_deadline"})


def test_an_episode_about_the_key_from_before_its_value_is_older_than_it() -> None:
    result = deadline(
        EvidenceCandidate("e1", at(2026, 5, 20), "The deadline is July 15.", 0.9, about=ABOUT)
    )

    assert evidence_lines(result) == [
        "[e2] It is now 2026-06-30.",
        "[e1] older than the value since 2026-06-03: The deadline is July 15.",
    ]
    assert result.uncertain == []


def test_an_episode_about_the_key_from_after_its_value_is_newer_and_the_key_uncertain() -> None:
    result = deadline(
        EvidenceCandidate("e7", at(2026, 6, 8), "The deadline moved to August 2.", 0.9, about=ABOUT)
    )

    # The key's own source is no firmer than the key: it says "uncertain", not plain support.
    assert result.block.splitlines() == [
        "Uncertain:",
        "- passport_deadline: 2026-06-30 (source e2); newer evidence e7 may change it",
        "Evidence:",
        "[e2] uncertain: It is now 2026-06-30.",
        "[e7] newer than memory: The deadline moved to August 2.",
    ]
    [entry] = result.uncertain
    assert (entry.attribute, entry.newer_evidence, entry.challengers) == (
        "passport_deadline",
        ["e7"],
        [],
    )
    assert entry.model_dump(mode="json")["newer_evidence"] == ["e7"]
    assert {c.episode_id: c.role for c in result.citations} == {"e2": "fact", "e7": "evidence"}


def test_the_facts_own_source_and_episodes_stating_the_value_are_never_time_marked() -> None:
    result = deadline(
        EvidenceCandidate("e8", at(2026, 6, 9), "Still 2026-06-30, she said.", 0.9, about=ABOUT),
        EvidenceCandidate("e9", at(2026, 5, 1), "Mira likes trains.", 0.8),  # about nothing
    )

    assert evidence_lines(result) == [
        "[e2] It is now 2026-06-30.",
        "[e8] Still 2026-06-30, she said.",
        "[e9] Mira likes trains.",
    ]
    assert result.uncertain == []
    assert [item.mark for item in result.evidence] == [None, None, None]


@pytest.mark.parametrize(
    "text",
    [
        "Mira prefers concise answers.",  # only the subject's own name is capitalised
        "Mira will be on holiday soon.",
        "The MIRA account is in good standing.",  # the subject's id written in capitals
        "Mira has been a client since 2011.",  # a bare year
        "In March she was on holiday.",  # a month
    ],
)
def test_a_newer_episode_that_could_state_no_value_puts_nothing_in_doubt(text: str) -> None:
    result = deadline(EvidenceCandidate("e7", at(2026, 6, 8), text, 0.9, about=ABOUT))

    assert result.uncertain == []
    assert evidence_lines(result) == ["[e2] It is now 2026-06-30.", f"[e7] {text}"]


@pytest.mark.parametrize(
    "text",
    [
        "The deadline moved to August 2.",  # a word of the attribute's name, and a number
        "She has to renew at the Oslo office first.",  # a capitalised word past the first
        "Her passport was stolen.",
    ],
)
def test_a_newer_episode_that_could_state_a_value_puts_the_key_in_doubt(text: str) -> None:
    result = deadline(EvidenceCandidate("e7", at(2026, 6, 8), text, 0.9, about=ABOUT))

    assert [entry.newer_evidence for entry in result.uncertain] == [["e7"]]
    assert f"[e7] newer than memory: {text}" in evidence_lines(result)
    assert "[e2] uncertain: It is now 2026-06-30." in evidence_lines(result)


def test_a_newer_sentence_stating_what_the_store_holds_for_another_key_is_explained() -> None:
    key = KeyFacts(
        "mira", "passport_deadline", fact("2026-06-30", source="e2", valid_from=SHOWN_SINCE)
    )
    text = "From 22 May 2026, Mira pays for 580 seats. Mira prefers concise answers."
    result = assemble_context(
        keys=[key],
        evidence=[
            EvidenceCandidate("e2", SHOWN_SINCE, "It is now 2026-06-30.", 0.5, is_fact_source=True),
            EvidenceCandidate("e7", at(2026, 6, 8), text, 0.9, about=ABOUT),
        ],
        valid_at=NOW,
        known_at=NOW,
        count_tokens=words,
        subject="mira",
        values=SubjectValues(
            holding={"seats": ("580",)},
            ever={"passport_deadline": ("2026-06-30",), "seats": ("580",)},
        ),
        evidence_k=5,
    )

    assert result.uncertain == []
    assert not any("newer than memory" in line for line in evidence_lines(result))


# --- a challenger's wording ----------------------------------------------------------------


def test_a_refused_challenger_is_in_conflict_not_superseded() -> None:
    key = KeyFacts(
        "mira",
        "home_city",
        fact("Oslo", source="s1", valid_from=at(2026, 5), attribute="home_city"),
    )
    values = SubjectValues(
        holding={"home_city": ("Oslo",)},
        ever={"home_city": ("Oslo", "Trondheim")},
        refused={"home_city": ("Trondheim",)},
    )
    result = assemble_context(
        keys=[key],
        evidence=[EvidenceCandidate("s4", at(2026, 5), "Mira said she lives in Trondheim.", 0.9)],
        valid_at=NOW,
        known_at=NOW,
        count_tokens=words,
        values=values,
    )

    assert evidence_lines(result) == ["[s4] in conflict: Mira said she lives in Trondheim."]
    assert [(item.superseded, item.mark) for item in result.evidence] == [(True, "in conflict")]
    assert all(is_marked(line) for line in evidence_lines(result))
    assert {mark for line in evidence_lines(result) for mark in LINE_MARKS if mark in line} == {
        "in conflict"
    }
