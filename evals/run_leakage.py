"""The stale-fact leakage evaluation: every system loaded from the same replay lines, asked the
same questions, scored by ``evals.scoring`` and reported by ``evals.report``.

    sgam eval leakage --size quick --out /tmp/leakage       # a generated history
    sgam eval replay my-traces/ --out my-traces/report      # your own traces with gold

Loads run one after another, each on a database of its own on the same PostgreSQL, all with
the same embedding model (``evals.systems`` says how each system is built). A question is
asked where it stands among the lines: a generated history asks every question after its last
write, a hand-written trace may ask between writes. Only the call that builds a context is
timed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter
from typing import Any, Literal, Protocol

import psycopg

from evals.baselines import BaselineOptions, open_episodes
from evals.gold_traces import Trace
from evals.histories import SIZES, generate_history
from evals.noise import Noise, noisy_lines
from evals.report import SYSTEMS, run_environment, write_report
from evals.scoring import KINDS, QuestionResult, score_question, summarize
from evals.systems import (
    DROPPED,
    SYSTEM_NAMES,
    TRANSPORT,
    WRITE_OPS,
    Context,
    Line,
    Question,
    SharedVectors,
    is_question,
    open_sgam,
)
from retrieval.embeddings import Embedder
from server.settings import Settings

Progress = Callable[[str, int, int], None]
"""Called with (what runs now, steps just done, steps in all); a step is one write line sent
to one load or one question asked of one system."""
LoadName = Literal["sgam", "sgam_noisy", "episodes"]


@dataclass(frozen=True)
class Options:
    """Which systems run, and how the noisy extraction and the baselines behave."""

    systems: tuple[str, ...] = SYSTEM_NAMES
    noise: Noise = field(default_factory=Noise)
    baseline: BaselineOptions = field(default_factory=BaselineOptions)
    extractor: Settings | None = None
    """Settings naming an extractor: SGAM's arm sends each episode through it (``extract:
    now``) instead of the history's gold candidates."""
    torch_threads: int | None = 1
    """Threads torch may use during the run (None: as it is). One keeps a single question's
    embedding steady while the app, the database and the model share a few cores."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.systems) - set(SYSTEM_NAMES))
        if unknown or not self.systems:
            raise ValueError(f"systems must be some of {', '.join(SYSTEM_NAMES)}; got {unknown}")


@dataclass(frozen=True)
class Load:
    """One load of the memories: which, and the systems asked of it."""

    name: LoadName
    systems: tuple[str, ...]


def loads_of(systems: Sequence[str]) -> list[Load]:
    """The loads the systems need: SGAM and noisy SGAM one each, the baselines one together."""
    loads = [Load(name, (name,)) for name in ("sgam", "sgam_noisy") if name in systems]
    baselines = tuple(name for name in ("dm", "dm_recency") if name in systems)
    return [*loads, Load("episodes", baselines)] if baselines else loads


def planned_steps(traces: Sequence[Trace], systems: Sequence[str]) -> int:
    """Steps a run of these traces takes, for a progress bar."""
    return sum(
        trace.writes + trace.questions * len(load.systems)
        for trace in traces
        for load in loads_of(systems)
    )


class _Memory(Protocol):
    outcomes: Counter[str]

    def write(self, line: Mapping[str, Any], now: str | None) -> None: ...


Asker = Callable[[Question], Context]


@contextmanager
def _opened(
    load: Load, *, server: str, embedder: Embedder, lines: Sequence[Line], options: Options
) -> Iterator[tuple[_Memory, dict[str, Asker]]]:
    if load.name == "episodes":
        with open_episodes(
            server, embedder=embedder, lines=lines, options=options.baseline
        ) as episodes:
            askers = {"dm": episodes.dm, "dm_recency": episodes.dm_recency}
            yield episodes, {name: askers[name] for name in load.systems}
    else:
        extractor = options.extractor if load.name == "sgam" else None
        with open_sgam(server, embedder=embedder, extractor=extractor) as sgam:
            yield sgam, {load.name: sgam.ask}


@dataclass
class Evaluation:
    """Every system's scored questions (by system, then question order), and each load's
    outcomes: write statuses, refusals, and what the noisy extraction did."""

    results: list[QuestionResult]
    outcomes: dict[str, Counter[str]]


def evaluate(
    traces: Sequence[Trace],
    *,
    server: str,
    embedder: Embedder,
    options: Options = Options(),
    progress: Progress | None = None,
) -> Evaluation:
    """Load every system from each trace, ask its questions, score the contexts.

    ``server`` is a PostgreSQL connection string on which a fresh database is created (and
    dropped) per load and trace.
    """
    with _torch_threads(options.torch_threads):
        return _evaluate(
            traces, server=server, embedder=embedder, options=options, progress=progress
        )


@contextmanager
def _torch_threads(count: int | None) -> Iterator[None]:
    if count is None:
        yield
        return
    import torch  # noqa: PLC0415 - loaded with the model already

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _evaluate(
    traces: Sequence[Trace],
    *,
    server: str,
    embedder: Embedder,
    options: Options,
    progress: Progress | None,
) -> Evaluation:
    texts = [line["text"] for t in traces for line in t.lines if line["op"] == "episode"]
    shared = SharedVectors(embedder, texts)
    total = planned_steps(traces, options.systems)

    def step(phase: str) -> None:
        if progress is not None:
            progress(phase, 1, total)

    by_system: dict[str, list[QuestionResult]] = {name: [] for name in options.systems}
    outcomes: dict[str, Counter[str]] = {}
    for load in loads_of(options.systems):
        outcome: Counter[str] = Counter()
        for trace in traces:
            lines = trace.lines
            if load.name == "sgam_noisy":
                lines, noise = noisy_lines(lines, options.noise)
                outcome.update({f"noise {name}": count for name, count in noise.items()})
            label = f"{trace.name}:" if len(traces) > 1 else ""
            with _opened(load, server=server, embedder=shared, lines=lines, options=options) as (
                memory,
                askers,
            ):
                _replay(lines, memory, askers, by_system, label=label, step=step, shared=shared)
                outcome.update(memory.outcomes)
        outcomes["dm/dm_recency" if load.name == "episodes" else load.name] = outcome
    order = [name for name in SYSTEM_NAMES if name in by_system]
    return Evaluation([result for name in order for result in by_system[name]], outcomes)


def _replay(
    lines: Sequence[Line],
    memory: _Memory,
    askers: Mapping[str, Asker],
    by_system: dict[str, list[QuestionResult]],
    *,
    label: str,
    step: Callable[[str], None],
    shared: Embedder,
) -> None:
    """Send the writes in order at their clock; ask each question of each system as it comes."""
    now: str | None = None
    phase = f"{'+'.join(askers)}: loading"
    for line in lines:
        now = line.get("now", now)
        if is_question(line):
            question = Question.from_line(line, now=now)
            for name, ask in askers.items():
                context = ask(question)
                by_system[name].append(
                    score_question(
                        system=name,
                        tenant=label + question.tenant,
                        question=question.question,
                        gold=question.gold,
                        context=context.text,
                        tokens=shared.count_tokens(context.text),
                        latency_ms=context.latency_ms,
                    )
                )
                step(f"{name}: asking")
        elif line["op"] in WRITE_OPS or line["op"] == DROPPED:
            memory.write(line, now)
            if line["op"] in WRITE_OPS:
                step(phase)


@dataclass(frozen=True)
class Run:
    """A finished evaluation: scored questions, their summary and the run's metadata."""

    results: list[QuestionResult]
    summary: dict[str, Any]
    meta: dict[str, Any]

    def write(self, out: Path) -> list[Path]:
        """Write report.md, leakage.png, questions.jsonl and summary.json into ``out``."""
        return write_report(out, summary=self.summary, results=self.results, meta=self.meta)


def describe_server(server: str) -> str:
    """The PostgreSQL and pgvector versions of the server, in words."""
    with psycopg.connect(server) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    return f"PostgreSQL {version[0] if version else '?'}, pgvector {vector[0] if vector else '?'}"


def _finish(
    evaluation: Evaluation,
    *,
    embedder: Embedder,
    options: Options,
    database: str,
    started: float,
    load_average: float,
    about: Mapping[str, Any],
) -> Run:
    meta: dict[str, Any] = {"date": datetime.now(UTC).date().isoformat(), **run_environment()}
    meta |= about
    meta["model"] = embedder.model_id
    if options.torch_threads is not None:
        meta["torch_threads"] = options.torch_threads
    if "sgam_noisy" in options.systems:
        noise = options.noise
        meta["noisy_extraction"] = {"missing": noise.missing, "wrong": noise.wrong}
        meta["noisy_extraction"]["seed"] = noise.seed
    meta["input"] = (
        "SGAM and sgam_noisy are written through typed candidates (subject, attribute, value,"
        " valid from); dm and dm_recency read the raw episode text"
    )
    meta["transport"] = TRANSPORT
    if options.extractor is not None and "sgam" in options.systems:
        meta["extraction"] = (
            f"sgam's episodes went through the extractor {options.extractor.extractor_model}"
            f" at {options.extractor.extractor_url} (extract: now, at each episode's clock);"
            " the history's gold candidates were not sent; a failed extraction is not retried"
        )
    if {"dm", "dm_recency"} & set(options.systems):
        meta["baselines"] = options.baseline.describe()
    meta["database"] = database
    for load, outcome in evaluation.outcomes.items():
        meta[f"{load} load"] = ", ".join(f"{name} {n}" for name, n in sorted(outcome.items()))
    meta["runtime_seconds"] = round(perf_counter() - started, 1)
    meta["load_average_at_start"] = load_average
    return Run(evaluation.results, summarize(evaluation.results), meta)


def run_leakage(
    *,
    seed: int,
    size: str,
    server: str,
    embedder: Embedder,
    options: Options = Options(),
    progress: Progress | None = None,
    database: str = "",
) -> Run:
    """The evaluation on a generated history (``evals.histories``) of that seed and size."""
    started, load_average = perf_counter(), round(os.getloadavg()[0], 2)
    history = generate_history(seed=seed, size=SIZES[size])
    trace = Trace(f"history-{size}-{seed}", history.lines())
    evaluation = evaluate(
        [trace], server=server, embedder=embedder, options=options, progress=progress
    )
    spec = SIZES[size]
    described = (
        f"{size}: customers {spec.tenants} tenants x {spec.subjects} subjects x"
        f" {spec.attributes} attributes; per tenant {spec.current} current,"
        f" {spec.point_in_time} point-in-time and {spec.known_at} known-at questions"
    )
    if spec.records is not None:
        records = spec.records
        described += (
            f"; public records {records.subjects} places per tenant ({records.shared} shared"
            f" with the next tenant) holding 1-3 roles each; per tenant {records.current}"
            f" current, {records.point_in_time} point-in-time and {records.known_at} known-at"
            " questions"
        )
    about = {"seed": seed, "size": described, "history": dict(history.summary)}
    return _finish(
        evaluation,
        embedder=embedder,
        options=options,
        database=database or describe_server(server),
        started=started,
        load_average=load_average,
        about=about,
    )


def run_traces(
    traces: Sequence[Trace],
    *,
    server: str,
    embedder: Embedder,
    options: Options = Options(),
    progress: Progress | None = None,
    database: str = "",
    skipped: Sequence[str] = (),
) -> Run:
    """The evaluation on replay files that carry question lines with ``gold``."""
    if not any(trace.questions for trace in traces):
        raise ValueError("no question line with gold in these traces")
    started, load_average = perf_counter(), round(os.getloadavg()[0], 2)
    evaluation = evaluate(
        traces, server=server, embedder=embedder, options=options, progress=progress
    )
    about: dict[str, Any] = {
        "traces": [f"{trace.name} ({trace.questions} questions)" for trace in traces],
        "size": f"{sum(trace.questions for trace in traces)} questions from {len(traces)}"
        f" trace{'s' if len(traces) > 1 else ''}",
    }
    if skipped:
        about["skipped"] = [f"{name} (no question with gold)" for name in skipped]
    return _finish(
        evaluation,
        embedder=embedder,
        options=options,
        database=database or describe_server(server),
        started=started,
        load_average=load_average,
        about=about,
    )


def headline(summary: Mapping[str, Any]) -> str:
    """A plain-text table of the summary, for a terminal: each system, then its families."""
    rows = [("system", "stale", *(f"{kind} acc" for kind in KINDS), "x-tenant", "tok", "ms")]
    for name, total in summary["systems"].items():
        families = total.get("families", {})
        for label, row in [(name, total), *((f"  {f}", families[f]) for f in families)]:
            rows.append(
                (
                    label,
                    _percent(row["stale_leakage"]),
                    *(_percent(row[f"{kind}_accuracy"]) for kind in KINDS),
                    _percent(row["cross_tenant_leakage"]),
                    f"{row['context_tokens_p50']:.0f}",
                    f"{row['latency_p50_ms']:.1f}",
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    described = [f"{name}: {SYSTEMS[name]}" for name in summary["systems"] if name in SYSTEMS]
    return "\n".join([*lines, "", *described])


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
