"""Property: a subject is found however the question writes its name, and never guessed.

Subjects are people with generated given and family names (diacritics included) and, some of
them, a middle name; about half are declared by display name, the rest known by their id's
words or by a name a candidate's evidence wrote. A question then names one of them in a form
drawn at random: the full name, in any case, its diacritics folded or kept, a middle initial
added or dropped, stray spacing and punctuation, or the family name alone. It must find exactly
that subject. A family name two subjects share must choose neither, and list both.
"""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.contract.common import fold_name
from store.contract.reads import ContextRequest
from store.db.clock import ManualClock
from tests.conftest import ts
from tests.read_helpers import ReadPath, read_path

GIVEN = ["Zoë", "Søren", "Adaeze", "Kristin", "José", "Ngozi", "Ilse", "Mateusz", "Aoife", "Björn"]
FAMILY = ["Okafor", "Berg", "Müller", "Łukasik", "Ó Briain", "Lindqvist", "Núñez", "Haddad"]
MIDDLE = ["Marie", "A.", "J", "Olu"]
_ids = itertools.count(1)


def _plain(text: str) -> str:
    """The name as ASCII text writes it: marks left out, ł as l."""
    kept = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return kept.replace("ł", "l").replace("Ł", "L")


@st.composite
def people(draw: st.DrawFn) -> list[tuple[str, str, str | None, str]]:
    """Distinct people: (given, family, middle, how the store knows the name)."""
    families = draw(st.lists(st.sampled_from(FAMILY), min_size=2, max_size=4, unique=True))
    return [
        (
            draw(st.sampled_from(GIVEN)),
            family,
            draw(st.none() | st.sampled_from(MIDDLE)),
            draw(st.sampled_from(["declared", "id", "learned"])),
        )
        for family in families
    ]


FORMS = ["full", "upper", "lower", "folded", "initial", "no_middle", "spaced", "family"]


def _written(given: str, family: str, middle: str | None, form: str) -> str:
    full = " ".join(part for part in (given, middle, family) if part)
    return {
        "full": full,
        "upper": full.upper(),
        "lower": full.lower(),
        "folded": _plain(full),
        "initial": f"{given} {(middle or 'Q')[0]}. {family}",
        "no_middle": f"{given} {family}",
        "spaced": full.replace(" ", "  "),
        "family": family,
    }[form]


@pytest.fixture(scope="module")
def reads(pool: ConnectionPool, embedder: Embedder) -> ReadPath:
    path = read_path(pool, ManualClock(ts("2026-01-10T00:00:00Z")), embedder)
    path.at("2026-01-10T00:00:00Z")
    path.declare("employer", "Employer of the person")
    return path


def _subject_id(given: str, family: str, middle: str | None, known: str, n: int) -> str:
    if known == "id":  # the id is the only name: its words must carry it
        words = [given, *([middle] if middle and len(middle.strip(".")) > 1 else []), family]
        return "_".join(fold_name(" ".join(words)).split())
    return f"person-{n}"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@for_all(
    crowd=people(),
    pick=st.integers(min_value=0, max_value=3),
    form=st.sampled_from(FORMS),
    twin=st.booleans(),
)
def test_a_subject_is_found_by_any_way_text_writes_its_name(
    reads: ReadPath, crowd: list[tuple[str, str, str | None, str]], pick: int, form: str, twin: bool
) -> None:
    tenant = f"{reads.tenant}-{next(_ids)}"
    reads.store.admin.create_tenant(tenant)
    reads.store.admin.declare_attribute(tenant, "employer", {"value_type": "string"})
    subjects = []
    for n, (given, family, middle, known) in enumerate(crowd):
        subject = _subject_id(given, family, middle, known, n)
        full = " ".join(part for part in (given, middle, family) if part)
        text = f"{full} works at Acme {n}."
        episode = f"e{n}"
        reads.store.episodes.record(
            tenant, {"id": episode, "occurred_at": "2025-01-01T00:00:00Z", "text": text}
        )
        candidate = {
            "evidence": text,
            "subject": subject,
            "attribute": "employer",
            "change": "new",
            "value": f"Acme {n}",
        }
        if known == "learned":
            candidate["subject_name"] = full
        reads.tick()
        [result] = reads.store.facts.apply_candidates(tenant, episode, [candidate])
        assert result.status == "written"
        if known == "declared":
            reads.store.subjects.declare_names(tenant, subject, {"display_name": full})
        subjects.append(subject)
    chosen = pick % len(crowd)
    given, family, middle, _ = crowd[chosen]
    if twin:  # another person of the same family name
        reads.store.subjects.declare_names(tenant, "twin", {"display_name": f"Pat {family}"})

    written = _written(given, family, middle, form)
    request = ContextRequest(
        question=f"Who employs {written}?", attributes=["employer"], evidence_k=0
    )
    plan = reads.reader.context(tenant, request).plan

    if form == "family" and twin:
        assert plan.subject is None, plan.reasons["subject"]
        assert plan.subject_candidates is not None
        assert {subjects[chosen], "twin"} <= {c.subject for c in plan.subject_candidates}
    else:
        assert plan.subject == subjects[chosen], (written, plan.reasons["subject"])
