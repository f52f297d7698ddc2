"""Context blocks on a public-records tenant: many attributes of one family, sparse subjects.

The real database and model. Every "president of …" attribute scores alike once the
subject's name is out of the question; routing must stay among the subject's own keys, and
evidence about other holders must never go out unmarked, whatever was routed.
"""

from __future__ import annotations

import pytest
from psycopg_pool import ConnectionPool

from evals.leakage.scoring import answer_of, stale_leak
from retrieval.search.embeddings import Embedder
from store.db.clock import ManualClock
from tests.conftest import ts
from tests.read_helpers import ReadPath, read_path

COUNTRIES = (
    "France",
    "Italy",
    "South Korea",
    "the United States",
    "India",
    "Iraq",
    "Brazil",
    "Kenya",
    "Chile",
    "Poland",
    "New Zealand",
    "South Africa",
)
ROLES = ("President", "Prime Minister")
KOREA = [  # (episode, occurred_at, holder), recorded out of order below
    ("k1", "1979-12-21T09:00:00Z", "Choi Kyu-hah"),
    ("k2", "1980-09-01T09:00:00Z", "Chun Doo-hwan"),
    ("k3", "1993-02-25T09:00:00Z", "Kim Young-sam"),
    ("k4", "1998-02-25T09:00:00Z", "Kim Dae-jung"),
]
ITALY = [  # Ana Ferri is prime minister, then president
    ("i1", "1990-05-01T09:00:00Z", "prime_minister_of_italy", "Ana Ferri"),
    ("i2", "1992-05-01T09:00:00Z", "president_of_italy", "Marco Neri"),
    ("i3", "1995-05-01T09:00:00Z", "prime_minister_of_italy", "Luca Sarti"),
    ("i4", "1999-05-01T09:00:00Z", "president_of_italy", "Ana Ferri"),
]
NOW = "2026-06-10T00:00:00Z"


def _id(words: str) -> str:
    return words.lower().replace("the ", "").replace(" ", "_")


@pytest.fixture(scope="module")
def records(pool: ConnectionPool, embedder: Embedder) -> ReadPath:
    """24 role attributes, two sparse subjects, one episode per change."""
    path = read_path(pool, ManualClock(ts("2026-06-01T00:00:00Z")), embedder)
    for role in ROLES:
        for country in COUNTRIES:
            attribute = f"{_id(role)}_of_{_id(country)}"
            path.declare(attribute, f"Who or what holds the role: {role} of {country}")
    for episode_id, occurred_at, holder in [KOREA[2], KOREA[0], KOREA[3], KOREA[1]]:
        path.record(episode_id, occurred_at, f"{holder} became the President of South Korea.")
        result = path.assert_value(
            episode_id, "south_korea", "president_of_south_korea", holder, occurred_at
        )
        assert result.status == "written"
    for episode_id, occurred_at, attribute, holder in ITALY:
        role = "President" if attribute.startswith("president") else "Prime Minister"
        path.record(episode_id, occurred_at, f"News: {holder} took office as {role} of Italy.")
        assert path.assert_value(episode_id, "italy", attribute, holder, occurred_at).status == (
            "written"
        )
    path.at(NOW)
    return path


def _gold(path: ReadPath, block: str, subject: str, attribute: str, answer: str) -> None:
    """The block answers ``answer`` by the evaluation's rule and leaks no other holder."""
    values = [str(fact.value) for fact in path.store.facts.history(path.tenant, subject, attribute)]
    assert answer_of(block, subject=subject, attribute=attribute, values=values) == answer
    gold = {
        "kind": "current",
        "subject": subject,
        "attribute": attribute,
        "answer": answer,
        "answers": [answer],
        "values": values,
    }
    assert stale_leak(block, gold) == ([], [])


@pytest.mark.parametrize(
    "question",
    [
        "The name of the current President of South Korea is",
        "Who is the President of South Korea now?",
    ],
)
def test_a_sparse_subject_is_asked_about_its_own_key(records: ReadPath, question: str) -> None:
    result = records.context(question, subject="south_korea")

    assert result.plan.attributes == ("president_of_south_korea",)
    assert "holds one key" in result.plan.reasons["attributes"]
    lines = result.block.splitlines()
    assert lines[0] == "president_of_south_korea: Kim Dae-jung (from 1998-02-25; source k4)"
    assert "not known" not in result.block
    first = result.evidence[0]
    assert (first.episode_id, first.superseded) == ("k4", False)
    assert all(item.superseded for item in result.evidence[1:])
    _gold(records, result.block, "south_korea", "president_of_south_korea", "Kim Dae-jung")


def test_as_of_a_date_reads_the_holder_then(records: ReadPath) -> None:
    result = records.context(
        "As of April 21, 1980: The President of South Korea is", subject="south_korea"
    )

    assert result.plan.mode == "point_in_time"
    assert result.block.splitlines()[:2] == [
        "south_korea as of 1980-04-21:",
        "president_of_south_korea: Choi Kyu-hah (from 1979-12-21 until 1980-09-01; source k1)",
    ]
    _gold(records, result.block, "south_korea", "president_of_south_korea", "Choi Kyu-hah")


@pytest.mark.parametrize(
    "attributes",
    [["president_of_united_states"], ["prime_minister_of_south_korea"], None],
    ids=["another-subjects-key", "a-key-never-held", "routed-by-the-reader"],
)
def test_wrong_routing_costs_the_answer_but_never_leaks_a_stale_holder(
    records: ReadPath, attributes: list[str] | None
) -> None:
    question = "Tell me about the latest news"
    result = records.context(question, subject="south_korea", attributes=attributes, evidence_k=4)

    if attributes is not None:
        assert result.block.splitlines()[0] == f"{attributes[0]}: not known"
    shown = {item.episode_id: item.superseded for item in result.evidence}
    # A wrong key named: every episode states only the unrouted key's values, so none is shown.
    # Nothing named: the reader routes to the subject's one key, and its episodes are found.
    assert bool(shown) is (attributes is None)
    assert all(shown[episode] for episode in shown if episode != "k4")
    assert shown.get("k4") in (None, False)
    for item in result.evidence:
        if not item.superseded:
            assert not any(holder in item.snippet for _, _, holder in KOREA[:3])


def test_a_value_one_key_holds_now_is_not_stale_because_another_key_once_held_it(
    records: ReadPath,
) -> None:
    result = records.context("Who is the President of Italy now?", subject="italy", evidence_k=4)

    assert result.plan.attributes[0] == "president_of_italy"
    assert result.block.splitlines()[0] == (
        "president_of_italy: Ana Ferri (from 1999-05-01; source i4)"
    )
    shown = {item.episode_id: item.superseded for item in result.evidence}
    assert shown["i4"] is False
    assert shown.get("i2") in (None, True)  # Marco Neri, president before
    # i1 (Ana as prime minister) is no stale statement: she holds a key now.
    assert shown.get("i1") in (None, False)
    _gold(records, result.block, "italy", "president_of_italy", "Ana Ferri")
