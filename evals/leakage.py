"""Stale-fact leakage: does a context present another version's value as if it held?

A line leaks when it states one of the key's other values and does not say "superseded".
The same rule scores every system, so SGAM's blocks and a plain similarity baseline are
compared on equal terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from retrieval.snippets import mentions_value

SUPERSEDED = "superseded"


def leaked_values(context: str, stale_values: Iterable[str]) -> list[str]:
    """The stale values stated on some line of ``context`` that is not marked superseded."""
    stale = list(stale_values)
    found: list[str] = []
    for line in context.splitlines():
        if SUPERSEDED in line.casefold():
            continue
        found.extend(value for value in stale if value not in found and mentions_value(line, value))
    return found


def baseline_context(snippets: Sequence[str]) -> str:
    """What a plain top-k retrieval hands a model: the snippets, one per line, unmarked."""
    return "\n".join(snippets)
