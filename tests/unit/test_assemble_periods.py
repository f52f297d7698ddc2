"""Context assembly of a period read: every value valid in the period, each with its window.

Pure (no database, no model): the keys and evidence a period read passes the assembler.
"""

from __future__ import annotations

from datetime import UTC, datetime

from retrieval.context.assemble import EvidenceCandidate, KeyFacts, assemble_context
from retrieval.context.stale import SubjectValues
from tests.helpers import fact

START = datetime(2004, 1, 1, tzinfo=UTC)
END = datetime(2006, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 4, 12, tzinfo=UTC)
ACME_FROM = datetime(2001, 1, 1, tzinfo=UTC)
GLOBEX_FROM = datetime(2005, 3, 1, tzinfo=UTC)
INITECH_FROM = datetime(2009, 6, 1, tzinfo=UTC)

ACME = fact("Acme", source="e1", valid_from=ACME_FROM, valid_to=GLOBEX_FROM, subject="ana",
            attribute="employer")  # fmt: skip
GLOBEX = fact("Globex", source="e2", valid_from=GLOBEX_FROM, valid_to=INITECH_FROM,
              subject="ana", attribute="employer")  # fmt: skip
EMPLOYER = KeyFacts("ana", "employer", GLOBEX, earlier=(ACME,))
VALUES = SubjectValues(
    holding={"employer": ("Acme", "Globex")},
    ever={"employer": ("Acme", "Globex", "Initech")},
    periods={
        "Acme": ((ACME_FROM, GLOBEX_FROM),),
        "Globex": ((GLOBEX_FROM, INITECH_FROM),),
        "Initech": ((INITECH_FROM, None),),
    },
)
EVIDENCE = [
    EvidenceCandidate("e3", INITECH_FROM, "Ana now works at Initech.", 0.9),
    EvidenceCandidate("e2", GLOBEX_FROM, "Ana moved to Globex.", 0.8, is_fact_source=True),
    EvidenceCandidate("e1", ACME_FROM, "Ana joined Acme.", 0.7, is_fact_source=True),
]


def test_a_period_block_shows_every_value_valid_in_it_with_its_window() -> None:
    assembled = assemble_context(
        keys=[EMPLOYER],
        evidence=EVIDENCE,
        question="Where did Ana work from 2004 to 2005?",
        subject="ana",
        mode="period",
        now=NOW,
        values=VALUES,
        valid_at=START,
        known_at=NOW,
        count_tokens=lambda text: len(text.split()),
        period=(START, END),
    )
    assert assembled.block.splitlines() == [
        "ana from 2004-01-01 to 2006-01-01:",
        "employer: Acme (from 2001-01-01 until 2005-03-01; source e1)",
        "employer: Globex (from 2005-03-01 until 2009-06-01; source e2)",
        "Evidence:",
        "[e1] Ana joined Acme.",
        "[e2] Ana moved to Globex.",
        "[e3] superseded (from 2009-06-01): Ana now works at Initech.",
    ]
    assert assembled.facts == [ACME, GLOBEX]
    assert [(c.episode_id, c.role) for c in assembled.citations] == [
        ("e1", "fact"),
        ("e2", "fact"),
        ("e3", "evidence"),
    ]
    assert [(item.episode_id, item.superseded, item.mark) for item in assembled.evidence] == [
        ("e1", False, None),
        ("e2", False, None),
        ("e3", True, "superseded (from 2009-06-01)"),
    ]


def test_a_period_header_names_open_ends_and_past_knowledge() -> None:
    known = datetime(2010, 1, 1, tzinfo=UTC)

    def block(known_at: datetime, period: tuple[datetime | None, datetime | None]) -> str:
        return assemble_context(
            keys=[KeyFacts("ana", "employer", ACME)],
            evidence=[],
            subject="ana",
            mode="period",
            now=NOW,
            valid_at=START,
            known_at=known_at,
            count_tokens=lambda text: len(text.split()),
            period=period,
        ).block

    until, since = block(NOW, (None, END)), block(known, (START, None))
    assert until.splitlines()[0] == "ana until 2006-01-01:"
    assert since.splitlines()[0] == "ana from 2004-01-01, as known on 2010-01-01:"


def test_a_period_with_no_value_valid_in_it_says_not_known() -> None:
    assembled = assemble_context(
        keys=[KeyFacts("ana", "employer", None)],
        evidence=[],
        subject="ana",
        mode="period",
        now=NOW,
        valid_at=START,
        known_at=NOW,
        count_tokens=lambda text: len(text.split()),
        period=(START, END),
    )
    assert assembled.block.splitlines() == [
        "ana from 2004-01-01 to 2006-01-01:",
        "employer: not known",
    ]
    assert (assembled.facts, assembled.citations) == ([], [])
