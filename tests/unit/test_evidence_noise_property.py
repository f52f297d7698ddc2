"""Property: a block's evidence never presents another period's statement as current, whatever
the extraction missed or got wrong and however the text writes the values.

A subject's keys each had three values, one per period (the truth). The store learned them
through noisy extraction: some versions missed, some stored with a wrong value. Episodes are
the versions' own sources (one sentence each) and paragraphs mixing sentences of any periods,
each value written in a random variant (case, an article, diacritics, spacing before a comma).
Every key is asked; an episode is about the keys whose values it states.

The check is written from the truth, not from ``retrieval.context.stale``: every line shown without
a mark states, of the subject's true values, only those holding at the asked time, the values the
block's own key lines show (a missed or wrong extraction may cost an answer), or is the shown fact's
own source (quoted as the store's source, whatever it learned from it).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.context.assemble import EvidenceCandidate, KeyFacts, assemble_context
from retrieval.context.stale import SubjectValues
from tests.helpers import fact

NOW = datetime(2030, 1, 1, tzinfo=UTC)
VALUES = {
    "employer": ("Statoil", "University of Oslo, Blindern", "Norges Bank"),
    "home_city": ("Ålesund", "Bergen", "Tromsø"),
}
STARTS = {"employer": (2000, 2005, 2010), "home_city": (2002, 2007, 2012)}
WRONG = "Zorg Holdings"  # a wrong extraction: a value no episode states
FILLER = ("She likes long walks.", "Nothing else changed that year.", "The weather was mild.")


def year(value: int) -> datetime:
    return datetime(value, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Version:
    attribute: str
    value: str
    start: int
    end: int | None

    def holds(self, at: int) -> bool:
        return self.start <= at and (self.end is None or at < self.end)


def truth() -> list[Version]:
    versions = []
    for attribute, values in VALUES.items():
        starts = STARTS[attribute]
        for index, value in enumerate(values):
            end = starts[index + 1] if index + 1 < len(starts) else None
            versions.append(Version(attribute, value, starts[index], end))
    return versions


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return re.sub(r"\s+([,.;:])", r"\1", " ".join(plain.split()))


def states(line: str, value: str) -> bool:
    """Whether ``line`` writes ``value`` (folded alike, as whole words)."""
    pattern = r"(?<!\w)" + re.escape(_fold(value)) + r"(?!\w)"
    return re.search(pattern, _fold(line)) is not None


variants = st.sampled_from(("as is", "upper", "article", "accent", "spaced"))


def written(value: str, variant: str) -> str:
    if variant == "upper":
        return value.upper()
    if variant == "article":
        return "the " + value
    if variant == "accent":
        return value.replace("e", "é", 1)
    if variant == "spaced":
        return value.replace(",", " ,")
    return value


@st.composite
def readings(draw: st.DrawFn) -> tuple[list[Version], list[EvidenceCandidate], int]:
    """The store's versions after noisy extraction, the episodes, and the asked year."""
    versions = truth()
    learned: list[Version] = []
    sources: list[EvidenceCandidate] = []
    for index, version in enumerate(versions):
        noise = draw(st.sampled_from(("exact", "exact", "missed", "wrong")))
        episode_id = f"s{index}"
        sentence = f"In {version.start} it was {written(version.value, draw(variants))}."
        sources.append(EvidenceCandidate(episode_id, year(version.start), sentence, 0.5))
        if noise == "missed":
            continue
        value = WRONG if noise == "wrong" else version.value
        learned.append(Version(version.attribute, value, version.start, 0))
    store = _windows(learned)
    paragraphs = []
    for index in range(draw(st.integers(0, 4))):
        chosen = draw(st.lists(st.sampled_from(versions), max_size=4))
        sentences = [f"By {v.start} it was {written(v.value, draw(variants))}." for v in chosen]
        sentences += draw(st.lists(st.sampled_from(FILLER), max_size=2))
        order = draw(st.permutations(sentences))
        paragraphs.append(
            EvidenceCandidate(
                f"p{index}",
                year(draw(st.integers(1998, 2016))),
                " ".join(order) or "Nothing.",
                draw(st.floats(0, 1)),
                about=frozenset(v.attribute for v in chosen),
            )
        )
    evidence = [  # a version's own source is about its key; the block knows which it shows
        EvidenceCandidate(
            c.episode_id,
            c.occurred_at,
            c.text,
            c.score,
            about=frozenset({versions[int(c.episode_id[1:])].attribute}),
        )
        for c in sources
    ]
    return store, [*evidence, *paragraphs], draw(st.integers(1999, 2015))


def _windows(learned: list[Version]) -> list[Version]:
    """Each learned version valid until the next learned start of its key."""
    closed = []
    for version in learned:
        later = [
            v.start for v in learned if v.attribute == version.attribute and v.start > version.start
        ]
        closed.append(
            Version(version.attribute, version.value, version.start, min(later, default=None))
        )
    return closed


@settings(max_examples=300, deadline=None)
@given(reading=readings())
def test_no_unmarked_line_states_a_value_that_does_not_hold_at_the_asked_time(
    reading: tuple[list[Version], list[EvidenceCandidate], int],
) -> None:
    store, evidence, asked = reading
    sourced = {(v.attribute, v.start): f"s{i}" for i, v in enumerate(truth())}
    keys = []
    for attribute in VALUES:
        held = [v for v in store if v.attribute == attribute and v.holds(asked)]
        keys.append(
            KeyFacts(
                "ida",
                attribute,
                None
                if not held
                else fact(
                    held[0].value,
                    source=sourced[(attribute, held[0].start)],
                    valid_from=year(held[0].start),
                    valid_to=None if held[0].end is None else year(held[0].end),
                    attribute=attribute,
                ),
            )
        )
    periods: dict[str, list[tuple[datetime, datetime | None]]] = {}
    for v in store:
        periods.setdefault(v.value, []).append(
            (year(v.start), None if v.end is None else year(v.end))
        )
    values = SubjectValues(
        holding={},
        ever={a: tuple(v.value for v in store if v.attribute == a) for a in VALUES},
        periods={text: tuple(windows) for text, windows in periods.items()},
    )
    result = assemble_context(
        keys=keys,
        evidence=evidence,
        valid_at=datetime(asked, 6, 1, tzinfo=UTC),
        known_at=NOW,
        count_tokens=lambda text: len(text.split()),
        subject="ida",
        mode="point_in_time",
        now=NOW,
        values=values,
        evidence_k=len(evidence),
        max_superseded=len(evidence),
    )

    shown = {str(key.fact.value) for key in keys if key.fact is not None}
    own = {key.fact.source_episode_id for key in keys if key.fact is not None}
    holding = {v.value for v in truth() if v.holds(asked)}
    for item in result.evidence:
        if item.mark is not None or item.episode_id in own:
            continue
        stated = {v.value for v in truth() if states(item.snippet, v.value)}
        assert stated <= holding | shown, (asked, item.snippet, [(v.value, v.start) for v in store])
