"""Masking a context's metadata before values are looked for in it. Pure.

``evals.leakage.scoring`` masks every context this way before it reads values.

A date value must not count as stated because something happened on that day, nor a line of
another key as stating the asked key's value. Masked:

- full timestamps (a date with a time of day, as in ``2026-06-03T10:00:00Z``), unless the
  key's values are themselves timestamps;
- a key line's window and citation, ``(from 2026-06-03 until 2026-06-30; source e2)`` and
  ``(source e2)``, and an uncertain line's ``disputed from …`` tail (the word "disputed"
  stays);
- an evidence line's citation, ``[e2]``;
- a header line naming the read's instants or period (``mira as of 2026-06-02T12:00Z:``,
  ``ana from 2004-01-01 to 2006-01-01:``, ``ana until 2006-01-01:``).

These shapes are SGAM's block format; the baselines' raw episode lines do not take them, and
every system's context goes through the same masking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?"
)
_TIME_MASK = "<time>"
_KEY_LINE = re.compile(r"^(?:- )?([A-Za-z0-9_.:@-]+):\s")
_CITES = re.compile(r"\bsource \S+|\bnot known\b", re.IGNORECASE)
_WINDOW = re.compile(r"\((?:from|until) [^()]*; source [^()]*\)|\(source [^()]*\)")
_DISPUTED_TAIL = re.compile(r"(, disputed) (?:from|until) .*$")
_EVIDENCE_CITATION = re.compile(r"^(?:- )?\[[^\]]*\]")
_HEADER = re.compile(r"^(?:\S+ )?(?:as of .*|(?:from|until) \d{4}-\d{2}-\d{2}.*):$", re.IGNORECASE)


def masked_lines(
    context: str, values: Iterable[str], *, subject: str | None, attribute: str | None
) -> list[str]:
    """The context's lines with metadata masked, another key's lines emptied (when a key is
    given); timestamps are masked unless a value is itself a timestamp."""
    keep_times = any(_TIMESTAMP.search(value) for value in values)
    asked = None if attribute is None else (attribute, f"{subject}.{attribute}")
    lines = []
    for line in context.splitlines():
        name = key_name(line)
        if asked is not None and name is not None and name not in asked:
            lines.append("")
            continue
        if _HEADER.match(line.strip()):
            lines.append("")
            continue
        masked = _WINDOW.sub(_TIME_MASK, line)
        masked = _DISPUTED_TAIL.sub(r"\1", masked)
        masked = _EVIDENCE_CITATION.sub("[" + _TIME_MASK + "]", masked)
        lines.append(masked if keep_times else _TIMESTAMP.sub(_TIME_MASK, masked))
    return lines


def key_name(line: str) -> str | None:
    """The key a key line names (``home_city`` in ``home_city: Lisbon (…; source e4)``); None
    for any other line (an evidence line, a header, a baseline's raw text)."""
    match = _KEY_LINE.match(line)
    if match is None or not _CITES.search(line[match.end() :]):
        return None
    return match.group(1)
