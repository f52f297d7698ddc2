"""The stale-fact leakage evaluation: every system loaded from the same replay lines, asked the
same questions, scored by ``evals.leakage.scoring`` and reported by ``evals.leakage.report``.

    sgam eval leakage --size quick --out /tmp/leakage       # a generated history
    sgam eval replay my-traces/ --out my-traces/report      # your own traces with gold

A generated run holds three families of questions: ``customers`` and ``records`` in one history
(``evals.histories.generate``), ``careers`` (paragraphs of real-looking text, questions about
periods that name their subject in many ways, each asked with and without the subject:
``evals.histories.career_history``) in a trace of its own. Loads run one after another, each on a
database of its own per trace on the same PostgreSQL, all with the same embedding model
(``evals.arms.systems`` says how each system is built). A question is asked where it stands among
the lines: a generated history asks every question after its last write, a hand-written trace may
ask between writes. Only the call that builds a context is timed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any

from evals.arms.baselines import BaselineOptions
from evals.arms.loads import (
    ALL_SYSTEMS,
    Asker,
    Memory,
    loads_of,
    opened,
    planned_steps,
    torch_threads,
)
from evals.arms.noise import Noise, noisy_lines
from evals.arms.systems import (
    DROPPED,
    SYSTEM_NAMES,
    WRITE_OPS,
    Line,
    Question,
    is_question,
)
from evals.arms.vectors import SharedVectors
from evals.leakage.generated import FAMILIES, generated_traces
from evals.leakage.gold_traces import Trace
from evals.leakage.patterns import failure_patterns
from evals.leakage.report import write_report
from evals.leakage.run_meta import describe_server, run_meta
from evals.leakage.scoring import QuestionResult, score_question
from evals.leakage.summary import summarize
from evals.peers import require_peers
from retrieval.search.embeddings import Embedder
from server.settings import Settings

Progress = Callable[[str, int, int], None]
"""Called with (what runs now, steps just done, steps in all); a step is one write line sent
to one load or one question asked of one system."""


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
    families: tuple[str, ...] = FAMILIES
    """The families of questions a generated run asks (a replay of traces asks what they do)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.systems) - set(ALL_SYSTEMS))
        if unknown or not self.systems:
            raise ValueError(f"systems must be some of {', '.join(ALL_SYSTEMS)}; got {unknown}")
        strange = sorted(set(self.families) - set(FAMILIES))
        if strange or not self.families:
            raise ValueError(f"families must be some of {', '.join(FAMILIES)}; got {strange}")


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
    dropped) per load and trace. A peer arm whose extra is not installed is ``PeersMissing``.
    """
    require_peers(options.systems)
    with torch_threads(options.torch_threads):
        return _evaluate(
            traces, server=server, embedder=embedder, options=options, progress=progress
        )


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
    tenants = Counter(t for trace in traces for t in {line["tenant"] for line in trace.lines})
    for load in loads_of(options.systems):
        outcome: Counter[str] = Counter()
        for trace in traces:
            lines = trace.lines
            if load.name == "sgam_noisy":
                lines, noise = noisy_lines(lines, options.noise)
                outcome.update({f"noise {name}": count for name, count in noise.items()})
            # Results name a trace's tenant after the trace where another trace has it too.
            collides = any(tenants[line["tenant"]] > 1 for line in trace.lines)
            label = f"{trace.name}:" if collides else ""
            with opened(
                load,
                server=server,
                embedder=shared,
                lines=lines,
                baseline=options.baseline,
                extractor=options.extractor,
            ) as (memory, askers):
                _replay(lines, memory, askers, by_system, label=label, step=step, shared=shared)
                outcome.update(memory.outcomes)
        outcomes[load.label] = outcome
    order = [name for name in ALL_SYSTEMS if name in by_system]
    return Evaluation([result for name in order for result in by_system[name]], outcomes)


def _replay(
    lines: Sequence[Line],
    memory: Memory,
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
                        with_subject=question.subject is not None,
                        plan=context.plan,
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
    meta = run_meta(
        options,
        model=embedder.model_id,
        database=database,
        about=about,
        outcomes=evaluation.outcomes,
    )
    meta["runtime_seconds"] = round(perf_counter() - started, 1)
    meta["load_average_at_start"] = load_average
    summary = summarize(evaluation.results)
    patterns = failure_patterns(evaluation.results)
    if patterns:
        summary["patterns"] = patterns
    return Run(evaluation.results, summary, meta)


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
    """The evaluation of the chosen families on generated histories (``evals.histories.generate``,
    ``evals.histories.career_history``) of that seed and size."""
    started, load_average = perf_counter(), round(os.getloadavg()[0], 2)
    traces, summary, described = generated_traces(seed=seed, size=size, families=options.families)
    evaluation = evaluate(
        traces, server=server, embedder=embedder, options=options, progress=progress
    )
    about = {"seed": seed, "size": described, "history": summary}
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
