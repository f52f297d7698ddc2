"""The generated input of ``sgam eval leakage``: one trace per generator, for the chosen families.

``customers`` and ``records`` come from one history (``evals.histories.generate``; a family left out
keeps its writes and loses its questions), ``careers`` from a trace of its own
(``evals.histories.career_history``), in its own tenant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evals.histories.career_history import generate_careers
from evals.histories.careers import CAREER_SIZES, CAREERS
from evals.histories.generate import SIZES, generate_history
from evals.leakage.gold_traces import Trace

FAMILIES = ("customers", "records", CAREERS)
"""The families a generated run asks about, all by default."""


def generated_traces(
    *, seed: int, size: str, families: Sequence[str] = FAMILIES
) -> tuple[list[Trace], dict[str, Any], str]:
    """The traces asking the families' questions, what they hold, and the size in words."""
    traces: list[Trace] = []
    summary: dict[str, Any] = {}
    parts: list[str] = []
    if set(families) - {CAREERS}:
        history = generate_history(seed=seed, size=SIZES[size])
        lines = [
            line
            for line in history.lines()
            if line["op"] != "context" or line["gold"]["family"] in families
        ]
        traces.append(Trace(f"history-{size}-{seed}", lines))
        summary |= dict(history.summary)
        parts.append(_described_history(size))
    if CAREERS in families:
        careers = generate_careers(seed=seed, size=size)
        traces.append(Trace(f"careers-{size}-{seed}", careers.lines()))
        summary |= dict(careers.summary)
        spec = CAREER_SIZES[size]
        parts.append(
            f"careers {spec.subjects} people and organisations holding 2-3 roles each, told in"
            f" paragraphs; {spec.questions} questions about periods, instants and now, each"
            " asked with and without the subject"
        )
    return traces, summary, f"{size}: " + "; ".join(parts)


def _described_history(size: str) -> str:
    spec = SIZES[size]
    described = (
        f"customers {spec.tenants} tenants x {spec.subjects} subjects x"
        f" {spec.attributes} attributes; per tenant {spec.current} current,"
        f" {spec.point_in_time} point-in-time and {spec.known_at} known-at questions"
    )
    if spec.records is not None:
        records = spec.records
        described += (
            f"; public records {records.subjects} places per tenant ({records.shared} shared"
            f" with the next tenant) holding 1-3 roles each; per tenant {records.current}"
            f" current, {records.point_in_time} point-in-time and {records.known_at} known-at"
            " questions"
        )
    return described
