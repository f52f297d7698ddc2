"""Equal-start policies: what happens when a different value starts where another one does.

Pure: the write path passes the attribute's policy and the two sources' kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

DEFAULT_RANKS: Mapping[str, int] = {
    "user_confirmation": 4,
    "message": 3,
    "tool_result": 2,
    "event": 2,
    "file": 2,
    "ticket": 2,
    "inference": 1,
}

Outcome = Literal["replace", "conflict", "dispute", "outranked"]


def source_rank(kind: str, overrides: Mapping[Any, int] | None = None) -> int:
    """The rank of an episode kind: the attribute's override, else the default."""
    if overrides and kind in overrides:
        return overrides[kind]
    return DEFAULT_RANKS[kind]


def equal_start_outcome(
    policy: str,
    *,
    newcomer_kind: str,
    incumbent_kind: str,
    overrides: Mapping[Any, int] | None = None,
) -> Outcome:
    """Decide an equal-start disagreement by the attribute's policy.

    ``reject``: always a logged conflict. ``source_precedence``: the higher-ranked source
    replaces, an equal rank disputes the key, a lower rank is outranked. ``confirmed_wins``: a
    user confirmation replaces; anything else is treated as under ``reject``.
    """
    if policy == "source_precedence":
        newcomer = source_rank(newcomer_kind, overrides)
        incumbent = source_rank(incumbent_kind, overrides)
        if newcomer > incumbent:
            return "replace"
        return "dispute" if newcomer == incumbent else "outranked"
    if policy == "confirmed_wins" and newcomer_kind == "user_confirmation":
        return "replace"
    return "conflict"
