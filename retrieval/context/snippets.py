"""Evidence snippets: sentences, the window that best answers a question, and value mentions.

Pure text rules with no model and no downloads. Sentence splitting is a heuristic: a period,
question mark or exclamation mark ends a sentence when whitespace and a capital, digit or
quote follow, so decimals (``1.5``), dates (``2026-06-30``) and ``e.g. the`` stay whole.
"""

from __future__ import annotations

import functools
import re

from store.episodes.text import one_line

__all__ = [
    "ELLIPSIS",
    "clause_around",
    "cut_at_word",
    "mentions_value",
    "one_line",
    "overlap",
    "query_terms",
    "split_sentences",
    "trim_snippet",
    "value_pattern",
]

ELLIPSIS = "…"

_TERMINATOR = re.compile(r"""[.!?]+["'\u201d\u2019)\]]*\s+""")
_PARAGRAPH = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*\u2022]|\d+[.)])[ \t])")
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)[.!?]+[\"'\u201d\u2019)\]]*\s+$")
_WORD = re.compile(r"\w+")

_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "e.g", "i.e", "approx", "cf"}
)
_STOPWORDS = frozenset(
    """a an the is are was were be been being am of to in on at for by with from and or but
    not it its this that these those what which who whom whose when where why how do does did
    has have had i you he she we they me my your our their his her them us s t will would can
    could should shall may might must as than then so if about into there here just also any
    all some please tell know""".split()  # noqa: SIM905 - a word list reads better as text
)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences, each on one line; decimals and dates never split."""
    sentences: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        sentences.extend(_paragraph_sentences(paragraph))
    return sentences


def _paragraph_sentences(paragraph: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _TERMINATOR.finditer(paragraph):
        if _ends_sentence(paragraph, match):
            sentences.append(paragraph[start : match.end()])
            start = match.end()
    sentences.append(paragraph[start:])
    return [line for line in (one_line(sentence) for sentence in sentences) if line]


def _ends_sentence(paragraph: str, match: re.Match[str]) -> bool:
    following = paragraph[match.end() : match.end() + 1]
    if following.islower():
        return False
    if "." not in match.group().rstrip():
        return True
    last = _LAST_WORD.search(paragraph[max(0, match.start() - 40) : match.end()])
    if last is None:
        return True
    word = last.group(1)
    is_initial = len(word) == 1 and word.isupper()
    return not is_initial and word.lower().rstrip(".") not in _ABBREVIATIONS


def query_terms(query: str) -> frozenset[str]:
    """The query's words that count for overlap: lower case, stopwords left out unless all."""
    words = frozenset(word.lower() for word in _WORD.findall(query))
    content = words - _STOPWORDS
    return content or words


def overlap(text: str, terms: frozenset[str]) -> int:
    """How many of the terms occur as words of the text."""
    return len(terms & {word.lower() for word in _WORD.findall(text)})


def trim_snippet(text: str, query: str, *, max_sentences: int = 2, max_chars: int = 280) -> str:
    """The run of consecutive sentences sharing most words with the query, cut to max_chars."""
    if max_sentences < 1:
        raise ValueError("max_sentences must be at least 1")
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    sentences = split_sentences(text)
    if not sentences:
        return ""
    terms = query_terms(query)
    size = min(max_sentences, len(sentences))
    windows = [" ".join(sentences[i : i + size]) for i in range(len(sentences) - size + 1)]
    best = max(range(len(windows)), key=lambda i: (overlap(windows[i], terms), -i))
    return cut_at_word(windows[best], max_chars)


def cut_at_word(text: str, max_chars: int) -> str:
    """The text itself if it fits, else its words up to max_chars with an ellipsis at the end."""
    if len(text) <= max_chars:
        return text
    room = max_chars - len(ELLIPSIS)
    space = text.rfind(" ", 0, room + 1)
    head = text[:space] if space > 0 else text[:room]
    return head.rstrip(" ,;:") + ELLIPSIS


_CLAUSE_BREAK = re.compile(r"[;,:]\s+|\s+[-\u2013\u2014]\s+|\s+(?=\()")


def clause_around(sentence: str, span: tuple[int, int], *, max_chars: int) -> str:
    """The clause of ``sentence`` holding ``span``, widened by whole clauses up to ``max_chars``.

    Clauses break at commas, semicolons, colons, dashes and before parentheses, never inside
    ``span`` (a value such as "July 15, 2026" stays whole). Text left out at either end is
    marked with an ellipsis.
    """
    start, end = span
    breaks = [m for m in _CLAUSE_BREAK.finditer(sentence) if m.end() <= start or m.start() >= end]
    cuts = [0, *sorted({m.end() for m in breaks if m.end() <= start})]
    ends = [*sorted({m.start() for m in breaks if m.start() >= end}), len(sentence)]
    head, tail = cuts[-1], ends[0]
    left, right = len(cuts) - 1, 0
    while True:
        grown = False
        if right + 1 < len(ends) and ends[right + 1] - head <= max_chars:
            right += 1
            tail = ends[right]
            grown = True
        if left > 0 and tail - cuts[left - 1] <= max_chars:
            left -= 1
            head = cuts[left]
            grown = True
        if not grown:
            break
    clause = cut_at_word(sentence[head:tail].strip(" ,;:"), max(max_chars, end - start))
    before = ELLIPSIS if head > 0 else ""
    after = ELLIPSIS if tail < len(sentence) and not clause.endswith(ELLIPSIS) else ""
    return f"{before}{clause}{after}"


def _edge_guards(needle: str) -> tuple[str, str]:
    before = after = ""
    if needle[0].isdigit():
        before = r"(?<!\d)(?<!\d[.,])"
    elif re.match(r"\w", needle[0]):
        before = r"(?<!\w)"
    if needle[-1].isdigit():
        after = r"(?!\d)(?![.,]\d)"
    elif re.match(r"\w", needle[-1]):
        after = r"(?!\w)"
    return before, after


@functools.lru_cache(maxsize=65_536)
def value_pattern(value_text: str) -> re.Pattern[str] | None:
    """A case-insensitive pattern for a value's text as a whole token run (None when empty).

    Cached: a subject's values are checked against the evidence of every read about it.
    """
    needle = one_line(value_text).casefold()
    if not needle:
        return None
    before, after = _edge_guards(needle)
    return re.compile(before + re.escape(needle) + after)


def mentions_value(text: str, value_text: str) -> bool:
    """Whether the text states the value's text (any case, not inside a longer word or number)."""
    pattern = value_pattern(value_text)
    return pattern is not None and pattern.search(one_line(text).casefold()) is not None
