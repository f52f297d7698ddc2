"""The peer arms' packages are optional: asking for an arm without them is a clear error that
names the install command, before anything is loaded or written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evals.leakage.run import Options, run_leakage
from evals.peers import INSTALL, PeersMissing, installed_peers, missing_peers
from retrieval.search.embeddings import Embedder
from server.cli import app


@pytest.fixture
def without_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither arm's packages can be imported, as where the extra is not installed."""
    monkeypatch.setitem(sys.modules, "mem0", None)
    monkeypatch.setitem(sys.modules, "langgraph.store.postgres", None)


@pytest.mark.usefixtures("without_peers")
def test_no_arm_is_installed_without_the_extra() -> None:
    assert installed_peers() == ()
    assert missing_peers(["sgam", "mem0", "dm", "langgraph"]) == ["mem0", "langgraph"]


@pytest.mark.usefixtures("without_peers")
def test_the_evaluation_refuses_an_arm_without_its_packages(
    server_conninfo: str, embedder: Embedder
) -> None:
    with pytest.raises(PeersMissing) as refused:
        run_leakage(
            seed=7,
            size="quick",
            server=server_conninfo,
            embedder=embedder,
            options=Options(systems=("dm", "langgraph", "mem0")),
        )
    assert str(refused.value) == f"the langgraph and mem0 arms need the peers extra: {INSTALL}"


@pytest.mark.usefixtures("without_peers")
def test_the_command_line_names_the_extra_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    command = ["eval", "leakage", "--size", "quick", "--out", str(out)]
    result = CliRunner().invoke(app, [*command, "--system", "dm", "--system", "mem0"])
    assert result.exit_code == 1
    assert result.output == "error: the mem0 arm needs the peers extra: pip install -e '.[peers]'\n"
    assert not out.exists()
