"""Property: no evidence line presents a value the subject does not hold, whatever was routed.

Random subjects whose keys share values (a holder of one role later holds another), random
evidence sentences, and deliberately wrong routing (the right key, another key, a key the
subject never held, several, none). The check below is written from the definition (design
section 5, read path step 4), not from ``retrieval.context.stale``: on every line shown without
"superseded", every value some key of the subject ever held that no key holds at the asked
instant occurs only inside a longer value that does hold.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.context.assemble import EvidenceCandidate, KeyFacts, assemble_context
from retrieval.context.stale import SubjectValues
from tests.helpers import fact

AT = datetime(2026, 6, 1, 9, tzinfo=UTC)
NOW = datetime(2026, 6, 4, 12, tzinfo=UTC)
NAMES = ("Ana", "Ana Rossi", "Luca", "Marco Neri", "Rossi", "Kim Dae-jung", "Kim", "Lee")
ATTRIBUTES = ("president_of_x", "prime_minister_of_x", "ceo_of_x")
NEVER_HELD = "governor_of_x"


@st.composite
def subjects(draw: st.DrawFn) -> tuple[dict[str, tuple[str, ...]], dict[str, str | None]]:
    """Each key's values ever and the value it holds at the asked instant (None: not known)."""
    ever: dict[str, tuple[str, ...]] = {}
    holding: dict[str, str | None] = {}
    for attribute in draw(st.lists(st.sampled_from(ATTRIBUTES), min_size=1, unique=True)):
        values = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
        ever[attribute] = tuple(values)
        holding[attribute] = draw(st.one_of(st.none(), st.sampled_from(values)))
    return ever, holding


sentences = st.lists(st.sampled_from(NAMES), max_size=3).map(
    lambda names: " and ".join(names) + " took office." if names else "Nothing changed."
)
routings = st.one_of(
    st.just(()),
    st.lists(st.sampled_from((*ATTRIBUTES, NEVER_HELD)), min_size=1, max_size=3, unique=True),
)


def _occurrences(value: str, line: str) -> list[tuple[int, int]]:
    pattern = re.compile(r"(?<![\w-])" + re.escape(value.casefold()) + r"(?![\w-])")
    return [match.span() for match in pattern.finditer(line.casefold())]


def _presents(line: str, value: str, holding: set[str]) -> bool:
    """Whether the line states ``value`` other than as part of a longer holding value."""
    inside = [
        span for held in holding for span in _occurrences(held, line) if len(held) > len(value)
    ]
    return any(
        not any(start <= s and e <= end for start, end in inside)
        for s, e in _occurrences(value, line)
    )


@settings(max_examples=300, deadline=None)
@given(
    subject=subjects(),
    texts=st.lists(sentences, min_size=1, max_size=6),
    routed=routings,
    drop=st.booleans(),
)
def test_no_unmarked_line_states_a_value_the_subject_does_not_hold(
    subject: tuple[dict[str, tuple[str, ...]], dict[str, str | None]],
    texts: list[str],
    routed: list[str] | tuple[()],
    drop: bool,
) -> None:
    ever, holding = subject
    keys = [
        KeyFacts(
            "x",
            attribute,
            None
            if holding.get(attribute) is None
            else fact(holding[attribute], source="s", valid_from=AT, attribute=attribute),
        )
        for attribute in routed
    ]
    values = SubjectValues(
        holding={name: (value,) for name, value in holding.items() if value is not None},
        ever=ever,
    )
    evidence = [
        EvidenceCandidate(episode_id=f"e{i}", occurred_at=AT, text=text, score=1 - i / 10)
        for i, text in enumerate(texts)
    ]
    result = assemble_context(
        keys=keys,
        evidence=evidence,
        valid_at=NOW,
        known_at=NOW,
        subject="x",
        values=values,
        evidence_k=len(texts),
        count_tokens=lambda text: len(text.split()),
        stale="drop" if drop else "mark",
        unverified=not routed,
    )

    held = {value for value in holding.values() if value is not None}
    stale = {value for values_ in ever.values() for value in values_} - held
    for item in result.evidence:
        line = item.snippet
        if item.superseded:
            assert not drop
            continue
        assert not [value for value in stale if _presents(line, value, held)], line
