"""What receipts cost: the read path's calls with their receipts and, interleaved, without.

The database and tenant of ``evals.bench.row_security`` (42 attributes on one subject, 2,000
more subjects, 2,000 episodes with vectors); the reader encodes with seeded random vectors, so
the encoder's time is out of both sides alike. Each call runs twice per round, each side first
every other round: a context call as served (one snapshot that also writes the decision's
receipts) and with the receipt write left out; a fact read for a decision (a transaction with
its receipt) and for none (one statement); three candidates written with their write receipts
and without. The difference of the medians is what receipts add, and the median of each
round's paired difference says the same more steadily; on a shared machine only differences
within one run mean anything.

    python -m evals.bench.receipts [--rounds 400]

Prints a table and writes ``evals/results/receipts.json``.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, cast
from uuid import uuid4

import numpy as np
import typer

from evals.bench.row_security import (
    _WRITES_FROM,
    ATTRIBUTES,
    OTHER_SUBJECTS,
    SUBJECT,
    TENANT,
    _RandomVectors,
    _seed,
    machine,
    save,
)
from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from store.bench import Trace, make_pool, migrate, receipts_left_out, scratch_database, wall_clock
from store.contract.reads import ContextRequest
from store.service import MemoryStore

RESULTS = Path(__file__).parents[1] / "results" / "receipts.json"
TARGET_MS = 1.0
"""The most receipts may add to a context call's median."""


class _RandomEncoder(_RandomVectors):
    """The reader's encoder: random unit vectors, and a word count for tokens."""

    dimensions = 384

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def embed_later(self, texts: Sequence[str]) -> Future[np.ndarray[Any, Any]]:
        done: Future[np.ndarray[Any, Any]] = Future()
        done.set_result(self.embed(texts))
        return done


def _cases(store: MemoryStore) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """Each case as (with receipts, without)."""
    reader = Reader(store, cast(Embedder, _RandomEncoder()))
    named = ContextRequest(
        question=f"What is {SUBJECT}'s attribute_00?", subject=SUBJECT, attributes=[ATTRIBUTES[0]]
    )
    routed = ContextRequest(question=f"What is {SUBJECT}'s attribute_07?", subject=SUBJECT)

    def context(request: ContextRequest, *, receipts: bool) -> Callable[[], object]:
        def call() -> object:
            with receipts_left_out(not receipts):
                return reader.context(TENANT, request)

        return call

    writes = itertools.count()

    def candidates(*, receipts: bool) -> Callable[[], object]:
        def call() -> object:
            # Ten new versions on keys of a subject the episode names: spread, never a repeat.
            n = next(writes)
            k = 1 + n % (OTHER_SUBJECTS - 1)
            updates = [
                {
                    "evidence": "",
                    "subject": f"subject_{k}",
                    "attribute": attribute,
                    "change": "update",
                    "value": f"w{n}",
                    "valid_from": (_WRITES_FROM + timedelta(minutes=n)).isoformat(),
                }
                for attribute in ATTRIBUTES[:3]
            ]
            with receipts_left_out(not receipts):
                return store.facts.apply_candidates(TENANT, f"e{k}", updates)

        return call

    def fact(*, receipts: bool) -> Callable[[], object]:
        trace = Trace(decision_id=uuid4()) if receipts else Trace()
        return lambda: store.facts.at(TENANT, SUBJECT, ATTRIBUTES[0], trace=trace)

    return {
        "context, named key, 3 evidence": (
            context(named, receipts=True),
            context(named, receipts=False),
        ),
        "context, routed (42 attributes)": (
            context(routed, receipts=True),
            context(routed, receipts=False),
        ),
        "GET fact, for a decision or none": (fact(receipts=True), fact(receipts=False)),
        "3 candidates written, spread keys": (
            candidates(receipts=True),
            candidates(receipts=False),
        ),
    }


def measure(rounds: int) -> dict[str, Any]:
    """Median ms of each case with and without receipts, interleaved, and the difference."""
    with scratch_database(None) as conninfo:
        with make_pool(conninfo, max_size=1, role=None) as raw:
            raw.wait()
            with raw.connection() as conn:
                migrate(conn)
        # Pools opened after the migration: their connections know the vector types.
        with make_pool(conninfo, max_size=1, role=None) as owner:
            owner.wait()
            _seed(MemoryStore(owner, clock=wall_clock, embedder=_RandomVectors()))
        with make_pool(conninfo, max_size=1) as pool:
            pool.wait()
            store = MemoryStore(pool, clock=wall_clock, embedder=_RandomVectors())
            cases = _cases(store)
            timings: dict[str, tuple[list[float], list[float]]] = {case: ([], []) for case in cases}
            for round_ in range(rounds):
                for case, calls in cases.items():
                    pairs = list(zip(calls, timings[case], strict=True))
                    # Each side goes first every other round: the second call of a pair finds
                    # the first one's pages and plans warm.
                    for call, samples in pairs[:: 1 if round_ % 2 else -1]:
                        started = time.perf_counter()
                        call()
                        samples.append((time.perf_counter() - started) * 1000)
    results = {}
    for case, (with_ms, without_ms) in timings.items():
        with_p50, without_p50 = statistics.median(with_ms), statistics.median(without_ms)
        # Each round's two calls ran back to back: their difference is taken under the same
        # load, so its median is steadier than the difference of the two medians.
        paired = statistics.median(a - b for a, b in zip(with_ms, without_ms, strict=True))
        results[case] = {
            "with_receipts_ms": round(with_p50, 3),
            "without_ms": round(without_p50, 3),
            "added_ms": round(with_p50 - without_p50, 3),
            "added_paired_ms": round(paired, 3),
        }
    return {"machine": machine(), "rounds": rounds, "target_added_ms": TARGET_MS, "cases": results}


def main(
    rounds: Annotated[int, typer.Option(help="Calls of each case, each way.")] = 400,
) -> None:
    """Measure what receipts add and write it to evals/results/receipts.json."""
    result = measure(rounds)
    typer.echo(
        f"{'call':34} {'receipts ms':>12} {'without ms':>11} {'added ms':>9} {'paired ms':>10}"
    )
    for case, row in result["cases"].items():
        typer.echo(
            f"{case:34} {row['with_receipts_ms']:12.3f} {row['without_ms']:11.3f}"
            f" {row['added_ms']:9.3f} {row['added_paired_ms']:10.3f}"
        )
    save(RESULTS, result)


if __name__ == "__main__":
    typer.run(main)
