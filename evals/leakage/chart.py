"""The leakage evaluation's chart: leakage and accuracy in panels of their own, with their
intervals and labelled values, then context tokens and latency.

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
from matplotlib.ticker import PercentFormatter

from evals.leakage.scoring import KINDS
from evals.leakage.summary import report_order

KIND_LABELS = {
    "current": "current",
    "point_in_time": "point in time",
    "known_at": "known at",
    "period": "period",
}


def draw_chart(summary: Mapping[str, Any], path: Path) -> None:
    """``chart_figure`` written to ``path`` as a PNG."""
    chart_figure(summary).savefig(path, format="png", dpi=100, metadata={"Software": None})


def chart_figure(summary: Mapping[str, Any]) -> Figure:
    """Four panels, the systems in the report's order (``report_order``): stale leakage
    (lower is better) and accuracy by question kind (higher is better), each bar labelled with
    its share and whiskered with its Wilson interval, so a 0% bar still shows; then context
    tokens and latency per system (p50, p95 as a whisker)."""
    systems = report_order(summary["systems"])
    figure = Figure(figsize=(12, 8), layout="constrained")
    FigureCanvasAgg(figure)
    (leakage, accuracy), (tokens, latency) = figure.subplots(2, 2)
    _shares(
        leakage,
        systems,
        [("stale_leakage", "stale leakage"), ("stale_mention", "stale mention (strict)")],
        title="Stale leakage: lower is better",
    )
    _shares(
        accuracy,
        systems,
        [(f"{kind}_accuracy", f"{KIND_LABELS[kind]}") for kind in KINDS],
        title="Accuracy by question kind: higher is better",
    )
    _spread(tokens, systems, p50="context_tokens_p50", title="Context tokens", unit="tokens")
    _spread(latency, systems, p50="latency_p50_ms", title="Latency", unit="ms")
    return figure


def _shares(
    axes: Axes,
    systems: Mapping[str, Mapping[str, Any]],
    metrics: list[tuple[str, str]],
    *,
    title: str,
) -> None:
    """Grouped bars of ``metrics`` per system with Wilson intervals, each labelled with its
    share ("n/a" where no question of the kind was asked)."""
    names = list(systems)
    positions = np.arange(len(names), dtype=float)
    width = 0.8 / len(metrics)
    for index, (metric, label) in enumerate(metrics):
        values = [systems[name].get(metric) for name in names]
        heights = [_or_zero(value) for value in values]
        intervals = [systems[name].get(f"{metric}_ci") or [0.0, 1.0] for name in names]
        lows = [
            h - ci[0] if v is not None else 0
            for h, ci, v in zip(heights, intervals, values, strict=True)
        ]
        highs = [
            ci[1] - h if v is not None else 0
            for h, ci, v in zip(heights, intervals, values, strict=True)
        ]
        bars = axes.bar(
            positions + (index - (len(metrics) - 1) / 2) * width,
            heights,
            width,
            yerr=[lows, highs],
            capsize=3,
            label=label,
        )
        for bar, value, top in zip(bars, values, highs, strict=True):
            axes.annotate(  # above the whisker, so a 0% bar is still read
                "n/a" if value is None else f"{value:.0%}",
                (bar.get_x() + bar.get_width() / 2, bar.get_height() + top),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                fontsize="x-small",
            )
    axes.set_xticks(positions, names, rotation=20 if len(names) > 4 else 0)
    axes.set_ylim(0, 1.3)  # room above the bars for the labels and the legend
    axes.set_yticks(np.linspace(0, 1, 6))
    axes.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_ylabel("share of questions (Wilson 95% intervals)")
    axes.set_title(title)
    axes.legend(loc="upper center", ncols=len(metrics), fontsize="small", frameon=False)
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
