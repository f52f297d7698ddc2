"""``sgam eval leakage --extractor``: SGAM's arm fed through an extractor instead of the gold
candidates, against a stand-in endpoint that answers from the history's gold with an error
rate."""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from typing import Any

import pytest
from typer.testing import CliRunner

from evals.histories.generate import generate_history
from evals.leakage.run import Options, run_leakage
from retrieval.search.embeddings import Embedder
from server.cli import app
from server.extraction.standin import Reply, stand_in, updates
from server.settings import Settings


def gold_script(error_rate: float) -> Any:
    """A script answering each episode with the history's gold candidates citing it; a share
    ``error_rate`` of episodes (chosen by their id) get a 500 instead."""
    gold: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    lines = generate_history(seed=7, size="quick").lines()
    texts = {
        (line["tenant"], line["id"]): line["text"] for line in lines if line["op"] == "episode"
    }
    for line in lines:
        if line["op"] == "update":
            text = texts[(line["tenant"], line["episode"])]
            gold[(line["episode"], text)].append(line["candidate"])

    def script(request: dict[str, Any]) -> Reply:
        episode = json.loads(request["messages"][-1]["content"])["episode"]
        if zlib.crc32(episode["id"].encode()) % 1000 < error_rate * 1000:
            return Reply(status=500)
        return updates(*gold.get((episode["id"], episode["text"]), []))

    return script


def test_the_leakage_run_goes_through_the_extractor_and_says_so(
    server_conninfo: str, embedder: Embedder
) -> None:
    with stand_in(gold_script(error_rate=0.1)) as endpoint:
        extractor = Settings(extractor_url=endpoint.base_url, extractor_model="gold")
        run = run_leakage(
            seed=7,
            size="quick",
            server=server_conninfo,
            embedder=embedder,
            # The stand-in answers from the history's gold: the careers family has none there.
            options=Options(
                systems=("sgam",), extractor=extractor, families=("customers", "records")
            ),
        )
        asked = len(endpoint.requests)
    assert "went through the extractor gold" in run.meta["extraction"]
    load = run.meta["sgam load"]
    assert "update" not in load.replace("extracted", "")  # no gold candidate was sent
    assert "extracted written" in load
    assert "extraction failed" in load  # the endpoint's errors, left to a worker
    assert asked >= 400  # every episode of the history
    row = run.summary["systems"]["sgam"]
    assert 0 < row["families"]["customers"]["current_accuracy"] <= 1


def test_the_option_without_an_extractor_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.delenv("SGAM_EXTRACTOR_URL", raising=False)
    monkeypatch.delenv("SGAM_EXTRACTOR_MODEL", raising=False)
    result = CliRunner().invoke(
        app, ["eval", "leakage", "--size", "quick", "--extractor", "--out", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "--extractor needs SGAM_EXTRACTOR_URL" in result.output
