"""The leakage evaluation's summary: each system's shares and percentiles, in total, per family,
per request naming the subject or not, and per name form. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from evals.leakage.scoring import KINDS, QuestionResult, proportion

T = TypeVar("T")
LEADS = ("sgam_noisy", "sgam")
"""The arms the report shows first, in this order (``report_order``)."""


def summarize(results: Iterable[QuestionResult]) -> dict[str, Any]:
    """Per system (in order of first appearance): shares with Wilson intervals (stale leakage,
    answer present, accuracy by question kind), token and latency percentiles; the same per
    family under ``families``, and per request naming the subject or not under ``subject``
    (``given``, ``not_given``), in the total and in each family; per name form under a
    family's ``name_forms`` where its questions have one.

    Shares are fractions (0..1). An accuracy over no questions of its kind is null, its
    interval [0, 1]. ``families`` holds the families the questions' gold names, by name; a
    question without one counts only in the total.
    """
    by_system: dict[str, list[QuestionResult]] = {}
    for result in results:
        by_system.setdefault(result.system, []).append(result)
    return {"systems": {name: _system_summary(rows) for name, rows in by_system.items()}}


def report_order(systems: Mapping[str, T]) -> dict[str, T]:
    """The systems as the report presents them: SGAM fed the noisy extraction first (the
    honest comparison with the baselines, which read the same raw text), SGAM fed the gold
    facts next (an upper bound: extraction without error), then the others as run."""
    leading = [name for name in LEADS if name in systems]
    return {name: systems[name] for name in [*leading, *(n for n in systems if n not in LEADS)]}


def leak_verdicts(rows: Iterable[QuestionResult]) -> dict[str, int]:
    """How many stale-leak verdicts there are, and how many rest only on lines that mention a
    stale value in passing (``evals.leakage.passing``) rather than on one that states it."""
    leaks = [row for row in rows if row.stale_leak]
    passing = sum(row.leak_in_passing for row in leaks)
    return {"leaks": len(leaks), "in_passing": passing, "stating": len(leaks) - passing}


def _system_summary(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    summary = _with_subject(rows)
    by_family = _grouped(rows, lambda row: row.family)
    summary["families"] = {name: _family(by_family[name]) for name in sorted(by_family)}
    summary["leak_verdicts"] = leak_verdicts(rows)
    return summary


def _family(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    summary = _with_subject(rows)
    by_form = _grouped(rows, lambda row: row.name_form)
    if by_form:
        summary["name_forms"] = {name: _with_subject(by_form[name]) for name in sorted(by_form)}
    return summary


def _with_subject(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    """The figures, and the same for the requests that named the subject and those that did
    not (only those asked)."""
    summary = _figures(rows)
    given = _grouped(rows, lambda row: "given" if row.with_subject else "not_given")
    summary["subject"] = {
        name: _figures(given[name]) for name in ("given", "not_given") if name in given
    }
    return summary


def _grouped(
    rows: Sequence[QuestionResult], group: Callable[[QuestionResult], str | None]
) -> dict[str, list[QuestionResult]]:
    """The rows by group, in order; rows of no group (None) left out."""
    groups: dict[str, list[QuestionResult]] = {}
    for row in rows:
        name = group(row)
        if name is not None:
            groups.setdefault(name, []).append(row)
    return groups


def _figures(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    leakage, leakage_ci = proportion([row.stale_leak for row in rows])
    summary["stale_leakage"], summary["stale_leakage_ci"] = leakage, leakage_ci
    mention, mention_ci = proportion([row.stale_mention for row in rows])
    summary["stale_mention"], summary["stale_mention_ci"] = mention, mention_ci
    present, present_ci = proportion([row.answer_present for row in rows])
    summary["answer_present"], summary["answer_present_ci"] = present, present_ci
    for kind in KINDS:
        asked = [row.correct for row in rows if row.kind == kind]
        accuracy, accuracy_ci = proportion(asked)
        summary[f"{kind}_accuracy"] = accuracy
        summary[f"{kind}_accuracy_ci"] = accuracy_ci
        summary[f"{kind}_questions"] = len(asked)
    cross, cross_ci = proportion([row.cross_tenant_leak for row in rows])
    summary["cross_tenant_leakage"], summary["cross_tenant_leakage_ci"] = cross, cross_ci
    tokens = [float(row.tokens) for row in rows]
    latency = [row.latency_ms for row in rows]
    summary["context_tokens_p50"] = _percentile(tokens, 50)
    summary["context_tokens_p95"] = _percentile(tokens, 95)
    summary["latency_p50_ms"] = _percentile(latency, 50)
    summary["latency_p95_ms"] = _percentile(latency, 95)
    return summary


def _percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between the closest ranks (numpy's default); None for none."""
    return float(np.percentile(values, q)) if values else None
