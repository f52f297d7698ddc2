"""The report's tables beyond the headline: by subject named or not, by name form, the
failure patterns on real text, the leak verdicts resting on a mention in passing, and the
examples with their whole context. Pure: Markdown from the summary (``evals.leakage.summary``,
``evals.leakage.patterns``) and the scored questions, plus the two cell and table helpers every
section of ``evals.leakage.report`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evals.leakage.chart import KIND_LABELS
from evals.leakage.passing import IN_PASSING
from evals.leakage.scoring import QuestionResult
from evals.leakage.summary import leak_verdicts
from retrieval.context.snippets import cut_at_word

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


_LINE_CHARS = 300
_MARKS = {"answer": "> ", "stating": "! ", IN_PASSING: "~ ", "": "  "}
EXAMPLES_LEGEND = (
    "Each example shows the system's whole context. `>` marks the line that decided the answer"
    ' (none when nothing in it did: the answer is then "not known"), `!` a line that states a'
    " stale value as current, `~` one that mentions a stale value in passing; a line can carry"
    " two marks. Every question's context and verdicts are in `questions.jsonl`."
)


def passing_section(results: Sequence[QuestionResult]) -> str:
    """Per system, how many stale-leak verdicts rest only on lines that mention a stale value
    in passing, and one example of each kind."""
    rows = []
    for name in dict.fromkeys(result.system for result in results):
        counts = leak_verdicts(result for result in results if result.system == name)
        rows.append(
            [f"`{name}`", str(counts["leaks"]), str(counts["stating"]), str(counts["in_passing"])]
        )
    header = ["system", "leak verdicts", "on a statement", "only on mentions in passing"]
    parts = [
        markdown_table(header, rows),
        (
            "The scorer is not changed by this count: each verdict above is a leak in the headline."
            " A leaked line *mentions the value in passing* when the sentence holding it frames the"
            ' value as remembered, joked about, old or once believed ("Lena remembered when the'
            ' account had only 280 seats") with no sign of a statement of the current value (a'
            ' correction, "now", "today", "since", a verb of change); a key line always states its'
            " value (``evals.leakage.passing``). A verdict rests on mentions in passing when every"
            " line that made it one is of that kind. The count is a lower bound: on sentences the"
            " rule was not designed on it found 6 of 13 mentions in passing and took none of 35"
            " statements for one (``tests/evals/test_mention_kind.py``)."
        ),
    ]
    passing = next((r for r in results if r.leak_in_passing), None)
    stating = next((r for r in results if r.stale_leak and not r.leak_in_passing), None)
    for label, example in (("in passing", passing), ("on a statement", stating)):
        if example is not None:
            parts.append(f"A verdict resting {label}: {example_block(example)}")
    return "\n\n".join(parts)


def examples(results: Sequence[QuestionResult], *, per_system: int) -> str:
    """The first ``per_system`` stale leaks of each system, each with its whole context."""
    blocks: list[str] = []
    for name in dict.fromkeys(result.system for result in results):
        leaked = [r for r in results if r.system == name and r.stale_leak]
        blocks += [example_block(result) for result in leaked[:per_system]]
    return "\n\n".join([EXAMPLES_LEGEND, *blocks]) if blocks else "No system leaked a stale value."


def example_block(result: QuestionResult) -> str:
    """One scored question: what was asked and answered, then its context with the line that
    decided the answer and each leaked line marked."""
    kinds = dict(zip(result.leaked_lines, result.leak_mentions, strict=False))
    lines = []
    for line in result.context.splitlines():
        mark = _MARKS[kinds.get(line, "")]
        if line == result.answer_line:
            mark = _MARKS["answer"] if mark == _MARKS[""] else _MARKS["answer"].strip() + mark
        lines.append(mark + cut_at_word(line, _LINE_CHARS))
    return (
        f"**`{result.system}`**, {KIND_LABELS[result.kind]}: {result.question} "
        f"(`{result.subject}.{result.attribute}`): gold {result.gold_answer!r}, "
        f"answered {result.answer!r}, leaked {', '.join(result.leaked_values)}\n\n"
        "```text\n" + "\n".join(lines) + "\n```"
    )
