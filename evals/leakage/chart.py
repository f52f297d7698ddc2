"""The leakage evaluation's chart: shares with their intervals, context tokens and latency.

Drawn on a bare ``Figure`` with the Agg canvas: no pyplot state, no display. Every system run
gets a group of bars, whatever its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from evals.leakage.scoring import KINDS

KIND_LABELS = {
    "current": "current",
    "point_in_time": "point in time",
    "known_at": "known at",
    "period": "period",
}


def draw_chart(summary: Mapping[str, Any], path: Path) -> None:
    """Grouped bars of stale leakage and the three accuracies per system with their Wilson
    intervals, then context tokens and latency per system (p50, p95 as a whisker)."""
    systems: Mapping[str, Mapping[str, Any]] = summary["systems"]
    figure = Figure(figsize=(12, 4.8), layout="constrained")
    FigureCanvasAgg(figure)
    shares, tokens, latency = figure.subplots(1, 3, width_ratios=[3, 1.2, 1.2])
    _shares(shares, systems)
    _spread(tokens, systems, p50="context_tokens_p50", title="Context tokens", unit="tokens")
    _spread(latency, systems, p50="latency_p50_ms", title="Latency", unit="ms")
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})


def _shares(axes: Axes, systems: Mapping[str, Mapping[str, Any]]) -> None:
    names = list(systems)
    metrics = [("stale_leakage", "stale leakage")] + [
        (f"{kind}_accuracy", f"{KIND_LABELS[kind]} accuracy") for kind in KINDS
    ]
    positions = np.arange(len(names), dtype=float)
    width = 0.8 / len(metrics)
    for index, (metric, label) in enumerate(metrics):
        heights = [_or_zero(systems[name][metric]) for name in names]
        lows = [
            height - systems[name][f"{metric}_ci"][0] if systems[name][metric] is not None else 0
            for name, height in zip(names, heights, strict=True)
        ]
        highs = [
            systems[name][f"{metric}_ci"][1] - height if systems[name][metric] is not None else 0
            for name, height in zip(names, heights, strict=True)
        ]
        axes.bar(
            positions + (index - (len(metrics) - 1) / 2) * width,
            heights,
            width,
            yerr=[lows, highs],
            capsize=3,
            label=label,
        )
    axes.set_xticks(positions, names)
    axes.set_ylim(0, 1.3)  # room above the bars for the legend
    axes.set_yticks(np.linspace(0, 1, 6))
    axes.set_ylabel("share of questions")
    axes.set_title("Stale leakage and accuracy (Wilson 95% intervals)")
    axes.legend(loc="upper center", ncols=2, fontsize="small", frameon=False)
    axes.grid(axis="y", alpha=0.3)


def _spread(
    axes: Axes, systems: Mapping[str, Mapping[str, Any]], *, p50: str, title: str, unit: str
) -> None:
    """One gray bar per system at the ``p50`` figure, its whisker up to the matching p95."""
    names = list(systems)
    mids = [_or_zero(systems[name][p50]) for name in names]
    highs = [_or_zero(systems[name][p50.replace("p50", "p95")]) for name in names]
    spread = [max(0.0, high - mid) for mid, high in zip(mids, highs, strict=True)]
    positions = np.arange(len(names), dtype=float)
    axes.bar(positions, mids, 0.6, yerr=[[0.0] * len(names), spread], capsize=3, color="gray")
    if len(names) > 3:  # six names side by side overlap in a narrow panel
        axes.set_xticks(positions, names, rotation=30, ha="right")
    else:
        axes.set_xticks(positions, names)
    axes.set_ylabel(unit)
    axes.set_title(f"{title} (p50, whisker to p95)", fontsize="medium")
    axes.grid(axis="y", alpha=0.3)


def _or_zero(value: float | None) -> float:
    return 0.0 if value is None else float(value)
