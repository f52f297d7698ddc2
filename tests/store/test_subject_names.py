"""Subjects found by the names text writes, on the real database and model.

A question names people and organisations the way text does: a surname, an acronym, a name
with its diacritics folded, with a middle initial added or left out, a spelling like the name.
Names come from the subject's id, from a declaration (PUT /v1/subjects/{id}) and from text (a
candidate's ``subject_name``, an episode's ``subject_names``); a merge moves them and erasure
takes them. A name several subjects fit equally chooses none: the plan lists them and the block
says so under "Uncertain:".
"""

from __future__ import annotations

import json

import pytest
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from retrieval.search.embeddings import Embedder
from server.cli import app
from store.db.clock import ManualClock
from store.errors import InvalidInput
from tests.conftest import ts
from tests.read_helpers import ReadPath, read_path

CAREER = "Employer, organisation or institution the person works for"


@pytest.fixture
def reads(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    path = read_path(pool, clock, embedder)
    path.at("2026-01-10T00:00:00Z")
    path.declare("employer", CAREER)
    path.declare("headquarters", "City where the organisation has its headquarters")
    return path


def _employ(reads: ReadPath, subject: str, value: str, episode: str, text: str) -> None:
    reads.record(episode, "2020-03-01T00:00:00Z", text)
    assert reads.assert_value(
        episode, subject, "employer", value, "2020-03-01T00:00:00Z"
    ).status == ("written")


@pytest.mark.parametrize(
    ("question", "subject", "how"),
    [
        ("Who employs Okafor now?", "adaeze_okafor", "the last word of the name"),
        ("Where is the WHO headquartered?", "world_health_organization", "the initials"),
        ("Where does Kristin M. Berg work?", "kristin_berg", "a shorter form"),
        ("Where does ÅLESUND KOMMUNE have its headquarters?", "alesund_kommune", ""),
        ("Where is the World Health headquartered?", "world_health_organization", "first words"),
        ("Who employs adaeze okafor?", "adaeze_okafor", ""),
    ],
)
def test_a_subject_is_found_by_its_ids_words_written_as_text_writes_names(
    reads: ReadPath, question: str, subject: str, how: str
) -> None:
    _employ(
        reads, "adaeze_okafor", "Lagos University", "e1", "Adaeze Okafor joined Lagos University."
    )
    _employ(reads, "kristin_berg", "University of Oslo", "e2", "Kristin Berg works in Oslo.")
    reads.record("e3", "2020-03-01T00:00:00Z", "The WHO is headquartered in Geneva.")
    reads.assert_value(
        "e3", "world_health_organization", "headquarters", "Geneva", "2020-03-01T00:00:00Z"
    )
    reads.record("e4", "2020-03-01T00:00:00Z", "Alesund kommune sits in Alesund.")
    reads.assert_value("e4", "alesund_kommune", "headquarters", "Alesund", "2020-03-01T00:00:00Z")

    plan = reads.context(question).plan

    assert plan.subject == subject, plan.reasons["subject"]
    assert how in plan.reasons["subject"]
    assert plan.subject_candidates is None


def test_declared_names_find_a_subject_whose_id_says_nothing(reads: ReadPath) -> None:
    _employ(reads, "p-1042", "Lund University", "e1", "Zoë Lindqvist moved to Lund University.")
    declared = reads.store.subjects.declare_names(
        reads.tenant, "p-1042", {"display_name": "Zoë Lindqvist", "aliases": ["Z. Lindqvist"]}
    )
    assert (declared.display_name, declared.aliases) == ("Zoë Lindqvist", ["Z. Lindqvist"])

    for question in (
        "Who employs Zoe Lindqvist?",  # diacritic folded
        "Who employs Lindqvist?",  # surname only
        "Who employs Zoë Lindqvist?",
    ):
        context = reads.context(question)
        assert context.plan.subject == "p-1042", (question, context.plan.reasons["subject"])
        assert "employer: Lund University" in context.block

    # A later declaration replaces the declared names; the id's own stay.
    reads.store.subjects.declare_names(reads.tenant, "p-1042", {"aliases": ["Dr. Lindqvist"]})
    names = reads.store.subjects.names(reads.tenant, "p-1042")
    assert (names.display_name, names.aliases) == (None, ["Dr. Lindqvist"])
    plan = reads.context("Who employs Zoe Lindqvist?").plan
    assert "the last word of the name 'Dr. Lindqvist'" in plan.reasons["subject"]


def test_names_are_learned_from_the_text_that_wrote_them(reads: ReadPath) -> None:
    text = "Dr. Ngozi Adichie-Eze was appointed at the Lagos Institute."
    reads.record("e1", "2020-03-01T00:00:00Z", text)
    [written, guessed] = reads.store.facts.apply_candidates(
        reads.tenant,
        "e1",
        [
            {
                "evidence": text,
                "subject": "p7",
                "attribute": "employer",
                "change": "new",
                "value": "Lagos Institute",
                "subject_name": "Ngozi Adichie-Eze",
            },
            {
                "evidence": text,
                "subject": "p8",
                "attribute": "employer",
                "change": "new",
                "value": "Lagos Institute",
                "subject_name": "Chidi Obi",  # not in the text: not learned
            },
        ],
    )
    assert (written.status, guessed.status) == ("written", "written")
    reads.record(
        "e2",
        "2020-04-01T00:00:00Z",
        "The Ålesund Harbour Authority moved.",
        subject_names={"org-9": "Ålesund Harbour Authority"},
    )

    learned = reads.store.subjects.names(reads.tenant, "p7").learned
    assert [(name.name, name.episode_id) for name in learned] == [("Ngozi Adichie-Eze", "e1")]
    assert reads.store.subjects.names(reads.tenant, "p8").learned == []
    assert reads.store.episodes.get(reads.tenant, "e2").subjects == ["org-9"]
    assert reads.context("Who employs Ngozi Adichie-Eze?").plan.subject == "p7"
    assert reads.context("Who employs Adichie-Eze?").plan.subject == "p7"
    assert reads.context("Where is the AHA based?").plan.subject == "org-9"

    # Erasing the episode that showed a name takes the name.
    reads.store.erasure.erase_episode(reads.tenant, "e2")
    assert reads.store.subjects.names(reads.tenant, "org-9").learned == []


def test_a_name_several_subjects_fit_equally_chooses_none_and_says_so(reads: ReadPath) -> None:
    _employ(reads, "kristin_berg", "University of Oslo", "e1", "Kristin Berg works in Oslo.")
    _employ(reads, "olav_berg", "Statoil", "e2", "Olav Berg works at Statoil.")

    context = reads.context("Who employs Berg?")

    assert context.plan.subject is None
    assert "fits several subjects" in context.plan.reasons["subject"]
    assert context.plan.subject_candidates is not None
    assert {c.subject for c in context.plan.subject_candidates} == {"kristin_berg", "olav_berg"}
    assert "Uncertain:" in context.block
    assert "may name kristin_berg" in context.block
    assert "olav_berg" in context.block
    assert "employer:" not in context.block
    # The whole name settles it; so does the caller's subject.
    assert reads.context("Who employs Kristin Berg?").plan.subject == "kristin_berg"
    assert reads.context("Who employs Berg?", subject="olav_berg").plan.subject == "olav_berg"


def test_a_spelling_like_a_name_is_found_and_an_unlike_one_only_weighed(reads: ReadPath) -> None:
    _employ(reads, "aalesund", "Norway", "e1", "Aalesund is Norwegian.")

    near = reads.context("Who employs Alesund?").plan
    assert near.subject == "aalesund", near.reasons["subject"]
    assert "a spelling like" in near.reasons["subject"]

    far = reads.context("Who employs Alesbury Counsel?").plan
    assert far.subject is None
    if far.subject_candidates:  # weighed, never chosen
        assert all(c.score < 0.4 for c in far.subject_candidates)


def test_a_merge_moves_names_and_erasure_takes_them(reads: ReadPath) -> None:
    _employ(reads, "m-1", "Statoil", "e1", "Mira Solberg works at Statoil.")
    _employ(reads, "m-2", "Statoil", "e2", "Mira Solberg joined Statoil.")
    reads.store.subjects.declare_names(reads.tenant, "m-2", {"display_name": "Mira Solberg"})
    reads.store.subjects.merge(reads.tenant, "m-2", into="m-1")

    assert reads.store.subjects.names(reads.tenant, "m-1").aliases == ["Mira Solberg"]
    assert reads.context("Who employs Solberg?").plan.subject == "m-1"

    reads.store.erasure.erase_subject(reads.tenant, "m-1")
    assert reads.context("Who employs Solberg?").plan.subject is None
    assert reads.store.subjects.names(reads.tenant, "m-1").aliases == []


def test_another_tenants_names_are_never_found(
    reads: ReadPath, pool: ConnectionPool, clock: ManualClock, embedder: Embedder
) -> None:
    other = read_path(pool, clock, embedder)
    other.declare("employer", CAREER)
    other.record("e1", "2020-03-01T00:00:00Z", "Adaeze Okafor joined Lagos University.")
    other.assert_value(
        "e1", "adaeze_okafor", "employer", "Lagos University", "2020-03-01T00:00:00Z"
    )
    other.store.subjects.declare_names(other.tenant, "adaeze_okafor", {"aliases": ["Dr. Okafor"]})

    for question in (
        "Who employs Okafor?",
        "Who employs Adaeze Okafor?",
        "Who employs Adaeze Okafur?",
    ):
        plan = reads.context(question).plan
        assert plan.subject is None
        assert not plan.subject_candidates


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"display_name": "!!!"}, "display_name"),
        ({"display_name": ""}, "display_name"),
        ({"aliases": ["ok", "x" * 201]}, "aliases.1"),
        ({"aliases": "Okafor"}, "aliases"),
        ({"nickname": "Ada"}, "nickname"),
    ],
)
def test_a_bad_declaration_is_refused_naming_its_field_and_changes_nothing(
    reads: ReadPath, body: dict[str, object], field: str
) -> None:
    reads.store.subjects.declare_names(reads.tenant, "p1", {"display_name": "Ada Okafor"})
    with pytest.raises(InvalidInput) as refused:
        reads.store.subjects.declare_names(reads.tenant, "p1", body)
    assert refused.value.field == field
    assert reads.store.subjects.names(reads.tenant, "p1").display_name == "Ada Okafor"


def test_a_name_that_is_another_named_subjects_value_names_that_value(reads: ReadPath) -> None:
    reads.record("e1", "2020-03-01T00:00:00Z", "The WHO is based in Geneva.")
    reads.assert_value(
        "e1", "world_health_organization", "headquarters", "Geneva", "2020-03-01T00:00:00Z"
    )
    _employ(
        reads,
        "adaeze_okafor",
        "World Health Organization",
        "e2",
        "Adaeze Okafor joined the World Health Organization.",
    )

    # "WHO" fits its subject better than "Okafor" fits hers, but it is her employer.
    plan = reads.context("Since when has Okafor worked at the WHO?").plan
    assert plan.subject == "adaeze_okafor", plan.reasons["subject"]
    assert reads.context("Where is the WHO based?").plan.subject == "world_health_organization"


def test_sgam_subjects_name_declares_and_refuses_in_one_line(
    reads: ReadPath, conninfo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", conninfo)
    runner = CliRunner()
    command = ["subjects", "name", "p-1", "--tenant", reads.tenant, "--display-name", "Zoë Berg"]
    done = runner.invoke(app, [*command, "--alias", "Z. Berg", "--alias", "ZB"])
    assert done.exit_code == 0, done.output
    printed = json.loads(done.stdout)
    assert (printed["display_name"], printed["aliases"]) == ("Zoë Berg", ["Z. Berg", "ZB"])

    refused = runner.invoke(app, [*command[:5], "--display-name", "?!"])
    assert refused.exit_code != 0
    assert refused.stderr.count("\n") == 1
    assert "display_name" in refused.stderr
    assert reads.store.subjects.names(reads.tenant, "p-1").display_name == "Zoë Berg"


def test_a_date_after_a_name_stays_a_date(reads: ReadPath) -> None:
    _employ(
        reads, "halifax_institute", "Dalhousie", "e1", "The Halifax Institute joined Dalhousie."
    )

    for question in (
        "Who employed the Halifax Institute in 1944?",
        "Who employed the Halifaks Institute in 1944?",  # found by trigrams, without the year
    ):
        plan = reads.context(question).plan
        assert plan.subject == "halifax_institute", plan.reasons["subject"]
        assert (plan.mode, plan.valid_from, plan.valid_to) == (
            "period",
            ts("1944-01-01T00:00:00Z"),
            ts("1945-01-01T00:00:00Z"),
        )


def test_an_import_learns_names_as_the_calls_do(reads: ReadPath) -> None:
    text = "Ngozi Adichie-Eze joined the Ålesund Harbour Authority."
    line = {
        "tenant": reads.tenant,
        "id": "i1",
        "occurred_at": "2020-03-01T00:00:00Z",
        "text": text,
        "subject_names": {"org-9": "Ålesund Harbour Authority", "org-10": "Not In The Text"},
        "updates": [
            {
                "evidence": text,
                "subject": "p7",
                "attribute": "employer",
                "change": "new",
                "value": "Ålesund Harbour Authority",
                "subject_name": "Ngozi Adichie-Eze",
            }
        ],
    }
    reads.store.episodes.import_lines([json.dumps(line)])

    learned = {
        subject: [
            (n.name, n.episode_id)
            for n in reads.store.subjects.names(reads.tenant, subject).learned
        ]
        for subject in ("p7", "org-9", "org-10")
    }
    assert learned == {
        "p7": [("Ngozi Adichie-Eze", "i1")],
        "org-9": [("Ålesund Harbour Authority", "i1")],
        "org-10": [],
    }
    assert reads.context("Who employs Adichie-Eze?").plan.subject == "p7"
