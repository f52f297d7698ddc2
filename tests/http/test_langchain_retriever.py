"""``SGAMContextRetriever`` against the real app: the cited context block as LangChain documents,
one per fact and evidence line, each citing its source in the metadata.

System time comes from the client's ``now`` (the ``X-SGAM-Now`` header the test app allows),
so each block is the seed trace's, exactly.
"""

from __future__ import annotations

from uuid import UUID

import pytest
from langchain_core.documents import Document
from litestar import Litestar
from litestar.testing import TestClient

from server.client import SGAMClient
from server.client.langchain import SGAMContextRetriever
from store.contract.facts import Fact
from tests.langchain_helpers import async_twin, record_mira, tenant_client

SETUP = "2026-06-01T09:00:05Z"
NOW = "2026-06-04T00:00:00Z"
QUESTION = "When is Mira's passport deadline?"


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio."""
    return "asyncio"


def record(client: SGAMClient, episode_id: str, at: str, text: str, **candidate: str) -> Fact:
    """``record_mira``, whose candidate is written; its fact."""
    result = record_mira(client, episode_id, at, text, **candidate)
    assert result.fact is not None, result
    return result.fact


@pytest.fixture
def reader(http: TestClient[Litestar]) -> SGAMClient:
    """A tenant holding the seed trace, read at ``NOW``."""
    client = tenant_client(http, "retriever")
    client.with_now(SETUP).declare_attribute("passport_deadline", "date")
    record(
        client,
        "e1",
        "2026-06-01T09:00:00Z",
        "Mira prefers concise answers. Her passport deadline is 2026-07-15.",
        attribute="passport_deadline",
        evidence="Her passport deadline is 2026-07-15.",
        value="2026-07-15",
    )
    record(
        client,
        "e2",
        "2026-06-03T10:00:00Z",
        "Mira corrected the deadline. It is now 2026-06-30.",
        attribute="passport_deadline",
        evidence="It is now 2026-06-30.",
        value="2026-06-30",
    )
    return client.with_now(NOW)


def expected_documents(reader: SGAMClient, found: list[Document]) -> list[Document]:
    """The documents the seed trace's block makes, cited under the decision ``found`` read."""
    current = reader.fact("mira", "passport_deadline")
    decision = found[0].metadata["decision_id"]
    UUID(decision)
    evidence = {
        "kind": "evidence",
        "decision_id": decision,
        "superseded": False,
        "unverified": False,
        "mark": None,
    }
    [e2_score, e1_score] = [document.metadata.get("score") for document in found[1:]]
    return [
        Document(
            page_content="passport_deadline: 2026-06-30 (from 2026-06-03; source e2)",
            metadata={
                "kind": "fact",
                "decision_id": decision,
                "fact_id": str(current.fact_id),
                "episode_id": "e2",
                "source_kind": "message",
                "subject": "mira",
                "attribute": "passport_deadline",
                "value": "2026-06-30",
                "valid_from": "2026-06-03T10:00:00Z",
                "valid_to": None,
                "status": "current",
                "label": "current",
            },
        ),
        Document(
            page_content="[e2] It is now 2026-06-30.",
            metadata=evidence
            | {"episode_id": "e2", "occurred_at": "2026-06-03T10:00:00Z", "score": e2_score},
        ),
        Document(
            page_content="[e1] superseded (from 2026-06-01 until 2026-06-03): Her passport"
            " deadline is 2026-07-15.",
            metadata=evidence
            | {
                "episode_id": "e1",
                "occurred_at": "2026-06-01T09:00:00Z",
                "score": e1_score,
                "superseded": True,
                "mark": "superseded (from 2026-06-01 until 2026-06-03)",
            },
        ),
    ]


def test_the_block_comes_back_as_one_document_per_fact_and_evidence_line(
    reader: SGAMClient,
) -> None:
    found = SGAMContextRetriever(client=reader, subject="mira").invoke(QUESTION)

    assert found == expected_documents(reader, found)
    block = reader.context(QUESTION, subject="mira")
    assert [document.page_content for document in found] == [
        line for line in block.block.splitlines() if line != "Evidence:"
    ]
    assert [document.metadata["score"] for document in found[1:]] == [
        evidence.score for evidence in block.evidence
    ]


def test_a_disputed_key_is_its_uncertain_line_citing_both_sides(reader: SGAMClient) -> None:
    reader.with_now(SETUP).declare_attribute(
        "home_city", "string", on_equal_start="source_precedence"
    )
    incumbent = record(
        reader,
        "e3",
        "2026-06-02T08:00:00Z",
        "Mira lives in Oslo.",
        attribute="home_city",
        evidence="Mira lives in Oslo.",
        value="Oslo",
    )
    challenged = record_mira(
        reader,
        "e4",
        "2026-06-02T08:00:00Z",
        "Mira lives in Bergen.",
        attribute="home_city",
        evidence="Mira lives in Bergen.",
        value="Bergen",
    )
    assert challenged.status == "conflict"

    retriever = SGAMContextRetriever(client=reader, subject="mira", attributes=["home_city"])
    [fact, *evidence] = retriever.invoke("Where does Mira live?")

    block = reader.context("Where does Mira live?", subject="mira", attributes=["home_city"])
    assert fact.page_content in block.block.splitlines()
    assert fact.page_content.startswith("- home_city: Oslo (")
    assert "source e3" in fact.page_content
    assert "source e4" in fact.page_content
    assert (fact.metadata["fact_id"], fact.metadata["label"]) == (
        str(incumbent.fact_id),
        "current · disputed",
    )
    assert {document.metadata["episode_id"] for document in evidence} <= {"e3", "e4", "e1", "e2"}


@pytest.mark.anyio
async def test_ainvoke_gives_the_same_documents(
    http: TestClient[Litestar], reader: SGAMClient
) -> None:
    async with async_twin(http, reader) as async_client:
        native = SGAMContextRetriever(
            client=reader, async_client=async_client.with_now(NOW), subject="mira"
        )
        found = await native.ainvoke(QUESTION)
    threaded = await SGAMContextRetriever(client=reader, subject="mira").ainvoke(QUESTION)

    assert found == expected_documents(reader, found)
    assert threaded == expected_documents(reader, threaded)
