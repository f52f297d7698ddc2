"""The name-resolution benchmark's figures: ratios to GET fact, its Markdown and its JSON.

Everything here is a function of the results object (``evals.bench.names.run``), so fixed numbers
give fixed output; the tables have the columns of ``sgam bench``'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals.bench.served.data import TENANT

FLOOR = "fact_current"
"""The case every other is compared with: GET fact on the same keys, in the same run."""
WITH_SUBJECT = "context_subject_k0"
"""The context call that names its subject: what a named case does less finding the name."""


def ratios(reads: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each case's p50 over GET fact's p50 with as many clients (failed cases left out)."""
    found: dict[str, dict[str, float]] = {}
    for case, by_clients in reads.items():
        for clients, stats in by_clients.items():
            floor = reads[FLOOR].get(clients, {})
            if "p50_ms" in stats and floor.get("p50_ms"):
                found.setdefault(case, {})[clients] = round(stats["p50_ms"] / floor["p50_ms"], 3)
    return found


def added_ms(reads: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """What finding the name adds: each named case's p50 less the context call's with subject."""
    found: dict[str, dict[str, float]] = {}
    for case, by_clients in reads.items():
        if not case.startswith("names_"):
            continue
        for clients, stats in by_clients.items():
            given = reads[WITH_SUBJECT].get(clients, {})
            if "p50_ms" in stats and "p50_ms" in given:
                found.setdefault(case, {})[clients] = round(stats["p50_ms"] - given["p50_ms"], 3)
    return found


def report_text(results: dict[str, Any]) -> str:
    """The cases as the bench's Markdown table, then how the questions resolved and the plans."""
    load, settings = results["load"], results["settings"]
    machine = results["machine"]
    lines = [
        (
            f"{settings['subjects']:,} subjects, {load['subject_names_rows']:,} name rows,"
            f" {settings['measured_keys']} measured keys; load average"
            f" {machine['load_average_at_start']} at the start,"
            f" {machine['load_average_at_end']} at the end\n"
        ),
        "| case | clients | p50 ms | p95 ms | p99 ms | items/s | p50 against |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case, by_clients in results["reads"].items():
        for clients, stats in by_clients.items():
            if "error" in stats:
                lines.append(f"| {case} | {clients} | failed: {stats['error'][:120]} | | | | |")
                continue
            ratio = results["ratios_to_fact_current"].get(case, {}).get(clients)
            against = f"{ratio:.2f}x {FLOOR}" if ratio is not None and case != FLOOR else ""
            numbers = " | ".join(f"{stats[f'p{q}_ms']:.2f}" for q in (50, 95, 99))
            lines.append(
                f"| {case} | {clients} | {numbers} | {stats['items_per_s']:g} | {against} |"
            )
    added = results["over_context_subject_k0_ms"]
    lines.append("")
    lines.append(
        f"Finding the name adds to {WITH_SUBJECT}'s p50: "
        + ", ".join(f"{case} {by['1']:+.2f} ms" for case, by in added.items() if "1" in by)
    )
    lines += [
        "",
        "| case | chose the key's subject | another | none |",
        "| --- | --- | --- | --- |",
    ]
    for case, found in results["resolution"].items():
        lines.append(f"| {case} | {found['right']} | {found['wrong']} | {found['none']} |")
    checks = results["checks"]
    lines.append("")
    for name in ("key_lookup", "trigram"):
        check = checks[name]
        used = "served by" if check["used"] else "NOT served by"
        lines.append(
            f"- {name}: {used} {check['index']} under {TENANT!r} as the app role"
            f" (the store's statement: {check['statement_ms']} ms analyzed, {check['rows']} rows;"
            f" nested: {check['nested_ms']} ms)"
        )
    match = checks["bulk_rows_match_put"]["match"]
    lines.append(f"- bulk-declared name rows equal PUT /v1/subjects's: {match}")
    return "\n".join(lines) + "\n"


def save(results: dict[str, Any], out: Path) -> Path:
    """Write the results as indented JSON to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return out
