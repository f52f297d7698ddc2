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
   word, any case) answers "uncertain".
6. Any other line that states one of the key's values answers with that value; when it states
   several, the one written first on the line.
7. No such line: "not known".

"States a value" is ``retrieval.snippets.mentions_value``'s match (whole tokens, any case), the
matcher stale leakage uses. Before matching, a context's metadata is masked, so that a date
value does not count as stated because something happened on that day:

- full timestamps (a date with a time of day, as in ``2026-06-03T10:00:00Z``), unless the
  key's values are themselves timestamps;
- a key line's window and citation, ``(from 2026-06-03 until 2026-06-30; source e2)`` and
  ``(source e2)``, and an uncertain line's ``disputed from …`` tail (the word "disputed"
  stays);
- an evidence line's citation, ``[e2]``;
- a header line naming the read's instants (``mira as of 2026-06-02T12:00Z:``).

These shapes are SGAM's block format; the baselines' raw episode lines do not take them, and
every system's context goes through the same masking.

Stale leakage: the context states another version's value of the asked key (one of the key's
values that is not an acceptable answer) on a line not marked superseded, other keys' lines
aside (rule 3). A value the gold lists in ``held_by_other_keys`` (another key of the subject holds
it at the asked instant: a prime minister who later became president) is not stale either: a
line stating it is current for that key, as the read path's definition says. It is no
acceptable answer all the same. For "uncertain" gold
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

import numpy as np

from evals.leakage import SUPERSEDED, leaked_values
from retrieval.snippets import mentions_value, one_line, value_pattern

Kind = Literal["current", "point_in_time", "known_at"]
KINDS: tuple[Kind, ...] = get_args(Kind)
NOT_KNOWN = "not known"
UNCERTAIN = "uncertain"

_MARKED_DISPUTED = re.compile(r"\b(?:disputed|uncertain)\b")
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?"
)
_TIME_MASK = "<time>"
_KEY_LINE = re.compile(r"^(?:- )?([A-Za-z0-9_.:@-]+):\s")
_CITES = re.compile(r"\bsource \S+|\bnot known\b", re.IGNORECASE)
_WINDOW = re.compile(r"\((?:from|until) [^()]*; source [^()]*\)|\(source [^()]*\)")
_DISPUTED_TAIL = re.compile(r"(, disputed) (?:from|until) .*$")
_EVIDENCE_CITATION = re.compile(r"^(?:- )?\[[^\]]*\]")
_HEADER = re.compile(r"^(?:\S+ )?as of .*:$", re.IGNORECASE)


@dataclass(frozen=True)
class Gold:
    """The generator's gold for one question: what counts as right, and the key's values."""

    kind: Kind
    subject: str
    attribute: str
    answer: str  # a value, "not known" or "uncertain"
    answers: tuple[str, ...]  # acceptable values; the disputed values for "uncertain"
    values: tuple[str, ...]  # every value the key ever had in this tenant
    other_tenant_values: tuple[str, ...] = ()
    held_by_other_keys: tuple[str, ...] = ()  # current for another key of the subject then
    family: str | None = None  # the generator's shape of history, reported on its own row

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Gold:
        """The gold from a question line's ``gold`` object, checked for its kind and answers."""
        kind = data["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown question kind {kind!r}; expected one of {KINDS}")
        gold = cls(
            kind=cast(Kind, kind),
            subject=str(data["subject"]),
            attribute=str(data["attribute"]),
            answer=str(data["answer"]),
            answers=tuple(str(value) for value in data["answers"]),
            values=tuple(str(value) for value in data["values"]),
            other_tenant_values=tuple(str(v) for v in data.get("other_tenant_values", ())),
            held_by_other_keys=tuple(str(v) for v in data.get("held_by_other_keys", ())),
            family=None if data.get("family") is None else str(data["family"]),
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


@dataclass(frozen=True)
class QuestionResult:
    """One system's context for one question, scored."""

    system: str
    tenant: str
    kind: Kind
    subject: str
    attribute: str
    question: str
    gold_answer: str
    answer: str
    correct: bool
    stale_leak: bool
    leaked_values: tuple[str, ...]
    leaked_lines: tuple[str, ...]
    cross_tenant_leak: bool
    cross_tenant_values: tuple[str, ...]
    tokens: int
    latency_ms: float
    family: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object (tuples as lists)."""
        data = asdict(self)
        for name in ("leaked_values", "leaked_lines", "cross_tenant_values"):
            data[name] = list(data[name])
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QuestionResult:
        """A result back from ``to_json``'s object."""
        fields = dict(data)
        for name in ("leaked_values", "leaked_lines", "cross_tenant_values"):
            fields[name] = tuple(fields[name])
        return cls(**fields)


def as_gold(gold: GoldLike) -> Gold:
    """The gold itself, or parsed from the generator's JSON object."""
    return gold if isinstance(gold, Gold) else Gold.from_json(gold)


def answer_of(context: str, *, subject: str, attribute: str, values: Sequence[str]) -> str:
    """The context's answer for the key by the module's one rule: a value, "not known" or
    "uncertain"."""
    key = f"{subject}.{attribute}"
    patterns = [(value, value_pattern(value)) for value in _distinct(values)]
    for line in _masked_lines(context, values, subject=subject, attribute=attribute):
        folded = one_line(line).casefold()
        if SUPERSEDED in folded:
            continue
        named = _key_name(line) in (attribute, key) or mentions_value(line, key)
        if NOT_KNOWN in folded and named:
            return NOT_KNOWN
        found = [
            (match.start(), -len(match.group()), position, value)
            for position, (value, pattern) in enumerate(patterns)
            if pattern is not None and (match := pattern.search(folded)) is not None
        ]
        if not found:
            continue
        if _MARKED_DISPUTED.search(folded):
            return UNCERTAIN
        return min(found)[3]
    return NOT_KNOWN


def correct(answer: str, gold: GoldLike) -> bool:
    """Whether the answer is right: "not known" and "uncertain" exactly, else an acceptable
    value (case and spacing aside)."""
    parsed = as_gold(gold)
    if parsed.answer in (NOT_KNOWN, UNCERTAIN):
        return answer == parsed.answer
    return _norm(answer) in {_norm(value) for value in parsed.answers}


def stale_leak(context: str, gold: GoldLike) -> tuple[list[str], list[str]]:
    """Other versions' values the context states on lines not marked superseded, and those
    lines (as written)."""
    parsed = as_gold(gold)
    stale = parsed.stale_values
    masked = _masked_lines(
        context,
        [*parsed.values, *parsed.other_tenant_values],
        subject=parsed.subject,
        attribute=parsed.attribute,
    )
    found = leaked_values("\n".join(masked), stale)
    written = context.splitlines()
    return found, [written[i] for i, line in enumerate(masked) if leaked_values(line, stale)]


def cross_tenant_leak(context: str, gold: GoldLike) -> list[str]:
    """The values the key has only in other tenants that appear on any line of the context."""
    parsed = as_gold(gold)
    lines = _masked_lines(
        context, [*parsed.values, *parsed.other_tenant_values], subject=None, attribute=None
    )
    return [
        value
        for value in _distinct(parsed.other_tenant_values)
        if any(mentions_value(line, value) for line in lines)
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
) -> QuestionResult:
    """Score one system's context for one question."""
    parsed = as_gold(gold)
    answer = answer_of(
        context,
        subject=parsed.subject,
        attribute=parsed.attribute,
        values=_distinct([*parsed.values, *parsed.answers]),
    )
    leaked, leaked_lines = stale_leak(context, parsed)
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
    )


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


def summarize(results: Iterable[QuestionResult]) -> dict[str, Any]:
    """Per system (in order of first appearance): shares with Wilson intervals, accuracy by
    question kind, token and latency percentiles; the same per family under ``families``.

    Shares are fractions (0..1). An accuracy over no questions of its kind is null, its
    interval [0, 1]. ``families`` holds the families the questions' gold names, by name; a
    question without one counts only in the total.
    """
    by_system: dict[str, list[QuestionResult]] = {}
    for result in results:
        by_system.setdefault(result.system, []).append(result)
    return {"systems": {name: _system_summary(rows) for name, rows in by_system.items()}}


def proportion(flags: Sequence[bool]) -> tuple[float | None, list[float]]:
    """The share of true flags (None for none) and its Wilson interval."""
    low, high = wilson(sum(flags), len(flags))
    return (sum(flags) / len(flags) if flags else None), [low, high]


def _system_summary(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    by_family: dict[str, list[QuestionResult]] = {}
    for row in rows:
        if row.family is not None:
            by_family.setdefault(row.family, []).append(row)
    summary = _figures(rows)
    summary["families"] = {name: _figures(by_family[name]) for name in sorted(by_family)}
    return summary


def _figures(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    summary: dict[str, Any] = {"questions": len(rows)}
    leakage, leakage_ci = proportion([row.stale_leak for row in rows])
    summary["stale_leakage"], summary["stale_leakage_ci"] = leakage, leakage_ci
    for kind in KINDS:
        asked = [row.correct for row in rows if row.kind == kind]
        accuracy, accuracy_ci = proportion(asked)
        summary[f"{kind}_accuracy"] = accuracy
        summary[f"{kind}_accuracy_ci"] = accuracy_ci
        summary[f"{kind}_questions"] = len(asked)
    cross, cross_ci = proportion([row.cross_tenant_leak for row in rows])
    summary["cross_tenant_leakage"], summary["cross_tenant_leakage_ci"] = cross, cross_ci
    tokens = [float(row.tokens) for row in rows]
    latency = [row.latency_ms for row in rows]
    summary["context_tokens_p50"] = _percentile(tokens, 50)
    summary["context_tokens_p95"] = _percentile(tokens, 95)
    summary["latency_p50_ms"] = _percentile(latency, 50)
    summary["latency_p95_ms"] = _percentile(latency, 95)
    return summary


def _percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between the closest ranks (numpy's default); None for none."""
    return float(np.percentile(values, q)) if values else None


def _masked_lines(
    context: str, values: Iterable[str], *, subject: str | None, attribute: str | None
) -> list[str]:
    """The context's lines with metadata masked, another key's lines emptied (when a key is
    given); timestamps are masked unless a value is itself a timestamp."""
    keep_times = any(_TIMESTAMP.search(value) for value in values)
    asked = None if attribute is None else (attribute, f"{subject}.{attribute}")
    lines = []
    for line in context.splitlines():
        name = _key_name(line)
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


def _key_name(line: str) -> str | None:
    """The key a key line names (``home_city`` in ``home_city: Lisbon (…; source e4)``)."""
    match = _KEY_LINE.match(line)
    if match is None or not _CITES.search(line[match.end() :]):
        return None
    return match.group(1)


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
