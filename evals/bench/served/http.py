"""``sgam bench``: the served API against its floor and the plain baseline, in one run.

A scratch embedded PostgreSQL gets the seeded episodes and vectors (COPY); a real
``sgam serve`` process is started on it with an admin token of the run's own, which issues
the benchmark tenant's key; attributes are declared over HTTP; then, scale by scale, fact
versions are COPY-loaded and every case is timed: the floor and the baseline in process,
the served calls over HTTP with keep-alive clients. Writes and the bulk import run at the
first scale, and so does ``/healthz`` while three 4 MiB hostile bodies arrive (its p99 against
its idle p99). Generated rows and episode vectors are cached, so a rerun skips making them.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import platformdirs

from evals.bench.evidence.corpus import generate_corpus
from evals.bench.report import with_targets
from evals.bench.served.cases import CaseFailed, measure_reads
from evals.bench.served.data import (
    MeasuredKey,
    corpus_subjects,
    fact_rows,
    measured_keys,
    subjects_for,
)
from evals.bench.served.database import bench_database, database_facts, described
from evals.bench.served.floor import measure_floor, uses_index
from evals.bench.served.fresh import measure_fresh
from evals.bench.served.hostile import measure_hostile_bodies
from evals.bench.served.imports import measure_import
from evals.bench.served.load import Corpus, load_episodes, load_facts, make_corpus
from evals.bench.served.mixed import measure_mixed
from evals.bench.served.runner import Timing
from evals.bench.served.server import Served, ServerFailed, declare_attributes, rss_mib, serve
from evals.bench.served.stack import measure_stack_floor
from evals.bench.served.writes import measure_writes
from evals.leakage.report import run_environment
from retrieval.search.embeddings import Embedder
from server.settings import Settings

FULL_SCALES = (10_000, 100_000, 1_000_000)
FULL_EPISODES = 200_000
QUICK_EPISODES = 20_000
SEED = 20_260_612


def default_cache_dir() -> Path:
    """Where generated rows and vectors are kept between runs."""
    return platformdirs.user_cache_path("sgam-bench")


@dataclass(frozen=True)
class Options:
    """What one run measures; ``quick`` runs only the first scale on a smaller corpus."""

    scales: tuple[int, ...] = FULL_SCALES
    episodes: int = FULL_EPISODES
    seconds: float = 5.0
    clients: tuple[int, ...] = (1, 8)
    min_calls: int = 5
    seed: int = SEED
    quick: bool = False
    bulk_import: bool = True
    import_facts: int = 100_000
    import_episodes: int = 2_000
    stack_rounds: int = 3
    """Rounds of the stack's floor (``evals.bench.served.stack``), its cases alternated."""
    cache_dir: Path = field(default_factory=default_cache_dir)
    database_url: str | None = None
    """A server or Citus coordinator to run on (``evals.bench.served.database``); None: embedded."""

    @classmethod
    def of(cls, *, quick: bool, **given: Any) -> Options:
        """Options from the command line: unset ones take the quick or the full defaults."""
        defaults: dict[str, Any] = {"quick": quick}
        if quick:
            defaults |= {"scales": FULL_SCALES[:1], "episodes": QUICK_EPISODES, "seconds": 3.0}
            defaults |= {"import_facts": 20_000, "import_episodes": 500}
        chosen = {name: value for name, value in given.items() if value is not None}
        if chosen.get("scales"):  # loaded in ascending order, each on top of the last
            chosen["scales"] = tuple(sorted(set(chosen["scales"])))
        return cls(**(defaults | chosen))

    @property
    def timing(self) -> Timing:
        """How long each case runs."""
        return Timing(self.seconds, warmup=min(1, self.min_calls - 1), min_calls=self.min_calls)

    @property
    def mixed_timing(self) -> Timing:
        """How long the mixed load runs: six cases' time, so its tails have samples."""
        return Timing(self.seconds * 6, warmup=1, min_calls=self.min_calls)


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text(encoding="utf-8").splitlines() if cpuinfo.exists() else []
    models = [line.partition(":")[2].strip() for line in lines if line.startswith("model name")]
    return models[0] if models else platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """The machine the run is on (its load average too: other work skews timings)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        **run_environment(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "memory_gib": round(memory / 2**30, 1),
        "load_average_at_start": [round(load, 2) for load in os.getloadavg()],
    }


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextmanager
def _stage(timings: dict[str, Any], name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    timings[f"{name}_s"] = round(timings.get(f"{name}_s", 0) + time.perf_counter() - start, 1)


@dataclass(frozen=True)
class _Data:
    corpus: Corpus
    texts: list[str]
    keys: list[MeasuredKey]
    scales: list[tuple[Path, int]]
    """Each scale's fact rows (only those the smaller scales do not hold) and its subjects."""


def _floor_embedder() -> Embedder:
    """The model in this process, with as many torch threads as the served encoder: the floor
    encodes as the server does (on a busy machine torch's default of every core also stalls,
    its threads waiting on each other: 1 s a question against the server's 27 ms, seen)."""
    settings = Settings()
    threads = settings.embedder(serving=True).torch_threads
    return Embedder(settings.embedding_model, torch_threads=threads).load()


def _prepare(options: Options, embedder: Embedder, timings: dict[str, Any]) -> _Data:
    episodes = generate_corpus(options.episodes)
    subjects = corpus_subjects(episodes, seed=options.seed)
    plan = [subjects_for(subjects, scale, seed=options.seed)[0] for scale in options.scales]
    keys = measured_keys(subjects, plan[0], seed=options.seed)
    with _stage(timings, "vectors"):
        corpus = make_corpus(
            episodes,
            queried={key.name for key in keys},
            embedder=embedder,
            seed=options.seed,
            cache_dir=options.cache_dir,
        )
    with _stage(timings, "fact_rows"):
        files = [
            fact_rows(subjects, first, last, seed=options.seed, cache_dir=options.cache_dir)
            for first, last in zip([0, *plan[:-1]], plan, strict=True)
        ]
    return _Data(
        corpus=corpus,
        texts=[episode.text for episode in episodes],
        keys=keys,
        scales=list(zip(files, plan, strict=True)),
    )


def run(options: Options, *, say: Callable[[str], None] = _say) -> dict[str, Any]:
    """Load, serve and measure everything; the results with their targets evaluated."""
    started = time.perf_counter()
    about = machine()
    timings: dict[str, Any] = {}
    with _stage(timings, "prepare"):
        embedder = _floor_embedder()
        say(f"episodes: {options.episodes:,} (vectors made once, cached in {options.cache_dir})")
        data = _prepare(options, embedder, timings)
    found: dict[str, Any] = {"scales": [], "writes": {}, "import": {}, "hostile_bodies": {}}
    timing = options.timing
    with ExitStack() as stack:
        conninfo = stack.enter_context(bench_database(options.database_url))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sgam-bench-")))
        say("loading episodes and vectors (COPY, then the HNSW index)")
        timings["episodes_load"] = load_episodes(conninfo, data.corpus, model=embedder.model_id)
        about |= database_facts(conninfo)
        with _stage(timings, "server_start"):
            served = stack.enter_context(serve(conninfo, log=scratch / "serve.log"))
            declare_attributes(served)
        for number, (path, subjects) in enumerate(data.scales):
            scale = _loaded(conninfo, path, subjects)
            say(f"measuring at {scale['fact_versions']:,} fact versions")
            with _stage(timings, "floor"):
                scale["floor"] = measure_floor(
                    conninfo, embedder=embedder, keys=data.keys, texts=data.texts, timing=timing
                )
            with _stage(timings, "reads"):
                scale["reads"] = _reads(served, data.keys, options)
            found["scales"].append(scale)
            if number == 0:
                found |= _at_first_scale(
                    _Run(served, conninfo, data, options, scratch, timings, say)
                )
        found["server"] = rss_mib(served.pid)
        found["server"]["hnsw_index_used_by_the_floor"] = uses_index(
            conninfo, model=embedder.model_id, dimensions=embedder.dimensions
        )
    about["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    timings["total_s"] = round(time.perf_counter() - started, 1)
    settings = asdict(options) | {
        "cache_dir": str(options.cache_dir),
        "database_url": described(options.database_url),
    }
    settings |= {"model": embedder.model_id, "measured_keys": len(data.keys)}
    settings["floor_torch_threads"] = embedder.torch_threads
    settings["episode_vectors_cached"] = data.corpus.vectors_cached
    settings["episodes_embedded"] = data.corpus.embedded
    return with_targets({"machine": about, "settings": settings, **found, "timings": timings})


@dataclass(frozen=True)
class _Run:
    """What the cases measured once, at the first scale, work with."""

    served: Served
    conninfo: str
    data: _Data
    options: Options
    scratch: Path
    timings: dict[str, Any]
    say: Callable[[str], None]


def _at_first_scale(run: _Run) -> dict[str, Any]:
    """The cases measured once: the stack's floor, context right after a bulk load, writes,
    the mixed load, the import and hostile bodies."""
    served, data, options, timings = run.served, run.data, run.options, run.timings
    found: dict[str, Any] = {}
    run.say("measuring the stack's floor: a bare app serving the same fact row")
    with _stage(timings, "stack_floor"):
        found["stack_floor"] = _stack_floor(run)
    run.say("measuring context right after a bulk load and after ANALYZE")
    with _stage(timings, "fresh"):
        found["fresh"] = measure_fresh(
            served,
            run.conninfo,
            data.texts,
            questions=[key.question for key in data.keys],
            timing=options.timing,
        )
    run.say("measuring writes and the bulk import")
    with _stage(timings, "writes"):
        found["writes"] = _writes(served, data.texts, options)
    run.say("measuring the mixed load (context calls, fact GETs and writes at once)")
    with _stage(timings, "mixed"):
        found["mixed"] = _mixed(served, data, options)
    with _stage(timings, "import"):
        found["import"] = _bulk_import(run.conninfo, data.texts, options, run.scratch)
    run.say("measuring /healthz while hostile bodies arrive")
    with _stage(timings, "hostile_bodies"):
        found["hostile_bodies"] = measure_hostile_bodies(served, seconds=options.seconds)
    return found


def _loaded(conninfo: str, path: Path, subjects: int) -> dict[str, Any]:
    """COPY a scale's rows on top of the last; its load times and size."""
    load = load_facts(conninfo, [path])
    versions = load["fact_versions"]
    shape = {"versions_per_subject": round(versions / subjects, 2)}
    return {"load": load, "fact_versions": versions, "subjects": subjects} | shape


def _by_clients(found: list[tuple[int, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    cases: dict[str, dict[str, Any]] = {}
    for clients, results in found:
        for name, stats in results.items():
            cases.setdefault(name, {})[str(clients)] = stats
    return cases


def _reads(served: Served, keys: Sequence[MeasuredKey], options: Options) -> dict[str, Any]:
    return _by_clients(
        [
            (clients, measure_reads(served, keys, clients=clients, timing=options.timing))
            for clients in options.clients
        ]
    )


def _writes(served: Served, texts: list[str], options: Options) -> dict[str, Any]:
    found = measure_writes(served, texts, clients=options.clients, timing=options.timing)
    return {name: {str(c): stats for c, stats in by.items()} for name, by in found.items()}


def _stack_floor(run: _Run) -> dict[str, Any]:
    # Each case runs half a read case's time: its cases take turns in each round.
    options = run.options
    timing = Timing(options.seconds / 2, warmup=3, min_calls=options.min_calls)
    try:
        return measure_stack_floor(
            run.served,
            run.conninfo,
            run.data.keys[0],
            rounds=options.stack_rounds,
            timing=timing,
            log=run.scratch / "bare.log",
        )
    except (CaseFailed, ServerFailed, httpx.HTTPError) as error:
        return {"error": f"{type(error).__name__}: {error}"}


def _mixed(served: Served, data: _Data, options: Options) -> dict[str, Any]:
    timing = options.mixed_timing
    return measure_mixed(served, data.keys, episodes=len(data.texts), timing=timing)


def _bulk_import(
    conninfo: str, texts: list[str], options: Options, scratch: Path
) -> dict[str, Any]:
    if not options.bulk_import:
        return {"skipped": "not asked for (--no-import)"}
    return measure_import(
        conninfo,
        texts,
        facts=options.import_facts,
        episodes=options.import_episodes,
        folder=scratch / "import",
    )
