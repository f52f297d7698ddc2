"""Episode outcomes: record what came of an episode, read an episode with its outcome."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import psycopg

from store.api.receipts import traced_write
from store.api.transactions import Transactions
from store.contract.memory import EpisodeOutcome, OutcomeInput
from store.db.inputs import check_identifier, parse_input
from store.episodes import outcomes
from store.episodes import record as episodes
from store.errors import NotFound
from store.governance import touched
from store.governance.receipts import NO_TRACE, Trace


class OutcomeCalls:
    """What came of episodes: the mark that lets an episode count as experience."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def record(
        self,
        tenant_id: str,
        episode_id: str,
        outcome: OutcomeInput | Mapping[str, Any],
        *,
        trace: Trace = NO_TRACE,
    ) -> EpisodeOutcome:
        """Make ``outcome`` the episode's current outcome (``outcomes.record_outcome``).

        NotFound for an episode the tenant does not have; Conflict for an erased one.
        """
        check_identifier(episode_id, "episode_id")
        parsed = parse_input(OutcomeInput, outcome)
        return traced_write(
            self._transactions,
            tenant_id,
            trace,
            lambda conn, now: outcomes.record_outcome(
                conn, tenant_id, episode_id=episode_id, outcome=parsed, now=now
            ),
            lambda written: [touched.outcome_written(episode_id, written.recorded_at)],
        )

    def current(self, tenant_id: str, episode_id: str) -> EpisodeOutcome:
        """The episode's current outcome; NotFound for an episode the tenant does not have, or
        one without an outcome recorded."""
        check_identifier(episode_id, "episode_id")

        def work(conn: psycopg.Connection[Any], _: datetime) -> EpisodeOutcome:
            episodes.get_episode(conn, tenant_id, episode_id)
            outcome = outcomes.current_outcomes(conn, tenant_id, [episode_id]).get(episode_id)
            if outcome is None:
                raise NotFound(f"episode {episode_id!r} has no outcome", field="episode_id")
            return outcome

        return self._transactions.run(work, tenant_id=tenant_id)
