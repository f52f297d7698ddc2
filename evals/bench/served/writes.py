"""The served writes ``sgam bench`` times: episode ingest and candidate writes, over HTTP.

Every write goes to keys and episode ids of its own (named after the case, the client count,
the client and the call), so no case sees another's data and the measured reads' subjects
never change. A case's items are what the server reports written: episodes recorded, or
candidates with status ``written``; the other statuses are counted beside them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from threading import Lock
from typing import Any

import httpx

from evals.bench.served.cases import ClientCall, expect_ok, measure_http
from evals.bench.served.data import PERSON_WORDS, episode_id, slug
from evals.bench.served.runner import Call, Timing
from evals.bench.served.server import Served

CANDIDATES_PER_REQUEST = 10
_OCCURRED = "2026-01-01T00:00:00Z"
_VALID_FROM = datetime(2025, 1, 1, tzinfo=UTC)
_ATTRIBUTES = tuple(slug(words) for words in PERSON_WORDS[:CANDIDATES_PER_REQUEST])


def _episode(texts: Sequence[str], name: str, n: int) -> dict[str, Any]:
    return {
        "id": name,
        "occurred_at": _OCCURRED,
        "text": texts[n % len(texts)],
        "subjects": ["ingest"],
    }


def _ingest(texts: Sequence[str], *, tag: str, batch: int) -> ClientCall:
    def make(client: httpx.Client, number: int) -> Call:
        def call(n: int) -> int:
            names = [f"{tag}-{number}-{n}-{i}" for i in range(batch)]
            episodes = [_episode(texts, name, abs(n) * batch + i) for i, name in enumerate(names)]
            if batch == 1:
                recorded = [expect_ok(client.post("/v1/episodes", json=episodes[0])).json()]
            else:
                body = {"episodes": episodes}
                response = expect_ok(client.post("/v1/episodes/batch", json=body))
                recorded = response.json()["episodes"]
            return len(recorded)

        return call

    return make


Candidates = Callable[[int, int], list[dict[str, Any]]]
"""A client's and a call's candidates."""


def _spread(tag: str) -> Candidates:
    def candidates(number: int, n: int) -> list[dict[str, Any]]:
        subject = f"{tag}-{number}-{n}"
        return [
            candidate(subject, attribute, value=f"{n}", valid_from=_VALID_FROM)
            for attribute in _ATTRIBUTES
        ]

    return candidates


def _hot(tag: str) -> Candidates:
    def candidates(number: int, n: int) -> list[dict[str, Any]]:
        # A start of its own per candidate, so every one is written (closing another's window).
        first = ((number * 1_000_000) + (n + 100)) * CANDIDATES_PER_REQUEST
        return [
            candidate(
                tag,
                _ATTRIBUTES[0],
                value=f"{number}-{n}-{i}",
                valid_from=_VALID_FROM + timedelta(seconds=first + i),
            )
            for i in range(CANDIDATES_PER_REQUEST)
        ]

    return candidates


def candidate(subject: str, attribute: str, *, value: str, valid_from: datetime) -> dict[str, Any]:
    """A MemoryUpdate setting ``subject.attribute`` to ``value`` from ``valid_from``."""
    return {
        "evidence": "",
        "subject": subject,
        "attribute": attribute,
        "change": "update",
        "value": value,
        "valid_from": valid_from.isoformat(),
    }


def _updates(
    candidates: Candidates, statuses: Counter[str], lock: Lock, *, clients: int, episodes: int
) -> ClientCall:
    """Each call cites one of the ``episodes`` loaded episodes, the clients each starting at
    their own share of them: writers of different conversations cite different episodes.
    (``python -m evals.bench.writers`` measures writers that all cite one episode.)"""

    def make(client: httpx.Client, number: int) -> Call:
        first = number * episodes // clients

        def call(n: int) -> int:
            body = {"candidates": candidates(number, n)}
            cited = episode_id((first + n) % episodes)
            response = client.post(f"/v1/episodes/{cited}/updates", json=body)
            found = Counter(result["status"] for result in expect_ok(response).json()["results"])
            if n >= 0:  # timed calls only, as the case's other figures
                with lock:
                    statuses.update(found)
            return found["written"]

        return call

    return make


def measure_writes(
    served: Served, texts: Sequence[str], *, clients: Sequence[int], timing: Timing
) -> dict[str, dict[int, dict[str, Any]]]:
    """Ingest (1 and 64 episodes a request) and candidate writes (spread keys, one hot key, and
    spread keys of new subjects with every call citing one episode)."""
    results: dict[str, dict[int, dict[str, Any]]] = {}
    for count in clients:
        for name, batch in (("ingest_1", 1), ("ingest_64", 64)):
            make = _ingest(texts, tag=f"{name}-c{count}", batch=batch)
            summary = measure_http(served, make, clients=count, timing=timing)
            results.setdefault(name, {})[count] = summary
        for name, kind, episodes in (
            ("candidates_spread", _spread, len(texts)),
            ("candidates_hot", _hot, len(texts)),
            ("candidates_one_episode", _spread, 1),
        ):
            statuses: Counter[str] = Counter()
            make = _updates(
                kind(f"{name}-c{count}"), statuses, Lock(), clients=count, episodes=episodes
            )
            summary = measure_http(served, make, clients=count, timing=timing)
            results.setdefault(name, {})[count] = summary | {"statuses": dict(statuses)}
    return results


def candidate_writes(tag: str, *, clients: int, episodes: int) -> ClientCall:
    """Candidate writes to keys of their own (``tag``'s), each call citing one of the
    ``episodes`` loaded episodes: the spread-keys case, for a mix of calls."""
    return _updates(_spread(tag), Counter(), Lock(), clients=clients, episodes=episodes)
