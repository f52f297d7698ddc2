"""How LangGraph's namespaces, keys and items map onto SGAM's subjects, attributes and facts.

Pure. A namespace is a subject: its labels joined by ``.`` (LangGraph refuses ``.`` inside a
label, so the join is one-to-one), each label of a subject id's other characters
(``A-Z a-z 0-9 _ : @ -``). A key is an attribute of the tenant's schema. An item's value is
the fact's value: a JSON attribute holds the whole dict; an attribute of another type holds
one value, which the item carries as ``{"value": ...}``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from langgraph.store.base import (
    InvalidNamespaceError,
    Item,
    MatchCondition,
    SearchItem,
    get_text_at_path,
)

from store.contract.common import IDENTIFIER_PATTERN
from store.contract.facts import Fact
from store.contract.values import canonical

SEPARATOR: Final = "."
WHOLE_ITEM: Final = "$"
"""The index path of the whole value, as LangGraph names it."""
JSON: Final = "json"
"""The value type of an attribute declared for a key on its first put."""
SINGLE: Final = "value"
"""The one field of an item whose key is an attribute of another type than JSON."""

_LABEL = re.compile(r"[A-Za-z0-9_:@-]+")
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
_MAX_ID = 200

_COMPARE: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def subject_of(namespace: Sequence[str]) -> str:
    """The subject a namespace names (InvalidNamespaceError when no subject id can)."""
    for label in namespace:
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise InvalidNamespaceError(
                f"namespace label {label!r} of {tuple(namespace)}: SGAM takes labels of"
                " A-Z a-z 0-9 _ : @ - (a namespace is a subject id)"
            )
    subject = SEPARATOR.join(namespace)
    if not 1 <= len(subject) <= _MAX_ID:
        raise InvalidNamespaceError(
            f"namespace {tuple(namespace)}: its labels joined by '.' must be 1-200 characters"
        )
    return subject


def namespace_of(subject: str) -> tuple[str, ...] | None:
    """The namespace a subject id stands for; None for one with an empty label ("a..b")."""
    labels = tuple(subject.split(SEPARATOR))
    return labels if all(labels) else None


def under(subject: str, prefix: tuple[str, ...]) -> bool:
    """Whether the subject's namespace starts with ``prefix`` (``()`` holds every one)."""
    if not prefix:
        return True
    joined = SEPARATOR.join(prefix)
    return subject == joined or subject.startswith(joined + SEPARATOR)


def past(subject: str, prefix: tuple[str, ...]) -> bool:
    """Whether ``subject`` sorts after every subject under ``prefix`` (subjects list in byte
    order, so a listing can stop there)."""
    joined = SEPARATOR.join(prefix)
    return bool(prefix) and subject > joined and not subject.startswith(joined)


def attribute_of(key: str) -> str:
    """The attribute a key names (ValueError when no attribute name can)."""
    if not _IDENTIFIER.fullmatch(key):
        raise ValueError(
            f"key {key!r}: SGAM takes keys of 1-200 of A-Z a-z 0-9 _ . : @ - (a key is an"
            " attribute name)"
        )
    return key


def item(fact: Fact, namespace: tuple[str, ...], *, score: float | None = None) -> SearchItem:
    """The item a current fact holds. ``created_at`` and ``updated_at`` are both when its
    value was put (its valid_from): each put is a fact of its own, as in LangGraph's
    in-memory store."""
    value = dict(fact.value) if isinstance(fact.value, dict) else {SINGLE: fact.value}
    return SearchItem(
        namespace=namespace,
        key=fact.attribute,
        value=value,
        created_at=fact.valid_from,
        updated_at=fact.valid_from,
        score=score,
    )


def plain(found: SearchItem) -> Item:
    """A search item as ``get`` answers it, without a score."""
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def candidate_value(key: str, value: Mapping[str, Any], value_type: str) -> str:
    """The candidate's value text: the whole dict for a JSON attribute, else its one value."""
    if value_type == JSON:
        return canonical(dict(value))
    if set(value) != {SINGLE}:
        raise ValueError(
            f"key {key!r} is an attribute of type {value_type}: put {{'value': ...}} with one"
            f" {value_type} value, not the fields {sorted(value)}"
        )
    one = value[SINGLE]
    return one if isinstance(one, str) else canonical(one)


def episode_text(value: Mapping[str, Any], paths: Sequence[str]) -> str:
    """What the put's episode says, and the evidence its fact quotes: the text at each index
    path (``$``, the default: the whole value as compact JSON, as the block shows it)."""
    whole = canonical(dict(value))
    texts = [
        text
        for path in paths
        for text in ([whole] if path == WHOLE_ITEM else get_text_at_path(value, path))
    ]
    return "\n".join(texts) or whole


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """Whether the value passes a LangGraph filter: each field equal, or each ``$`` operator
    (``$eq $ne $gt $gte $lt $lte``) holding; a nested dict matches field by field."""
    return all(_holds(value.get(field), expected) for field, expected in (wanted or {}).items())


def _holds(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if any(str(name).startswith("$") for name in expected):
            return all(_compare(actual, name, operand) for name, operand in expected.items())
        return isinstance(actual, Mapping) and matches(actual, expected)
    return bool(actual == expected)


def _compare(actual: Any, name: str, operand: Any) -> bool:
    try:
        compare = _COMPARE[name]
    except KeyError:
        raise ValueError(f"unsupported filter operator {name!r}") from None
    try:
        return compare(actual, operand)
    except TypeError:  # None, or values of two kinds, do not order
        return False


def namespace_matches(namespace: tuple[str, ...], conditions: Sequence[MatchCondition]) -> bool:
    """Whether the namespace meets every prefix and suffix condition (``*`` is any label)."""
    for condition in conditions:
        path = tuple(condition.path)
        if len(path) > len(namespace):
            return False
        start = 0 if condition.match_type == "prefix" else len(namespace) - len(path)
        labels = namespace[start : start + len(path)]
        if not all(wanted in ("*", label) for wanted, label in zip(path, labels, strict=True)):
            return False
    return True
