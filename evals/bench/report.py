"""``sgam bench``'s verdicts: the targets as ratios within one run, the JSON and the chart (the
Markdown tables are ``evals.bench.tables``).

Everything here is a function of the results object, so fixed numbers give fixed output.
The targets (issue 29's table) compare each served call with what it cannot beat, measured in
the same run on the same machine: GET /healthz for the HTTP hop, the served baseline (the ``dm``
baseline's search p50 plus /healthz p50) for search and context, the encoder alone on the same
texts for episodes written one at a time, COPY for the import, the smallest scale for the
largest. Three absolutes for the machine class are reported beside them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from evals.bench.chart import draw_chart
from evals.bench.notes import (
    FLOOR_OF,
    Results,
    copy_floor,
    copy_note,
    floor_note,
    fresh_note,
    mixed_note,
    read_p50,
    receipt_note,
    served_baseline_ms,
    stack_note,
)
from evals.bench.profile import explain

RSS_LIMIT_MIB = round(1.2e9 / 2**20, 1)
"""1.2 GB (decimal) in MiB."""
SCALED_READS = (
    "fact_current",
    "fact_point_in_time",
    "fact_known_at",
    "profile",
    "search",
    "context_free",
    "context_named",
    "context_named_k0",
)
"""The served reads whose latency the scale sweep compares."""


@dataclass(frozen=True)
class Target:
    """One target: the measured figure against its limit, and whether it was met."""

    what: str
    measured: float | None
    limit: float
    unit: str
    bound: Literal["max", "min"]
    met: bool | None
    note: str = ""


Bound = Literal["max", "min"]
Measure = Callable[[], float | None]


def _target(
    what: str,
    measure: Measure,
    *,
    limit: float,
    unit: str = "x",
    bound: Bound = "max",
    why_not: str = "",
    explain: Callable[[], str] = str,
) -> Target:
    try:
        measured = measure()
    except KeyError as missing:  # a case that failed or was skipped has no figures
        return Target(what, None, limit, unit, bound, None, f"no figure for {missing}")
    if measured is None:
        return Target(what, None, limit, unit, bound, None, why_not)
    measured = round(measured, 3)
    met = measured <= limit if bound == "max" else measured >= limit
    return Target(what, measured, limit, unit, bound, met, "" if met else _said(explain))


def _said(explain: Callable[[], str]) -> str:
    try:
        return explain()
    except KeyError as missing:  # the figures a note quotes may lack what the target did not
        return f"the note's figure {missing} is missing"


def scaling(results: Results) -> dict[str, Any]:
    """Every read's p50 at the largest scale over its p50 at the smallest, by clients; with
    each scale's size (versions, subjects). Empty with one scale."""
    scales = results["scales"]
    if len(scales) < 2:
        return {}
    first, last = scales[0], scales[-1]
    ratios: dict[str, dict[str, float]] = {}
    for case, by_clients in first["reads"].items():
        for clients, stats in by_clients.items():
            large = last["reads"].get(case, {}).get(clients, {})
            if "p50_ms" in stats and "p50_ms" in large:
                ratio = round(large["p50_ms"] / stats["p50_ms"], 3)
                ratios.setdefault(case, {})[clients] = ratio
    size = ("fact_versions", "subjects")
    return {
        "from": {name: first.get(name) for name in size},
        "to": {name: last.get(name) for name in size},
        "p50_ratio": ratios,
    }


def _worst_scaling(results: Results) -> tuple[str, float] | None:
    ratios = scaling(results).get("p50_ratio")
    if not ratios:
        return None
    # A read that failed at one scale has no ratio: the target is not measured, not met.
    return max(((case, ratios[case]["1"]) for case in SCALED_READS), key=lambda found: found[1])


def _scaling_note(results: Results) -> str:
    worst = _worst_scaling(results)
    if worst is None:
        return ""
    case, ratio = worst
    last = results["scales"][-1]
    return f"worst: {case} {ratio:g}x; at the largest scale " + explain(last, case, "healthz")


def evaluate(results: Results) -> list[Target]:
    """Every target of the issue, from the smallest scale's one-client figures; the last
    three are absolutes for this machine class, reported beside the ratios."""
    base = results["scales"][0]
    imported = results["import"]
    no_import = imported.get("skipped") or imported.get("failed") or "no facts/s reported"
    writes = results["writes"]

    def p50(case: str) -> float:
        return read_p50(base, case)

    def tail(case: str, q: int) -> float:
        return float(base["reads"][case]["1"][f"p{q}_ms"])

    def rate(case: str, clients: str) -> float:
        return float(writes[case][clients]["items_per_s"])

    def one_episode_over(clients: str) -> float:
        """8 writers citing one episode against ``clients`` citing their own."""
        return rate("candidates_one_episode", "8") / rate("candidates_spread", clients)

    def writers_note() -> str:
        rates = [
            f"{case} at {clients}: {rate(case, clients):,.0f}/s"
            for case, clients in (
                ("candidates_one_episode", "8"),
                ("candidates_spread", "8"),
                ("candidates_spread", "1"),
            )
            if clients in writes.get(case, {}) and "items_per_s" in writes[case][clients]
        ]
        return "assertions written: " + ", ".join(rates)

    def encoder_text_rate() -> float:
        return float(base["floor"]["encoder_episode"]["items_per_s"])

    def imported_over_copy() -> float | None:
        if "facts_per_s" not in imported:
            return None
        return float(imported["facts_per_s"]) / copy_floor(results)[0]

    mixed = results.get("mixed", {})

    def under_mix(kind: str, figure: str) -> float:
        return float(mixed["mixed"][kind][figure])

    return [
        _target(
            "GET fact p50 / healthz p50",
            lambda: p50("fact_current") / p50("healthz"),
            limit=1.6,
            explain=lambda: (
                floor_note(base, "fact_current")
                + stack_note(results)
                + explain(base, "fact_current", "healthz")
            ),
        ),
        _target(
            "context (attribute named, evidence_k 0) p50 / GET fact p50",
            lambda: p50("context_named_k0") / p50("fact_current"),
            limit=1.5,
            explain=lambda: (
                receipt_note(results) + explain(base, "context_named_k0", "fact_current")
            ),
        ),
        _target(
            "full context p50 / served baseline",
            lambda: p50("context_free") / served_baseline_ms(base),
            limit=1.3,
            explain=lambda: explain(base, "context_free", "search"),
        ),
        _target(
            "evidence search p50 / served baseline",
            lambda: p50("search") / served_baseline_ms(base),
            limit=1.05,
            explain=lambda: explain(base, "search"),
        ),
        _target(
            "context right after a bulk load p50 / the same after ANALYZE",
            lambda: float(results["fresh"]["after_load_over_analyzed"]),
            limit=1.2,
            explain=lambda: fresh_note(results["fresh"]),
        ),
        *(
            _target(
                f"8 writers citing one episode / {over}",
                partial(one_episode_over, clients),
                limit=x,
                bound="min",
                explain=writers_note,
            )
            for over, clients, x in (("8 citing their own", "8", 0.9), ("one writer", "1", 1.5))
        ),
        _target(
            "episodes written one call at a time / the encoder's rate for the same texts",
            lambda: rate("ingest_1", "1") / encoder_text_rate(),
            limit=0.7,
            bound="min",
            explain=lambda: (
                f"one client wrote {rate('ingest_1', '1'):g} episodes/s; the encoder alone"
                f" embeds {encoder_text_rate():g} of the same texts a second, one a call"
            ),
        ),
        _target(
            "import, facts / the COPY floor",
            imported_over_copy,
            limit=0.8,
            bound="min",
            why_not=no_import,
            explain=lambda: copy_note(results),
        ),
        _target(
            "every read p50 at the largest scale / at the smallest (the worst read)",
            lambda: None if (worst := _worst_scaling(results)) is None else worst[1],
            limit=1.5,
            why_not="one scale in this run",
            explain=lambda: _scaling_note(results),
        ),
        _target(
            "mixed load (16 clients): fact GET p99 / fact GET p50 alone",
            lambda: under_mix("fact", "p99_ms") / float(mixed["fact_alone"]["p50_ms"]),
            limit=10.0,
            explain=lambda: mixed_note(mixed),
        ),
        _target(
            "mixed load (16 clients): context calls/s / context alone at 8 clients",
            lambda: (
                under_mix("context", "calls_per_s") / float(mixed["context_alone"]["calls_per_s"])
            ),
            limit=0.8,
            bound="min",
            explain=lambda: mixed_note(mixed),
        ),
        _target(
            "GET fact p99 (worst of current, point in time, known at)",
            lambda: max(tail(case, 99) for case in FLOOR_OF if case != "profile"),
            limit=5.0,
            unit="ms",
            explain=lambda: explain(base, "fact_point_in_time"),
        ),
        _target(
            "full context p95",
            lambda: tail("context_free", 95),
            limit=40.0,
            unit="ms",
            explain=lambda: explain(base, "context_free"),
        ),
        _target(
            "server RSS, the process tree's peak (encoder processes included)",
            lambda: float(results["server"]["peak_rss_mib"]),
            limit=RSS_LIMIT_MIB,
            unit="MiB",
            explain=lambda: (
                f"{results['server']['rss_mib']:g} MiB resident at the end, over"
                f" {results['server'].get('processes', 1)} process(es)"
            ),
        ),
    ]


def with_targets(results: Mapping[str, Any]) -> dict[str, Any]:
    """The results with every read's scale ratio under ``scaling`` and their evaluated
    targets under ``targets``."""
    targets = [asdict(target) for target in evaluate(results)]
    return {**results, "scaling": scaling(results), "targets": targets}


def write_results(results: Results, out: Path) -> list[Path]:
    """Write the results as JSON to ``out`` and the chart beside it (same name, .png)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    chart = out.with_suffix(".png")
    draw_chart(results, chart)
    return [out, chart]
