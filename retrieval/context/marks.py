"""The words a context block marks its lines with, in one place (design section 5, step 4).

Pure. An evidence line is ``[episode_id] text`` when it supports what the block says, or
``[episode_id] MARK: text`` when it must not be read as current: the mark says why. The
assembler writes these marks and ``evals.leakage.scoring`` reads them, so both use this module:

- ``superseded``: the line states a value some key of the subject held at another time (a
  value since replaced, or for a point-in-time or period question one of another period),
  optionally followed by the period it belongs to: ``superseded (from 2014-03-01 until
  2016-05-01)``;
- ``older than the value since 2026-06-03``: the store never learned what the line states,
  and the episode occurred before the shown value began;
- ``newer than memory``: the episode occurred after the shown value began and states something
  the store does not hold; the key is then also listed under "Uncertain:";
- ``in conflict``: the line states a challenger that was refused and whose conflict is open;
- ``disputed``: the line states one side of a disputed key (the key is under "Uncertain:");
- ``uncertain``: the line states the value of a key that a newer episode puts in doubt (the
  key is under "Uncertain:", with that episode named), so it is no firmer than the key.

A key line whose fact cites evidence not found in its episode says ``unverified`` inside its
parentheses: ``tier: gold (unverified; from 2026-06-01; source e4)``.
"""

from __future__ import annotations

import re

from store.contract.labels import DISPUTED, IN_CONFLICT, SUPERSEDED

OLDER = "older than"
NEWER = "newer than memory"
UNCERTAIN = "uncertain"

LINE_MARKS = (SUPERSEDED, OLDER, NEWER, IN_CONFLICT, DISPUTED, UNCERTAIN)
"""Marks an evidence line may open with: a line carrying one is never read as current."""

_MARKED = re.compile(
    r"^\[[^\]]+\]\s+(?:" + "|".join(re.escape(mark) for mark in LINE_MARKS) + r")\b",
    re.IGNORECASE,
)


def is_marked(line: str) -> bool:
    """Whether an evidence line of a block opens with one of ``LINE_MARKS`` after its citation."""
    return _MARKED.match(line.strip()) is not None


def older_than(since: str) -> str:
    """The mark of a line older than the shown value, which holds since ``since``."""
    return f"{OLDER} the value since {since}"
