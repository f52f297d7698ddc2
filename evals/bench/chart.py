"""``sgam bench``'s chart: latencies against the floor, write throughput, the scale sweep.

Drawn on a bare ``Figure`` with the Agg canvas (no pyplot state, no display), like the
leakage report's chart.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

FLOOR_COLOR = "#9e9e9e"
BASELINE_COLOR = "#ff7f0e"
SERVED_COLOR = "#1f77b4"


def _latencies(axes: Axes, scale: Mapping[str, Any]) -> None:
    rows: list[tuple[str, Mapping[str, Any], str]] = []
    for name, stats in scale["floor"].items():
        baseline = name == "baseline_search"
        label = "baseline: dm search" if baseline else f"floor: {name}"
        rows.append((label, stats, BASELINE_COLOR if baseline else FLOOR_COLOR))
    for name, by_clients in scale["reads"].items():
        rows.append((name, by_clients.get("1", {}), SERVED_COLOR))
    rows = [row for row in rows if "p50_ms" in row[1]]
    positions = list(range(len(rows)))
    axes.barh(positions, [stats["p50_ms"] for _, stats, _ in rows], color=[c for *_, c in rows])
    p95 = [stats["p95_ms"] for _, stats, _ in rows]
    axes.scatter(p95, positions, marker="|", color="black", s=120, label="p95")
    axes.set_yticks(positions, [label for label, _, _ in rows])
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlabel("ms, one client (bar: p50, tick: p95)")
    axes.set_title(f"reads at {scale['fact_versions']:,} fact versions")
    axes.legend(loc="lower right")


def _writes(axes: Axes, writes: Mapping[str, Any]) -> None:
    names = list(writes)
    clients = sorted({count for by in writes.values() for count in by}, key=int)
    width = 0.8 / max(1, len(clients))
    for offset, count in enumerate(clients):
        rates = [writes[name].get(count, {}).get("items_per_s", 0) for name in names]
        positions = [number + offset * width for number in range(len(names))]
        axes.bar(positions, rates, width=width, label=f"{count} client(s)")
    axes.set_xticks([number + 0.4 - width / 2 for number in range(len(names))], names)
    axes.tick_params(axis="x", labelrotation=20)
    axes.set_ylabel("episodes or written assertions per s")
    axes.set_title("writes")
    axes.legend()


def _sweep(axes: Axes, scales: list[Mapping[str, Any]]) -> None:
    sizes = [scale["fact_versions"] for scale in scales]
    for name in scales[0]["reads"]:
        medians = [scale["reads"][name].get("1", {}).get("p50_ms") for scale in scales]
        if None not in medians:
            axes.plot(sizes, medians, marker="o", label=name)
    floor = [scale["floor"]["sql_fact_current"]["p50_ms"] for scale in scales]
    axes.plot(sizes, floor, linestyle="--", color=FLOOR_COLOR, label="floor: sql_fact_current")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("fact versions")
    axes.set_ylabel("p50 ms, one client")
    axes.set_title("scale sweep")
    axes.legend(fontsize="small")


def draw_chart(results: Mapping[str, Any], path: Path) -> None:
    """Write the chart of ``results`` as a PNG to ``path``."""
    scales = results["scales"]
    panels = 3 if len(scales) > 1 else 2
    figure = Figure(figsize=(7 * panels, 7), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, panels, squeeze=False)[0]
    _latencies(axes[0], scales[0])
    _writes(axes[1], results["writes"])
    if len(scales) > 1:
        _sweep(axes[2], scales)
    machine = results["machine"]
    figure.suptitle(
        f"sgam bench: {results['settings']['episodes']:,} episodes,"
        f" {machine['cpus']} CPUs ({machine['cpu_model']}), {machine['platform']}"
    )
    figure.savefig(path, format="png", dpi=90, metadata={"Software": None})
