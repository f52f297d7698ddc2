"""The report's tables beyond the headline: by subject named or not, by name form, and the
failure patterns on real text. Pure: Markdown from the summary (``evals.leakage.summary``,
``evals.leakage.patterns``), plus the two cell and table helpers every section of
``evals.leakage.report``
uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SUBJECT_LABELS = {"given": "named", "not_given": "not named"}
PATTERN_LABELS = {
    "subject_not_found": "1. subject not found from the question (asked without the subject)",
    "period_read_as_instant": "2. period read as one instant (period questions)",
    "stale_in_evidence": "3. another period's value unmarked in a snippet",
    "written_differently": "4. value written otherwise than stored",
    "noisy_extraction": "5. noisy extraction",
}


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; a ``|`` inside a cell is escaped."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def share_cell(value: float | None, interval: Sequence[float]) -> str:
    """A share with its interval, as percentages; "-" for none."""
    if value is None:
        return "-"
    return f"{value:.1%} [{interval[0]:.1%}, {interval[1]:.1%}]"


def breakdown_sections(summary: Mapping[str, Any]) -> list[str]:
    """The Markdown parts after the family table: headings, tables and how to read them."""
    systems: Mapping[str, Mapping[str, Any]] = summary["systems"]
    parts = [
        "## By subject named or not",
        _subject_table(systems),
        (
            "Each family's questions split by whether the request named the subject (`subject`)"
            " or left the system to find it from the question's words. *Answer present*: every"
            " value the question asks for is stated on a line not marked superseded (for a period"
            " question, every value valid in the period), matched after folding case, diacritics,"
            " spacing and a leading article."
        ),
    ]
    forms = _name_form_table(systems)
    if forms:
        parts += [
            "## By name form",
            forms,
            (
                "How the question names its subject: `full` (the display name), `short` (a"
                " person's surname, an organisation's short name), `acronym` (an organisation's"
                " initials in capitals), `folded` (diacritics written as plain letters),"
                " `middle_initial` (a middle name or initial dropped, or one added)."
            ),
        ]
    patterns = summary.get("patterns")
    if patterns:
        parts += [
            "## Failure patterns on real text",
            _pattern_table(patterns),
            (
                f"Over the `{patterns['family']}` family's questions. Pattern 1 counts questions"
                " asked without the subject whose plan chose another subject or none; 2, period"
                " questions whose plan is not a period read; 3, questions where a line that is not"
                " a key line states another period's value unmarked; 4, answer present among"
                " questions whose answer some paragraph writes otherwise than stored, and stale"
                " leakage among those with a stale value so written; 5, SGAM fed the noisy"
                " extraction against SGAM."
            ),
        ]
    return parts


def _figures_cells(figures: Mapping[str, Any]) -> list[str]:
    return [
        str(figures["questions"]),
        share_cell(figures["stale_leakage"], figures["stale_leakage_ci"]),
        share_cell(figures["answer_present"], figures["answer_present_ci"]),
    ]


def _subject_table(systems: Mapping[str, Mapping[str, Any]]) -> str:
    rows = []
    for name, row in systems.items():
        groups = [("all", row), *row.get("families", {}).items()]
        for family, figures in groups:
            for given, split in figures.get("subject", {}).items():
                cells = [f"`{name}`", family, SUBJECT_LABELS[given]]
                rows.append(cells + _figures_cells(split))
    header = ["system", "family", "subject", "questions", "stale leakage", "answer present"]
    return markdown_table(header, rows)


def _name_form_table(systems: Mapping[str, Mapping[str, Any]]) -> str:
    rows = []
    for name, row in systems.items():
        for family, figures in row.get("families", {}).items():
            for form, by_form in figures.get("name_forms", {}).items():
                for given, split in by_form.get("subject", {}).items():
                    cells = [f"`{name}`", family, form, SUBJECT_LABELS[given]]
                    rows.append(cells + _figures_cells(split))
    if not rows:
        return ""
    header = ["system", "family", "name form", "subject", "questions", "stale leakage"]
    return markdown_table([*header, "answer present"], rows)


def _pattern_table(patterns: Mapping[str, Any]) -> str:
    rows: list[list[str]] = []
    for pattern, label in PATTERN_LABELS.items():
        for system, figure in patterns.get(pattern, {}).items():
            if system == "difference":
                rows.extend(
                    [label, "noisy - clean", measure.replace("_", " "), "", _points(value)]
                    for measure, value in figure.items()
                )
            elif "share" in figure:
                rows.append([label, f"`{system}`", _measure(pattern), *_cells(figure)])
            else:
                rows.extend(
                    [label, f"`{system}`", measure.replace("_", " "), *_cells(part)]
                    for measure, part in figure.items()
                )
    header = ["pattern", "system", "measure", "questions", "share"]
    return markdown_table(header, rows)


def _measure(pattern: str) -> str:
    return {
        "subject_not_found": "wrong or no subject",
        "period_read_as_instant": "not a period read",
        "stale_in_evidence": "stale value in a snippet",
    }[pattern]


def _cells(figure: Mapping[str, Any]) -> list[str]:
    return [str(figure["questions"]), share_cell(figure["share"], figure["ci"])]


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f} points"
