"""Whether a line that leaks a stale value states it or mentions it in passing. Pure.

The scorer (``evals.leakage.scoring``) counts a stale value on any line presented as current,
whatever the sentence does with it: "Lena remembered when the account had only 280 seats"
leaks 280 as surely as "Lena's account now pays for 280 seats". The report keeps that verdict
and says how often it rests only on lines of the first kind; this module tells the two apart.

A line *mentions a value in passing* when the sentence holding it frames the value as
something other than what holds now: a memory or a feeling about it ("remembered", "misses",
"nostalgic"), a remark about it ("joked", "mentioned", "asked how"), something old or once
believed ("old", "once", "back then", "used to"), and it carries no sign of a statement of the
current value (a correction, "now", "today", "since", a sentence opening "From", a verb of
change such as "moved to" or "switched"). A key line (``attribute: value``) states its value.
Anything else states it: the classification never turns a statement into a mention on a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from evals.leakage.lines import states_value
from evals.leakage.masking import key_name

Mention = Literal["in passing", "stating"]
IN_PASSING: Mention = "in passing"
STATING: Mention = "stating"

_PASSING = re.compile(
    r"\b(?:"
    # memory and feeling
    r"remember(?:s|ed)?|recall(?:s|ed)?|reminisc\w*|nostalgi\w*|fondly|miss(?:es|ed)?"
    # remarks about the value rather than statements of it
    r"|jok(?:e|es|ed|ing)|mention(?:s|ed)?|wonder(?:s|ed)?|asked (?:how|whether|if|about)"
    # something old, former or once believed
    r"|old|older|once|formerly|former|previous(?:ly)?|back then|used to|years ago|thought"
    r")\b"
)
_STATING = re.compile(
    r"\b(?:"
    r"actually|correction|corrected|now|today|since|as of|from today|new"
    r"|moved|relocated|switched|changed|set|renewed|appointed|named|became|took (?:office|over)"
    r")\b|^from\b"
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_CITATION = re.compile(r"^\s*(?:-\s*)?\[[^\]]*\]\s*")


def mention_kind(line: str, values: Iterable[str]) -> Mention:
    """How ``line`` carries the first of ``values`` it states: "in passing" or "stating".

    Only the sentences that state one of the values are read (a line may hold an episode of
    several sentences, after a citation such as ``[u7]``). A line that states none of them, a
    key line, or a sentence with no sign either way is "stating": the scorer's own reading.
    """
    if key_name(line) is not None:
        return STATING
    wanted = list(values)
    text = _CITATION.sub("", line)
    sentences = [part for part in _SENTENCE_END.split(text) if part.strip()]
    holding = [s for s in sentences if any(states_value(s, value) for value in wanted)]
    if not holding:
        return STATING
    return IN_PASSING if all(_in_passing(sentence) for sentence in holding) else STATING


def _in_passing(sentence: str) -> bool:
    folded = sentence.casefold().strip()
    return _PASSING.search(folded) is not None and _STATING.search(folded) is None
