"""The subjects a question's names may mean, looked up in one read snapshot.

The rules are ``retrieval.question.names``'s; this module only asks the store. Names are looked up
by key first; only a question none of whose words names a subject at least by its last word is also
searched by trigram similarity (a second statement), with a low threshold, so the plan can list the
near misses it weighed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from retrieval.question.names import (
    asked_keys,
    question_grams,
    score_keys,
    score_similar,
    similar_texts,
)
from retrieval.question.words import MIN_SCORE, SubjectMention
from store.contract.common import fold_name
from store.contract.reads import QuestionPlan
from store.db.snapshot import ReadSnapshot

_GOOD_ENOUGH = 0.75
"""A match this good (a subject's last word, capitalised) needs no trigram search."""
WEIGHED_SIMILARITY = 0.4
"""Trigram likeness from which a name is weighed (and listed when none is chosen); a name is
chosen from 0.5 (``MIN_SCORE`` / 0.8)."""
BEST_SIMILAR = 5
"""The likest names kept for each text searched."""
_MOST_NAMED = 12
"""A question naming more subjects than this (a common family name) is not checked for names
that are another's value: it names none well enough to matter."""


def name_mentions(
    snapshot: ReadSnapshot, question: str, *, subject: str | None = None
) -> list[SubjectMention]:
    """Every subject the question's words may name, each with its score; with ``subject`` (the
    caller's), only where they name it, so routing cuts its names out of the question."""
    grams = question_grams(question)
    matches = score_keys(question, grams, snapshot.names_by_key(asked_keys(grams)))
    if not any(match.score >= _GOOD_ENOUGH for match in matches):
        texts = similar_texts(grams)
        if texts:
            rows = snapshot.similar_names(texts, threshold=WEIGHED_SIMILARITY, best=BEST_SIMILAR)
            matches += score_similar(question, grams, rows)
    mentions = [
        SubjectMention(
            subject=match.subject,
            text=match.text,
            start=match.start,
            end=match.end,
            alias=match.source in ("alias", "display", "learned"),
            score=match.score,
            how="" if match.source == "id" and match.score == 1.0 else match.how,
            name=match.name,
        )
        for match in matches
        if subject is None or match.subject == subject
    ]
    named = sorted({mention.subject for mention in mentions if mention.score >= MIN_SCORE})
    if 1 < len(named) <= _MOST_NAMED and _apart(mentions):
        mentions = demote_values(mentions, snapshot.value_names(named))
    return mentions


def _apart(mentions: Sequence[SubjectMention]) -> bool:
    """Whether two subjects are named by words that do not overlap."""
    chosen = [m for m in mentions if m.score >= MIN_SCORE]
    return any(
        a.subject != b.subject and (a.end <= b.start or b.end <= a.start)
        for a in chosen
        for b in chosen
    )


def demote_values(
    mentions: Sequence[SubjectMention], values: Mapping[str, set[str]]
) -> list[SubjectMention]:
    """Mentions whose words are a value another named subject holds, at half their score.

    "When did Okafor join the WHO?" names the WHO as Okafor's employer: the question is about
    Okafor, though "WHO" fits its subject better than "Okafor" fits hers.
    """
    holders: dict[str, set[str]] = {}
    for subject, held in values.items():
        for value in held:
            holders.setdefault(value, set()).add(subject)
    kept = []
    for mention in mentions:
        spelled = {fold_name(mention.text), fold_name(mention.name)}
        is_value = any(holders.get(text, set()) - {mention.subject} for text in spelled)
        kept.append(replace(mention, score=round(mention.score / 2, 3)) if is_value else mention)
    return kept


def unsure_subject_line(plan: QuestionPlan) -> str | None:
    """The block's line for a question whose name fits several subjects about equally."""
    if plan.subject is not None or not plan.subject_candidates:
        return None
    fitting = [c for c in plan.subject_candidates if c.score >= MIN_SCORE]
    if len(fitting) < 2:
        return None
    named = " or ".join(
        f"{c.subject}" + (f" ({c.name})" if c.name != c.subject else "") for c in fitting
    )
    return f"- subject: {fitting[0].text!r} may name {named}; none was read (give subject)"
