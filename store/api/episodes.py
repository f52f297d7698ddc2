"""Episodes: record them (embedded when an embedder is set) and read them back."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
import psycopg

from store.api.transactions import Transactions, answered
from store.contract.episodes import Episode, EpisodeInput
from store.contract.facts import MemoryUpdate
from store.contract.results import UpdateResult
from store.db import tenants
from store.db.inputs import check_identifier, parse_input
from store.episodes import bulk, bulk_write, extraction
from store.episodes import record as episodes
from store.episodes.bulk import ImportResult
from store.episodes.extraction import Queued
from store.episodes.vectors import (
    EpisodeEmbedder,
    SharedBatches,
    insert_vectors,
    store_vectors,
    texts_of,
)
from store.errors import InvalidInput, StoreError
from store.facts.candidates import send_candidates
from store.facts.writes import validate_candidate
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE, Trace


class EpisodeCalls:
    """The raw inputs facts cite, recorded once per id."""

    def __init__(self, transactions: Transactions, embedder: EpisodeEmbedder | None) -> None:
        self._transactions = transactions
        # Concurrent recordings share the model's calls: one forward pass for all of them.
        self._embedder = None if embedder is None else SharedBatches(embedder)

    def record(self, tenant_id: str, episode: EpisodeInput | Mapping[str, Any]) -> Episode:
        """Record a raw episode (idempotent on id), embedded when an embedder is set."""
        [recorded] = self.record_batch(tenant_id, [episode], field_prefix="")
        return recorded

    def record_batch(
        self,
        tenant_id: str,
        batch: Sequence[EpisodeInput | Mapping[str, Any]],
        *,
        field_prefix: str = "episodes",
    ) -> list[Episode]:
        """Record several episodes in one transaction, their texts embedded in one call.

        One invalid or conflicting episode fails the whole batch, naming it by index.
        """
        recorded = self.record_with_candidates(
            tenant_id, [(item, ()) for item in batch], field_prefix=field_prefix
        )
        return [episode for episode, _ in recorded]

    def record_with_candidates(
        self,
        tenant_id: str,
        batch: Sequence[tuple[EpisodeInput | Mapping[str, Any], Sequence[object]]],
        *,
        field_prefix: str = "episodes",
        trace: Trace = NO_TRACE,
        queue: Sequence[Queued | None] = (),
    ) -> list[tuple[Episode, list[UpdateResult]]]:
        """Record episodes with the candidates each one carries, all in one transaction.

        ``queue`` (one item per episode, or empty) sends episodes for extraction: each one
        given gets its job in the same transaction (an episode already sent keeps its job).

        The request is all or nothing: an episode refused, or a database error while applying
        a candidate, writes none of it. A candidate refused by the rules is an ``invalid`` (or
        other) result, as ``facts.apply_candidates`` gives, and the rest proceed.
        """
        parsed = []
        for index, (item, _) in enumerate(batch):
            prefix = f"{field_prefix}.{index}." if field_prefix else ""
            parsed.append(parse_input(EpisodeInput, item, field_prefix=prefix))
        checked = [
            [validate_candidate(candidate, n) for n, candidate in enumerate(candidates)]
            for _, candidates in batch
        ]
        embedder = self._embedder
        texts = [item.text for item in parsed]
        # The encoder works on the texts while the transaction writes the episodes; their
        # vectors join them in it, before the COMMIT (EncoderBusy, a full queue, comes now).
        pending = embedder.embed_later(texts) if embedder else None
        # A text past the model's input is embedded from its start; its episode says so.
        cut = embedder.truncated(texts) if embedder else [False] * len(texts)
        transactions = self._transactions

        def work(
            conn: psycopg.Connection[Any], now: datetime
        ) -> list[tuple[Episode, list[UpdateResult]]]:
            tenants.require_tenant(conn, tenant_id)
            recorded = []
            for index, item in enumerate(parsed):
                try:
                    recorded.append(
                        episodes.record_episode(
                            conn, tenant_id, item, now=now, new_id=transactions.new_id
                        )
                    )
                except StoreError as error:
                    if field_prefix and error.field:  # name the episode of the batch at fault
                        error.field = f"{field_prefix}.{index}.{error.field}"
                    raise
            truncated = {e.id for e, flag in zip(recorded, cut, strict=True) if flag}
            recorded = [
                e.model_copy(update={"embedding_truncated": True}) if e.id in truncated else e
                for e in recorded
            ]
            for episode, queued in zip(recorded, queue, strict=False):
                if queued is not None:
                    _enqueue(conn, tenant_id, episode.id, queued, now=now)
            receipts.leave_receipts(
                conn,
                tenant_id,
                [touched.episode_written(episode) for episode in recorded],
                action="write",
                trace=trace,
                now=now,
            )
            if embedder is not None and pending is not None:
                # Sent statements run in the database meanwhile (in pipeline mode, each is on
                # its way as it is executed); a retried attempt reads the same vectors.
                vectors = pending.result()
                rows = [(e.id, vector) for e, vector in zip(recorded, vectors, strict=True)]
                insert_vectors(
                    conn,
                    tenant_id,
                    model=embedder.model_id,
                    rows=rows,
                    now=now,
                    truncated=truncated,
                )
            applied = [
                (
                    episode,
                    _apply(
                        conn, tenant_id, episode, candidates, transactions, now=now, trace=trace
                    ),
                )
                for episode, candidates in zip(recorded, checked, strict=True)
            ]
            return _with_subjects_now(conn, tenant_id, applied)

        try:
            if any(checked):
                return transactions.run(work, tenant_id=tenant_id)
            # Episodes alone read back only the rows they insert: in pipeline mode the
            # statements between two such reads travel together, and the last ones with the
            # COMMIT, instead of a round trip apiece (eight for one episode).
            return transactions.pipelined(
                lambda conn, now: answered(work(conn, now)), tenant_id=tenant_id
            )
        finally:
            if pending is not None:
                pending.cancel()  # failed first: a call still queued is never encoded

    def import_lines(self, texts: Iterable[str]) -> ImportResult:
        """Import an episode file (``store.episodes.bulk``): every line in one transaction, by COPY.

        A bad line (``BadLine``, with its line number) or a refused episode writes nothing.
        Facts never wait for the model: ``embed`` gives the new episodes their vectors after.
        """
        lines = bulk.parse_lines(texts)
        transactions = self._transactions
        outcomes, recorded = transactions.run(
            lambda conn, _: bulk_write.import_lines(
                conn, lines, clock=transactions.clock, new_id=transactions.new_id
            ),
            tenant_id=None,  # each tenant's lines name their own (bulk_write)
        )
        return outcomes.result(lines=len(lines), recorded=recorded)

    def embed(
        self,
        episodes_of: Sequence[tuple[str, str]],
        *,
        batch: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Give these (tenant, episode id) episodes vectors, ``batch`` texts a model call.

        Each batch is committed as it comes (``progress`` is told its size) while the next is
        embedded, so an interrupted run keeps what it embedded; an episode that has a vector
        keeps it. Returns how many episodes were embedded (erased ones have no text and are
        skipped).
        """
        embedder = self._embedder
        if embedder is None:
            raise InvalidInput("no embedding model is configured", field="embedder")
        done = 0
        embedded: _Embedded | None = None  # the last batch embedded, not yet stored
        with ThreadPoolExecutor(1, thread_name_prefix="sgam-embed") as encoder:
            for start in range(0, len(episodes_of), batch):
                chunk = episodes_of[start : start + batch]
                texts = self._transactions.run(partial(texts_of, chunk), tenant_id=None)
                cut = embedder.truncated([text for _, _, text in texts])
                # The encoder works on this batch while the last one's vectors are stored.
                vectors = encoder.submit(embedder.embed, [text for _, _, text in texts])
                if embedded is not None:
                    done += self._store(embedded, progress)
                embedded = _Embedded(len(chunk), texts, vectors.result(), cut)
        if embedded is not None:
            done += self._store(embedded, progress)
        return done

    def _store(self, embedded: _Embedded, progress: Callable[[int], None] | None) -> int:
        """Commit one embedded batch's vectors; how many episodes it held."""
        assert self._embedder is not None
        texts = embedded.texts
        truncated = {(t, e) for (t, e, _), flag in zip(texts, embedded.cut, strict=True) if flag}
        self._transactions.run(
            partial(
                store_vectors,
                model=self._embedder.model_id,
                texts=texts,
                vectors=embedded.vectors,
                truncated=truncated,
            ),
            tenant_id=None,
        )
        if progress is not None:
            progress(embedded.asked)
        return len(texts)

    def get(self, tenant_id: str, episode_id: str) -> Episode:
        """One episode of the tenant (a stub if it was erased)."""
        check_identifier(episode_id, "episode_id")
        return self._transactions.run(
            lambda conn, _: episodes.get_episode(conn, tenant_id, episode_id),
            tenant_id=tenant_id,
        )


@dataclass(frozen=True)
class _Embedded:
    """One batch of ``EpisodeCalls.embed``: how many episodes it asked for, the (tenant, id,
    text) of those with text, their vectors and which texts were cut."""

    asked: int
    texts: list[tuple[str, str, str]]
    vectors: np.ndarray[Any, Any]
    cut: list[bool]


def _enqueue(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str, queued: Queued, *, now: datetime
) -> None:
    lease = None if queued.lease_id is None else (queued.lease_id, now + queued.lease)
    extraction.enqueue(
        conn, tenant_id, episode_id, now=now, prompt_version=queued.prompt_version, lease=lease
    )


def _with_subjects_now(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    applied: list[tuple[Episode, list[UpdateResult]]],
) -> list[tuple[Episode, list[UpdateResult]]]:
    """Each episode as its candidates left it: one written about a subject the episode did not
    name adds that subject to it (``add_subjects``), so the answer shows what a read of the
    episode shows. Read again only where a candidate was applied."""
    touched = [episode.id for episode, results in applied if results]
    if not touched:
        return applied
    subjects = episodes.episode_subjects(conn, tenant_id, touched)
    return [
        (
            episode.model_copy(update={"subjects": subjects[episode.id]})
            if episode.id in subjects
            else episode,
            results,
        )
        for episode, results in applied
    ]


def _apply(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    episode: Episode,
    candidates: Sequence[MemoryUpdate | UpdateResult],
    transactions: Transactions,
    *,
    now: datetime,
    trace: Trace,
) -> list[UpdateResult]:
    if not candidates:
        return []
    results = send_candidates(
        conn,
        tenant_id,
        episode_id=episode.id,
        candidates=candidates,
        clock=transactions.clock,
        asked_at=now,
        new_id=transactions.new_id,
        trace=trace,
    )
    return results()
