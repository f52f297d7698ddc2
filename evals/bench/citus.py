"""``sgam bench --database-url URL --compare-single-node``: the cases on a Citus cluster beside a
single node, in one run, as ratios.

The same options run twice in one process, one after the other: first on a scratch embedded
PostgreSQL (the single node), then on the cluster's coordinator (``URL``, a fresh cluster's
database: ``evals.bench.served.database``). Every case's p50, p95 and p99 and its calls per
second on the cluster are divided by the single node's, and so is the import's rate; both runs'
results and the ratios go to ``evals/results/citus.json``. The two runs share the machine and
its load, so on a shared machine the ratios are the figures, not the milliseconds.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from evals.bench.served.database import database_facts, described
from evals.bench.served.http import Options, run

RESULTS = Path("evals/results/citus.json")
STATS = ("p50_ms", "p95_ms", "p99_ms", "calls_per_s")
"""What is compared of a case, where both runs have it."""
RATES = ("facts_per_s", "episodes_per_s", "facts_over_floor")
"""The bulk import's figures compared (``import``)."""


def paired(single: Any, cluster: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each case both results timed, as (its path, the two summaries): a case is a mapping
    with ``p50_ms``; a failed or missing case on either side is left out."""
    if not isinstance(single, Mapping) or not isinstance(cluster, Mapping):
        return
    if "p50_ms" in single and "p50_ms" in cluster:
        yield path, {"single_node": single, "citus": cluster}
        return
    for name, value in single.items():
        if name in cluster:
            yield from paired(value, cluster[name], f"{path}/{name}" if path else str(name))


def _divided(cluster: Any, single: Any) -> float | None:
    if not isinstance(cluster, int | float) or not isinstance(single, int | float) or not single:
        return None
    return round(cluster / single, 3)


def case_name(path: str, scales: int) -> str:
    """A case's path without the scale's index when the run had one scale."""
    return path.removeprefix("scales/0/") if scales == 1 else path


TIMED = ("writes", "fresh", "mixed", "hostile_bodies")
"""The parts of a run besides its scales that hold timed cases."""


def timed(results: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a run's results that hold timed cases, each scale under its index."""
    found: dict[str, Any] = {name: results[name] for name in TIMED if name in results}
    return {"scales": dict(enumerate(results.get("scales", [])))} | found


def ratios(single: Mapping[str, Any], cluster: Mapping[str, Any]) -> dict[str, Any]:
    """Every case both runs timed: the single node's and the cluster's p50 in ms, and the
    cluster's p50, p95, p99 and calls per second over the single node's (above 1: the cluster
    takes longer, or serves more calls); then the import's rates over the single node's."""
    scales = len(single.get("scales", []))
    cases: dict[str, Any] = {}
    for path, pair in paired(timed(single), timed(cluster)):
        one, many = pair["single_node"], pair["citus"]
        row = {"single_node_p50_ms": one["p50_ms"], "citus_p50_ms": many["p50_ms"]}
        for stat in STATS:
            ratio = _divided(many.get(stat), one.get(stat))
            if ratio is not None:
                row[stat.removesuffix("_ms")] = ratio
        cases[case_name(path, scales)] = row
    imported, imported_there = single.get("import", {}), cluster.get("import", {})
    rates = {rate: _divided(imported_there.get(rate), imported.get(rate)) for rate in RATES}
    return {
        "cases": cases,
        "import": {rate: ratio for rate, ratio in rates.items() if ratio is not None},
    }


def compare(
    options: Options, database_url: str, *, say: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run ``options`` on a scratch single node, then on the cluster; both and their ratios."""
    extra = {} if say is None else {"say": say}
    single = run(dataclasses.replace(options, database_url=None), **extra)
    cluster = run(dataclasses.replace(options, database_url=database_url), **extra)
    return {
        "machine": single["machine"],
        "cluster": database_facts(database_url) | {"database_url": described(database_url)},
        "order": "single node first, then the cluster, in one process",
        "ratios": ratios(single, cluster),
        "single_node": single,
        "citus": cluster,
    }


def ratio_table(results: Mapping[str, Any]) -> str:
    """The ratios as a Markdown table: each case's two p50s and the cluster's ratios."""
    lines = [
        "| case | single node p50 ms | Citus p50 ms | p50 | p95 | p99 | calls/s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, row in results["ratios"]["cases"].items():
        cells = [f"{row.get(stat, '')}x" if stat in row else "" for stat in ("p50", "p95", "p99")]
        calls = f"{row['calls_per_s']}x" if "calls_per_s" in row else ""
        lines.append(
            f"| {name} | {row['single_node_p50_ms']} | {row['citus_p50_ms']} | "
            + " | ".join(cells)
            + f" | {calls} |"
        )
    return "\n".join(lines)


def import_line(results: Mapping[str, Any]) -> str:
    """The import's rates on the cluster over the single node's, in words."""
    rates = results["ratios"]["import"]
    if not rates:
        return "The bulk import ran on one side only, or on neither."
    return "Bulk import, Citus over the single node: " + ", ".join(
        f"{name} {ratio}x" for name, ratio in rates.items()
    )


def about(results: Mapping[str, Any]) -> str:
    """Where the two runs ran, in one sentence."""
    machine, cluster = results["machine"], results["cluster"]
    load = machine.get("load_average_at_start", ["?"])[0]
    return (
        f"{machine.get('cpus')} CPUs ({machine.get('cpu_model')}), load average {load} at the"
        f" start; Citus {cluster.get('citus')} with {cluster.get('workers')} workers and"
        f" {cluster.get('shard_count')} shards a table, on the same machine"
    )


def write(results: Mapping[str, Any], out: Path) -> Path:
    """Write the results as JSON to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return out
