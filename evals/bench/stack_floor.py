"""The stack's floor under GET fact on its own: ``python -m evals.bench.stack_floor``.

A scratch database is loaded as ``sgam bench --quick`` loads it; ``sgam serve`` and the bare app
of ``evals.bench.served.stack`` (the same row by the same statement and pool, on a route with
nothing else) serve it side by side, and their ``/healthz`` and GET fact are timed with one
client, alternated round by round. It prints and writes each case's median p50 and the ratios;
``sgam bench`` measures the same at its first scale.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from evals.bench.served.http import Options, _floor_embedder, _loaded, _prepare, machine
from evals.bench.served.load import load_episodes
from evals.bench.served.runner import Timing
from evals.bench.served.server import declare_attributes, serve
from evals.bench.served.stack import measure_stack_floor
from store.bench import scratch_database


def main(argv: list[str] | None = None) -> None:
    """Serve both apps, alternate their calls, print and write the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="Each case's time a round")
    parser.add_argument("--episodes", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=Path("evals/results/stack_floor.json"))
    args = parser.parse_args(argv)
    about = machine()
    options = Options.of(quick=True, episodes=args.episodes, bulk_import=False)
    embedder = _floor_embedder()
    data = _prepare(options, embedder, {})
    with ExitStack() as stack:
        conninfo = stack.enter_context(scratch_database(None))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sgam-stack-")))
        load_episodes(conninfo, data.corpus, model=embedder.model_id)
        embedder.close()
        served = stack.enter_context(serve(conninfo, log=scratch / "serve.log"))
        declare_attributes(served)
        _loaded(conninfo, *data.scales[0])
        found = measure_stack_floor(
            served,
            conninfo,
            data.keys[0],
            rounds=args.rounds,
            timing=Timing(args.seconds, warmup=3, min_calls=5),
            log=scratch / "bare.log",
        )
    about["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    results = {"machine": about, "settings": vars(args) | {"out": str(args.out)}, **found}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    for number, row in enumerate(found["rounds"], 1):
        print(f"round {number}:", json.dumps(row), file=sys.stderr)
    print(json.dumps({name: value for name, value in found.items() if name != "rounds"}))


if __name__ == "__main__":
    main()
