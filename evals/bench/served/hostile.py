"""``/healthz`` while hostile bodies arrive: its p99 under three 4 MiB bodies, over its idle p99.

Each hostile body is an episode whose metadata is one array of about 1.4 million empty objects,
as large as the server's default body limit allows; three clients send them over and over while
a fourth times ``/healthz``. A server that reads bodies on its event loop stalls every other
call meanwhile; one that scans them in worker threads, stopping at its limits, does not.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from evals.bench.served.runner import percentile
from evals.bench.served.server import Served

BODY_BYTES = 4 * 1024 * 1024
"""The server's default ``SGAM_MAX_BODY_BYTES``: the largest body it reads at all."""
HOSTILE_CLIENTS = 3
MIN_PROBES = 20
"""Timed ``/healthz`` calls of each phase at least, however short."""
_HEAD = b'{"id": "hostile", "occurred_at": "2026-01-01T00:00:00Z", "text": "t", "metadata": {"m": ['
_TAIL = b"{}]}}"
_ITEM = b"{},"


def hostile_body(size: int = BODY_BYTES) -> bytes:
    """An episode of at most ``size`` bytes whose metadata holds as many empty objects as fit."""
    count = (size - len(_HEAD) - len(_TAIL)) // len(_ITEM)
    return _HEAD + _ITEM * count + _TAIL


def _probe(client: httpx.Client, until: float) -> list[float]:
    latencies: list[float] = []
    while time.perf_counter() < until or len(latencies) < MIN_PROBES:
        started = time.perf_counter()
        client.get("/healthz").raise_for_status()
        latencies.append(time.perf_counter() - started)
    return latencies


def _stats(latencies: list[float]) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {
        "p50_ms": round(percentile(ordered, 50) * 1000, 3),
        "p99_ms": round(percentile(ordered, 99) * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
        "calls": len(ordered),
    }


def _send(served: Served, body: bytes, stop: threading.Event) -> list[tuple[int, float]]:
    answers: list[tuple[int, float]] = []
    with served.client(timeout=300.0) as client:
        while not (answers and stop.is_set()):  # one body at least, however short the phase
            started = time.perf_counter()
            response = client.post(
                "/v1/episodes", content=body, headers={"Content-Type": "application/json"}
            )
            answers.append((response.status_code, time.perf_counter() - started))
    return answers


def measure_hostile_bodies(served: Served, *, seconds: float) -> dict[str, Any]:
    """``/healthz`` for ``seconds`` idle, then for ``seconds`` while hostile bodies arrive."""
    body = hostile_body()
    with httpx.Client(base_url=served.base_url, timeout=300.0) as probe:
        _probe(probe, time.perf_counter() + 0.5)  # connected and warm
        idle = _stats(_probe(probe, time.perf_counter() + seconds))
        stop = threading.Event()
        with ThreadPoolExecutor(HOSTILE_CLIENTS) as pool:
            senders = [pool.submit(_send, served, body, stop) for _ in range(HOSTILE_CLIENTS)]
            time.sleep(0.2)  # the bodies are on their way
            loaded = _stats(_probe(probe, time.perf_counter() + seconds))
            stop.set()
            answers = [answer for sender in senders for answer in sender.result()]
    return {
        "bodies_at_once": HOSTILE_CLIENTS,
        "body_bytes": len(body),
        "healthz_idle": idle,
        "healthz_under_bodies": loaded,
        "p99_ratio": round(loaded["p99_ms"] / idle["p99_ms"], 2),
        "bodies_answered": len(answers),
        "body_statuses": {str(status): n for status, n in Counter(s for s, _ in answers).items()},
        "body_p50_ms": round(percentile(sorted(t for _, t in answers), 50) * 1000, 1),
    }
