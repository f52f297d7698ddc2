"""Stale-fact leakage: does a context present another version's value as if it held?

Two measures, one matcher:

- **stale leakage** (the headline): a line states one of the key's other values and the block
  presents that line as current. A line is not presented as current when it says
  "superseded", when it opens with one of the block's marks after its citation
  (``retrieval.context.marks``: "older than …", "newer than memory", "in conflict", "disputed"), or
  when it sits under the block's "Uncertain:" heading. That is the read path's own promise
  (design section 5): a value of another period, or one memory may have missed, is shown only
  with a mark that says so.
- **stale mention** (the strict reading): a line states another value and does not say
  "superseded", whatever else it says. It counts a marked "older than" line and an uncertain
  key's line as leaks; the report gives it beside the headline so neither hides the other.

The same rules score every system. A plain similarity baseline writes no marks and no
headings, so both measures are equal for it. A value is stated where its text occurs as whole
tokens after both are folded alike (``retrieval.context.folding``: case, diacritics, spacing before
punctuation, a value's leading article), so "University of Oslo , Blindern" states "University
of Oslo, Blindern" and "Malaga" states "Málaga".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from retrieval.context.folding import fold_text, value_needle
from retrieval.context.marks import is_marked
from retrieval.context.snippets import value_pattern

SUPERSEDED = "superseded"
UNCERTAIN_HEADING = "Uncertain:"
"""The block's heading over keys it does not state as settled (``retrieval.context.assemble``)."""


def states_value(text: str, value: str) -> bool:
    """Whether the text states the value: its folded needle as whole tokens of the folded
    text (the assembler's own matching, ``retrieval.context.stated``, without the distinctive
    words)."""
    pattern = value_pattern(value_needle(value))
    return pattern is not None and pattern.search(fold_text(text)) is not None


def uncertain_items(lines: Sequence[str]) -> list[bool]:
    """Per line, whether it is an item under the block's "Uncertain:" heading (the items
    there start with "- "; any other line ends the section)."""
    flags: list[bool] = []
    inside = False
    for line in lines:
        stripped = line.strip()
        inside = stripped != UNCERTAIN_HEADING and inside and stripped.startswith("- ")
        flags.append(inside)
        inside = inside or stripped == UNCERTAIN_HEADING
    return flags


def presented_as_current(lines: Sequence[str]) -> list[bool]:
    """Per line, whether a reader is told to take it as current: not superseded, not opened
    by a mark after its citation, not an item under "Uncertain:"."""
    return [
        not (uncertain or SUPERSEDED in line.casefold() or is_marked(line.strip()))
        for line, uncertain in zip(lines, uncertain_items(lines), strict=True)
    ]


def shown_as_current(lines: Sequence[str], *, strict: bool = False) -> list[bool]:
    """Per line, whether it counts for leakage: ``presented_as_current``, or with ``strict``
    any line not marked superseded (the stale-mention reading)."""
    if strict:
        return [SUPERSEDED not in line.casefold() for line in lines]
    return presented_as_current(lines)


def stale_statements(
    lines: Sequence[str], stale_values: Iterable[str], counted: Sequence[bool]
) -> list[tuple[int, str]]:
    """(line index, value) for each stale value stated on a counted line, in line order."""
    stale = list(stale_values)
    return [
        (index, value)
        for index, (line, counts) in enumerate(zip(lines, counted, strict=True))
        if counts
        for value in stale
        if states_value(line, value)
    ]


def leaked_values(context: str, stale_values: Iterable[str], *, strict: bool = False) -> list[str]:
    """The stale values stated on some line of ``context`` presented as current; with
    ``strict``, on any line not marked superseded."""
    lines = context.splitlines()
    found = stale_statements(lines, stale_values, shown_as_current(lines, strict=strict))
    return list(dict.fromkeys(value for _, value in found))


def baseline_context(snippets: Sequence[str]) -> str:
    """What a plain top-k retrieval hands a model: the snippets, one per line, unmarked."""
    return "\n".join(snippets)
