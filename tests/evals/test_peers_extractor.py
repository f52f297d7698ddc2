"""The Mem0 arm with ``--extractor``: ``infer=True`` on SGAM's extractor endpoint and model, and
no other host; without it, ``infer=False``, and the report says what that means and why.

No model runs here: the endpoint is ``sgam extractor dev``'s rule-based stand-in (which answers
Mem0's own prompt with nothing to keep) or a scripted one, so what is tested is the wiring, not
what Mem0's extraction would keep. Needs the ``peers`` extra, as ``test_eval_peers`` does.
"""

from __future__ import annotations

import json
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

from evals.arms.baselines import BaselineOptions
from evals.arms.loads import Load, opened
from evals.leakage.run import Options
from evals.leakage.run_meta import run_meta
from evals.peers import INSTALL, PEER_NAMES, missing_peers
from evals.peers.mem0_arm import UNREACHABLE, WITHOUT_INFERENCE, Mem0Memory, llm_config, open_mem0
from retrieval.search.embeddings import Embedder
from server.extraction.rules import rule_based
from server.extraction.standin import STAND_IN_MODEL, Reply, StandIn, stand_in
from server.settings import Settings

if missing_peers(PEER_NAMES) and os.environ.get("CI") != "true":
    pytest.skip(f"the peer arms need the peers extra: {INSTALL}", allow_module_level=True)

EPISODE = {"op": "episode", "tenant": "acme", "id": "e1", "subjects": ["mira"],
           "occurred_at": "2026-06-05T09:00:00Z", "text": "Her city is Tromsø."}  # fmt: skip


def _extractor(endpoint: StandIn) -> Settings:
    return Settings(
        extractor_url=endpoint.base_url, extractor_model=STAND_IN_MODEL, extractor_api_key="k"
    )


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> Callable[[StandIn], list[Any]]:
    """Once given the endpoint, every address Python code connects a socket to is recorded,
    and any but the endpoint's is refused (the database is reached through libpq, below
    Python's sockets: what is seen here is an HTTP client)."""

    def allow_only(endpoint: StandIn) -> list[Any]:
        allowed = urlsplit(endpoint.base_url)
        attempts: list[Any] = []
        real = socket.socket.connect

        def connect(sock: socket.socket, address: Any) -> None:
            attempts.append(address)
            if tuple(address[:2]) != (allowed.hostname, allowed.port):
                raise OSError("only the extractor's endpoint may be reached")
            real(sock, address)

        monkeypatch.setattr(socket.socket, "connect", connect)
        return attempts

    return allow_only


@contextmanager
def mem0_load(server: str, embedder: Embedder, extractor: Settings | None) -> Iterator[Mem0Memory]:
    """The Mem0 arm as the evaluation opens it (``evals.arms.loads.opened``)."""
    with opened(
        Load("mem0", ("mem0",)),
        server=server,
        embedder=embedder,
        lines=[],
        baseline=BaselineOptions(),
        extractor=extractor,
    ) as (memory, _):
        assert isinstance(memory, Mem0Memory)
        yield memory


def test_the_llm_config_is_the_extractors_endpoint_model_and_key() -> None:
    settings = Settings(
        extractor_url="http://127.0.0.1:8001/v1", extractor_model="qwen", extractor_api_key="t"
    )
    assert llm_config(settings) == {
        "provider": "openai",
        "config": {"model": "qwen", "api_key": "t", "openai_base_url": "http://127.0.0.1:8001/v1"},
    }
    assert llm_config(None)["config"]["openai_base_url"] == UNREACHABLE


def test_with_the_extractor_mem0_infers_on_its_endpoint_and_model_and_reaches_no_other_host(
    server_conninfo: str, embedder: Embedder, connects: Callable[[StandIn], list[Any]]
) -> None:
    with stand_in(rule_based) as endpoint:  # what sgam extractor dev serves
        attempts = connects(endpoint)
        with mem0_load(server_conninfo, embedder, _extractor(endpoint)) as memory:
            assert memory.infer
            llm = memory.memory.llm
            assert (str(llm.client.base_url), llm.config.model) == (
                f"{endpoint.base_url}/",
                STAND_IN_MODEL,
            )
            memory.write(EPISODE, None)
        requests = endpoint.requests
    [request] = requests  # one extraction for the episode's one subject
    assert request["model"] == STAND_IN_MODEL
    assert "Her city is Tromsø." in json.dumps(request["messages"], ensure_ascii=False)
    assert attempts, "Mem0 asked the endpoint"
    endpoint_address = (urlsplit(endpoint.base_url).hostname, urlsplit(endpoint.base_url).port)
    assert {tuple(address[:2]) for address in attempts} == {endpoint_address}
    # The stand-in's rules answer Mem0's prompt with nothing to keep: nothing is stored.
    assert memory.outcomes == Counter({"episode": 1, "memories": 0})


def test_what_mem0_extracts_is_stored_searched_and_erased_with_the_episode(
    server_conninfo: str, embedder: Embedder
) -> None:
    kept = {"memory": [{"text": "Mira lives in Tromsø"}, {"text": "Mira prefers tea"}]}
    with (
        stand_in(lambda _: Reply(json.dumps(kept))) as endpoint,
        mem0_load(server_conninfo, embedder, _extractor(endpoint)) as memory,
    ):
        memory.write(EPISODE, None)
        found = memory.search("acme", "mira", query="Where does Mira live?", k=5)
        memory.write({"op": "erase", "tenant": "acme", "episode": "e1"}, None)
        after = memory.search("acme", "mira", query="Where does Mira live?", k=5)
    assert "Mira lives in Tromsø" in {text for _, text in found}
    assert after == []
    assert memory.outcomes == Counter({"episode": 1, "memories": 2, "erase": 1})


def test_a_failed_extraction_stores_nothing_and_is_counted(
    server_conninfo: str, embedder: Embedder
) -> None:
    with (
        stand_in(lambda _: Reply(status=400)) as endpoint,
        mem0_load(server_conninfo, embedder, _extractor(endpoint)) as memory,
    ):
        memory.write(EPISODE, None)
        found = memory.search("acme", "mira", query="Where does Mira live?", k=5)
    assert found == []
    assert memory.outcomes == Counter({"episode": 1, "extraction failed": 1})


def test_mem0_is_refused_when_its_client_would_ask_another_host(
    server_conninfo: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "set-by-someone")
    with (
        pytest.raises(RuntimeError, match=r"Mem0's LLM client asks https://openrouter\.ai"),
        open_mem0(server_conninfo, embedder=embedder, subjects={}, k=3),
    ):
        pass


def _meta(extractor: Settings | None) -> dict[str, Any]:
    options = Options(systems=("dm", "langgraph", "mem0"), extractor=extractor)
    return run_meta(options, model="m", database="d", about={}, outcomes={})


def test_the_report_says_what_infer_false_means_and_why() -> None:
    meta = _meta(None)
    assert meta["mem0_inference"] == WITHOUT_INFERENCE
    for said in ("infer=False", "stored as written", "needs a model", "--extractor"):
        assert said in meta["mem0_inference"]
    assert "no extraction" in meta["langgraph_inference"]


def test_the_report_names_the_endpoint_and_model_mem0_inferred_with() -> None:
    extractor = Settings(extractor_url="http://127.0.0.1:8001/v1", extractor_model="qwen")
    inference = _meta(extractor)["mem0_inference"]
    assert inference.startswith("infer=True")
    assert "qwen at http://127.0.0.1:8001/v1" in inference
