"""Timing loops for ``sgam bench``: clients released together, each timing its own calls.

A client is one thread with its own connection (an HTTP keep-alive client, or a database
connection for the floor). Every client warms up untimed, waits for the others, then calls
until the case's time is up and the clients together have made at least ``min_calls``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from threading import Barrier, BrokenBarrierError
from typing import Any

Call = Callable[[int], int]
"""A client's ``n``-th call; returns the items it did (1 for a read, assertions written...)."""

PERCENTILES = (50, 95, 99)


@dataclass(frozen=True)
class Timing:
    """How each case runs: warm-up calls, then timed calls for ``seconds`` or longer."""

    seconds: float
    warmup: int = 1
    """Untimed calls per client first (the connection opens, statements get prepared)."""
    min_calls: int = 5
    """Timed calls of all clients together, however long they take."""


def percentile(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile of ascending samples."""
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summarize(latencies_s: Sequence[float], *, items: int, elapsed_s: float) -> dict[str, Any]:
    """Latency percentiles in ms, call count, and calls and items per second."""
    ordered = sorted(latencies_s)
    stats: dict[str, Any] = {
        f"p{q}_ms": round(percentile(ordered, q) * 1000, 3) for q in PERCENTILES
    }
    stats["calls"] = len(ordered)
    stats["calls_per_s"] = round(len(ordered) / elapsed_s, 1)
    stats["items_per_s"] = round(items / elapsed_s, 1)
    return stats


@dataclass
class _ClientRun:
    latencies: list[float]
    items: int
    started: float
    ended: float


def _client(call: Call, timing: Timing, barrier: Barrier, min_calls: int) -> _ClientRun:
    try:
        for n in range(timing.warmup):
            call(-1 - n)
    except BaseException:
        barrier.abort()  # the other clients stop waiting; this error is the one reported
        raise
    barrier.wait()
    latencies: list[float] = []
    items = 0
    started = time.perf_counter()
    deadline = started + timing.seconds
    n = 0
    while n < min_calls or time.perf_counter() < deadline:
        before = time.perf_counter()
        items += call(n)
        latencies.append(time.perf_counter() - before)
        n += 1
    return _ClientRun(latencies, items, started, time.perf_counter())


def run_clients(calls: Sequence[Call], timing: Timing) -> dict[str, Any]:
    """Run each call in its own thread at once; the summary over all of them.

    Warm-up calls get negative ``n``, so a writer can keep them apart from timed ones.
    """
    summary: dict[str, Any] = run_groups({"all": calls}, timing)["all"]
    return summary


def run_groups(groups: Mapping[str, Sequence[Call]], timing: Timing) -> dict[str, Any]:
    """Every group's calls in threads of their own, all released together; each group's
    summary under its name (``run_clients`` on a mix of calls, told apart)."""
    calls = [(name, call) for name, members in groups.items() for call in members]
    barrier = Barrier(len(calls))
    each = math.ceil(timing.min_calls / len(calls))
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(_client, call, timing, barrier, each) for _, call in calls]
        failures = [future.exception() for future in futures]
    failure = next((e for e in failures if e and not isinstance(e, BrokenBarrierError)), None)
    if failure is not None:
        raise failure
    runs = [(name, future.result()) for (name, _), future in zip(calls, futures, strict=True)]
    return {name: _summary([run for of, run in runs if of == name]) for name in groups}


def _summary(runs: Sequence[_ClientRun]) -> dict[str, Any]:
    latencies = [latency for run in runs for latency in run.latencies]
    elapsed = max(run.ended for run in runs) - min(run.started for run in runs)
    return summarize(latencies, items=sum(run.items for run in runs), elapsed_s=elapsed)
