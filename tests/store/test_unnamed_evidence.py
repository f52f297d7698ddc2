"""Evidence for a question that names no subject is judged by the subjects its episodes are about.

No key is read without a subject, and the block's evidence is unverified; still, no line may
state a value of another period unmarked. The episodes' own subjects supply the values.
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.db.clock import ManualClock
from tests.read_helpers import read_path

CAREER = "Employer, organisation or institution the person works for"


def test_evidence_without_a_subject_marks_other_periods_values(
    pool: ConnectionPool, clock: ManualClock, embedder: Embedder
) -> None:
    reads = read_path(pool, clock, embedder)
    reads.at("2026-01-10T00:00:00Z")
    reads.declare("employer", CAREER)
    reads.record("e1", "2000-03-01T00:00:00Z", "In March 2000 the researcher joined Statoil.")
    reads.assert_value("e1", "kristin_berg", "employer", "Statoil", "2000-03-01T00:00:00Z")
    reads.record(
        "e2", "2010-05-01T00:00:00Z", "In May 2010 the researcher moved to the University of Oslo."
    )
    reads.assert_value(
        "e2", "kristin_berg", "employer", "University of Oslo", "2010-05-01T00:00:00Z"
    )

    context = reads.context("Where did the researcher work in 2005?")

    assert context.plan.subject is None
    shown = [line for line in context.block.splitlines() if line.startswith("[")]
    assert shown, context.block  # the evidence is there, unverified
    # The later employer's line is marked with the period it belongs to; 2005's is plain.
    assert "[e2] superseded (from 2010-05-01): In May 2010 the researcher" in context.block
    assert "[e1] In March 2000 the researcher joined Statoil." in shown
