"""The floors of the exact reads, served: a bare Litestar app serving the same row, beside SGAM.

``sgam bench``'s in-process floor of a fact GET is ``/healthz`` plus the statement as raw SQL on
one connection. A served read also pays for the framework's route, the asyncio driver, the
tenant's setting and the JSON, which no code of SGAM's can take away. This app measures that:

- ``/healthz``: the served ``/healthz``'s answer;
- ``/one``: ``SELECT 1`` through the API's asyncio pool (``store.bench.BareReads.one``);
- ``/v1/facts/{subject}/{attribute}``: the served read's own statement after the tenant's, in
  one pipeline, on that pool (``BareReads.fact``), answered as the API answers a fact.

It has no middleware, no dependencies, no receipts, no tracing, and a guard that compares the
``Authorization`` header with one key. uvicorn serves it as ``sgam serve`` serves the API (the
same loop and HTTP parser, one worker). ``measure_stack_floor`` times its calls and the served
API's, alternated over rounds, so both see the same machine.

A named context opens a decision and leaves a receipt for each key and episode it read (the
design's rule for every read made for a decision). The same rounds time the API's GET fact for a
decision (``X-SGAM-Decision``: one transaction that reads the key and writes its receipt) and the
named context without evidence: the first is the least any read leaving a receipt costs here,
the floor under the second.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import httpx
import msgspec
from litestar import Litestar, Request, Response, get
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, NotFoundException
from litestar.handlers.base import BaseRouteHandler
from litestar.params import PathParameter

from evals.bench.served.cases import CaseFailed, expect_ok
from evals.bench.served.data import TENANT, MeasuredKey
from evals.bench.served.runner import Timing, run_clients
from evals.bench.served.server import Served, free_port, stop, wait_ready
from server.settings import Settings
from store.bench import BareReads, bare_reads
from store.contract.problems import DECISION_HEADER

DATABASE_ENV = "SGAM_BENCH_BARE_DATABASE_URL"
KEY_ENV = "SGAM_BENCH_BARE_KEY"
_Path = Annotated[str, PathParameter()]
CASES = (
    "sgam_healthz",
    "sgam_fact",
    "sgam_fact_for_decision",
    "sgam_named_k0",
    "bare_healthz",
    "bare_one",
    "bare_fact",
)
"""What each round times, in this order."""


def _guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    if connection.headers.get("authorization") != f"Bearer {os.environ[KEY_ENV]}":
        raise NotAuthorizedException


def _reads(connection: ASGIConnection[Any, Any, Any, Any]) -> BareReads:
    reads: BareReads = connection.app.state.reads
    return reads


@get("/healthz", sync_to_thread=False)
def _healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/one", guards=[_guard])
async def _one(request: Request[Any, Any, Any]) -> dict[str, int]:
    return {"one": await _reads(request).one()}


@get("/v1/facts/{subject:str}/{attribute:str}", guards=[_guard])
async def _fact(
    request: Request[Any, Any, Any], subject: _Path, attribute: _Path
) -> Response[msgspec.Raw]:
    fact = await _reads(request).fact(TENANT, subject, attribute)
    if fact is None:
        raise NotFoundException
    # One pass of pydantic's serializer, embedded as is: how the API answers a model.
    return Response(msgspec.Raw(fact.model_dump_json()), media_type="application/json")


def bare_app() -> Litestar:
    """The bare app on ``SGAM_BENCH_BARE_DATABASE_URL``'s database (uvicorn's factory)."""

    @asynccontextmanager
    async def opened(app: Litestar) -> AsyncIterator[None]:
        async with bare_reads(os.environ[DATABASE_ENV]) as reads:
            app.state.reads = reads
            yield

    return Litestar([_healthz, _one, _fact], lifespan=[opened])


@contextmanager
def serve_bare(conninfo: str, *, api_key: str, log: Path) -> Iterator[str]:
    """The bare app served by uvicorn as ``sgam serve`` serves the API; yields its base URL."""
    settings = Settings()
    port = free_port()
    env = {**os.environ, DATABASE_ENV: conninfo, KEY_ENV: api_key}
    command = [sys.executable, "-m", "uvicorn", f"{__name__}:bare_app", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    command += ["--loop", settings.event_loop, "--http", settings.http_parser]
    base_url = f"http://127.0.0.1:{port}"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as output:
        process = subprocess.Popen(  # noqa: S603 - uvicorn on this module, arguments we built
            command, env=env, stdout=output, stderr=subprocess.STDOUT
        )
        try:
            wait_ready(base_url, process, log, name="the bare app", path="/healthz")
            yield base_url
        finally:
            stop(process)


def _time(request: Callable[[], httpx.Response], timing: Timing) -> float:
    def call(_: int) -> int:
        expect_ok(request())
        return 1

    return float(run_clients([call], timing)["p50_ms"])


def measure_stack_floor(
    served: Served, conninfo: str, key: MeasuredKey, *, rounds: int, timing: Timing, log: Path
) -> dict[str, Any]:
    """Each case's p50 in every round (the cases alternated within a round), their medians,
    and the ratios (``stack_summary``)."""
    fact = f"/v1/facts/{key.subject}/{key.attribute}"
    named: dict[str, Any] = {"question": key.question, "subject": key.subject}
    named |= {"attributes": [key.attribute], "evidence_k": 0}
    with (
        serve_bare(conninfo, api_key=served.api_key, log=log) as bare_url,
        served.client() as api,
        httpx.Client(
            base_url=bare_url,
            headers={"Authorization": f"Bearer {served.api_key}"},
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        ) as bare,
    ):
        if expect_ok(bare.get(fact)).json() != expect_ok(api.get(fact)).json():
            raise CaseFailed(f"the bare app and the API answer {fact} differently")
        decision = expect_ok(api.post("/v1/context", json=named)).json()["decision_id"]
        cases: dict[str, Callable[[], httpx.Response]] = {
            "sgam_healthz": partial(api.get, "/healthz"),
            "sgam_fact": partial(api.get, fact),
            "sgam_fact_for_decision": partial(api.get, fact, headers={DECISION_HEADER: decision}),
            "sgam_named_k0": partial(api.post, "/v1/context", json=named),
            "bare_healthz": partial(bare.get, "/healthz"),
            "bare_one": partial(bare.get, "/one"),
            "bare_fact": partial(bare.get, fact),
        }
        by_round = [{name: _time(cases[name], timing) for name in CASES} for _ in range(rounds)]
    return stack_summary(by_round)


def stack_summary(by_round: list[dict[str, float]]) -> dict[str, Any]:
    """Each case's median p50 over the rounds, and the ratios read against the targets."""
    p50 = {name: round(statistics.median(r[name] for r in by_round), 3) for name in CASES}

    def over(case: str, base: str) -> float:
        return round(p50[case] / p50[base], 3)

    return {
        "rounds": [{name: round(r[name], 3) for name in CASES} for r in by_round],
        "p50_ms": p50,
        "sgam_fact_over_healthz": over("sgam_fact", "sgam_healthz"),
        "bare_fact_over_healthz": over("bare_fact", "bare_healthz"),
        "bare_one_over_healthz": over("bare_one", "bare_healthz"),
        "sgam_fact_over_bare_fact": over("sgam_fact", "bare_fact"),
        "fact_for_decision_over_fact": over("sgam_fact_for_decision", "sgam_fact"),
        "named_k0_over_fact": over("sgam_named_k0", "sgam_fact"),
    }
