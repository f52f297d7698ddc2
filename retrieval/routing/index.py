"""The attribute index: routing's vectors kept across requests (read path step 3).

``AttributeIndex`` keeps the vectors of each tenant's attribute texts and routing texts, so a
routed question embeds only what it has not seen (``retrieval.routing.similarity`` scores
them). ``RoutingBatch`` is one question's encoder call, made on another thread while the
caller reads.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.routing.route import AttributeScore
from retrieval.routing.similarity import TextEmbedder, attribute_texts, ranked
from retrieval.search.embeddings import Vectors
from store.contract.facts import Attribute

_CacheKey = tuple[str | None, str, int, tuple[str, ...]]
"""(tenant, attribute, schema version, its texts as routed)."""


class AttributeIndex:
    """Attribute text vectors cached per (tenant, attribute, schema_version, texts), and routing
    texts' vectors per (tenant, text): a question whose routing text the tenant asked before,
    about any subject, routes without the encoder.

    Both caches are kept per tenant. A routing text has its subject's names and dates cut out
    (``routing_text``), so questions of one shape about many subjects ("What is ...'s current
    plan?") share it; it is the text of a tenant's question. An attribute's texts are the words
    a tenant declared. Neither is ever told to another tenant, not even by how fast its own call
    is answered: two tenants that declare the same words each pay for their vectors once. They
    keep one copy of them, though: an entry holds the vectors of its texts, shared by every
    entry of the same texts, so tenants with one schema cost the memory of one (an entry of
    words of its own holds about 1.5 KiB a text, three texts for a usual attribute). In each
    cache the least recently used entries go first once its bound (``max_entries``,
    ``max_routing_texts``) is reached; ``max_entries`` bounds tenants times attributes, so it
    must hold those of the tenants asking at once, or their routed calls embed their
    attributes' texts again each time. Thread-safe.
    """

    def __init__(
        self,
        embedder: TextEmbedder,
        *,
        max_entries: int = 30_000,
        max_routing_texts: int = 4_096,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if max_routing_texts < 0:
            raise ValueError("max_routing_texts must not be negative")
        self.embedder = embedder
        self.max_entries = max_entries
        self.max_routing_texts = max_routing_texts
        self._vectors: OrderedDict[_CacheKey, Vectors] = OrderedDict()
        # One array per distinct texts, as long as an entry holds it.
        self._by_texts: weakref.WeakValueDictionary[tuple[str, ...], Vectors] = (
            weakref.WeakValueDictionary()
        )
        self._routing_texts: OrderedDict[tuple[str | None, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Attributes cached (routing texts not counted)."""
        with self._lock:
            return len(self._vectors)

    @property
    def routing_texts(self) -> int:
        """Routing texts cached."""
        with self._lock:
            return len(self._routing_texts)

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._lock:
            self._vectors.clear()
            self._routing_texts.clear()

    def score(
        self,
        question: str,
        attributes: Sequence[Attribute],
        *,
        subject: str | None = None,
        tenant_id: str | None = None,
    ) -> list[AttributeScore]:
        """As ``score_attributes``, embedding only the question (unless ``tenant_id`` asked it
        before) and the attributes not yet cached."""
        scores, _ = self.score_and_embed(question, attributes, subject=subject, tenant_id=tenant_id)
        return scores

    def score_and_embed(
        self,
        question: str,
        attributes: Sequence[Attribute],
        *,
        subject: str | None = None,
        texts: Sequence[str] = (),
        tenant_id: str | None = None,
    ) -> tuple[list[AttributeScore], Vectors]:
        """``score``, and the vectors of ``texts`` from the same single embed call."""
        batch = self.batch(question, attributes, subject=subject, texts=texts, tenant_id=tenant_id)
        routed = batch.finish(self.embedder.embed(batch.texts))
        return routed.scores, routed.asked

    def batch(
        self,
        question: str,
        attributes: Sequence[Attribute],
        *,
        subject: str | None = None,
        texts: Sequence[str] = (),
        tenant_id: str | None = None,
    ) -> RoutingBatch:
        """What ``score_and_embed`` embeds, to embed elsewhere (on another thread, while the
        caller reads): the question unless the tenant's cache holds it, ``texts``, then the
        attribute texts not cached. With all of them cached and no ``texts``, that is nothing.
        ``tenant_id`` is whose question it is (None: a caller of no tenant's)."""
        keys = [_key(attribute, subject, tenant_id) for attribute in attributes]
        asked = (tenant_id, question)
        with self._lock:
            cached = {key: self._vectors[key] for key in keys if key in self._vectors}
            known = self._routing_texts.get(asked)
            if known is not None:
                self._routing_texts.move_to_end(asked)
        missing = list(dict.fromkeys(key for key in keys if key not in cached))
        return RoutingBatch(
            index=self,
            question=asked,
            question_vector=known,
            attributes=tuple(attributes),
            keys=keys,
            cached=cached,
            missing=missing,
            texts=[
                *([question] if known is None else []),
                *texts,
                *(text for key in missing for text in key[3]),
            ],
            asked=len(texts),
        )

    def cached(
        self,
        attributes: Sequence[Attribute],
        *,
        subject: str | None = None,
        tenant_id: str | None = None,
    ) -> dict[str, Vectors]:
        """The vectors of ``attributes``' texts that ``tenant_id``'s calls cached (as routed for
        ``subject``), by attribute name; nothing is embedded."""
        keys = {
            attribute.attribute: _key(attribute, subject, tenant_id) for attribute in attributes
        }
        with self._lock:
            return {name: self._vectors[key] for name, key in keys.items() if key in self._vectors}

    def _keep(
        self,
        keys: Sequence[_CacheKey],
        vectors: dict[_CacheKey, Vectors],
        question: tuple[tuple[str | None, str], Vectors] | None,
    ) -> None:
        with self._lock:
            for key in keys:
                if key not in self._vectors:
                    self._vectors[key] = self._shared(key[3], vectors[key])
                self._vectors.move_to_end(key)
            while len(self._vectors) > self.max_entries:
                self._vectors.popitem(last=False)
            if question is not None and self.max_routing_texts:
                asked, vector = question
                self._routing_texts[asked] = vector
                self._routing_texts.move_to_end(asked)
                while len(self._routing_texts) > self.max_routing_texts:
                    self._routing_texts.popitem(last=False)

    def _shared(self, texts: tuple[str, ...], vectors: Vectors) -> Vectors:
        """The one array kept for ``texts``: an entry's already, or a copy of ``vectors`` (a
        row range of its batch would keep the whole batch alive). Holds the lock."""
        kept = self._by_texts.get(texts)
        if kept is None:
            kept = self._by_texts[texts] = vectors.copy()
        return kept


@dataclass(frozen=True)
class Routed:
    """What one routing batch answers (``RoutingBatch.finish``)."""

    scores: list[AttributeScore]
    """Every attribute's score, best first."""
    asked: Vectors
    """The vectors of the texts asked for besides the question, in their order."""
    question: Vectors
    """The question's vector (the routing text's): encoded now or cached."""


@dataclass(frozen=True)
class RoutingBatch:
    """One encoder batch of a routed question (``AttributeIndex.batch``)."""

    index: AttributeIndex
    question: tuple[str | None, str]
    """The tenant asking and the question (its routing text)."""
    question_vector: Vectors | None
    """The question's vector when it was cached: then it is not among ``texts``."""
    attributes: tuple[Attribute, ...]
    keys: list[_CacheKey]
    cached: dict[_CacheKey, Vectors]
    missing: list[_CacheKey]
    texts: list[str]
    """What to embed, in one call (perhaps nothing)."""
    asked: int
    """How many texts besides the question were asked for."""

    def finish(self, vectors: Vectors) -> Routed:
        """The attribute scores, the asked texts' vectors and the question's, from the vectors
        of ``texts``; the vectors computed are cached."""
        found = dict(self.cached)
        if self.question_vector is None:
            # A copy: a row of the batch would keep the whole batch alive in the cache.
            question, offset, new = vectors[0].copy(), 1, True
        else:
            question, offset, new = self.question_vector, 0, False
        asked = vectors[offset : offset + self.asked]
        offset += self.asked
        for key in self.missing:
            found[key] = vectors[offset : offset + len(key[3])]
            offset += len(key[3])
        self.index._keep(self.keys, found, (self.question, question) if new else None)
        scores = ranked(question, self.attributes, [found[key] for key in self.keys])
        return Routed(scores=scores, asked=asked, question=question)


def _key(attribute: Attribute, subject: str | None, tenant_id: str | None) -> _CacheKey:
    return (
        tenant_id,
        attribute.attribute,
        attribute.schema_version,
        attribute_texts(attribute, subject=subject),
    )
