"""Scoring one context per question: the answer it gives, whether it leaks, and the summary.

Pure: the runner hands over each system's context text with the question's gold; nothing here
calls a model or a database, so every system is scored by the same rule.

The answer rule (``answer_of``), the same for every system, with no language model:

1. Read the context's lines top to bottom.
2. Skip a line marked superseded (it contains "superseded", any case).
3. Skip a line that is another key's: it starts with a key name and a colon (``home_city:``,
   ``- home_city:``, ``mira.home_city:``) and says "not known" or cites ``source <id>``, and
   that name is neither the asked attribute nor ``subject.attribute``. Such a line states
   another attribute's value, which may equal an old value of the asked key without being
   stale (a prime minister who later became president).
4. A line that names the key (``attribute:`` at its start, or ``subject.attribute``
   anywhere) and says "not known" answers "not known".
5. A line that states one of the key's values and is marked disputed or uncertain (either
   word, any case), or is an item under the block's "Uncertain:" heading, answers
   "uncertain".
6. Any other line that states one of the key's values answers with that value; when it states
   several, the one written first on the line.
7. No such line: "not known".

"States a value" is ``evals.leakage.lines.states_value``'s match (whole tokens after folding case,
diacritics, spacing before punctuation and a leading article), the matcher stale leakage uses.
Before matching, a context's metadata is masked (``evals.leakage.masking``), so that a date value
does not count as stated because something happened on that day.

Answer present: every acceptable value is stated on a line not marked superseded, other keys'
lines aside (for a period question, every value valid in the period); with no acceptable value
("not known"), the answer is right.

Stale leakage: the context states another version's value of the asked key (one of the key's
values that is not an acceptable answer) on a line it presents as current (``evals.leakage.lines``:
not marked superseded, not opened by one of the block's marks, not under "Uncertain:"), other
keys' lines aside (rule 3). Stale mention, the strict reading reported beside it: the same on
any line not marked superseded. A value the gold lists in ``held_by_other_keys`` (another key
of the subject holds it at the asked instant: a prime minister who later became president) is
not stale either: a line stating it is current for that key, as the read path's definition
says. It is no acceptable answer all the same. For "uncertain" gold
the acceptable answers are the disputed values, so a disputed line never leaks them. For "not
known" gold every value of the key is another version's. Cross-tenant leakage: a value the key
has only in other tenants appears on any line, superseded or not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast, get_args

from evals.leakage.lines import (
    SUPERSEDED,
    presented_as_current,
    shown_as_current,
    stale_statements,
    states_value,
    uncertain_items,
)
from evals.leakage.masking import key_name, masked_lines
from evals.leakage.passing import IN_PASSING, mention_kind
from retrieval.context.folding import fold_text, value_needle
from retrieval.context.snippets import one_line, value_pattern

Kind = Literal["current", "point_in_time", "known_at"]
KINDS: tuple[Kind, ...] = get_args(Kind)
"""The kinds with an accuracy of their own in every summary."""
QuestionKind = Kind | Literal["period"]
QUESTION_KINDS: tuple[QuestionKind, ...] = (*KINDS, "period")
"""Every kind of question; a period question asks for every value valid in a range."""
NOT_KNOWN = "not known"
UNCERTAIN = "uncertain"

_MARKED_DISPUTED = re.compile(r"\b(?:disputed|uncertain)\b")


@dataclass(frozen=True)
class Gold:
    """The generator's gold for one question: what counts as right, and the key's values."""

    kind: QuestionKind
    subject: str
    attribute: str
    answer: str  # a value, "not known" or "uncertain"
    answers: tuple[str, ...]  # acceptable values; the disputed values for "uncertain"
    values: tuple[str, ...]  # every value the key ever had in this tenant
    other_tenant_values: tuple[str, ...] = ()
    held_by_other_keys: tuple[str, ...] = ()  # current for another key of the subject then
    family: str | None = None  # the generator's shape of history, reported on its own row
    name_form: str | None = None  # how the question names its subject (careers family)
    written_differently: tuple[str, ...] = ()  # values some episode writes otherwise

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Gold:
        """The gold from a question line's ``gold`` object, checked for its kind and answers."""
        kind = data["kind"]
        if kind not in QUESTION_KINDS:
            raise ValueError(f"unknown question kind {kind!r}; expected one of {QUESTION_KINDS}")
        gold = cls(
            kind=cast(QuestionKind, kind),
            subject=str(data["subject"]),
            attribute=str(data["attribute"]),
            answer=str(data["answer"]),
            answers=tuple(str(value) for value in data["answers"]),
            values=tuple(str(value) for value in data["values"]),
            other_tenant_values=tuple(str(v) for v in data.get("other_tenant_values", ())),
            held_by_other_keys=tuple(str(v) for v in data.get("held_by_other_keys", ())),
            family=None if data.get("family") is None else str(data["family"]),
            name_form=None if data.get("name_form") is None else str(data["name_form"]),
            written_differently=tuple(str(v) for v in data.get("written_differently", ())),
        )
        if gold.answer == NOT_KNOWN and gold.answers:
            raise ValueError(f"{gold.key}: a 'not known' answer lists no acceptable values")
        if gold.answer not in (NOT_KNOWN, UNCERTAIN) and not gold.answers:
            raise ValueError(f"{gold.key}: the answer {gold.answer!r} lists no acceptable value")
        return gold

    @property
    def key(self) -> str:
        """The key as SGAM's block names it: ``subject.attribute``."""
        return f"{self.subject}.{self.attribute}"

    @property
    def stale_values(self) -> list[str]:
        """The key's values that are not acceptable answers: other versions' values."""
        accepted = {_norm(value) for value in (*self.answers, *self.held_by_other_keys)}
        return _distinct(value for value in self.values if _norm(value) not in accepted)


GoldLike = Gold | Mapping[str, Any]
_TUPLES = ("leaked_values", "leaked_lines", "cross_tenant_values", "leak_mentions")


@dataclass(frozen=True)
class QuestionResult:
    """One system's context for one question, scored."""

    system: str
    tenant: str
    kind: QuestionKind
    subject: str
    attribute: str
    question: str
    gold_answer: str
    answer: str
    correct: bool
    stale_leak: bool  # a stale value on a line presented as current (``evals.leakage.lines``)
    leaked_values: tuple[str, ...]
    leaked_lines: tuple[str, ...]
    cross_tenant_leak: bool
    cross_tenant_values: tuple[str, ...]
    tokens: int
    latency_ms: float
    family: str | None = None
    answer_present: bool = False
    with_subject: bool = True  # the request named the subject
    name_form: str | None = None
    plan_subject: str | None = None  # the subject the system's plan chose (None: no plan)
    plan_mode: str | None = None  # the plan's mode (None: the system makes no plan)
    evidence_leak: bool = False  # a leaked line is not a key line: a snippet's sentence
    answer_written_differently: bool = False  # an episode writes an answer otherwise
    stale_written_differently: bool = False  # an episode writes a stale value otherwise
    stale_mention: bool = False  # a stale value on any line not marked superseded
    context: str = ""  # the whole context the verdicts were drawn from, as the system gave it
    answer_line: str | None = None  # the context line that decided the answer (None: no line)
    leak_mentions: tuple[str, ...] = ()  # per leaked line: "stating" or "in passing"

    @property
    def leak_in_passing(self) -> bool:
        """Whether the stale-leak verdict rests only on lines that mention a stale value in
        passing (``evals.leakage.passing``), none stating one; False for a result scored before
        lines were classified (no ``leak_mentions``)."""
        kinds = self.leak_mentions
        return self.stale_leak and bool(kinds) and all(kind == IN_PASSING for kind in kinds)

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object (tuples as lists)."""
        data = asdict(self)
        for name in _TUPLES:
            data[name] = list(data[name])
        data["leak_in_passing"] = self.leak_in_passing
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QuestionResult:
        """A result back from ``to_json``'s object."""
        fields = dict(data)
        fields.pop("leak_in_passing", None)  # derived, written for the reader
        for name in _TUPLES:
            if name in fields:
                fields[name] = tuple(fields[name])
        return cls(**fields)


def as_gold(gold: GoldLike) -> Gold:
    """The gold itself, or parsed from the generator's JSON object."""
    return gold if isinstance(gold, Gold) else Gold.from_json(gold)


def answer_of(context: str, *, subject: str, attribute: str, values: Sequence[str]) -> str:
    """The context's answer for the key by the module's one rule: a value, "not known" or
    "uncertain"."""
    return deciding_line(context, subject=subject, attribute=attribute, values=values)[0]


def deciding_line(
    context: str, *, subject: str, attribute: str, values: Sequence[str]
) -> tuple[str, int | None]:
    """``answer_of``'s answer and the index of the context line that decided it (None when no
    line did: "not known" because nothing was found)."""
    key = f"{subject}.{attribute}"
    patterns = [(value, value_pattern(value_needle(value))) for value in _distinct(values)]
    masked = masked_lines(context, values, subject=subject, attribute=attribute)
    unsure_lines = uncertain_items(context.splitlines())
    for index, (line, unsure) in enumerate(zip(masked, unsure_lines, strict=True)):
        folded = fold_text(line)
        if SUPERSEDED in folded:
            continue
        named = key_name(line) in (attribute, key) or states_value(line, key)
        if NOT_KNOWN in folded and named:
            return NOT_KNOWN, index
        found = [
            (match.start(), -len(match.group()), position, value)
            for position, (value, pattern) in enumerate(patterns)
            if pattern is not None and (match := pattern.search(folded)) is not None
        ]
        if not found:
            continue
        if unsure or _MARKED_DISPUTED.search(folded):
            return UNCERTAIN, index
        return min(found)[3], index
    return NOT_KNOWN, None


def correct(answer: str, gold: GoldLike) -> bool:
    """Whether the answer is right: "not known" and "uncertain" exactly, else an acceptable
    value (case and spacing aside)."""
    parsed = as_gold(gold)
    if parsed.answer in (NOT_KNOWN, UNCERTAIN):
        return answer == parsed.answer
    return _norm(answer) in {_norm(value) for value in parsed.answers}


def stale_leak(
    context: str, gold: GoldLike, *, strict: bool = False
) -> tuple[list[str], list[str]]:
    """Other versions' values the context states on lines it presents as current (with
    ``strict``, on any line not marked superseded), and those lines (as written)."""
    written = context.splitlines()
    found = _stale_mentions(context, as_gold(gold), written)
    return _values_and_lines(written, found if strict else _presented(written, found))


def _presented(written: Sequence[str], found: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Those of ``found`` on lines the context presents as current."""
    presented = presented_as_current(written)
    return [(index, value) for index, value in found if presented[index]]


def _values_and_lines(
    written: Sequence[str], found: list[tuple[int, str]]
) -> tuple[list[str], list[str]]:
    """The distinct values of ``found``, in order, and their lines as written."""
    indexes = sorted({index for index, _ in found})
    return list(dict.fromkeys(value for _, value in found)), [written[i] for i in indexes]


def _stale_mentions(context: str, gold: Gold, written: Sequence[str]) -> list[tuple[int, str]]:
    """(line, value) for each stale value stated on a line not marked superseded: the strict
    reading, of which the lines presented as current are a part."""
    masked = _masked_for(context, gold)
    return stale_statements(masked, gold.stale_values, shown_as_current(written, strict=True))


def answer_present(context: str, gold: GoldLike) -> bool:
    """Whether every acceptable value is stated on a line not marked superseded, other keys'
    lines aside; with none acceptable, whether the context answers right."""
    parsed = as_gold(gold)
    if not parsed.answers:
        values = _distinct([*parsed.values, *parsed.answers])
        found = answer_of(
            context, subject=parsed.subject, attribute=parsed.attribute, values=values
        )
        return correct(found, parsed)
    lines = [line for line in _masked_for(context, parsed) if SUPERSEDED not in line.casefold()]
    return all(any(states_value(line, value) for line in lines) for value in parsed.answers)


def _masked_for(context: str, gold: Gold) -> list[str]:
    """The context's lines masked for the gold's key (``evals.leakage.masking``)."""
    values = [*gold.values, *gold.other_tenant_values]
    return masked_lines(context, values, subject=gold.subject, attribute=gold.attribute)


def cross_tenant_leak(context: str, gold: GoldLike) -> list[str]:
    """The values the key has only in other tenants that appear on any line of the context."""
    parsed = as_gold(gold)
    lines = masked_lines(
        context, [*parsed.values, *parsed.other_tenant_values], subject=None, attribute=None
    )
    return [
        value
        for value in _distinct(parsed.other_tenant_values)
        if any(states_value(line, value) for line in lines)
    ]


def score_question(
    *,
    system: str,
    tenant: str,
    question: str,
    gold: GoldLike,
    context: str,
    tokens: int,
    latency_ms: float,
    with_subject: bool = True,
    plan: Mapping[str, Any] | None = None,
) -> QuestionResult:
    """Score one system's context for one question; ``with_subject`` says whether the request
    named the subject, ``plan`` is the system's plan (its ``subject`` and ``mode``), if any."""
    parsed = as_gold(gold)
    answer, decided = deciding_line(
        context,
        subject=parsed.subject,
        attribute=parsed.attribute,
        values=_distinct([*parsed.values, *parsed.answers]),
    )
    written = context.splitlines()
    mentions = _stale_mentions(context, parsed, written)
    presented = _presented(written, mentions)
    leaked, leaked_lines = _values_and_lines(written, presented)
    foreign = cross_tenant_leak(context, parsed)
    return QuestionResult(
        system=system,
        tenant=tenant,
        kind=parsed.kind,
        subject=parsed.subject,
        attribute=parsed.attribute,
        question=question,
        gold_answer=parsed.answer,
        answer=answer,
        correct=correct(answer, parsed),
        stale_leak=bool(leaked),
        leaked_values=tuple(leaked),
        leaked_lines=tuple(leaked_lines),
        cross_tenant_leak=bool(foreign),
        cross_tenant_values=tuple(foreign),
        tokens=tokens,
        latency_ms=latency_ms,
        family=parsed.family,
        answer_present=answer_present(context, parsed),
        with_subject=with_subject,
        name_form=parsed.name_form,
        plan_subject=None if plan is None else plan.get("subject"),
        plan_mode=None if plan is None else plan.get("mode"),
        evidence_leak=any(key_name(line) is None for line in leaked_lines),
        answer_written_differently=bool(set(parsed.answers) & set(parsed.written_differently)),
        stale_written_differently=bool(set(parsed.stale_values) & set(parsed.written_differently)),
        stale_mention=bool(mentions),
        context=context,
        answer_line=None if decided is None else written[decided],
        leak_mentions=_mention_kinds(written, presented),
    )


def _mention_kinds(written: Sequence[str], found: list[tuple[int, str]]) -> tuple[str, ...]:
    """Per leaked line (in ``_values_and_lines``' order), whether it states its stale values
    or mentions them in passing (``evals.leakage.passing``); the verdict itself is unchanged."""
    by_line: dict[int, list[str]] = {}
    for index, value in found:
        by_line.setdefault(index, []).append(value)
    return tuple(mention_kind(written[i], by_line[i]) for i in sorted(by_line))


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95% at z=1.96); (0, 1) when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return (0.0, 1.0)
    share = successes / n
    spread = z * z / n
    center = (share + spread / 2) / (1 + spread)
    half = z / (1 + spread) * math.sqrt(share * (1 - share) / n + spread / (4 * n))
    # Rounding can leave a bound a hair inside the share (0.9999999999999999 for n of n).
    return (max(0.0, min(center - half, share)), min(1.0, max(center + half, share)))


def proportion(flags: Sequence[bool]) -> tuple[float | None, list[float]]:
    """The share of true flags (None for none) and its Wilson interval."""
    low, high = wilson(sum(flags), len(flags))
    return (sum(flags) / len(flags) if flags else None), [low, high]


def _norm(value: str) -> str:
    return one_line(value).casefold()


def _distinct(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if _norm(value) and _norm(value) not in seen:
            seen.add(_norm(value))
            kept.append(value)
    return kept
