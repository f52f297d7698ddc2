"""The peer arms of the leakage evaluation: LangGraph's PostgresStore and Mem0 on the quick
history beside ``dm``, their rows in the report, their scoping, and the error that names the
extra when their packages are missing.

Needs the ``peers`` extra (pip install -e '.[peers]'): without it the module is skipped on a
developer's machine and fails under CI, which installs it. The run happens once for the module.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from evals.arms.baselines import cited_subjects
from evals.arms.systems import Question, is_question
from evals.histories.generate import generate_history
from evals.leakage.gold_traces import read_trace
from evals.leakage.run import Options, Run, run_leakage
from evals.peers import INSTALL, PEER_NAMES, missing_peers, peer_versions
from evals.peers.episodes import PeerMemory
from evals.peers.langgraph_arm import open_langgraph
from evals.peers.mem0_arm import open_mem0
from retrieval.search.embeddings import Embedder

if missing_peers(PEER_NAMES) and os.environ.get("CI") != "true":
    pytest.skip(f"the peer arms need the peers extra: {INSTALL}", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SEED_TRACE = ROOT / "evals" / "traces" / "gold" / "seed_mira.jsonl"
QUESTIONS = 96  # the quick history
ARMS = ("dm", "langgraph", "mem0")
Opener = Callable[..., AbstractContextManager[PeerMemory]]
OPENERS: dict[str, Opener] = {"langgraph": open_langgraph, "mem0": open_mem0}


@pytest.fixture(scope="module")
def quick(server_conninfo: str, embedder: Embedder) -> Run:
    """dm and both peer arms on the quick history (seed 7), its customers and records
    families."""
    options = Options(systems=ARMS, families=("customers", "records"))
    return run_leakage(
        seed=7, size="quick", server=server_conninfo, embedder=embedder, options=options
    )


def test_every_arm_answers_every_question_with_sane_scores(quick: Run) -> None:
    systems = quick.summary["systems"]
    assert list(systems) == list(ARMS)
    for name, row in systems.items():
        assert row["questions"] == QUESTIONS, name
        assert row["cross_tenant_leakage"] == 0.0, name
        # Similarity alone hands over outdated values, as dm does.
        assert 0.3 <= row["stale_leakage"] <= 1.0, name
        for kind in ("current", "point_in_time", "known_at"):
            assert 0.0 <= row[f"{kind}_accuracy"] < 1.0, (name, kind)
        assert 0 < row["context_tokens_p50"] <= row["context_tokens_p95"], name
        assert 0 < row["latency_p50_ms"] <= row["latency_p95_ms"], name
    assert quick.meta["langgraph load"] == "episode 417"
    assert quick.meta["mem0 load"] == "episode 417"


def test_the_arms_find_what_exact_similarity_finds(quick: Run) -> None:
    """Current questions read everything written, so every arm's exact search over the same
    vectors in the same scope gives (nearly always) dm's answer."""
    answers = {
        name: {
            (r.tenant, r.question, r.subject): r.answer
            for r in quick.results
            if r.system == name and r.kind == "current"
        }
        for name in ARMS
    }
    for name in PEER_NAMES:
        same = [key for key, answer in answers["dm"].items() if answers[name][key] == answer]
        assert len(same) >= 0.9 * len(answers["dm"]), name


def test_a_leaked_line_is_an_episode_of_the_questions_tenant_and_subject(quick: Run) -> None:
    lines = generate_history(seed=7, size="quick").lines()
    cited = cited_subjects(lines)
    filed = {
        (line["tenant"], subject, line["text"])
        for line in lines
        if line["op"] == "episode"
        for subject in set(line.get("subjects") or ())
        | cited.get((line["tenant"], line["id"]), set())
    }
    leaked = [r for r in quick.results if r.system in PEER_NAMES and r.stale_leak]
    assert leaked
    for result in leaked:
        for text in result.leaked_lines:
            assert (result.tenant, result.subject, text) in filed, (result.system, text)


def test_the_report_shows_every_arm_and_the_versions_that_ran(quick: Run, tmp_path: Path) -> None:
    quick.write(tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert list(summary["systems"]) == list(ARMS)
    assert summary["meta"]["peer_versions"] == peer_versions(PEER_NAMES)
    assert set(summary["meta"]["peer_versions"]) == set(PEER_NAMES)
    assert "not installed" not in json.dumps(summary["meta"]["peer_versions"])
    markdown = (tmp_path / "report.md").read_text()
    for name in ARMS:
        assert f"| `{name}` | {QUESTIONS} |" in markdown
    assert "LangGraph's PostgresStore" in markdown
    assert "infer=False" in markdown
    assert (tmp_path / "leakage.png").read_bytes().startswith(b"\x89PNG")


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every address Python code tries to connect a socket to; each attempt fails.

    The database is reached through libpq, below Python's sockets: any attempt seen here is an
    HTTP client (an LLM, telemetry, a model hub) reaching out.
    """
    attempts: list[object] = []

    def refuse(_: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("no outbound call from a peer arm")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


@pytest.fixture(params=PEER_NAMES)
def seeded(
    request: pytest.FixtureRequest,
    server_conninfo: str,
    embedder: Embedder,
    connects: list[object],
) -> Iterator[tuple[PeerMemory, list[Question]]]:
    """An arm loaded with the seed trace's episodes, and the trace's current questions; no
    socket is connected from Python meanwhile."""
    trace = read_trace(SEED_TRACE)
    opener = OPENERS[request.param]
    with opener(
        server_conninfo, embedder=embedder, subjects=cited_subjects(trace.lines), k=3
    ) as memory:
        for line in trace.lines:
            memory.write(line, line.get("now"))
        questions = [
            Question.from_line(line, now=None)
            for line in trace.lines
            if is_question(line) and line["gold"]["kind"] == "current"
        ]
        yield memory, questions


def test_an_arm_reads_only_the_tenant_and_subject_asked_and_forgets_erased_episodes(
    seeded: tuple[PeerMemory, list[Question]], connects: list[object]
) -> None:
    memory, questions = seeded
    acme = [q for q in questions if q.tenant == "acme" and q.subject == "mira"][-1]
    [globex] = [q for q in questions if q.tenant == "globex"]
    assert sorted(memory.ask(acme).text.splitlines()) == [
        "Back in May Mira said her passport deadline was 2026-08-01.",
        "Mira corrected the deadline. It is now 2026-06-30.",
        "Mira prefers concise answers. Her passport deadline is 2026-07-15.",
    ]
    assert memory.ask(globex).text == (
        "Mira from the Berlin office: my passport deadline is 2026-09-12."
    )
    memory.write({"op": "erase", "tenant": "acme", "episode": "e2"}, None)
    assert "2026-06-30" not in memory.ask(acme).text
    memory.write({"op": "erase", "tenant": "acme", "subject": "mira"}, None)
    assert memory.ask(acme).text == ""
    assert memory.outcomes == {"episode": 4, "erase": 2}
    assert connects == []  # no LLM, telemetry or hub call was even tried
