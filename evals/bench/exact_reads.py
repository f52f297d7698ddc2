"""Two builds of the server timed in one run on the exact-read cases of ``sgam bench``.

``python -m evals.bench.exact_reads --base DIR`` serves this tree and the source tree ``DIR``
(another build, e.g. ``git archive`` of an older commit); ``--variant NAME:VAR=VALUE,...``
serves this tree again under other settings (``--variant h11:SGAM_HTTP_PARSER=h11``). Each runs
on one scratch database loaded as
``sgam bench --quick`` loads it, and alternates them round by round: ``/healthz``, GET fact and
the named context without evidence with one client, then the mixed load (context calls, fact
GETs and writes at once) on each. It prints and writes the medians over rounds and the targets'
ratios, each within one build and one run; on a shared machine only those ratios count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from evals.bench.served.cases import READS, key_calls, measure_http
from evals.bench.served.http import Options, _floor_embedder, _loaded, _prepare
from evals.bench.served.load import load_episodes
from evals.bench.served.mixed import measure_mixed
from evals.bench.served.runner import Timing
from evals.bench.served.server import Served, declare_attributes, serve
from store.bench import scratch_database

CASES = ("healthz", "fact_current", "context_named_k0")
"""The cases timed unless ``--case`` names others (any of ``READS``)."""

RATIOS = {
    "fact_over_healthz": ("fact_current", "healthz"),
    "named_k0_over_fact": ("context_named_k0", "fact_current"),
    "context_free_over_search": ("context_free", "search"),
}
"""Ratios written when both their cases were timed."""


def _round(
    served: Served, keys: list[Any], timing: Timing, cases: tuple[str, ...] = CASES
) -> dict[str, float]:
    found = {}
    for name in cases:
        stats = measure_http(served, key_calls(READS[name], keys, 1), clients=1, timing=timing)
        found[name] = float(stats["p50_ms"])
    return found


def _ratios(rounds: list[dict[str, float]], mixed: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over rounds of each read's p50 and of each mixed run's targets."""
    found: dict[str, Any] = {}
    if rounds:
        p50 = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
        found |= {f"{name}_p50_ms": round(value, 3) for name, value in p50.items()}
        for ratio, (case, over) in RATIOS.items():
            if case in p50 and over in p50:
                found[ratio] = round(p50[case] / p50[over], 2)
    runs = [_mixed_targets(run) for run in mixed if "fact" in run.get("mixed", {})]
    for name in runs[0] if runs else ():
        found[name] = [run[name] for run in runs]
    found["mixed"] = mixed
    return found


def _mixed_targets(run: dict[str, Any]) -> dict[str, float | None]:
    mix, fact_alone, context_alone = run["mixed"], run["fact_alone"], run["context_alone"]
    return {
        "mixed_fact_p99_over_alone_p50": round(mix["fact"]["p99_ms"] / fact_alone["p50_ms"], 1),
        "mixed_context_calls_over_alone": round(
            mix["context"]["calls_per_s"] / context_alone["calls_per_s"], 2
        ),
        "mixed_fact_p50_ms": mix["fact"]["p50_ms"],
        "mixed_fact_p99_ms": mix["fact"]["p99_ms"],
        "fact_alone_p50_ms": fact_alone["p50_ms"],
        "mixed_encoder_busy_share": (run.get("encoder") or {}).get("busy_share"),
    }


def _variant(text: str) -> tuple[str, dict[str, str]]:
    """``NAME:VAR=VALUE,...`` as its name and its environment."""
    name, _, assignments = text.partition(":")
    settings = dict(item.split("=", 1) for item in assignments.split(",") if "=" in item)
    if not name or not settings:
        raise argparse.ArgumentTypeError(f"expected NAME:VAR=VALUE[,VAR=VALUE], got {text!r}")
    return name, settings


def in_turn(names: list[str], number: int) -> list[str]:
    """The builds in round ``number``'s order: each goes first in turn."""
    first = number % len(names)
    return names[first:] + names[:first]


def main(argv: list[str] | None = None) -> None:
    """Serve both builds, alternate them, print and write the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--base", type=Path, action="append", default=[], help="Another build's source tree"
    )
    parser.add_argument(
        "--variant",
        type=_variant,
        action="append",
        default=[],
        help="This tree under other settings: NAME:SGAM_X=value,SGAM_Y=value",
    )
    parser.add_argument(
        "--case",
        choices=sorted(READS),
        action="append",
        default=[],
        help=f"A read to time (repeatable) [{', '.join(CASES)}]",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--mixed-seconds", type=float, default=10.0)
    parser.add_argument("--mixed-rounds", type=int, default=1)
    parser.add_argument("--episodes", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=Path("evals/results/exact_reads.json"))
    args = parser.parse_args(argv)
    if not args.base and not args.variant:
        parser.error("name another build (--base) or other settings (--variant)")
    load_at_start = os.getloadavg()
    options = Options.of(quick=True, episodes=args.episodes, bulk_import=False)
    embedder = _floor_embedder()
    data = _prepare(options, embedder, {})
    timing = Timing(args.seconds, warmup=3, min_calls=5)
    builds: dict[str, tuple[Path | None, dict[str, str]]] = {"this": (None, {})}
    builds |= {path.name: (path.resolve(), {}) for path in args.base}
    builds |= {name: (None, settings) for name, settings in args.variant}
    with ExitStack() as stack:
        conninfo = stack.enter_context(scratch_database(None))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sgam-exact-")))
        load_episodes(conninfo, data.corpus, model=embedder.model_id)
        embedder.close()
        served = {}
        for name, (code, settings) in builds.items():
            served[name] = stack.enter_context(
                serve(conninfo, log=scratch / f"{name}.log", code=code, settings=settings)
            )
        declare_attributes(served["this"])
        path, subjects = data.scales[0]
        _loaded(conninfo, path, subjects)
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in builds}
        for number in range(args.rounds):
            for name in in_turn(list(builds), number):
                rounds[name].append(
                    _round(served[name], data.keys, timing, tuple(args.case) or CASES)
                )
                print(name, rounds[name][-1], file=sys.stderr, flush=True)
        mixed_timing = Timing(args.mixed_seconds, warmup=1, min_calls=5)
        mixed: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
        for number in range(args.mixed_rounds):
            for name in in_turn(list(builds), number):
                mixed[name].append(
                    measure_mixed(
                        served[name], data.keys, episodes=len(data.texts), timing=mixed_timing
                    )
                )
                print(name, _mixed_targets(mixed[name][-1]), file=sys.stderr, flush=True)
        results: dict[str, Any] = {name: _ratios(rounds[name], mixed[name]) for name in builds}
    results["settings"] = vars(args) | {
        "base": [str(p) for p in args.base],
        "variant": dict(args.variant),
        "out": str(args.out),
    }
    # Other work on the machine skews every figure: only ratios within the run are worth reading.
    results["machine"] = {
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(load, 2) for load in load_at_start],
        "load_average_at_end": [round(load, 2) for load in os.getloadavg()],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    for name in builds:
        summary = {key: value for key, value in results[name].items() if key != "mixed"}
        print(name, json.dumps(summary))


if __name__ == "__main__":
    main()
