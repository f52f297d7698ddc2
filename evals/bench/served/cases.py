"""The served reads ``sgam bench`` times over HTTP: health, exact reads, search and context.

Each client is an httpx keep-alive client with one connection of its own; clients start at
different keys and walk the measured keys in turn. Any answer but 200 stops the case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any, TypeVar

import httpx

from evals.bench.profile import profiled
from evals.bench.served.data import MeasuredKey
from evals.bench.served.floor import K
from evals.bench.served.runner import Call, Timing, run_clients
from evals.bench.served.server import Served

K_ = TypeVar("K_")
"""A measured key of any case."""
ClientCall = Callable[[httpx.Client, int], Call]
"""Given a client and its number, that client's calls."""
Request = Callable[[httpx.Client, MeasuredKey], httpx.Response]


class CaseFailed(RuntimeError):
    """The server answered a measured call with an error."""


def expect_ok(response: httpx.Response) -> httpx.Response:
    """The response, if it is a 200; else the case stops, saying what the server said."""
    if response.status_code != 200:
        request = response.request
        raise CaseFailed(
            f"{request.method} {request.url.path} answered {response.status_code}:"
            f" {response.text[:500]}"
        )
    return response


def measure_http(
    served: Served, make: ClientCall, *, clients: int, timing: Timing
) -> dict[str, Any]:
    """The case with ``clients`` concurrent HTTP clients; a failure is its result."""
    try:
        with ExitStack() as stack:
            calls = [make(stack.enter_context(served.client()), n) for n in range(clients)]
            return run_clients(calls, timing)
    except (CaseFailed, httpx.HTTPError) as error:
        # One failing case is a finding to report, not a reason to lose the run's others.
        return {"error": f"{type(error).__name__}: {error}"}


def _fact(params: Callable[[MeasuredKey], dict[str, str]]) -> Request:
    def request(client: httpx.Client, key: MeasuredKey) -> httpx.Response:
        return client.get(f"/v1/facts/{key.subject}/{key.attribute}", params=params(key))

    return request


def _named_context(**options: Any) -> Request:
    def request(client: httpx.Client, key: MeasuredKey) -> httpx.Response:
        body = {"question": key.question, "subject": key.subject, "attributes": [key.attribute]}
        return client.post("/v1/context", json=body | options)

    return request


READS: dict[str, Request] = {
    "healthz": lambda client, _key: client.get("/healthz"),
    "fact_current": _fact(lambda _key: {}),
    "fact_point_in_time": _fact(lambda key: {"valid_at": key.valid_at.isoformat()}),
    "fact_known_at": _fact(lambda key: {"known_at": key.known_at.isoformat()}),
    "profile": lambda client, key: client.get(f"/v1/subjects/{key.subject}/profile"),
    "search": lambda client, key: client.post(
        "/v1/evidence/search", json={"query": key.question, "subject": key.subject, "k": K}
    ),
    "context_free": lambda client, key: client.post(
        "/v1/context", json={"question": key.question, "subject": key.subject}
    ),
    "context_named": _named_context(),
    "context_named_k0": _named_context(evidence_k=0),
}
"""Every served read, by case name."""


def key_calls(
    request: Callable[[httpx.Client, K_], httpx.Response], keys: Sequence[K_], clients: int
) -> ClientCall:
    """Each client's calls: ``request`` on the keys in turn, each client from its own key."""

    def make(client: httpx.Client, number: int) -> Call:
        offset = number * len(keys) // clients

        def call(n: int) -> int:
            expect_ok(request(client, keys[(offset + n) % len(keys)]))
            return 1

        return call

    return make


def measure_reads(
    served: Served, keys: Sequence[MeasuredKey], *, clients: int, timing: Timing
) -> dict[str, dict[str, Any]]:
    """Every served read with ``clients`` clients: case name -> summary.

    With one client each case is profiled too (``evals.bench.profile``): the server's CPU per
    call and where it went, under the summary's ``profile``.
    """
    found: dict[str, dict[str, Any]] = {}
    for name, request in READS.items():
        make = key_calls(request, keys, clients)
        if clients != 1:
            found[name] = measure_http(served, make, clients=clients, timing=timing)
            continue
        with profiled(served.pid) as profile:
            found[name] = measure_http(served, make, clients=clients, timing=timing)
        calls = int(found[name].get("calls", 0)) + timing.warmup
        found[name]["profile"] = profile.per_call(calls)
    return found
