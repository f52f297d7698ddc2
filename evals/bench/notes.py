"""What limits each of ``sgam bench``'s targets, in words: the figures a missed target's note
quotes beside it (``evals.bench.report``). Each is a function of the results object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Results = Mapping[str, Any]

FLOOR_OF = {
    "fact_current": "sql_fact_current",
    "fact_point_in_time": "sql_fact_point_in_time",
    "fact_known_at": "sql_fact_known_at",
    "profile": "sql_profile",
}
"""Each exact read's floor: the same read as one prepared statement."""


def read_p50(scale: Results, case: str, clients: str = "1") -> float:
    """A served read's p50 at a scale, with ``clients`` clients."""
    return float(scale["reads"][case][clients]["p50_ms"])


def served_baseline_ms(scale: Results) -> float:
    """The baseline's in-process search p50 plus /healthz p50: the same search behind HTTP."""
    return float(scale["floor"]["baseline_search"]["p50_ms"]) + read_p50(scale, "healthz")


def floor_note(scale: Results, case: str) -> str:
    """How close the floor alone comes to a fact GET's target: the HTTP hop and the statement
    as raw SQL, before any routing, auth, tenant setting or JSON."""
    floor = scale.get("floor", {}).get(FLOOR_OF[case])
    if floor is None:
        return ""
    hop = read_p50(scale, "healthz")
    return (
        f"the floor alone (healthz p50 + the raw SQL p50) is {(hop + floor['p50_ms']) / hop:.2f}x; "
    )


def stack_note(results: Results) -> str:
    """The stack's floor under a fact GET (``evals.bench.served.stack``): a bare app serving
    the same row by the same statement and driver, against its own ``/healthz``."""
    stack = results.get("stack_floor") or {}
    if "bare_fact_over_healthz" not in stack:
        return ""
    return (
        f"a bare Litestar route serving the same row by the same statement and pool is"
        f" {stack['bare_fact_over_healthz']:.2f}x its /healthz (SELECT 1 alone"
        f" {stack['bare_one_over_healthz']:.2f}x), SGAM {stack['sgam_fact_over_healthz']:.2f}x in"
        f" the same rounds; "
    )


def receipt_note(results: Results) -> str:
    """The floor under a named context (``evals.bench.served.stack``): a GET fact for a
    decision, one transaction that reads the key and writes its receipt."""
    stack = results.get("stack_floor") or {}
    if "fact_for_decision_over_fact" not in stack:
        return ""
    return (
        f"a GET fact for a decision (the key read and its receipt written, in one transaction)"
        f" is {stack['fact_for_decision_over_fact']:.2f}x GET fact, the named context"
        f" {stack['named_k0_over_fact']:.2f}x in the same rounds; "
    )


def copy_floor(results: Results) -> tuple[float, str]:
    """The COPY floor of fact versions in this run, rows/s, and what it measured: the import's
    own floor (``import.floor_rows_per_s``: as many rows of the import's shape COPYed into
    fact_versions with everything in force, just before and after the import) where the run
    has it, else the first scale's rows COPY-loaded into fact_versions."""
    imported = results["import"]
    if "floor_rows_per_s" in imported:
        rows = imported.get("facts", 0)
        return float(imported["floor_rows_per_s"]), f"COPY of {rows:,} rows of the import's shape"
    load = results["scales"][0]["load"]
    rate = load["fact_versions"] / load["copy_s"]
    return rate, f"COPY of the first scale's {load['fact_versions']:,} fact versions"


def copy_note(results: Results) -> str:
    rate, what = copy_floor(results)
    wrote = float(results["import"]["facts_per_s"])
    return f"the import wrote {wrote:,.0f} facts/s; {what} ran at {rate:,.0f} rows/s"


def mixed_note(mixed: Results) -> str:
    """The calls under the mix against alone, and who had the cores meanwhile: the server and
    the clients, in cores."""
    fact, context = mixed["mixed"]["fact"], mixed["mixed"]["context"]
    said = (
        f"under the mix fact GET p50 {fact['p50_ms']:g} ms, p99 {fact['p99_ms']:g} ms (alone"
        f" p50 {mixed['fact_alone']['p50_ms']:g} ms); context {context['calls_per_s']:g} calls/s"
        f" (alone at 8 clients {mixed['context_alone']['calls_per_s']:g})"
    )
    cpu = mixed.get("cpu")
    if not cpu or not cpu.get("wall_s"):
        return said
    wall = float(cpu["wall_s"])
    said += (
        f"; the server used {cpu['server_cpu_s'] / wall:.2f} cores and the clients"
        f" {cpu['clients_cpu_s'] / wall:.2f} of {cpu['cores']}"
    )
    if "machine_cpu_s" in cpu:  # the rest of the busy cores: the database, mostly
        said += f", the whole machine {cpu['machine_cpu_s'] / wall:.2f}"
    said += f" (load average {cpu['load_average'][0]:g} at its end)"
    encoder = mixed.get("encoder") or {}
    if encoder.get("busy_share") is not None:
        said += f"; the encoder was busy {encoder['busy_share']:.0%} of the mix"
        if encoder.get("texts_per_run") is not None:  # None: it made no run
            said += f", {encoder['texts_per_run']:g} texts a run"
    return said


def fresh_note(fresh: Results) -> str:
    after_load, analyzed = fresh["after_load"], fresh["after_analyze"]
    return (
        f"{fresh['episodes']} episodes of one subject: p50 {after_load['p50_ms']:g} ms right"
        f" after the load, {analyzed['p50_ms']:g} ms after ANALYZE"
    )
