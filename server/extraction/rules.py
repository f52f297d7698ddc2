"""The rule-based answers of ``sgam extractor dev``: a stand-in for a model, not a model.

It reads the extractor's prompt (``extraction.extractor.prompt_messages``: the episode, the
subjects' current facts, the declared attributes) and proposes a candidate where a sentence
names a declared attribute (its name with spaces for underscores, or an alias) and a value of
the attribute's type follows the name: ``Her passport deadline is 2026-06-30.``, ``Mira's city
is Tromsø.``. A date, datetime or number is the first of its kind after the name, an enum the
first member named in the sentence, a boolean yes/no or true/false, a string the rest of the
sentence after a linking word (is, was, are, now, to, a colon). The subject is the episode's
one subject, or among several the one whose id the sentence writes; the change is ``new``,
``update`` or ``no_change`` against the current facts. Nothing is inferred: a fact said any
other way is missed. A request that is not the extractor's prompt gets an empty list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from server.extraction.standin import Reply, updates
from store.contract.values import ValueParseError, ValueType, parse_value, same_value

_SENTENCE = re.compile(r"[^\s.!?][^\n]*?(?:[.!?]+(?=\s|$)|$)", re.M)
"""A sentence: up to a stop that ends a word (not the point in 1.5), or the end of a line."""
_LINK = re.compile(r"^(?:\s|:|=|-|\b(?:is|was|are|were|now|to|of|set|changed|moved)\b)*", re.I)
_FOUND = {
    ValueType.DATE: re.compile(r"\d{4}-\d{2}-\d{2}(?![\dT])"),
    ValueType.DATETIME: re.compile(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})"
    ),
    ValueType.INTEGER: re.compile(r"(?<![\w.])[+-]?\d+(?![\w.]\d)"),
    ValueType.NUMBER: re.compile(r"(?<![\w.])[+-]?\d+(?:\.\d+)?(?![\w.]\d)"),
    ValueType.BOOLEAN: re.compile(r"\b(?:yes|no|true|false)\b", re.I),
}
_BOOLEAN = {"yes": "true", "no": "false", "true": "true", "false": "false"}


def rule_based(request: Mapping[str, Any]) -> Reply:
    """The stand-in's answer to one chat completion request: ``{"updates": [...]}``."""
    context = _prompt_context(request)
    if context is None:
        return updates()
    return updates(*candidates(context))


def candidates(context: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The candidates the rules find in the prompt's episode, at most one per subject and
    attribute (the first sentence that gives it)."""
    episode = context["episode"]
    current = {(f["subject"], f["attribute"]): f["value"] for f in context["current_facts"]}
    proposed: set[tuple[str, str]] = set()
    for sentence in _SENTENCE.findall(episode.get("text") or ""):
        subject = _subject(sentence, episode.get("subjects") or [])
        if subject is None:
            continue
        for attribute in context["attributes"]:
            if (subject, attribute["name"]) in proposed:
                continue
            value = _value(sentence, attribute)
            if value is None:
                continue
            proposed.add((subject, attribute["name"]))
            yield _candidate(sentence.strip(), subject, attribute, value, current)


def _prompt_context(request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The extractor's JSON context in the request's last message, if that is what it holds."""
    messages = request.get("messages") or []
    try:
        context = json.loads(messages[-1]["content"])
    except (IndexError, KeyError, TypeError, ValueError):
        return None
    wanted = ("episode", "current_facts", "attributes")
    if not isinstance(context, dict) or any(key not in context for key in wanted):
        return None
    return context


def _subject(sentence: str, subjects: list[str]) -> str | None:
    if len(subjects) == 1:
        return subjects[0]
    named = [s for s in subjects if re.search(rf"\b{re.escape(s)}\b", sentence, re.I)]
    return named[0] if len(named) == 1 else None


def _value(sentence: str, attribute: Mapping[str, Any]) -> str | None:
    """The value of the attribute's type the sentence gives after naming it, as text."""
    names = [attribute["name"].replace("_", " "), *attribute.get("aliases", [])]
    for name in names:
        mention = re.search(rf"\b{re.escape(name)}\b", sentence, re.I)
        if mention is None:
            continue
        rest = sentence[mention.end() :]
        found = _typed(rest, sentence, attribute)
        if found is not None:
            return found
    return None


def _typed(rest: str, sentence: str, attribute: Mapping[str, Any]) -> str | None:
    value_type = ValueType(attribute["value_type"])
    if value_type is ValueType.JSON:
        return None
    if value_type is ValueType.ENUM:
        members = attribute.get("enum_values") or []
        named = [m for m in members if re.search(rf"\b{re.escape(m)}\b", sentence, re.I)]
        return named[0] if named else None
    if value_type is ValueType.STRING:
        text = _LINK.sub("", rest, count=1).strip().rstrip(".!?").strip()
        return text or None
    match = _FOUND[value_type].search(rest)
    if match is None:
        return None
    text = match.group(0)
    return _BOOLEAN[text.lower()] if value_type is ValueType.BOOLEAN else text


def _candidate(
    evidence: str,
    subject: str,
    attribute: Mapping[str, Any],
    value: str,
    current: Mapping[tuple[str, str], str],
) -> dict[str, Any]:
    candidate = {
        "evidence": evidence,
        "subject": subject,
        "attribute": attribute["name"],
        "change": "new",
        "value": value,
    }
    held = current.get((subject, attribute["name"]))
    if held is None:
        return candidate
    if _same(held, value, attribute):
        return candidate | {"change": "no_change", "value": None, "current_value": held}
    return candidate | {"change": "update", "current_value": held}


def _same(held: str, value: str, attribute: Mapping[str, Any]) -> bool:
    value_type = ValueType(attribute["value_type"])
    members = attribute.get("enum_values") or ()
    try:
        return bool(
            same_value(
                parse_value(held, value_type, enum_values=members),
                parse_value(value, value_type, enum_values=members),
            )
        )
    except ValueParseError:
        return held == value
