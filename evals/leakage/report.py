"""The leakage evaluation's report: summary.json, questions.jsonl, report.md and leakage.png.

Everything written is a function of the summary, the scored questions and the run's metadata,
so two writes of the same run give the same bytes (the timings are whatever the run measured).
The chart is drawn on a bare ``Figure`` with the Agg canvas: no pyplot state, no display.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from evals.leakage.chart import KIND_LABELS, draw_chart
from evals.leakage.report_sections import (
    breakdown_sections,
    examples,
    markdown_table,
    passing_section,
    share_cell,
)
from evals.leakage.scoring import (
    KINDS,
    NOT_KNOWN,
    QUESTION_KINDS,
    UNCERTAIN,
    QuestionResult,
    proportion,
)
from evals.leakage.summary import report_order

SUMMARY = "summary.json"
QUESTIONS = "questions.jsonl"
REPORT = "report.md"
CHART = "leakage.png"

SYSTEMS = {
    "sgam": "SGAM fed the history's gold facts as typed candidates: an upper bound, extraction"
    " without error",
    "sgam_noisy": "SGAM fed the same episodes through a noisy extraction: the comparison with"
    " the baselines to read first",
    "dm": "raw episodes, the top-k most similar to the question, as the context",
    "dm_recency": "the same similar episodes, newest first",
    "langgraph": "LangGraph's PostgresStore: raw episodes, its top-k semantic search",
    "mem0": "Mem0 on pgvector, top-k search: raw episodes, or with --extractor what it extracts",
}
PEERS = ("langgraph", "mem0")
META_ORDER = ("date", "machine", "python", "seed", "size", "model", "noisy_extraction")
EXAMPLES_PER_SYSTEM = 3


def run_environment() -> dict[str, str]:
    """The machine and Python this process runs on, for the run's metadata."""
    machine = f"{platform.system()} {platform.release()} {platform.machine()}"
    processor = platform.processor() or "unknown processor"
    return {
        "machine": f"{machine}, {processor}, {os.cpu_count()} CPUs",
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
    }


def write_report(
    out_dir: Path,
    *,
    summary: Mapping[str, Any],
    results: Sequence[QuestionResult],
    meta: Mapping[str, Any],
) -> list[Path]:
    """Write the four report files into ``out_dir`` (created if missing); return their paths.

    ``meta`` describes the run: machine, python, seed, size, date, model and the noisy
    extraction's settings are expected (``run_environment`` gives the first two); any other
    entries are reported too.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / SUMMARY, out_dir / QUESTIONS, out_dir / REPORT, out_dir / CHART]
    document = {"meta": dict(meta), **summary}
    paths[0].write_text(json.dumps(document, indent=2, default=_json_default) + "\n")
    paths[1].write_text(
        "".join(json.dumps(result.to_json(), ensure_ascii=False) + "\n" for result in results),
        encoding="utf-8",
    )
    paths[2].write_text(render_markdown(summary, results, meta), encoding="utf-8")
    draw_chart(summary, paths[3])
    return paths


def render_markdown(
    summary: Mapping[str, Any], results: Sequence[QuestionResult], meta: Mapping[str, Any]
) -> str:
    """The report an evaluator reads: the run, the headline table, accuracy by kind, examples."""
    systems: Mapping[str, Mapping[str, Any]] = report_order(summary["systems"])
    results = _in_report_order(results)
    parts = [
        "# Stale-fact leakage evaluation",
        "## What was run",
        _run_section(meta, systems),
        "## Headline",
        _lead(systems),
        _headline_table(systems),
        (
            "Shares are of questions, with Wilson 95% intervals in brackets. Tokens are the "
            "context's size; latency is the time to build the context."
        ),
        "## By family" if _has_families(systems) else "",
        _family_table(systems) if _has_families(systems) else "",
        (
            "A family is the shape of history a question's key comes from (its gold's "
            "`family`); the headline is every family together."
            if _has_families(systems)
            else ""
        ),
        *breakdown_sections(summary),
        "## Accuracy by question kind",
        _kind_table(results),
        "## Accuracy by gold answer",
        _gold_table(results),
        "## Leak verdicts resting on a mention in passing",
        passing_section(results),
        "## How to read this",
        _how_to_read(list(systems)),
        "## Examples of stale leakage",
        examples(results, per_system=EXAMPLES_PER_SYSTEM),
    ]
    return "\n\n".join(part for part in parts if part) + "\n"


def _run_section(meta: Mapping[str, Any], systems: Mapping[str, Mapping[str, Any]]) -> str:
    ordered = [key for key in META_ORDER if key in meta]
    ordered += [key for key in meta if key not in META_ORDER]
    lines = [f"- {key.replace('_', ' ')}: {_meta_value(meta[key])}" for key in ordered]
    lines.append("")
    lines.append("Systems compared:")
    for name, row in systems.items():
        what = SYSTEMS.get(name, "")
        lines.append(f"- `{name}`{': ' + what if what else ''} ({row['questions']} questions)")
    return "\n".join(lines)


def _has_families(systems: Mapping[str, Mapping[str, Any]]) -> bool:
    return any(row.get("families") for row in systems.values())


def _family_table(systems: Mapping[str, Mapping[str, Any]]) -> str:
    """The headline's columns per system and family of history (the shape the generator gave
    the question's key), each family on its own row."""
    header, *_ = _headline_rows({})
    rows = [
        [f"`{name}`", family, *cells[1:]]
        for name, row in systems.items()
        for family, figures in row.get("families", {}).items()
        for cells in _headline_rows({name: figures})[1:]
    ]
    return markdown_table([header[0], "family", *header[1:]], rows)


def _headline_table(systems: Mapping[str, Mapping[str, Any]]) -> str:
    header, *rows = _headline_rows(systems)
    return markdown_table(header, rows)


def _headline_rows(systems: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """The header, then one row per system: questions, shares with intervals, tokens, latency."""
    header = [
        "system",
        "questions",
        "stale leakage",
        "stale mention",
        *(f"{KIND_LABELS[kind]} accuracy" for kind in KINDS),
        "cross-tenant leakage",
        "tokens p50 / p95",
        "latency p50 / p95 (ms)",
    ]
    rows = [
        [
            f"`{name}`",
            str(row["questions"]),
            share_cell(row["stale_leakage"], row["stale_leakage_ci"]),
            share_cell(row.get("stale_mention"), row.get("stale_mention_ci", [])),
            *(
                share_cell(row[f"{kind}_accuracy"], row[f"{kind}_accuracy_ci"])
                + f" (n={row[f'{kind}_questions']})"
                for kind in KINDS
            ),
            share_cell(row["cross_tenant_leakage"], row["cross_tenant_leakage_ci"]),
            f"{_number(row['context_tokens_p50'])} / {_number(row['context_tokens_p95'])}",
            f"{_number(row['latency_p50_ms'], 1)} / {_number(row['latency_p95_ms'], 1)}",
        ]
        for name, row in systems.items()
    ]
    return [header, *rows]


def _kind_table(results: Sequence[QuestionResult]) -> str:
    rows = []
    for name in _systems_of(results):
        for kind in QUESTION_KINDS:
            asked = [r for r in results if r.system == name and r.kind == kind]
            if asked:
                rows.append(
                    [
                        f"`{name}`",
                        KIND_LABELS[kind],
                        str(len(asked)),
                        share_cell(*proportion([r.correct for r in asked])),
                        share_cell(*proportion([r.stale_leak for r in asked])),
                        share_cell(*proportion([r.answer_present for r in asked])),
                    ]
                )
    header = ["system", "kind", "questions", "accuracy", "stale leakage", "answer present"]
    return markdown_table(header, rows)


def _gold_table(results: Sequence[QuestionResult]) -> str:
    groups = ("a value", NOT_KNOWN, UNCERTAIN)
    rows = []
    for name in _systems_of(results):
        row = [f"`{name}`"]
        for group in groups:
            asked = [r.correct for r in results if r.system == name and _gold_group(r) == group]
            row.append(share_cell(*proportion(asked)) + f" (n={len(asked)})" if asked else "-")
        rows.append(row)
    return markdown_table(["system", *(f"gold: {group}" for group in groups)], rows)


def _how_to_read(systems: Sequence[str]) -> str:
    noisy = (
        "`sgam_noisy` is SGAM fed a noisy extraction (settings above), so the gap between "
        "`sgam` and the baselines can be told apart from what clean extraction alone buys. "
        if "sgam_noisy" in systems
        else ""
    )
    peers = [f"`{name}`" for name in PEERS if name in systems]
    if peers:
        noisy += (
            f"{' and '.join(peers)} are other memory systems, run as their own APIs offer on "
            "the same raw episodes, scoped to the question's tenant and subject; they keep no "
            "system time, so a known-at question reads everything stored before it was asked. "
        )
    return (
        "Every system's context is scored by one rule, with no language model. Its lines are "
        "read top to bottom and a line marked superseded is skipped; a line naming the key "
        '(`subject.attribute`) with "not known" answers "not known"; a line stating one of '
        'the key\'s values and marked disputed or uncertain, or listed under "Uncertain:", answers '
        '"uncertain"; otherwise the first of the key\'s values on an unmarked line is the '
        'answer; nothing found answers "not known". A context leaks a stale fact (stale '
        "leakage) when it states another version's value of the asked key on a line it "
        "presents as current: not marked superseded, not opened by one of SGAM's evidence "
        'marks ("older than …", "newer than memory", "in conflict", "disputed"), not under '
        '"Uncertain:". A model reading such a line has no way to tell that value is outdated. '
        "Stale mention is the strict reading: any line not marked superseded counts, marked or "
        "not; for a system that writes no marks the two are equal. Cross-tenant leakage counts "
        "any value the key has only in another tenant. Under this rule a raw-episode "
        "baseline answers with the first value in its context: the most similar episode for "
        "`dm`, the newest similar one for `dm_recency`.\n\n"
        "The comparison is not between equals at the input: SGAM is written through typed "
        "candidates (subject, attribute, value, valid from, each citing its episode), while "
        "the baselines read the raw episode text. "
        + noisy
        + "The questions of one history share subjects and "
        "episodes, so they are not independent and the intervals are narrower than the true "
        "uncertainty."
    )


def _gold_group(result: QuestionResult) -> str:
    return result.gold_answer if result.gold_answer in (NOT_KNOWN, UNCERTAIN) else "a value"


def _systems_of(results: Sequence[QuestionResult]) -> list[str]:
    return list(dict.fromkeys(result.system for result in results))


def _in_report_order(results: Sequence[QuestionResult]) -> list[QuestionResult]:
    """The results grouped by system in ``report_order``, each system's in question order."""
    order = list(report_order(dict.fromkeys(_systems_of(results))))
    return sorted(results, key=lambda result: order.index(result.system))


def _lead(systems: Mapping[str, Mapping[str, Any]]) -> str:
    """What to compare first: the noisy arm against the baselines, the gold-fed arm after."""
    if "sgam_noisy" not in systems:
        return ""
    upper = (
        " `sgam` follows: it is fed the history's gold facts, so it is an upper bound on what"
        " SGAM does with a perfect extraction, not a fair comparison."
        if "sgam" in systems
        else ""
    )
    return (
        "`sgam_noisy` leads: it reads the same episodes as the baselines through an extraction"
        " that misses and mistakes some changes (settings above), so it is the comparison to"
        " read first." + upper
    )


def _number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _meta_value(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={_meta_value(item)}" for key, item in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(_meta_value(item) for item in value)
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
