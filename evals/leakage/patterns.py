"""Five ways a context block goes wrong on real text, one figure per system (careers family).

Pure: read from the scored questions (``evals.leakage.scoring.QuestionResult``) of the careers
family, the one written as paragraphs of real-looking text. Each figure is a share of the questions
it applies to, with its Wilson interval:

1. ``subject_not_found``: asked without the subject, the plan chose another subject or none
   (systems that make a plan); also by name form;
2. ``period_read_as_instant``: a period question whose plan is not a period read (no
   ``valid_from`` / ``valid_to``);
3. ``stale_in_evidence``: another period's value stated unmarked on a line that is not a key
   line (a snippet's sentence);
4. ``written_differently``: where a paragraph writes a value otherwise than stored, the share
   of questions whose every answer is present (among those whose answer is written otherwise)
   and the stale leakage (among those with a stale value written otherwise);
5. ``noisy_extraction``: stale leakage and answer present of ``sgam`` and ``sgam_noisy`` side by
   side, and the difference the noise makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from evals.histories.careers import CAREERS
from evals.leakage.scoring import QuestionResult, proportion

Rows = Sequence[QuestionResult]
Test = Callable[[QuestionResult], bool]


def failure_patterns(results: Iterable[QuestionResult]) -> dict[str, Any]:
    """The five figures per system over the careers family's questions (empty without any)."""
    rows = [row for row in results if row.family == CAREERS]
    if not rows:
        return {}
    systems = list(dict.fromkeys(row.system for row in rows))
    by_system = {name: [row for row in rows if row.system == name] for name in systems}
    planned = {name: own for name, own in by_system.items() if own[0].plan_mode is not None}
    return {
        "family": CAREERS,
        "subject_not_found": {
            name: _not_found([row for row in own if not row.with_subject])
            for name, own in planned.items()
        },
        "period_read_as_instant": {
            name: share([r for r in own if r.kind == "period"], lambda r: r.plan_mode != "period")
            for name, own in planned.items()
        },
        "stale_in_evidence": {
            name: share(own, lambda row: row.evidence_leak) for name, own in by_system.items()
        },
        "written_differently": {
            name: {
                "answer_present": share(
                    [row for row in own if row.answer_written_differently],
                    lambda row: row.answer_present,
                ),
                "stale_leakage": share(
                    [row for row in own if row.stale_written_differently],
                    lambda row: row.stale_leak,
                ),
            }
            for name, own in by_system.items()
        },
        "noisy_extraction": _noisy(by_system),
    }


def share(rows: Rows, test: Test) -> dict[str, Any]:
    """How many questions, the share passing ``test`` (None for none) and its interval."""
    value, interval = proportion([test(row) for row in rows])
    return {"questions": len(rows), "share": value, "ci": interval}


def _wrong_subject(row: QuestionResult) -> bool:
    return row.plan_subject != row.subject


def _not_found(rows: Rows) -> dict[str, Any]:
    figure = share(rows, _wrong_subject)
    figure["none_chosen"] = sum(row.plan_subject is None for row in rows)
    figure["other_chosen"] = sum(
        _wrong_subject(row) and row.plan_subject is not None for row in rows
    )
    forms = sorted({row.name_form for row in rows if row.name_form is not None})
    figure["name_forms"] = {
        form: share([row for row in rows if row.name_form == form], _wrong_subject)
        for form in forms
    }
    return figure


def _noisy(by_system: dict[str, list[QuestionResult]]) -> dict[str, Any]:
    figures: dict[str, Any] = {
        name: {
            "stale_leakage": share(by_system[name], lambda row: row.stale_leak),
            "answer_present": share(by_system[name], lambda row: row.answer_present),
        }
        for name in ("sgam", "sgam_noisy")
        if name in by_system
    }
    if len(figures) == 2:
        figures["difference"] = {
            measure: _minus(
                figures["sgam_noisy"][measure]["share"], figures["sgam"][measure]["share"]
            )
            for measure in ("stale_leakage", "answer_present")
        }
    return figures


def _minus(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else round(first - second, 6)
