"""``sgam bench``'s verdicts: the targets as ratios within one run, the JSON and the chart (the
Markdown tables are ``evals.bench.tables``).

Everything here is a function of the results object, so fixed numbers give fixed output.
The targets (design issue "the read and write paths at the speed of the floor") compare each
served call with what it cannot beat, measured in the same run on the same machine: GET /healthz
for the HTTP hop, the served baseline (the ``dm`` baseline's search p50 plus /healthz p50) for
search and context, the raw encoder's batch rate for imported text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from evals.bench.chart import draw_chart
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

FLOOR_OF = {
    "fact_current": "sql_fact_current",
    "fact_point_in_time": "sql_fact_point_in_time",
    "fact_known_at": "sql_fact_known_at",
    "profile": "sql_profile",
}
"""Each exact read's floor: the same read as one prepared statement."""


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


Results = Mapping[str, Any]


def _p50(scale: Results, case: str, clients: str = "1") -> float:
    return float(scale["reads"][case][clients]["p50_ms"])


def served_baseline_ms(scale: Results) -> float:
    """The baseline's in-process search p50 plus /healthz p50: the same search behind HTTP."""
    return float(scale["floor"]["baseline_search"]["p50_ms"]) + _p50(scale, "healthz")


def _floor_note(scale: Results, case: str) -> str:
    """How close the floor alone comes to a fact GET's target: the HTTP hop and the statement
    as raw SQL, before any routing, auth, tenant setting or JSON."""
    floor = scale.get("floor", {}).get(FLOOR_OF[case])
    if floor is None:
        return ""
    hop = _p50(scale, "healthz")
    return (
        f"the floor alone (healthz p50 + the raw SQL p50) is {(hop + floor['p50_ms']) / hop:.2f}x; "
    )


def _copy_note(scale: Results) -> str:
    """The database's own rate for fact versions: the scale's rows COPY-loaded straight into
    the table (foreign keys skipped, the exclusion constraint and the indexes kept)."""
    load = scale.get("load", {})
    if not load.get("copy_s"):
        return ""
    rate = load["fact_versions"] / load["copy_s"]
    return (
        f"COPY of the {load['fact_versions']:,} fact versions straight into fact_versions"
        f" (foreign keys skipped) ran at {rate:,.0f} rows/s in this run"
    )


def _mixed_note(mixed: Results) -> str:
    """Who had the cores during the mixed load: the server and the clients, in cores."""
    cpu = mixed.get("cpu")
    if not cpu or not cpu.get("wall_s"):
        return ""
    wall = float(cpu["wall_s"])
    return (
        f"during the mix the server used {cpu['server_cpu_s'] / wall:.2f} cores and the clients"
        f" {cpu['clients_cpu_s'] / wall:.2f} of {cpu['cores']} (load average"
        f" {cpu['load_average'][0]:g} at its end)"
    )


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
    return Target(what, measured, limit, unit, bound, met, "" if met else explain())


def _scaling(results: Results) -> float | None:
    scales = results["scales"]
    if len(scales) < 2:
        return None
    first, last = scales[0], scales[-1]
    return max(_p50(last, case) / _p50(first, case) for case in SCALED_READS)


def evaluate(results: Results) -> list[Target]:
    """Every target of the issue, from the smallest scale's one-client figures."""
    base = results["scales"][0]
    imported = results["import"]
    no_import = str(imported.get("skipped") or imported.get("failed") or "not measured")

    def p50(case: str) -> float:
        return _p50(base, case)

    def tail(case: str, q: int) -> float:
        return float(base["reads"][case]["1"][f"p{q}_ms"])

    def writes(clients: str, case: str = "candidates_spread", over: str = "") -> float:
        rate = float(results["writes"].get(case, {})[clients]["items_per_s"])
        return rate / writes(over) if over else rate  # over: the spread keys' rate at ``over``

    def import_rate(field: str, *, per: Callable[[], float] = lambda: 1.0) -> Measure:
        return lambda: float(imported[field]) / per() if field in imported else None

    def encoder() -> float:
        return float(base["floor"]["encoder_batch"]["items_per_s"])

    mixed = results.get("mixed", {})

    def under_mix(kind: str, figure: str) -> float:
        return float(mixed["mixed"][kind][figure])

    return [
        _target(
            "GET current fact p50 / healthz p50",
            lambda: p50("fact_current") / p50("healthz"),
            limit=1.3,
            explain=lambda: (
                _floor_note(base, "fact_current") + explain(base, "fact_current", "healthz")
            ),
        ),
        _target(
            "GET point-in-time fact p50 / healthz p50",
            lambda: p50("fact_point_in_time") / p50("healthz"),
            limit=1.3,
            explain=lambda: (
                _floor_note(base, "fact_point_in_time")
                + explain(base, "fact_point_in_time", "healthz")
            ),
        ),
        _target(
            "context (named, evidence_k 0) p50 / GET fact p50",
            lambda: p50("context_named_k0") / p50("fact_current"),
            limit=1.5,
            explain=lambda: explain(base, "context_named_k0", "fact_current"),
        ),
        _target(
            "context p50 / served baseline",
            lambda: p50("context_free") / served_baseline_ms(base),
            limit=1.1,
            explain=lambda: explain(base, "context_free", "search"),
        ),
        _target(
            "evidence search p50 / served baseline",
            lambda: p50("search") / served_baseline_ms(base),
            limit=1.05,
            explain=lambda: explain(base, "search"),
        ),
        _target(
            "candidate writes, 8 clients, spread keys",
            lambda: writes("8"),
            limit=1_500,
            unit="assertions/s",
            bound="min",
        ),
        *(
            _target(what, partial(writes, "8", case, over), limit=x, bound="min")
            for what, case, over, x in (
                ("8 writers / 1 writer throughput", "candidates_spread", "1", 1.5),
                ("8 writers citing one episode / own", "candidates_one_episode", "8", 0.9),
                ("8 writers citing one episode / 1 writer", "candidates_one_episode", "1", 1.5),
            )
        ),
        _target(
            "bulk import, facts",
            import_rate("facts_per_s"),
            limit=20_000,
            unit="facts/s",
            bound="min",
            why_not=no_import,
            explain=lambda: _copy_note(base),
        ),
        _target(
            "bulk import, episodes / raw encoder rate",
            import_rate("episodes_per_s", per=encoder),
            limit=0.9,
            bound="min",
            why_not=no_import,
        ),
        _target(
            "context right after a bulk load p50 / the same after ANALYZE",
            lambda: float(results["fresh"]["after_load_over_analyzed"]),
            limit=1.2,
        ),
        _target(
            "read p50 at the largest scale / smallest (worst read)",
            lambda: _scaling(results),
            limit=1.5,
            why_not="one scale in this run",
        ),
        _target(
            "mixed load (16 clients): fact GET p99 / fact GET p50 alone",
            lambda: under_mix("fact", "p99_ms") / float(mixed["fact_alone"]["p50_ms"]),
            limit=10.0,
            explain=lambda: _mixed_note(mixed),
        ),
        _target(
            "mixed load (16 clients): context calls/s / context alone at 8 clients",
            lambda: (
                under_mix("context", "calls_per_s") / float(mixed["context_alone"]["calls_per_s"])
            ),
            limit=0.8,
            bound="min",
            explain=lambda: _mixed_note(mixed),
        ),
        _target(
            "GET fact p99 (worst of current, point in time, known at)",
            lambda: max(tail(case, 99) for case in FLOOR_OF if case != "profile"),
            limit=5.0,
            unit="ms",
            explain=lambda: explain(base, "fact_point_in_time"),
        ),
        _target(
            "context p95",
            lambda: tail("context_free", 95),
            limit=40.0,
            unit="ms",
            explain=lambda: explain(base, "context_free"),
        ),
        _target(
            "server peak RSS",
            lambda: float(results["server"]["peak_rss_mib"]),
            limit=RSS_LIMIT_MIB,
            unit="MiB",
        ),
    ]


def with_targets(results: Mapping[str, Any]) -> dict[str, Any]:
    """The results with their evaluated targets under ``targets``."""
    return {**results, "targets": [asdict(target) for target in evaluate(results)]}


def write_results(results: Results, out: Path) -> list[Path]:
    """Write the results as JSON to ``out`` and the chart beside it (same name, .png)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    chart = out.with_suffix(".png")
    draw_chart(results, chart)
    return [out, chart]
