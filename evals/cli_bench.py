"""``sgam bench``: the served API timed against its floor and the plain baseline.

Registered as a command of ``sgam`` through the ``sgam.commands`` entry point (pyproject.toml).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evals.extra import require_extra

if TYPE_CHECKING:
    from evals.bench.served.http import Options


class Part(StrEnum):
    """A part of the benchmark that runs alone."""

    names = "names"


def _unset(help_text: str, **checks: Any) -> Any:
    """An option whose default depends on --quick, so its help says it rather than typer."""
    return typer.Option(help=help_text, show_default=False, **checks)


def bench(
    *,
    quick: Annotated[
        bool, typer.Option(help="Only the 10k scale, 20,000 episodes, 3 s a case (minutes).")
    ] = False,
    scale: Annotated[
        list[int] | None,
        _unset("Fact versions to measure at (repeatable) [10k, 100k and 1M; --quick: 10k].", min=1),
    ] = None,
    episodes: Annotated[
        int | None, _unset("Episodes loaded [200,000; --quick: 20,000].", min=10)
    ] = None,
    seconds: Annotated[
        float | None, _unset("Seconds each case runs [5; --quick: 3].", min=0)
    ] = None,
    clients: Annotated[
        list[int] | None, _unset("Concurrent clients per case (repeatable) [1 and 8].", min=1)
    ] = None,
    min_calls: Annotated[int, typer.Option(min=1, help="Timed calls per case at least.")] = 5,
    bulk_import: Annotated[
        bool, typer.Option("--import/--no-import", help="Time `sgam import` where it exists.")
    ] = True,
    import_facts: Annotated[
        int | None, _unset("Facts in the bulk import file [100,000; --quick: 20,000].", min=1)
    ] = None,
    import_episodes: Annotated[
        int | None, _unset("Episodes in the bulk import file [2,000; --quick: 500].", min=1)
    ] = None,
    cache_dir: Annotated[
        Path | None,
        _unset(
            "Generated rows and vectors, kept between runs [~/.cache/sgam-bench].", file_okay=False
        ),
    ] = None,
    only: Annotated[
        Part | None,
        typer.Option(
            help="Run only this part: names (finding a subject by its name among --subjects"
            " people, against GET fact, one client unless --clients; --scale, --episodes and the"
            " import options do not apply)."
        ),
    ] = None,
    subjects: Annotated[
        int | None, _unset("People in the names tenant [100,000; --quick: 10,000].", min=20)
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            help="Run on this PostgreSQL server (a temporary database on it) or Citus"
            " coordinator (its database, which must not be migrated yet: the run migrates it and"
            " leaves its tenant there) instead of a scratch embedded server. The environment's"
            " DATABASE_URL is not read: a benchmark writes.",
            show_default=False,
        ),
    ] = None,
    compare_single_node: Annotated[
        bool,
        typer.Option(
            help="Run the same cases on a scratch embedded server first, then on --database-url,"
            " and write both with the ratios of each case [evals/results/citus.json].",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        _unset(
            "Results JSON; the chart goes beside it (.png) [evals/results/bench.json;"
            " --only names: evals/results/names.json].",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Benchmark a real `sgam serve` over HTTP against its floor and the plain baseline.

    Starts a scratch embedded PostgreSQL and `sgam serve` on it, COPY-loads seeded episodes
    and fact versions into one tenant (about 10 versions a subject: 1M versions are about
    100,000 subjects), then times every case with 1 and 8 keep-alive clients: exact reads,
    profile, evidence search, context, episode ingest, candidate writes and `sgam import`;
    beside them the same reads as prepared SQL, the encoder, pgvector exact and HNSW search
    and the `dm` baseline. Prints p50/p95/p99, every read's ratio across the scales and the
    targets, and writes OUT and its chart. Only the measured subjects' episodes are embedded
    (a few thousand); the others get seeded synthetic vectors. The first run makes the
    vectors and fact rows (about 3 minutes on 2 cores); reruns read them from the cache.
    `--only names` times finding a subject by its full name, surname and a near spelling in a
    tenant of 100,000 people instead (evals.bench.names.run). `--database-url URL
    --compare-single-node` runs the cases on a scratch single node, then on URL (a Citus
    cluster's coordinator), and writes both runs with each case's ratio (evals.bench.citus).
    """
    require_extra("bench")
    if compare_single_node and not database_url:
        raise typer.BadParameter("needs --database-url", param_hint="--compare-single-node")
    if only is Part.names:
        from evals.bench.names.run import RESULTS, bench_names  # noqa: PLC0415
        from evals.bench.names.run import Options as NameOptions  # noqa: PLC0415

        chosen = tuple(sorted(set(clients))) if clients else None
        name_options = NameOptions.of(
            quick=quick, subjects=subjects, seconds=seconds, clients=chosen, min_calls=min_calls
        )
        bench_names(name_options, out or RESULTS)
        return
    from evals.bench.report import write_results  # noqa: PLC0415
    from evals.bench.served.http import Options, run  # noqa: PLC0415 - keep --help fast
    from evals.bench.tables import report_text  # noqa: PLC0415

    options = Options.of(
        quick=quick,
        scales=tuple(scale) if scale else None,
        episodes=episodes,
        seconds=seconds,
        clients=tuple(sorted(set(clients))) if clients else None,
        min_calls=min_calls,
        bulk_import=bulk_import,
        import_facts=import_facts,
        import_episodes=import_episodes,
        cache_dir=cache_dir,
        database_url=database_url,
    )
    if compare_single_node:
        _compare(options, out)
        return
    results = run(options)
    typer.echo(report_text(results))
    paths = write_results(results, out or Path("evals/results/bench.json"))
    typer.echo(f"ran in {results['timings']['total_s']} s; wrote {', '.join(map(str, paths))}")


def _compare(options: Options, out: Path | None) -> None:
    from evals.bench import citus  # noqa: PLC0415 - keep --help fast

    assert options.database_url is not None
    results = citus.compare(options, options.database_url)
    typer.echo(citus.about(results))
    typer.echo(citus.ratio_table(results))
    typer.echo(citus.import_line(results))
    typer.echo(f"wrote {citus.write(results, out or citus.RESULTS)}")
