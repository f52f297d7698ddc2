"""Benchmark: recall@10 of the evidence search modes (vector, lexical, hybrid), on paraphrased
and on exact-token questions, through the API as a client calls it.

One tenant holds ``--episodes`` episodes of the general benchmark's corpus (people and
projects, statements and chatter) and ``--per-family`` near-duplicates of each exact-token
family (``tokens.py``). Each question is asked with ``POST /v1/evidence/search`` (``k`` 10) in
each mode; recall@10 is the share of a question's answers among the ten hits (of at most ten
answers), averaged over the questions. Latency is the client's, per mode (indicative: the
machine is shared).

    python -m evals.bench.evidence.modes --out evals/results/evidence.json

The results go into the file's ``modes`` object; the rest of the file is left as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evals.bench.evidence.corpus import SEED, generate_corpus
from evals.bench.evidence.tokens import Asked, paraphrased, token_episodes
from retrieval.search.embeddings import Embedder
from server.client import SGAMClient
from server.settings import Settings
from server.testing import app_client
from store.bench import app_login, migrate_database, scratch_database
from store.contract.reads import SearchMode

K = 10
MODES: tuple[SearchMode, ...] = ("vector", "lexical", "hybrid")
TENANT = "modes"
BATCH = 100


@contextmanager
def tenant_client(database_url: str | None, embedder: Embedder) -> Iterator[SGAMClient]:
    """A client of a fresh tenant on the app over a scratch database, migrated as ``sgam
    serve`` migrates it."""
    with scratch_database(database_url) as conninfo:
        migrate_database(conninfo)
        settings = Settings(
            **app_login(conninfo), admin_token=secrets.token_urlsafe(24), pool_max_size=4
        )
        with app_client(settings, embedder=embedder) as admin:
            admin.create_tenant(TENANT)
            issued = admin.create_key(TENANT)
            yield SGAMClient(admin.base_url, issued.api_key, http=admin.http)


def _record(client: SGAMClient, episodes: Sequence[tuple[str, str]]) -> float:
    """Record (and so embed) ``episodes`` in batches; the seconds it took."""
    start = time.perf_counter()
    for at in range(0, len(episodes), BATCH):
        client.record_batch(
            [
                {"id": episode_id, "occurred_at": "2026-01-05T09:00:00Z", "text": text}
                for episode_id, text in episodes[at : at + BATCH]
            ]
        )
    return time.perf_counter() - start


def _recall(found: Sequence[str], answers: frozenset[str]) -> float:
    return len(answers.intersection(found)) / min(len(answers), K)


def _measure(client: SGAMClient, asked: Sequence[Asked]) -> dict[str, Any]:
    """Recall@10 and client latency of each mode over ``asked``, and by question kind; the
    modes take turns question by question, so the machine's load falls on each alike."""
    recalls: dict[str, dict[str, list[float]]] = {mode: {} for mode in MODES}
    latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
    for question in asked:
        for mode in MODES:
            start = time.perf_counter()
            result = client.search(question.question, k=K, mode=mode)
            latencies[mode].append((time.perf_counter() - start) * 1000)
            found = [hit.episode_id for hit in result.results]
            by_kind = recalls[mode].setdefault(question.kind, [])
            by_kind.append(_recall(found, question.answers))
    return {mode: _summary(recalls[mode], latencies[mode]) for mode in MODES}


def _summary(recalls: dict[str, list[float]], latencies: list[float]) -> dict[str, Any]:
    every = [value for values in recalls.values() for value in values]
    return {
        "recall_at_10": round(statistics.fmean(every), 4),
        "by_kind": {kind: round(statistics.fmean(v), 4) for kind, v in sorted(recalls.items())},
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(statistics.quantiles(latencies, n=20)[-1], 2),
    }


def run(
    *, episodes: int, per_family: int, asked_per_family: int, paraphrases: int, url: str | None
) -> dict[str, Any]:
    """Load the tenant, ask every question in every mode; the results as one object."""
    started = time.perf_counter()
    corpus = generate_corpus(episodes, seed=SEED)
    general = [(f"g{index}", episode.text) for index, episode in enumerate(corpus)]
    tokens, exact = token_episodes(per_family, asked_per_family, seed=SEED + 1)
    questions = {
        "paraphrased": paraphrased(corpus, [i for i, _ in general], paraphrases, seed=SEED + 2),
        "exact_token": exact,
    }
    embedder = Embedder().load()
    results: dict[str, Any] = {}
    with tenant_client(url, embedder) as client:
        load_s = _record(client, [*general, *tokens])
        for name, asked in questions.items():
            results[name] = _measure(client, asked)
    for name in questions:
        vector = results[name]["vector"]["recall_at_10"]
        results[name]["hybrid_minus_vector"] = round(
            results[name]["hybrid"]["recall_at_10"] - vector, 4
        )
    return {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "note": "shared machine: latencies are indicative, compare within this run only",
        },
        "tenant_episodes": len(general) + len(tokens),
        "general_episodes": len(general),
        "token_episodes_per_family": per_family,
        "questions": {name: len(asked) for name, asked in questions.items()},
        "k": K,
        "recall": "share of a question's answers (at most 10) among the 10 hits, averaged",
        "results": results,
        "load_s": round(load_s, 1),
        "total_s": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, print it, write it into ``--out``'s ``modes``; return it."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=3_000, help="general episodes")
    parser.add_argument("--per-family", type=int, default=300, help="episodes per token family")
    parser.add_argument("--asked-per-family", type=int, default=40, help="questions per family")
    parser.add_argument("--paraphrases", type=int, default=160, help="paraphrased questions")
    parser.add_argument("--out", type=Path, default=Path("evals/results/evidence.json"))
    args = parser.parse_args(argv)
    measured = run(
        episodes=args.episodes,
        per_family=args.per_family,
        asked_per_family=args.asked_per_family,
        paraphrases=args.paraphrases,
        url=os.environ.get("DATABASE_URL"),
    )
    print(json.dumps(measured, indent=2))
    existing = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**existing, "modes": measured}, indent=2)
    args.out.write_text(text + "\n", encoding="utf-8")
    return measured


if __name__ == "__main__":
    main()
