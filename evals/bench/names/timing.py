"""How the name-resolution benchmark times its cases over HTTP.

With one client the cases are interleaved call by call: each round asks every case about the
same key, in an order that rotates, so a burst of other work on a shared machine falls on all
of them alike and their ratios stay fair (a case's rate is then its calls over its own time).
With several clients each case runs alone with that
many keep-alive clients (``evals.bench.served.cases.measure_http``), as ``sgam bench`` runs them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from evals.bench.names.data import NamedKey
from evals.bench.served.cases import CaseFailed, expect_ok, key_calls, measure_http
from evals.bench.served.runner import Timing, summarize
from evals.bench.served.server import Served

NameRequest = Callable[[httpx.Client, NamedKey], httpx.Response]


def interleaved(
    served: Served, cases: Mapping[str, NameRequest], keys: Sequence[NamedKey], timing: Timing
) -> dict[str, dict[str, Any]]:
    """Every case with one client, call by call: case name -> summary (or its error)."""
    names = list(cases)
    latencies: dict[str, list[float]] = {name: [] for name in names}
    with served.client() as client:
        try:
            for n in range(timing.warmup):
                for name in names:
                    expect_ok(cases[name](client, keys[n % len(keys)]))
            deadline = time.perf_counter() + timing.seconds * len(names)
            round_ = 0
            while round_ < timing.min_calls or time.perf_counter() < deadline:
                key = keys[round_ % len(keys)]
                shift = round_ % len(names)
                for name in names[shift:] + names[:shift]:
                    before = time.perf_counter()
                    expect_ok(cases[name](client, key))
                    latencies[name].append(time.perf_counter() - before)
                round_ += 1
        except (CaseFailed, httpx.HTTPError) as error:
            # One failing case is a finding to report, not a reason to lose the run's others.
            return {name: {"error": f"{type(error).__name__}: {error}"} for name in names}
    return {
        name: summarize(found, items=len(found), elapsed_s=sum(found))
        for name, found in latencies.items()
    }


def measure(
    served: Served,
    cases: Mapping[str, NameRequest],
    keys: Sequence[NamedKey],
    *,
    clients: Sequence[int],
    timing: Timing,
) -> dict[str, dict[str, Any]]:
    """Every case with each number of clients: case name -> clients -> summary."""
    reads: dict[str, dict[str, Any]] = {name: {} for name in cases}
    for count in clients:
        if count == 1:
            for name, stats in interleaved(served, cases, keys, timing).items():
                reads[name]["1"] = stats
            continue
        for name, request in cases.items():
            make = key_calls(request, keys, count)
            reads[name][str(count)] = measure_http(served, make, clients=count, timing=timing)
    return reads
