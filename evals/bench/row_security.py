"""What row-level security costs: the store's calls as the API makes them, with and without it.

One database, one seeded tenant (42 attributes on one subject, 2,000 more subjects, 2,000
episodes with vectors). Each call runs, interleaved, on two pools of that database: the API's
(``SET ROLE sgam_app``, the tenant named per transaction, the policies in force) and one as the
tables' owner, whom no policy holds (the statements are the same, the tenant setting is sent
and ignored). The ratio of the medians is the wall's cost; on a shared machine only ratios
within one run mean anything.

    python -m evals.bench.row_security [--rounds 300]

Prints a table and writes ``evals/results/row_security.json``.
"""

from __future__ import annotations

import itertools
import json
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from store.bench import (
    APP_ROLE,
    ConnectionPool,
    SearchScope,
    make_pool,
    migrate,
    scratch_database,
    wall_clock,
)
from store.service import MemoryStore

RESULTS = Path(__file__).parents[1] / "results" / "row_security.json"
TENANT = "bench"
SUBJECT = "mira"
ATTRIBUTES = [f"attribute_{n:02d}" for n in range(42)]
OTHER_SUBJECTS = 2_000
_WRITES_FROM = datetime(2026, 7, 1, tzinfo=UTC)
"""Each timed write starts its value a minute after the last: a new version, never a conflict."""
MODEL = "bench-random"
DIMENSIONS = 384


class _RandomVectors:
    """Unit vectors from a seeded generator: the search's cost does not depend on meaning."""

    model_id = MODEL

    def __init__(self) -> None:
        self._random = np.random.default_rng(7)

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        vectors = self._random.normal(size=(len(texts), DIMENSIONS)).astype(np.float32)
        normed: np.ndarray[Any, Any] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return normed


def _seed(store: MemoryStore) -> None:
    store.admin.create_tenant(TENANT)
    for attribute in ATTRIBUTES:
        store.admin.declare_attribute(TENANT, attribute, {"value_type": "string"})
    lines = []
    for n in range(OTHER_SUBJECTS):
        subject = SUBJECT if n == 0 else f"subject_{n}"
        updates = [
            {"evidence": "", "subject": subject, "attribute": a, "change": "new", "value": f"v{n}"}
            for a in (ATTRIBUTES if n == 0 else ATTRIBUTES[:3])
        ]
        episode = {
            "tenant": TENANT,
            "id": f"e{n}",
            "occurred_at": "2026-06-01T09:00:00Z",
            "text": f"episode {n} about {subject}",
            "subjects": [subject, SUBJECT] if n % 10 == 0 else [subject],
            "updates": updates,
        }
        lines.append(json.dumps(episode))
    outcome = store.episodes.import_lines(lines)
    store.episodes.embed(outcome.recorded, batch=500)
    with store.pool.connection() as conn:
        conn.autocommit = True
        for table in ("fact_versions", "episodes", "episode_subjects", "episode_vectors"):
            conn.execute(f"VACUUM ANALYZE {table}")
        conn.autocommit = False


def _calls(store: MemoryStore, writes: Iterator[int]) -> dict[str, Callable[[], object]]:
    """The timed calls on ``store``; writes number their versions from ``writes``, which both
    pools share, so each write is a new version (a repeat would be ``unchanged`` and cheaper)."""
    query = _RandomVectors().embed(["q"])[0]

    def search() -> object:
        return store.snapshots.read(
            TENANT,
            lambda snapshot: snapshot.search_evidence(
                query,
                model=MODEL,
                dimensions=DIMENSIONS,
                k=3,
                scope=SearchScope(subject=SUBJECT),
            ),
        )

    def context_reads() -> object:
        return store.snapshots.read(
            TENANT,
            lambda snapshot: (
                snapshot.find_subjects(["what", "is", "mira", "deadline"]),
                snapshot.subject_memory(
                    SUBJECT, valid_at=snapshot.now, known_at=snapshot.now, history=True
                ),
            ),
        )

    def write() -> object:
        # A new value of a key of a subject its episode already names, spread over subjects.
        n = next(writes)
        k = 1 + n % (OTHER_SUBJECTS - 1)
        return store.facts.apply_candidates(
            TENANT,
            f"e{k}",
            [
                {
                    "evidence": "",
                    "subject": f"subject_{k}",
                    "attribute": ATTRIBUTES[n % 3],
                    "change": "update",
                    "value": f"w{n}",
                    "valid_from": (_WRITES_FROM + timedelta(minutes=n)).isoformat(),
                }
            ],
        )

    return {
        "GET fact (one statement)": lambda: store.facts.current(TENANT, SUBJECT, ATTRIBUTES[0]),
        "profile (42 facts)": lambda: store.subjects.profile(TENANT, SUBJECT),
        "context reads (snapshot)": context_reads,
        "evidence search, subject scope": search,
        "one candidate written": write,
    }


@contextmanager
def _pools(conninfo: str) -> Iterator[dict[str, ConnectionPool]]:
    with (
        make_pool(conninfo, max_size=1, role=APP_ROLE) as walled,
        make_pool(conninfo, max_size=1, role=None) as owner,
    ):
        walled.wait()
        owner.wait()
        yield {"row-level security": walled, "owner (no policy)": owner}


def measure(rounds: int) -> dict[str, Any]:
    """Median ms of each call per pool, interleaved call by call, and their ratio."""
    with scratch_database(None) as conninfo:
        with make_pool(conninfo, max_size=1, role=None) as raw:
            raw.wait()
            with raw.connection() as conn:
                migrate(conn)
        with _pools(conninfo) as pools:
            stores = {
                name: MemoryStore(pool, clock=wall_clock, embedder=_RandomVectors())
                for name, pool in pools.items()
            }
            _seed(stores["owner (no policy)"])
            writes = itertools.count()
            calls = {name: _calls(store, writes) for name, store in stores.items()}
            timings: dict[str, dict[str, list[float]]] = {name: {} for name in calls}
            for _ in range(rounds):
                for case in calls["owner (no policy)"]:
                    for name in calls:
                        started = time.perf_counter()
                        calls[name][case]()
                        elapsed = (time.perf_counter() - started) * 1000
                        timings[name].setdefault(case, []).append(elapsed)
    walled, owner = (timings[name] for name in pools)
    cases = {
        case: {
            "row_security_ms": statistics.median(walled[case]),
            "owner_ms": statistics.median(owner[case]),
            "ratio": statistics.median(walled[case]) / statistics.median(owner[case]),
        }
        for case in walled
    }
    return {"machine": machine(), "rounds": rounds, "cases": cases}


def machine() -> dict[str, str]:
    """The platform and Python a result was measured on."""
    return {"platform": platform.platform(), "python": platform.python_version()}


def save(path: Path, result: dict[str, Any]) -> None:
    """Write ``result`` as indented JSON to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def main(
    rounds: Annotated[int, typer.Option(help="Calls of each case on each pool.")] = 300,
) -> None:
    """Measure the wall's cost and write it to evals/results/row_security.json."""
    result = measure(rounds)
    typer.echo(f"{'call':34} {'RLS ms':>8} {'owner ms':>9} {'ratio':>6}")
    for case, row in result["cases"].items():
        typer.echo(
            f"{case:34} {row['row_security_ms']:8.3f} {row['owner_ms']:9.3f} {row['ratio']:6.2f}"
        )
    save(RESULTS, result)


if __name__ == "__main__":
    typer.run(main)
