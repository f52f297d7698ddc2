"""Episodes: record them (embedded when an embedder is set) and read them back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import psycopg

from store import episodes, tenants
from store.api.transactions import Transactions
from store.errors import StoreError
from store.inputs import check_identifier, parse_input
from store.models import Episode, EpisodeInput
from store.vectors import EpisodeEmbedder, insert_vectors


class EpisodeCalls:
    """The raw inputs facts cite, recorded once per id."""

    def __init__(self, transactions: Transactions, embedder: EpisodeEmbedder | None) -> None:
        self._transactions = transactions
        self._embedder = embedder

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
        parsed = []
        for index, item in enumerate(batch):
            prefix = f"{field_prefix}.{index}." if field_prefix else ""
            parsed.append(parse_input(EpisodeInput, item, field_prefix=prefix))
        embedder = self._embedder
        vectors = embedder.embed([item.text for item in parsed]) if embedder else None
        new_id = self._transactions.new_id

        def work(conn: psycopg.Connection[Any], now: datetime) -> list[Episode]:
            tenants.require_tenant(conn, tenant_id)
            recorded = []
            for index, item in enumerate(parsed):
                try:
                    recorded.append(
                        episodes.record_episode(conn, tenant_id, item, now=now, new_id=new_id)
                    )
                except StoreError as error:
                    if field_prefix and error.field:  # name the episode of the batch at fault
                        error.field = f"{field_prefix}.{index}.{error.field}"
                    raise
            if embedder is not None and vectors is not None:
                rows = [
                    (episode.id, vector) for episode, vector in zip(recorded, vectors, strict=True)
                ]
                insert_vectors(conn, tenant_id, model=embedder.model_id, rows=rows, now=now)
            return recorded

        return self._transactions.run(work)

    def get(self, tenant_id: str, episode_id: str) -> Episode:
        """One episode of the tenant (a stub if it was erased)."""
        check_identifier(episode_id, "episode_id")
        return self._transactions.run(
            lambda conn, _: episodes.get_episode(conn, tenant_id, episode_id)
        )
