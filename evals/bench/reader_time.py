"""A routed context's time in process, for this build and others, alternated.

``python -m evals.bench.reader_time --base DIR`` times ``Reader.context`` on a question that is
routed among the benchmark's 42 attributes and asks for evidence (the subject's 60 episodes,
embedded by the real model, one torch thread), with no HTTP in the way: what the reader, its
statements and the encoder cost. Each build runs in a process of its own on a scratch database
of its own (``DIR``'s code first on ``sys.path``), the builds in turn, each round starting with
the next one; the medians of the rounds' p50 and of each round's own ratio to this build are
printed and written. On a shared machine only ratios within one run are worth reading.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evals.bench.exact_reads import in_turn
from evals.bench.served.data import ATTRIBUTE_WORDS, slug
from evals.bench.served.http import machine
from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from server.settings import Settings
from store.bench import make_pool, migrate_database, scratch_database, wall_clock
from store.contract.reads import ContextRequest
from store.service import MemoryStore

CITIES = ("Lisbon", "Porto", "Oslo", "Turin", "Riga")
EPISODES = 60
WARMUP = 20


def measure(calls: int) -> dict[str, float]:
    """The p50 of ``calls`` routed contexts with evidence on a scratch database (this process)."""
    start = datetime(2026, 4, 1, 9, tzinfo=UTC)
    with scratch_database(None) as conninfo:
        migrate_database(conninfo)
        pool = make_pool(conninfo)
        pool.open(wait=True)
        embedder = Embedder(Settings().embedding_model, torch_threads=1)
        embedder.load()
        try:
            store = MemoryStore(pool, clock=wall_clock, embedder=embedder)
            store.admin.create_tenant("t")
            for words in ATTRIBUTE_WORDS:
                declaration = {"value_type": "string", "description": words}
                store.admin.declare_attribute("t", slug(words), declaration)
            for index in range(EPISODES):
                city = CITIES[index % len(CITIES)]
                text = f"Mira wrote about her week, note {index}. She now lives in {city}."
                occurred = (start + timedelta(hours=index)).isoformat()
                store.episodes.record(
                    "t", {"id": f"e{index}", "occurred_at": occurred, "text": text}
                )
                if index % 12 == 0:
                    candidate = {
                        "subject": "mira",
                        "attribute": "home_city",
                        "change": "update",
                        "value": city,
                        "valid_from": occurred,
                        "evidence": text,
                    }
                    store.facts.apply_candidates("t", f"e{index}", [candidate])
            reader = Reader(store, embedder)
            request = ContextRequest(question="What is Mira's current home city?")
            for _ in range(WARMUP):
                reader.context("t", request)
            times = []
            for _ in range(calls):
                began = time.perf_counter()
                reader.context("t", request)
                times.append(time.perf_counter() - began)
        finally:
            embedder.close()
            pool.close()
    return {"p50_ms": round(statistics.median(times) * 1e3, 3)}


# The child loads this file by its path (an older build need not have it); the product's
# packages come from the build's tree, first on sys.path.
_CHILD = (
    "import importlib.util, sys;"
    " spec = importlib.util.spec_from_file_location('reader_time_probe', sys.argv[1]);"
    " probe = importlib.util.module_from_spec(spec); spec.loader.exec_module(probe);"
    " probe.main(['--measure', sys.argv[2]])"
)
HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]


def _one(code: Path | None, calls: int) -> float:
    """One build's p50, measured in a process of its own."""
    tree = code or ROOT
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    done = subprocess.run(  # noqa: S603 - this interpreter, this file, a number
        [sys.executable, "-c", _CHILD, str(HERE), str(calls)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["p50_ms"])


def compare(builds: dict[str, Path | None], *, rounds: int, calls: int) -> dict[str, Any]:
    """Each build's p50 per round, the builds in turn, and the medians."""
    names = list(builds)
    found: dict[str, list[float]] = {name: [] for name in names}
    for number in range(rounds):
        for name in in_turn(names, number):
            found[name].append(_one(builds[name], calls))
            print(name, number, found[name][-1], file=sys.stderr, flush=True)
    return {
        name: {
            "p50_ms": found[name],
            "median_p50_ms": round(statistics.median(found[name]), 3),
            "median_ratio_to_this": round(
                statistics.median(a / b for a, b in zip(found[name], found["this"], strict=True)),
                3,
            ),
        }
        for name in names
    }


def main(argv: list[str] | None = None) -> None:
    """Measure in this process (``--measure``), or alternate the builds and write the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--base", type=Path, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--out", type=Path, default=Path("evals/results/reader_time.json"))
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure)))
        return
    about = machine()
    builds: dict[str, Path | None] = {"this": None}
    builds |= {path.name: path.resolve() for path in args.base}
    results: dict[str, Any] = compare(builds, rounds=args.rounds, calls=args.calls)
    results["settings"] = {
        "rounds": args.rounds,
        "calls": args.calls,
        "base": [str(path) for path in args.base],
    }
    about["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    results["machine"] = about
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for name in builds:
        print(name, json.dumps(results[name]))


if __name__ == "__main__":
    main()
