"""Which of the subject's keys a question asks about (read path step 3). Pure.

Candidates are the keys the subject holds at the read's known-at, never every attribute the
tenant declared: a subject of a public-records tenant holding only ``president_of_south_korea``
must not be asked about ``president_of_the_united_states`` because both say "president".

- Held keys whose score reaches the threshold are routed, best first, at most ``max_keys``,
  the runners-up only within ``RUNNER_UP_MARGIN`` of the best: a key that scores a tenth less
  than another is not what the question asks about, and its line would only spend tokens.
- A subject that holds exactly one key is asked about it even below the threshold, unless the
  question is clearly about something else: an attribute the subject does not hold reaches the
  threshold and beats the held key by ``CLEAR_MARGIN``.
- Otherwise nothing is routed, and any evidence is labelled unverified.

Scores of attributes the subject does not hold are only that check's yardstick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ROUTING_THRESHOLD = 0.4
"""Least cosine similarity (routing text vs. an attribute's best text) to route to it.

Measured with all-MiniLM-L6-v2 on the ten-attribute support-bot schema of
``tests/unit/test_routing.py``, scoring ``routing_text`` of each question: the right attribute of
all 40 paraphrases ranked first with at least 0.420 ("Does he prefer concise replies?"), while
the best attribute of 21 unrelated questions (the test keeps eight) scored at most 0.369
("What's 17 times 23?" -> birthday). 0.4 sits in that gap; at 0.35 one unrelated question
would route, at 0.42 one paraphrase would not.
"""

CLEAR_MARGIN = 0.1
"""How far an attribute the subject does not hold must outscore its only key to win the question.

Cosine similarities of one question to attributes of one family lie within a few hundredths
of each other ("president of" against "prime minister of"); a tenth is well past that spread.
"""


RUNNER_UP_MARGIN = 0.1
"""How far below the best held key another held key may score and still be routed."""


@dataclass(frozen=True)
class AttributeScore:
    """How similar the question is to one attribute's description and aliases."""

    attribute: str
    score: float


@dataclass(frozen=True)
class Routing:
    """The keys chosen for a question, whether any was, and why."""

    attributes: tuple[str, ...]
    routed: bool
    reason: str


def route_keys(
    scores: Sequence[AttributeScore],
    *,
    held: Sequence[str],
    subject: str,
    threshold: float = ROUTING_THRESHOLD,
    max_keys: int = 3,
    margin: float = CLEAR_MARGIN,
    runner_up: float = RUNNER_UP_MARGIN,
) -> Routing:
    """Choose among the subject's held keys by score; ``scores`` may cover other attributes."""
    if max_keys < 1:
        raise ValueError("max_keys must be at least 1")
    if not held:
        return Routing(
            (), False, f"Subject {subject!r} holds no key as known then, so nothing was routed."
        )
    best: dict[str, float] = {}
    for item in scores:
        best[item.attribute] = max(item.score, best.get(item.attribute, item.score))
    own = sorted(((name, best.get(name, 0.0)) for name in held), key=lambda p: (-p[1], p[0]))
    considered = ", ".join(f"{name} ({score:.2f})" for name, score in own)
    head = f"Routed among the {len(own)} keys {subject!r} holds: {considered}."
    if len(own) == 1:
        head = f"{subject!r} holds one key: {considered}."
    rival = max(
        ((name, score) for name, score in best.items() if name not in set(held)),
        key=lambda p: (p[1], p[0]),
        default=None,
    )
    passed = [(name, score) for name, score in own if score >= threshold]
    if passed:
        near = [(name, score) for name, score in passed if score >= passed[0][1] - runner_up]
        chosen = near[:max_keys]
        reason = f"{head} Chosen at or above {threshold:.2f}: {_names(chosen)}."
        if len(near) < len(passed):
            reason += (
                f" {len(passed) - len(near)} more passed but scored over {runner_up:.2f}"
                " below the best."
            )
        if len(near) > max_keys:
            reason += f" {len(near) - max_keys} more passed; at most {max_keys} are used."
        return Routing(tuple(name for name, _ in chosen), True, reason)
    if len(own) == 1:
        name, score = own[0]
        if rival is not None and rival[1] >= threshold and rival[1] - score >= margin:
            return Routing(
                (),
                False,
                f"{head} The question is about {rival[0]} ({rival[1]:.2f}), which"
                f" {subject!r} does not hold, so nothing was routed.",
            )
        return Routing(
            (name,),
            True,
            f"{head} It is below {threshold:.2f} but the question is not clearly about"
            " another attribute, so it is read.",
        )
    return Routing(
        (),
        False,
        f"{head} None reaches {threshold:.2f}, so nothing was routed and any evidence is"
        " unverified.",
    )


def _names(pairs: Sequence[tuple[str, float]]) -> str:
    return ", ".join(name for name, _ in pairs)
