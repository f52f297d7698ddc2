"""A context call right after a bulk load, and the same call once the tables are analyzed.

Statistics are table-wide: right after a busy subject's episodes arrive, the planner still
believes what the last ANALYZE saw (subjects of a few episodes each). ``sgam bench`` loads
``EPISODES`` episodes of one new subject through ``POST /v1/episodes/batch``, as a client would,
with autovacuum held off those tables so that nothing analyzes them behind the measurement;
times the free context call about that subject; runs ANALYZE as the tables' owner; and times
it again. The target is the first p50 at most 1.2x the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from evals.bench.served.cases import expect_ok, key_calls, measure_http
from evals.bench.served.runner import Timing
from evals.bench.served.server import Served
from store.bench import raw_connection, sql

SUBJECT = "fresh-arrival"
EPISODES = 400
BATCH = 64
TABLES = ("episodes", "episode_subjects", "episode_vectors")
"""The tables a recorded episode fills, held off autovacuum while measured."""
_OCCURRED = "2026-01-01T00:00:00Z"


def _set_autovacuum(conninfo: str, *, enabled: bool) -> None:
    with raw_connection(conninfo, autocommit=True) as conn:
        for table in TABLES:
            setting = sql.SQL("ALTER TABLE {} SET (autovacuum_enabled = {})").format(
                sql.Identifier(table), sql.Literal(enabled)
            )
            conn.execute(setting)


def _load(served: Served, texts: Sequence[str]) -> None:
    with served.client() as client:
        for start in range(0, EPISODES, BATCH):
            episodes = [
                {
                    "id": f"{SUBJECT}-{n}",
                    "occurred_at": _OCCURRED,
                    "text": texts[n % len(texts)],
                    "subjects": [SUBJECT],
                }
                for n in range(start, min(start + BATCH, EPISODES))
            ]
            expect_ok(client.post("/v1/episodes/batch", json={"episodes": episodes}))


def _context(client: httpx.Client, question: str) -> httpx.Response:
    return client.post("/v1/context", json={"question": question, "subject": SUBJECT})


def measure_fresh(
    served: Served, conninfo: str, texts: Sequence[str], *, questions: Sequence[str], timing: Timing
) -> dict[str, Any]:
    """The context call's summary right after the load and after ANALYZE, and their p50s'
    ratio (``after_load_over_analyzed``)."""
    _set_autovacuum(conninfo, enabled=False)
    try:
        _load(served, texts)
        make = key_calls(_context, questions, 1)
        after_load = measure_http(served, make, clients=1, timing=timing)
        with raw_connection(conninfo, autocommit=True) as conn:
            for table in TABLES:
                conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
        analyzed = measure_http(served, make, clients=1, timing=timing)
    finally:
        _set_autovacuum(conninfo, enabled=True)
    found: dict[str, Any] = {"episodes": EPISODES, "after_load": after_load}
    found["after_analyze"] = analyzed
    if "p50_ms" in after_load and "p50_ms" in analyzed:
        ratio = float(after_load["p50_ms"]) / float(analyzed["p50_ms"])
        found["after_load_over_analyzed"] = round(ratio, 3)
    return found
