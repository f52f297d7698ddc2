"""The evaluation report: its four files, their contents, and that a rerun writes the same bytes."""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evals.leakage.chart import chart_figure
from evals.leakage.lines import baseline_context
from evals.leakage.report import run_environment, write_report
from evals.leakage.scoring import KINDS, QuestionResult, score_question
from evals.leakage.summary import summarize

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
OLD, NEW = "Porto", "Madrid"
SGAM_BLOCK = (
    "home_city: Madrid (from 2025-03-02; source u7)\n"
    "Evidence:\n"
    "[u7] Mira has moved to Madrid.\n"
    "[d9] superseded: Mira still misses the cafes of Porto."
)
DM_CONTEXT = baseline_context(
    ["Mira still misses the cafes of Porto.", "Mira has moved to Madrid."]
)
PINNED = (
    "stale_leakage",
    "current_accuracy",
    "point_in_time_accuracy",
    "known_at_accuracy",
    "cross_tenant_leakage",
    "context_tokens_p50",
    "latency_p50_ms",
    "latency_p95_ms",
)


def scored() -> list[QuestionResult]:
    """Both systems on one question of each kind, with the same contexts; the known-at
    question is of a second family."""
    results = []
    for system, context in (("sgam", SGAM_BLOCK), ("dm", DM_CONTEXT)):
        for number, kind in enumerate(KINDS):
            gold = {
                "kind": kind,
                "subject": "mira",
                "attribute": "home_city",
                "answer": NEW,
                "answers": [NEW],
                "values": [OLD, NEW],
                "other_tenant_values": ["Oslo"],
                "family": "records" if kind == "known_at" else "customers",
            }
            results.append(
                score_question(
                    system=system,
                    tenant="leakage",
                    question="Where does Mira live now?",
                    gold=gold,
                    context=context,
                    tokens=len(context.split()),
                    latency_ms=1.5 + number,
                )
            )
    return results


META: dict[str, Any] = {
    **run_environment(),
    "seed": 7,
    "size": {"subjects": 1, "changes_per_key": 2},
    "date": "2026-06-20",
    "model": "all-MiniLM-L6-v2",
    "noisy_extraction": {"wrong_value": 0.1, "missed": 0.05, "seed": 3},
}


def write(out_dir: Path) -> list[Path]:
    results = scored()
    return write_report(out_dir, summary=summarize(results), results=results, meta=META)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write(tmp_path_factory.mktemp("report") / "run")


def test_the_four_files_are_written(written: list[Path]) -> None:
    assert [path.name for path in written] == [
        "summary.json",
        "questions.jsonl",
        "report.md",
        "leakage.png",
    ]
    assert all(path.is_file() and path.stat().st_size > 0 for path in written)


def test_summary_json_has_the_pinned_keys_as_fractions_and_the_run_meta(
    written: list[Path],
) -> None:
    document = json.loads(written[0].read_text())
    assert document["meta"] == META
    systems = document["systems"]
    assert list(systems) == ["sgam", "dm"]
    for row in systems.values():
        assert set(PINNED) <= set(row)
        shares = ("stale_leakage", "stale_mention", "cross_tenant_leakage")
        for name in (*shares, *(f"{k}_accuracy" for k in KINDS)):
            low, high = row[f"{name}_ci"]
            assert 0.0 <= low <= row[name] <= high <= 1.0
    assert (systems["sgam"]["stale_leakage"], systems["sgam"]["current_accuracy"]) == (0.0, 1.0)
    assert (systems["dm"]["stale_leakage"], systems["dm"]["current_accuracy"]) == (1.0, 0.0)
    assert systems["dm"]["cross_tenant_leakage"] == 0.0


def test_questions_jsonl_round_trips(written: list[Path]) -> None:
    lines = written[1].read_text(encoding="utf-8").splitlines()
    assert [QuestionResult.from_json(json.loads(line)) for line in lines] == scored()


def test_report_md_describes_the_run_and_has_a_row_per_system(written: list[Path]) -> None:
    report = written[2].read_text(encoding="utf-8")
    assert f"- machine: {META['machine']}" in report
    assert "- noisy extraction: wrong_value=0.1, missed=0.05, seed=3" in report
    assert (
        "| `sgam` | 3 | 0.0% [0.0%, 56.2%] | 0.0% [0.0%, 56.2%] | 100.0% [20.7%, 100.0%] (n=1) "
        "| 100.0% [20.7%, 100.0%] (n=1) | 100.0% [20.7%, 100.0%] (n=1) "
        "| 0.0% [0.0%, 56.2%] | 22 / 22 | 2.5 / 3.4 |"
    ) in report
    assert (
        "| `dm` | 3 | 100.0% [43.8%, 100.0%] | 100.0% [43.8%, 100.0%] | 0.0% [0.0%, 79.3%] (n=1) |"
        in report
    )
    assert "| `dm` | point in time | 1 | 0.0% [0.0%, 79.3%] | 100.0% [20.7%, 100.0%] |" in report
    assert "| `sgam` | 100.0% [43.8%, 100.0%] (n=3) | - | - |" in report
    assert "a line marked superseded is skipped" in report
    # Only sgam and dm ran: the report explains no system it did not run.
    assert "`sgam_noisy`" not in report
    # The whole context, the line that decided the answer and the leaked one marked: here one
    # line, which mentions the stale value in passing ("misses the cafes of").
    assert (
        "```text\n>~ Mira still misses the cafes of Porto.\n  Mira has moved to Madrid.\n```"
        in (report)
    )
    assert "| `dm` | 3 | 0 | 3 |" in report  # three leak verdicts, each on a mention in passing
    assert "| `sgam` | 0 | 0 | 0 |" in report
    assert "**`dm`**, current: Where does Mira live now?" in report
    assert "**`sgam`**" not in report  # SGAM leaked nothing, so it has no example


def test_each_family_has_its_own_row_beside_the_total(written: list[Path]) -> None:
    systems = json.loads(written[0].read_text())["systems"]
    for row in systems.values():
        assert list(row["families"]) == ["customers", "records"]
        assert [row["families"][f]["questions"] for f in row["families"]] == [2, 1]
        for figures in row["families"].values():
            assert set(PINNED) <= set(figures)
    assert systems["dm"]["families"]["records"]["known_at_accuracy"] == 0.0
    assert systems["dm"]["families"]["records"]["current_accuracy"] is None
    report = written[2].read_text(encoding="utf-8")
    table = report.split("## By family")[1].split("##")[0]
    assert "| system | family | questions | stale leakage | stale mention |" in table
    assert (
        "| `sgam` | customers | 2 | 0.0% [0.0%, 65.8%] | 0.0% [0.0%, 65.8%] "
        "| 100.0% [20.7%, 100.0%] (n=1) "
        "| 100.0% [20.7%, 100.0%] (n=1) | - (n=0) |"
    ) in table
    assert (
        "| `dm` | records | 1 | 100.0% [20.7%, 100.0%] | 100.0% [20.7%, 100.0%] | - (n=0) "
        "| - (n=0) |"
    ) in table
    assert table.count("| `") == 4
    # The headline stays the total.
    assert report.index("## Headline") < report.index("## By family")
    assert "| `sgam` | 3 | 0.0% [0.0%, 56.2%] |" in report


def test_leakage_png_is_a_real_chart(written: list[Path]) -> None:
    data = written[3].read_bytes()
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (
        1200,
        800,
    )  # two rows: leakage and accuracy, then tokens and latency
    assert len(data) > 20_000


def test_a_rerun_writes_the_same_bytes(written: list[Path], tmp_path: Path) -> None:
    again = write(tmp_path / "again")
    assert [path.read_bytes() for path in again] == [path.read_bytes() for path in written]


def test_the_noisy_arm_leads_and_the_gold_fed_arm_follows_as_an_upper_bound(
    tmp_path: Path,
) -> None:
    results = [replace(r, system="sgam_noisy") for r in scored() if r.system == "dm"]
    results = scored() + results  # run order: sgam, dm, sgam_noisy
    write_report(tmp_path, summary=summarize(results), results=results, meta=META)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    headline = report.split("## Headline", 1)[1].split("## By family", 1)[0]
    rows = [line.split(" | ")[0] for line in headline.splitlines() if line.startswith("| `")]
    assert rows == ["| `sgam_noisy`", "| `sgam`", "| `dm`"]
    assert headline.index("`sgam_noisy` leads") < headline.index("upper bound")
    # summary.json keeps the run's order: only the presentation changes.
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert list(summary["systems"]) == ["sgam", "dm", "sgam_noisy"]
    assert summary["systems"]["dm"]["leak_verdicts"] == {"leaks": 3, "in_passing": 3, "stating": 0}


def test_leakage_and_accuracy_have_panels_of_their_own_with_every_share_labelled() -> None:
    figure = chart_figure(summarize(scored()))
    leakage, accuracy = figure.axes[:2]
    assert "lower is better" in leakage.get_title()
    assert "higher is better" in accuracy.get_title()
    assert [t.get_text() for t in leakage.get_xticklabels()] == ["sgam", "dm"]
    # SGAM's 0% bars carry a label, so the bar that cannot be seen is still read.
    labels = [text.get_text() for text in leakage.texts]
    assert labels == ["0%", "100%", "0%", "100%"]  # stale leakage, then stale mention
    assert [text.get_text() for text in accuracy.texts].count("100%") == 3
