"""The run in words: its metadata for the report, the server it ran on, the terminal's table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evals.arms.systems import TRANSPORT
from evals.leakage.report import SYSTEMS, run_environment
from evals.leakage.scoring import KINDS
from evals.leakage.summary import report_order
from evals.peers import PEER_NAMES, langgraph_arm, mem0_arm, peer_versions
from store.bench import raw_connection

if TYPE_CHECKING:
    from evals.leakage.run import Options

PEER_ARMS = {"langgraph": langgraph_arm.BUILT, "mem0": mem0_arm.BUILT}
"""How each peer arm is built and scoped, for the report."""


def describe_server(server: str) -> str:
    """The PostgreSQL and pgvector versions of the server, in words."""
    with raw_connection(server) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    return f"PostgreSQL {version[0] if version else '?'}, pgvector {vector[0] if vector else '?'}"


def run_meta(
    options: Options,
    *,
    model: str,
    database: str,
    about: Mapping[str, Any],
    outcomes: Mapping[str, Counter[str]],
) -> dict[str, Any]:
    """The report's account of the run: when, where, on what, with which systems' settings."""
    meta: dict[str, Any] = {"date": datetime.now(UTC).date().isoformat(), **run_environment()}
    meta |= about
    meta["model"] = model
    if options.torch_threads is not None:
        meta["torch_threads"] = options.torch_threads
    if "sgam_noisy" in options.systems:
        noise = options.noise
        meta["noisy_extraction"] = {"missing": noise.missing, "wrong": noise.wrong}
        meta["noisy_extraction"]["seed"] = noise.seed
    meta["input"] = (
        "SGAM and sgam_noisy are written through typed candidates (subject, attribute, value,"
        " valid from); dm, dm_recency and the peer arms read the raw episode text"
    )
    meta["transport"] = TRANSPORT
    if options.extractor is not None and "sgam" in options.systems:
        meta["extraction"] = (
            f"sgam's episodes went through the extractor {options.extractor.extractor_model}"
            f" at {options.extractor.extractor_url} (extract: now, at each episode's clock);"
            " the history's gold candidates were not sent; a failed extraction is not retried"
        )
    if {"dm", "dm_recency"} & set(options.systems):
        meta["baselines"] = options.baseline.describe()
    peers = [name for name in PEER_NAMES if name in options.systems]
    if peers:
        meta["peer_arms"] = (
            f"top {options.baseline.k} texts, one per line, unmarked; no system time (a known-at"
            " question reads what was stored by the question); "
            + "; ".join(f"{name}: {PEER_ARMS[name]}" for name in peers)
        )
        meta["peer_versions"] = peer_versions(peers)
    if "mem0" in options.systems:
        meta["mem0_inference"] = mem0_arm.inference(options.extractor)
    if "langgraph" in options.systems:
        meta["langgraph_inference"] = langgraph_arm.INFERENCE
    meta["database"] = database
    for load, outcome in outcomes.items():
        meta[f"{load} load"] = ", ".join(f"{name} {n}" for name, n in sorted(outcome.items()))
    return meta


def headline(summary: Mapping[str, Any]) -> str:
    """A plain-text table of the summary, for a terminal: each system, then its families."""
    rows = [
        ("system", "stale", "present", *(f"{kind} acc" for kind in KINDS), "x-tenant", "tok", "ms")
    ]
    for name, total in report_order(summary["systems"]).items():
        families = total.get("families", {})
        for label, row in [(name, total), *((f"  {f}", families[f]) for f in families)]:
            rows.append(
                (
                    label,
                    _percent(row["stale_leakage"]),
                    _percent(row["answer_present"]),
                    *(_percent(row[f"{kind}_accuracy"]) for kind in KINDS),
                    _percent(row["cross_tenant_leakage"]),
                    f"{row['context_tokens_p50']:.0f}",
                    f"{row['latency_p50_ms']:.1f}",
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    ordered = report_order(summary["systems"])
    described = [f"{name}: {SYSTEMS[name]}" for name in ordered if name in SYSTEMS]
    return "\n".join([*lines, "", *described])


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
