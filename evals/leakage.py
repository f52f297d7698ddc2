"""Stale-fact leakage: does a context present another version's value as if it held?

A line leaks when it states one of the key's other values and does not say "superseded".
The same rule scores every system, so SGAM's blocks and a plain similarity baseline are
compared on equal terms. A value is stated where its text occurs as whole tokens after both
are folded alike (``retrieval.folding``: case, diacritics, spacing before punctuation, a
value's leading article), so "University of Oslo , Blindern" states "University of Oslo,
Blindern" and "Malaga" states "Málaga".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from retrieval.folding import fold_text, value_needle
from retrieval.snippets import value_pattern

SUPERSEDED = "superseded"


def states_value(text: str, value: str) -> bool:
    """Whether the text states the value: its folded needle as whole tokens of the folded
    text (the assembler's own matching, ``retrieval.stale``, without the distinctive words)."""
    pattern = value_pattern(value_needle(value))
    return pattern is not None and pattern.search(fold_text(text)) is not None


def leaked_values(context: str, stale_values: Iterable[str]) -> list[str]:
    """The stale values stated on some line of ``context`` that is not marked superseded."""
    stale = list(stale_values)
    found: list[str] = []
    for line in context.splitlines():
        if SUPERSEDED in line.casefold():
            continue
        found.extend(value for value in stale if value not in found and states_value(line, value))
    return found


def baseline_context(snippets: Sequence[str]) -> str:
    """What a plain top-k retrieval hands a model: the snippets, one per line, unmarked."""
    return "\n".join(snippets)
