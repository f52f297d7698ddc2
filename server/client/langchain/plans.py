"""What each LangGraph store operation asks of SGAM, as plans of calls (sans-IO).

A plan is a generator: it yields a ``Call``, is sent the call's result (or thrown the
``SGAMError`` the server answered with), and returns the operation's result, so the blocking
and the async store drive the same plans. Reads ask at ``now``, the store's clock, which is
also when its writes take effect.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TypeVar

from langgraph.store.base import GetOp, Item, ListNamespacesOp, PutOp, SearchItem, SearchOp

from server.client import calls, read_calls
from server.client.call import Call
from server.client.errors import NotFound
from server.client.langchain import items
from store.contract.bodies import MAX_BATCH, EpisodeBatchRecorded, EpisodeRecorded
from store.contract.common import EpisodeKind
from store.contract.facts import Fact
from store.contract.results import UpdateResult

T = TypeVar("T")
Plan = Generator[Call[Any], Any, T]
"""Yields calls, is sent their results, returns the operation's result."""

SUBJECT_PAGE: Final = 500
"""Subjects asked for per page (the most ``GET /v1/subjects`` gives)."""
EVIDENCE_K: Final = 50
"""Episodes a query search ranks per namespace (the most ``/v1/evidence/search`` gives)."""
KEPT: Final = frozenset({"written", "unchanged"})
"""The candidate results of a put that took effect."""
DECLARED_FOR_ITEMS: Final = "An item a LangGraph application keeps under this key (SGAMStore)"


class PutRefused(ValueError):
    """The write path did not take a put: its candidate's result was not written or
    unchanged (e.g. ``invalid``, ``conflict``). The batch's other writes stand."""


@dataclass
class Schema:
    """The tenant's attributes and their value types, as far as this store has seen them."""

    value_types: dict[str, str] = field(default_factory=dict)
    listed: bool = False


def read(op: GetOp | SearchOp | ListNamespacesOp, *, now: datetime) -> Plan[Any]:
    """The plan of one read operation."""
    if isinstance(op, GetOp):
        return get(op, now=now)
    if isinstance(op, SearchOp):
        return search(op, now=now)
    return list_namespaces(op)


def get(op: GetOp, *, now: datetime) -> Plan[Item | None]:
    """The item: the key's fact valid now in the namespace's subject, or None."""
    try:
        fact: Fact = yield calls.fact(*address(op), valid_at=now)
    except NotFound:
        return None
    return items.plain(items.item(fact, tuple(op.namespace)))


def search(op: SearchOp, *, now: datetime) -> Plan[list[SearchItem]]:
    """Items under the prefix passing the filter: with a query, those whose value's episode
    is most similar first (evidence search, per namespace), the rest after them; without
    one, the most recently put first."""
    prefix = tuple(op.namespace_prefix)
    if prefix:
        items.subject_of(prefix)
    found: list[SearchItem] = []
    for subject in (yield from subjects_under(prefix)):
        namespace = items.namespace_of(subject)
        assert namespace is not None  # subjects_under keeps only namespaces
        profile = yield read_calls.profile(subject, valid_at=now)
        facts = [
            fact
            for fact in profile.facts
            if items.matches(items.item(fact, namespace).value, op.filter)
        ]
        scores: dict[str, float] = {}
        if op.query and facts:
            hits = yield read_calls.search(op.query, subject=subject, k=EVIDENCE_K)
            scores = {hit.episode_id: hit.score for hit in hits.results}
        found += [
            items.item(fact, namespace, score=scores.get(fact.source_episode_id)) for fact in facts
        ]
    found.sort(key=_rank)
    return found[op.offset : op.offset + op.limit]


def _rank(found: SearchItem) -> tuple[bool, float, float, tuple[str, ...], str]:
    score = found.score
    recent = -found.updated_at.timestamp()
    return (score is None, -(score or 0.0), recent, found.namespace, found.key)


def list_namespaces(op: ListNamespacesOp) -> Plan[list[tuple[str, ...]]]:
    """The namespaces of the tenant's subjects meeting the conditions, cut at ``max_depth``,
    sorted."""
    conditions = tuple(op.match_conditions or ())
    prefix: tuple[str, ...] = ()
    for condition in conditions:
        if condition.match_type == "prefix":
            path = list(condition.path)
            prefix = tuple(path[: path.index("*")] if "*" in path else path)
    subjects = yield from subjects_under(prefix)
    namespaces = [
        namespace
        for subject in subjects
        if (namespace := items.namespace_of(subject)) is not None
        and items.namespace_matches(namespace, conditions)
    ]
    if op.max_depth is not None:
        namespaces = list({namespace[: op.max_depth] for namespace in namespaces})
    namespaces.sort()
    return namespaces[op.offset : op.offset + op.limit]


def subjects_under(prefix: tuple[str, ...]) -> Plan[list[str]]:
    """The subjects whose namespace starts with ``prefix``, by id."""
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = yield read_calls.subjects(limit=SUBJECT_PAGE, cursor=cursor)
        for subject in page.subjects:
            if items.past(subject, prefix):
                return found
            if items.under(subject, prefix) and items.namespace_of(subject) is not None:
                found.append(subject)
        if (cursor := page.next_cursor) is None:
            return found


@dataclass(frozen=True)
class Writer:
    """How a store's writes are recorded: the episodes' kind, the index paths of a put whose
    ``index`` is None, and the tenant's attributes as seen so far."""

    kind: EpisodeKind
    fields: Sequence[str]
    schema: Schema


def write(ops: Sequence[PutOp], writer: Writer, *, now: datetime) -> Plan[None]:
    """Puts and deletes (one op per item) through the write path, at ``now``.

    A put records an episode citing nothing but the item (its text: the indexed text of the
    value) with the candidate that asserts the value; a key the tenant has not declared is
    declared a JSON attribute first. A delete of an item that holds a value records an
    episode saying so and expires the key at ``now``: the value stays in its history.
    """
    addresses = [address(op) for op in ops]  # all checked before any call
    puts = [op for op in ops if op.value is not None]
    value_types = yield from _value_types([op.key for op in puts], writer)
    deleted: list[tuple[PutOp, tuple[str, str]]] = []
    for op, (subject, attribute) in zip(ops, addresses, strict=True):
        if op.value is None:
            try:
                yield calls.fact(subject, attribute, valid_at=now)
            except NotFound:
                continue
            deleted.append((op, (subject, attribute)))
    bodies = [_put_episode(op, writer, value_types[op.key], now=now) for op in puts]
    bodies += [_delete_episode(op, writer, now=now) for op, _ in deleted]
    recorded: list[EpisodeRecorded] = []
    for start in range(0, len(bodies), MAX_BATCH):
        answer: EpisodeBatchRecorded = yield calls.record_batch(bodies[start : start + MAX_BATCH])
        recorded += answer.episodes
    for (_, (subject, attribute)), episode in zip(deleted, recorded[len(puts) :], strict=True):
        yield calls.expire(subject, attribute, at=now, source_episode_id=episode.id)
    refused = [
        _refusal(op, result)
        for op, episode in zip(puts, recorded, strict=False)
        for result in episode.results
        if result.status not in KEPT
    ]
    if refused:
        raise PutRefused("; ".join(refused))


def _refusal(op: PutOp, result: UpdateResult) -> str:
    at = f" (field {result.field})" if result.field else ""
    return f"put {tuple(op.namespace)} {op.key!r}: {result.status}{at}: {result.reason}"


def address(op: GetOp | PutOp) -> tuple[str, str]:
    """The subject and attribute of an op's item (refused when SGAM cannot name them)."""
    return items.subject_of(op.namespace), items.attribute_of(op.key)


def _value_types(keys: Iterable[str], writer: Writer) -> Plan[dict[str, str]]:
    """The value type of each key's attribute, declaring a JSON one for a key that has none."""
    schema = writer.schema
    wanted = set(keys)
    if wanted - schema.value_types.keys() and not schema.listed:
        listed = yield calls.attributes()
        schema.value_types |= {one.attribute: str(one.value_type) for one in listed.attributes}
        schema.listed = True
    for key in sorted(wanted - schema.value_types.keys()):
        declared = yield calls.declare_attribute(key, items.JSON, description=DECLARED_FOR_ITEMS)
        schema.value_types[declared.attribute] = str(declared.value_type)
    return {key: schema.value_types[key] for key in wanted}


def _put_episode(op: PutOp, writer: Writer, value_type: str, *, now: datetime) -> dict[str, Any]:
    assert op.value is not None
    subject = items.subject_of(op.namespace)
    paths = writer.fields if op.index is None or op.index is False else op.index
    text = items.episode_text(op.value, paths)
    candidate = {
        "evidence": text,
        "subject": subject,
        "attribute": op.key,
        "change": "update",
        "value": items.candidate_value(op.key, op.value, value_type),
    }
    return _episode(op, writer, text, now=now, updates=[candidate])


def _delete_episode(op: PutOp, writer: Writer, *, now: datetime) -> dict[str, Any]:
    subject = items.subject_of(op.namespace)
    return _episode(op, writer, f"{op.key} deleted from {subject}", now=now, updates=[])


def _episode(
    op: PutOp, writer: Writer, text: str, *, now: datetime, updates: list[dict[str, Any]]
) -> dict[str, Any]:
    """The episode of a put (with its candidate) or a delete; its metadata names the item."""
    origin = {"op": "put" if updates else "delete", "namespace": list(op.namespace), "key": op.key}
    return {
        "occurred_at": now.isoformat(),
        "text": text,
        "kind": writer.kind,
        "subjects": [items.subject_of(op.namespace)],
        "metadata": {"langgraph": origin},
        "updates": updates,
    }
