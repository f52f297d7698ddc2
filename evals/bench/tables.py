"""``sgam bench``'s Markdown: each scale's cases against their floor, then the targets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evals.bench.notes import FLOOR_OF, Results, served_baseline_ms
from evals.bench.report import Target, evaluate, scaling


def _verdict(target: Target) -> str:
    return "not measured" if target.met is None else "met" if target.met else "MISSED"


def targets_table(targets: list[Target]) -> str:
    """The targets as a Markdown table: measured, limit, verdict."""
    lines = ["| target | measured | limit | verdict |", "| --- | --- | --- | --- |"]
    for target in targets:
        measured = "-" if target.measured is None else f"{target.measured:g} {target.unit}"
        sign = "<=" if target.bound == "max" else ">="
        verdict = _verdict(target) + (f" ({target.note})" if target.note else "")
        lines.append(
            f"| {target.what} | {measured} | {sign} {target.limit:g} {target.unit} | {verdict} |"
        )
    return "\n".join(lines)


def _row(name: str, clients: str, stats: Mapping[str, Any], against: str) -> str:
    if "error" in stats:
        return f"| {name} | {clients} | failed: {stats['error'][:120]} | | | | |"
    cells = [stats[f"p{q}_ms"] for q in (50, 95, 99)]
    numbers = " | ".join(f"{cell:.2f}" for cell in cells)
    return f"| {name} | {clients} | {numbers} | {stats['items_per_s']:g} | {against} |"


def _against(scale: Results, case: str, stats: Mapping[str, Any]) -> str:
    if "error" in stats:
        return ""
    floor = FLOOR_OF.get(case)
    if floor is not None:
        ratio = stats["p50_ms"] / scale["floor"][floor]["p50_ms"]
        return f"{ratio:.1f}x {floor}"
    if case == "search" or case.startswith("context"):
        return f"{stats['p50_ms'] / served_baseline_ms(scale):.2f}x served baseline"
    return ""


def cases_table(scale: Results, writes: Results | None = None) -> str:
    """One scale's cases as a Markdown table: p50/p95/p99 ms, items/s, ratio to the floor."""
    head = "| case | clients | p50 ms | p95 ms | p99 ms | items/s | p50 against |"
    lines = [head, "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, stats in scale["floor"].items():
        lines.append(_row(f"floor: {name}", "1", stats, ""))
    served = served_baseline_ms(scale)
    lines.append(f"| served baseline (baseline_search + healthz p50) | 1 | {served:.2f} | | | | |")
    for name, by_clients in scale["reads"].items():
        for clients, stats in by_clients.items():
            lines.append(_row(name, clients, stats, _against(scale, name, stats)))
    for name, by_clients in (writes or {}).items():
        for clients, stats in by_clients.items():
            lines.append(_row(name, clients, stats, ""))
    return "\n".join(lines)


def hostile_line(hostile: Mapping[str, Any]) -> str:
    """``/healthz`` p99 while hostile bodies arrive, against its idle p99."""
    idle, loaded = hostile["healthz_idle"], hostile["healthz_under_bodies"]
    return (
        f"/healthz p99 while {hostile['bodies_at_once']} bodies of"
        f" {hostile['body_bytes'] / 2**20:.0f} MiB arrive: {loaded['p99_ms']:.1f} ms, idle"
        f" {idle['p99_ms']:.1f} ms ({hostile['p99_ratio']:g}x); the bodies answered"
        f" {hostile['body_statuses']} in {hostile['body_p50_ms']:g} ms (p50)"
    )


def mixed_table(mixed: Results) -> str:
    """The mixed load beside its references: each call's p50, p99 and calls/s."""
    lines = ["| calls | clients | p50 ms | p99 ms | calls/s |", "| --- | --- | --- | --- | --- |"]
    rows = [("fact GET alone", 1, mixed.get("fact_alone"))]
    rows.append(("context alone", 8, mixed.get("context_alone")))
    under = mixed.get("mixed", {})
    if "error" in under:
        return "\n".join([*lines, f"| mixed load | 16 | failed: {under['error'][:120]} | | |"])
    rows += [(f"{kind}, mixed load", mixed["mix"][kind], stats) for kind, stats in under.items()]
    for name, clients, stats in rows:
        if stats is None or "error" in stats:
            lines.append(f"| {name} | {clients} | failed | | |")
            continue
        figures = f"{stats['p50_ms']:.2f} | {stats['p99_ms']:.2f} | {stats['calls_per_s']:g}"
        lines.append(f"| {name} | {clients} | {figures} |")
    if "mixed_calls_per_s" in mixed:
        lines.append(f"| all calls, mixed load | 16 | | | {mixed['mixed_calls_per_s']:g} |")
    return "\n".join(lines)


def scaling_table(found: Results) -> str:
    """Every read's p50 at the largest scale over the smallest (``report.scaling``), by clients."""
    if not found.get("p50_ratio"):
        return "one scale in this run: no read's p50 compared across scales"
    first, last = found["from"], found["to"]
    clients = sorted({c for by in found["p50_ratio"].values() for c in by}, key=int)
    title = (
        f"p50 at {last['fact_versions']:,} versions ({last['subjects']:,} subjects)"
        f" / at {first['fact_versions']:,} ({first['subjects']:,} subjects)"
    )
    lines = [f"| read | {' | '.join(f'{title}, {c} client(s)' for c in clients)} |"]
    lines.append("| --- |" + " --- |" * len(clients))
    for case, by in found["p50_ratio"].items():
        cells = " | ".join(f"{by[c]:.2f}x" if c in by else "-" for c in clients)
        lines.append(f"| {case} | {cells} |")
    return "\n".join(lines)


def machine_line(results: Results) -> str:
    """The machine the run was on, its load, and the server's memory."""
    machine, server = results["machine"], results["server"]
    return (
        f"{machine['cpus']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB;"
        f" load average {machine['load_average_at_start']} at the start,"
        f" {machine['load_average_at_end']} at the end; server RSS {server['rss_mib']} MiB"
        f" (peak {server['peak_rss_mib']} MiB, {server.get('processes', 1)} process(es))"
    )


def targets_section(results: Results) -> str:
    """What the docs' benchmark page shows of a results file: the machine, the targets (evaluated
    by this build's rules) and every read's scale ratio."""
    return "\n\n".join(
        [
            machine_line(results),
            load_line(results),
            targets_table(evaluate(results)),
            scaling_table(scaling(results)),
        ]
    )


def load_line(results: Results) -> str:
    """How long the data took to make and to load: vectors and rows (made once, then cached),
    the episodes' COPY and HNSW build, each scale's COPY of fact versions."""
    timings = results.get("timings", {})
    said = [
        f"{name} {timings[key]:g} s"
        for name, key in (("vectors", "vectors_s"), ("fact rows", "fact_rows_s"))
        if key in timings
    ]
    episodes = timings.get("episodes_load", {})
    said += [
        f"episodes {name} {episodes[key]:g} s" for name, key in _EPISODE_LOAD if key in episodes
    ]
    for scale in results["scales"]:
        load = scale.get("load", {})
        if "copy_s" in load:
            said.append(
                f"COPY to {scale['fact_versions']:,} versions ({scale.get('subjects', 0):,}"
                f" subjects) {load['copy_s']:g} s, ANALYZE {load['analyze_s']:g} s"
            )
    return "made and loaded: " + "; ".join(said)


_EPISODE_LOAD = (("COPY", "copy_s"), ("HNSW build", "hnsw_build_s"), ("ANALYZE", "analyze_s"))


def report_text(results: Results) -> str:
    """The machine and the loads, every scale's table, then the targets."""
    parts = [machine_line(results) + "\n", load_line(results) + "\n"]
    for number, scale in enumerate(results["scales"]):
        parts.append(f"## {scale['fact_versions']:,} fact versions\n")
        parts.append(cases_table(scale, results["writes"] if number == 0 else None) + "\n")
    if mixed := results.get("mixed"):
        parts.append("## Mixed load\n")
        parts.append(mixed_table(mixed) + "\n")
    if hostile := results.get("hostile_bodies"):
        parts.append(hostile_line(hostile) + "\n")
    parts.append("## Every read at the largest scale against the smallest\n")
    parts.append(scaling_table(results.get("scaling", {})) + "\n")
    parts.append("## Targets\n")
    parts.append(targets_table([Target(**found) for found in results["targets"]]))
    return "\n".join(parts) + "\n"
