"""Fitting a block to its token budget: evidence is cut first, facts never. Pure.

When the key lines alone exceed the budget, they are returned whole and the block is over
budget. Otherwise the block keeps the most evidence lines that fit: superseded lines go first
(the last one first), then the others from the least similar end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from retrieval.context.evidence_lines import Shown


@dataclass(frozen=True)
class Fitted:
    """The block as it fits the budget, the evidence lines it kept, and its size."""

    block: str
    kept: list[Shown]
    tokens: int
    over_budget: bool


def fit_to_budget(
    core: Sequence[str],
    shown: Sequence[Shown],
    *,
    heading: str,
    token_budget: int,
    count_tokens: Callable[[str], int],
) -> Fitted:
    """The ``core`` lines, then ``heading`` and as many of ``shown`` as ``token_budget`` allows."""
    trials = _cuts(shown)
    if trials:  # most blocks fit whole: one count settles them
        fitted = _fits(core, heading, trials[0], token_budget, count_tokens)
        if fitted is not None:
            return fitted
    core_block = "\n".join(core)
    core_tokens = count_tokens(core_block)
    if core_tokens > token_budget:
        return Fitted(core_block, [], core_tokens, over_budget=True)
    for trial in trials[1:]:
        fitted = _fits(core, heading, trial, token_budget, count_tokens)
        if fitted is not None:
            return fitted
    return Fitted(core_block, [], core_tokens, over_budget=False)


def _fits(
    core: Sequence[str],
    heading: str,
    trial: list[Shown],
    token_budget: int,
    count_tokens: Callable[[str], int],
) -> Fitted | None:
    """The block of ``core`` and ``trial``'s lines, if it is within ``token_budget``."""
    block = "\n".join([*core, heading, *(item.line for item in trial)])
    tokens = count_tokens(block)
    return Fitted(block, trial, tokens, over_budget=False) if tokens <= token_budget else None


def _cuts(shown: Sequence[Shown]) -> list[list[Shown]]:
    """Evidence sets to try, largest first: superseded lines go before the others, last first."""
    if not shown:
        return []
    trials = [list(shown)]
    current = list(shown)
    while current:
        marked = [i for i, item in enumerate(current) if item.superseded]
        drop = marked[-1] if marked else len(current) - 1
        current = current[:drop] + current[drop + 1 :]
        if current:
            trials.append(current)
    return trials
