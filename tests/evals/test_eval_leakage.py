"""The leakage evaluation end to end: SGAM through its HTTP API against the descriptive-memory
baselines on the quick history, the report files, and `sgam eval replay` on the tiny gold trace.

The quick run happens once for the module, on the session's embedded server and model.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evals.arms.baselines import BaselineOptions, open_episodes
from evals.arms.noise import Noise, noisy_lines
from evals.arms.systems import DROPPED, SYSTEM_NAMES, Question, is_question
from evals.histories.careers import CAREER_SIZES
from evals.histories.generate import generate_history
from evals.leakage.gold_traces import Trace, read_folder, read_trace
from evals.leakage.run import Options, Run, run_leakage
from evals.leakage.scoring import QuestionResult
from retrieval.search.embeddings import Embedder

ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "evals" / "traces" / "gold"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
QUESTIONS = 96  # the quick history: 60 of the customers family, 36 of the records family
PINNED = (
    "questions",
    "stale_leakage",
    "stale_leakage_ci",
    "current_accuracy",
    "point_in_time_accuracy",
    "known_at_accuracy",
    "cross_tenant_leakage",
    "context_tokens_p50",
    "context_tokens_p95",
    "latency_p50_ms",
    "latency_p95_ms",
)


@pytest.fixture(scope="module")
def quick(server_conninfo: str, embedder: Embedder) -> Run:
    """Every system on the quick history (seed 7), clean and noisy extraction; the careers
    family has tests of its own (``tests/evals/test_eval_careers.py``)."""
    options = Options(families=("customers", "records"))
    return run_leakage(
        seed=7, size="quick", server=server_conninfo, embedder=embedder, options=options
    )


@pytest.fixture(scope="module")
def report(quick: Run, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick run's report folder."""
    out = tmp_path_factory.mktemp("leakage")
    quick.write(out)
    return out


def _of(run: Run, system: str) -> list[QuestionResult]:
    return [result for result in run.results if result.system == system]


def test_sgam_with_clean_extraction_leaks_nothing_and_answers_every_question(quick: Run) -> None:
    missed = [r for r in _of(quick, "sgam") if not r.correct]
    missed += [r for r in _of(quick, "sgam") if r.stale_leak and r.family == "customers"]
    assert missed == []
    row = quick.summary["systems"]["sgam"]
    assert row["questions"] == QUESTIONS
    assert {name: figures["questions"] for name, figures in row["families"].items()} == {
        "customers": 60,
        "records": 36,
    }
    customers = row["families"]["customers"]
    assert (
        customers["stale_leakage"],
        customers["current_accuracy"],
        customers["point_in_time_accuracy"],
        customers["known_at_accuracy"],
    ) == (0.0, 1.0, 1.0, 1.0)
    assert quick.meta["sgam load"] == (
        "define 26, episode 417, expire expired 8, update conflict 8, update written 351"
    )


def test_sgam_states_a_records_value_only_where_the_subject_holds_it(quick: Run) -> None:
    """A name counted as stale on the records family is an evidence line of another role of
    the same place, held then by the same person (a prime minister, later president): the
    design keeps such a line unmarked, since a key of the subject holds that value then."""
    lines = generate_history(seed=7, size="quick").lines()
    sources = {
        (line["tenant"], line["episode"]): (line["candidate"]["attribute"], line["candidate"])
        for line in lines
        if line["op"] == "update"
    }
    for result in _of(quick, "sgam"):
        if result.family != "records" or not result.stale_leak:
            continue
        for text in result.leaked_lines:
            cited = re.match(r"- \[(e\d+)\] ", text)
            assert cited is not None, text
            attribute, candidate = sources[result.tenant, cited.group(1)]
            assert attribute != result.attribute, text
            assert candidate["subject"] == result.subject
            assert candidate["value"] in result.leaked_values


def test_no_system_leaks_a_value_of_another_tenant(quick: Run) -> None:
    systems = quick.summary["systems"]
    assert {name: row["cross_tenant_leakage"] for name, row in systems.items()} == dict.fromkeys(
        SYSTEM_NAMES, 0.0
    )


def test_the_baselines_hand_over_stale_values_unmarked(quick: Run) -> None:
    systems = quick.summary["systems"]
    for name in ("dm", "dm_recency"):
        assert systems[name]["stale_leakage"] >= 0.3, name
        leaked = [r for r in _of(quick, name) if r.stale_leak]
        assert all("superseded" not in line for r in leaked for line in r.leaked_lines)
    # Newest first helps only where the newest value is the answer, never for the past.
    assert systems["dm_recency"]["point_in_time_accuracy"] < 0.5


def test_a_noisy_extraction_costs_sgam_accuracy(quick: Run) -> None:
    correct = Counter(r.system for r in quick.results if r.correct)
    assert correct["sgam_noisy"] < correct["sgam"] == QUESTIONS
    outcomes = quick.meta["sgam_noisy load"]
    assert "noise missing" in outcomes
    assert "noise wrong" in outcomes
    assert quick.meta["noisy_extraction"] == {"missing": 0.1, "wrong": 0.1, "seed": 7}


def test_noisy_lines_are_seeded_and_touch_only_updates() -> None:
    lines = generate_history(seed=7, size="quick").lines()
    noise = Noise(missing=0.1, wrong=0.1, seed=3)
    changed, counts = noisy_lines(lines, noise)
    assert noisy_lines(lines, noise) == (changed, counts)
    assert noisy_lines(lines, Noise(seed=4))[0] != changed
    updates = sum(line["op"] == "update" for line in lines)
    assert sum(counts.values()) == updates
    assert 0.05 * updates <= counts["missing"] <= 0.15 * updates
    assert 0.05 * updates <= counts["wrong"] <= 0.15 * updates
    assert len(changed) == len(lines)
    for before, after in zip(lines, changed, strict=True):
        if before["op"] != "update":
            assert after == before
        elif after["op"] == DROPPED:
            assert after == {"op": DROPPED, "tenant": before["tenant"], "now": before["now"]}
        elif after != before:
            old, new = before["candidate"], after["candidate"]
            assert {**new, "value": old["value"]} == old
            # Another value the same key has at another time: the scoring recognises it.
            key = (before["tenant"], old["subject"], old["attribute"])
            held = {
                line["candidate"]["value"]
                for line in lines
                if line["op"] == "update"
                and (line["tenant"], line["candidate"]["subject"], line["candidate"]["attribute"])
                == key
            }
            assert new["value"] in held - {old["value"]}


def test_the_report_files(quick: Run, report: Path) -> None:
    summary = json.loads((report / "summary.json").read_text())
    assert list(summary["systems"]) == list(SYSTEM_NAMES)
    for row in summary["systems"].values():
        assert set(PINNED) <= set(row)
        assert list(row["families"]) == ["customers", "records"]
        for figures in row["families"].values():
            assert set(PINNED) <= set(figures)
    for key in ("date", "machine", "python", "seed", "size", "model", "noisy_extraction"):
        assert key in summary["meta"]
    assert summary["meta"]["seed"] == 7
    assert "TestClient" in summary["meta"]["transport"]

    lines = (report / "questions.jsonl").read_text().splitlines()
    assert len(lines) == len(SYSTEM_NAMES) * QUESTIONS
    parsed = [QuestionResult.from_json(json.loads(line)) for line in lines]
    assert parsed == quick.results
    assert Counter(r.system for r in parsed) == dict.fromkeys(SYSTEM_NAMES, QUESTIONS)

    markdown = (report / "report.md").read_text()
    assert "## Headline" in markdown
    assert "## By family" in markdown
    for name in SYSTEM_NAMES:
        assert f"| `{name}` | {QUESTIONS} |" in markdown
        assert f"| `{name}` | customers | 60 |" in markdown
        assert f"| `{name}` | records | 36 |" in markdown
    assert "in process" in markdown
    assert "typed candidates" in markdown
    assert (report / "leakage.png").read_bytes().startswith(PNG_MAGIC)


def test_the_baselines_see_only_episodes_recorded_by_known_at(
    server_conninfo: str, embedder: Embedder
) -> None:
    trace = read_trace(GOLD / "seed_mira.jsonl")
    options = BaselineOptions(k=3, candidates=10)
    with open_episodes(
        server_conninfo, embedder=embedder, lines=trace.lines, options=options
    ) as memory:
        now = None
        for line in trace.lines:
            now = line.get("now", now)
            if line["op"] == "episode":
                memory.write(line, now)
        [believed] = [
            Question.from_line(line, now=now)
            for line in trace.lines
            if is_question(line) and line["question"].startswith("What did we believe on June 4")
        ]
        # e0 (2026-08-01) was recorded on June 5: unknown on June 4, whatever its similarity.
        assert sorted(memory.dm(believed).text.splitlines()) == [
            "Mira corrected the deadline. It is now 2026-06-30.",
            "Mira prefers concise answers. Her passport deadline is 2026-07-15.",
        ]
        later = Question.from_line({**_line(believed), "known_at": None}, now=now)
        assert "2026-08-01" in memory.dm(later).text
        # Another tenant's Mira never shows.
        assert all("2026-09-12" not in memory.dm(q).text for q in (believed, later))


def _line(question: Question) -> dict[str, object]:
    return {
        "op": "context",
        "tenant": question.tenant,
        "question": question.question,
        "subject": question.subject,
        "valid_at": question.valid_at,
        "known_at": question.known_at,
        "gold": dict(question.gold),
    }


def test_a_folder_keeps_only_files_with_gold_questions(tmp_path: Path) -> None:
    (tmp_path / "gold.jsonl").write_text((GOLD / "seed_mira.jsonl").read_text())
    (tmp_path / "results.jsonl").write_text('{"line": 1, "ok": true, "result": {}}\n')
    (tmp_path / "notes.txt").write_text("not a trace")
    traces, skipped = read_folder(tmp_path)
    assert [(t.name, t.questions, t.writes) for t in traces] == [("gold.jsonl", 7, 10)]
    assert skipped == ["results.jsonl"]
    with pytest.raises(ValueError, match=r"bad line 2: unknown op 'forget'"):
        Trace("bad", [{"op": "define", "tenant": "a"}, {"op": "forget", "tenant": "a"}])
    with pytest.raises(ValueError, match="line 1: gold"):
        Trace("bad", [{"op": "context", "tenant": "a", "question": "?", "gold": {"kind": "x"}}])
    with pytest.raises(ValueError, match="systems must be some of"):
        Options(systems=("sgam", "vector_db"))
    with pytest.raises(ValueError, match="families must be some of"):
        Options(families=("customers", "weather"))


def test_sgam_eval_replay_scores_the_tiny_gold_trace(server_conninfo: str, tmp_path: Path) -> None:
    # A process of its own: the app it builds sets up logging on that process's streams.
    command = [sys.executable, "-m", "server.cli", "eval", "replay", str(GOLD)]
    command += ["--out", str(tmp_path), "--database-url", server_conninfo]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    systems = summary["systems"]
    assert list(systems) == ["sgam", "dm", "dm_recency"]
    assert {name: row["questions"] for name, row in systems.items()} == dict.fromkeys(systems, 7)
    sgam = systems["sgam"]
    assert (sgam["stale_leakage"], sgam["current_accuracy"], sgam["known_at_accuracy"]) == (
        0.0,
        1.0,
        1.0,
    )
    assert sgam["point_in_time_accuracy"] == 1.0
    results = [
        QuestionResult.from_json(json.loads(line))
        for line in (tmp_path / "questions.jsonl").read_text().splitlines()
    ]
    # The seed article's point: similarity returns e1's 2026-07-15 after e2 corrected it.
    [corrected] = [
        r
        for r in results
        if r.system == "dm" and r.tenant == "acme" and r.gold_answer == "2026-06-30"
    ]
    assert corrected.answer == "2026-07-15"
    assert "2026-07-15" in corrected.leaked_values
    assert summary["meta"]["traces"] == ["seed_mira.jsonl (7 questions)"]
    assert "dm_recency" in result.stdout


def test_sgam_eval_leakage_writes_the_report_for_the_chosen_systems(
    server_conninfo: str, tmp_path: Path
) -> None:
    # The command line end to end on the quick history; the baseline alone keeps it short.
    command = [sys.executable, "-m", "server.cli", "eval", "leakage", "--size", "quick"]
    command += ["--out", str(tmp_path), "--database-url", server_conninfo, "--system", "dm"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "leakage.png",
        "questions.jsonl",
        "report.md",
        "summary.json",
    ]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert list(summary["systems"]) == ["dm"]
    dm = summary["systems"]["dm"]
    # By default the careers family too: each of its questions asked with and without subject.
    asked = 2 * CAREER_SIZES["quick"].questions
    assert dm["questions"] == QUESTIONS + asked
    assert {name: row["questions"] for name, row in dm["families"].items()} == {
        "careers": asked,
        "customers": 60,
        "records": 36,
    }
    assert dm["stale_leakage"] > 0
    assert summary["meta"]["seed"] == 7
    assert "careers" in summary["meta"]["size"]
    assert len((tmp_path / "questions.jsonl").read_text().splitlines()) == QUESTIONS + asked
    assert "  records" in result.stdout  # each family on its own row of the headline
    assert "  careers" in result.stdout


def test_the_seed_7_figures_are_those_recorded_before_leaks_were_classified(quick: Run) -> None:
    # Recorded from `sgam eval leakage --size quick` (seed 7) before leaked lines were
    # classified as statements or mentions in passing: that accounting changes no figure.
    recorded = json.loads((Path(__file__).parent / "leakage_seed7_figures.json").read_text())
    for system, families in recorded["figures"].items():
        for family, figures in families.items():
            now = quick.summary["systems"][system]["families"][family]
            assert {key: now[key] for key in figures} == figures, (system, family)
