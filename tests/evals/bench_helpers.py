"""Figures for ``sgam bench``'s report tests: one case's summary as the runner writes it."""

from __future__ import annotations

from typing import Any


def stats(p50: float, *, per_s: float = 0.0) -> dict[str, Any]:
    """A case's summary: p95 and p99 twice and three times its p50, 100 calls."""
    return {
        "p50_ms": p50,
        "p95_ms": p50 * 2,
        "p99_ms": p50 * 3,
        "calls": 100,
        "calls_per_s": per_s,
        "items_per_s": per_s,
    }


def mixed_load() -> dict[str, Any]:
    """A mixed load's results: each call under the mix beside fact GET and context alone."""
    return {
        "mix": {"context": 6, "fact": 6, "write": 4},
        "fact_alone": stats(2.0, per_s=450.0),
        "context_alone": stats(60.0, per_s=40.0),
        "mixed": {
            "context": stats(150.0, per_s=30.0),
            "fact": stats(5.0, per_s=300.0),
            "write": stats(20.0, per_s=100.0),
        },
        "mixed_calls_per_s": 430.0,
    }
