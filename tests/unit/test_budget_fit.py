"""The cut to the token budget (``retrieval.context.budget``): its rule, and one count for a
block that fits whole.

The rule, written here from its definition: facts are never cut; a block whose key lines alone
exceed the budget is those lines, over budget; otherwise the block keeps the most evidence lines
that fit, dropping lines marked superseded first (the last first), then the others from the
least similar end. Counted by words, so a block's count only grows with its lines.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.context.block_inputs import EvidenceCandidate
from retrieval.context.budget import fit_to_budget
from retrieval.context.evidence_lines import Shown
from store.contract.labels import SUPERSEDED

AT = datetime(2026, 6, 1, 9, tzinfo=UTC)
HEADING = "Evidence:"
WORDS = st.lists(st.sampled_from(("moved", "to", "Oslo", "2026-06-30", "passport", "gold")))


class Counter:
    """Counts a text's words, and how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def shown(index: int, words: list[str], superseded: bool) -> Shown:
    text = " ".join(words) or "nothing"
    candidate = EvidenceCandidate(f"e{index}", AT, text, score=1.0 - index / 100)
    return Shown(candidate, text, SUPERSEDED if superseded else "")


def expected(core: list[str], lines: list[Shown], budget: int) -> tuple[str, list[str], bool]:
    """The block, its kept episodes and whether it is over budget, by the rule above."""
    words = len("\n".join(core).split())
    if words > budget:
        return "\n".join(core), [], True
    current = list(lines)
    while current:
        block = "\n".join([*core, HEADING, *(item.line for item in current)])
        if len(block.split()) <= budget:
            return block, [item.candidate.episode_id for item in current], False
        marked = [i for i, item in enumerate(current) if item.superseded]
        del current[marked[-1] if marked else len(current) - 1]
    return "\n".join(core), [], False


@settings(max_examples=300, deadline=None)
@given(
    core=st.lists(WORDS.map(" ".join), min_size=1, max_size=4),
    evidence=st.lists(st.tuples(WORDS, st.booleans()), max_size=6),
    budget=st.integers(min_value=0, max_value=60),
)
def test_the_cut_keeps_the_rule(
    core: list[str], evidence: list[tuple[list[str], bool]], budget: int
) -> None:
    lines = [shown(i, words, superseded) for i, (words, superseded) in enumerate(evidence)]
    fitted = fit_to_budget(
        core, lines, heading=HEADING, token_budget=budget, count_tokens=Counter()
    )
    block, kept, over = expected(core, lines, budget)
    assert (fitted.block, [item.candidate.episode_id for item in fitted.kept]) == (block, kept)
    assert fitted.over_budget is over
    assert fitted.tokens == len(block.split())


def test_a_block_that_fits_whole_is_counted_once() -> None:
    counter = Counter()
    lines = [shown(0, ["moved", "to", "Oslo"], False), shown(1, ["gold"], True)]
    fitted = fit_to_budget(
        ["home_city: Oslo (source e0)"],
        lines,
        heading=HEADING,
        token_budget=512,
        count_tokens=counter,
    )
    assert [item.candidate.episode_id for item in fitted.kept] == ["e0", "e1"]
    assert counter.calls == 1


def test_key_lines_over_the_budget_are_kept_whole() -> None:
    core = ["home_city: Oslo (source e0)", "tier: gold (source e1)"]
    fitted = fit_to_budget(
        core, [shown(0, ["gold"], False)], heading=HEADING, token_budget=3, count_tokens=Counter()
    )
    assert (fitted.block, fitted.kept, fitted.over_budget) == ("\n".join(core), [], True)
    assert fitted.tokens == 8
