"""Episodes written one call at a time, beside the encoder alone on the same texts, in one run.

``python -m evals.bench.episode_writes`` loads a scratch database as ``sgam bench --quick``
does, serves this tree (and ``--base DIR`` builds, or ``--variant NAME:VAR=VALUE,...`` settings),
then alternates call by call, for each build in turn (each round starting with another): one
keep-alive client posting ``POST /v1/episodes`` (one episode a call, the server embeds its text:
``sgam bench``'s ``ingest_1``), then the encoder alone in this process with the server's torch
thread count on one of the same texts (the floor's ``encoder_episode``), so both see the same
load on a shared machine. A round's ratio is the writes' rate over the encoder's rate; the
medians over rounds are printed and written to ``--out``.

``--profile DIR`` records the server's process tree with ``py-spy`` (``--subprocesses``,
idle samples included) during one more write case per build, as collapsed stacks there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from evals.bench.exact_reads import _variant, in_turn
from evals.bench.served.cases import measure_http
from evals.bench.served.floor import _encoder
from evals.bench.served.http import Options, _floor_embedder, _prepare
from evals.bench.served.load import load_episodes
from evals.bench.served.runner import Call, Timing
from evals.bench.served.server import Served, serve
from evals.bench.served.writes import _ingest
from store.bench import scratch_database


def _round(
    served: dict[str, Served], texts: list[str], encode: Call, *, tag: str, seconds: float
) -> dict[str, dict[str, float]]:
    """For ``seconds``: one write to each build in turn, each followed by the encoder alone on
    a text. A write and its encoder call see the same load on the machine, and so do the
    builds' writes (on a shared machine, rounds apart do not)."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in served}
    with ExitStack() as stack:
        writes = {
            name: _ingest(texts, tag=f"{name}-{tag}", batch=1)(
                stack.enter_context(build.client()), 0
            )
            for name, build in served.items()
        }
        for n in range(-3, 0):  # warm-up: a connection, prepared statements, the model
            for write in writes.values():
                write(n)
            encode(n)
        deadline = time.perf_counter() + seconds
        n = 0
        while n < 5 or time.perf_counter() < deadline:
            for name, write in writes.items():
                for call, into in zip((write, encode), times[name], strict=True):
                    started = time.perf_counter()
                    call(n)
                    into.append(time.perf_counter() - started)
            n += 1
    return {name: _summary(*found) for name, found in times.items()}


def _summary(writes: list[float], alone: list[float]) -> dict[str, float]:
    return {
        "write_p50_ms": round(statistics.median(writes) * 1000, 3),
        "writes_per_s": round(len(writes) / sum(writes), 1),
        "encoder_p50_ms": round(statistics.median(alone) * 1000, 3),
        "encoder_per_s": round(len(alone) / sum(alone), 1),
        "ratio": round(sum(alone) / sum(writes), 3),
        "pairs": len(writes),
    }


def _profile(served: Served, texts: list[str], *, tag: str, seconds: float, out: Path) -> None:
    """py-spy over the server's tree while one client writes for ``seconds``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [spy, "record", "--pid", str(served.pid), "--subprocesses", "--idle"]
    command += ["--rate", "200", "--format", "raw", "--output", str(out), "--nonblocking"]
    command += ["--duration", str(int(seconds) + 1)]
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL)  # noqa: S603 - our tool
    timing = Timing(seconds, warmup=1, min_calls=5)
    measure_http(served, _ingest(texts, tag=tag, batch=1), clients=1, timing=timing)
    recorder.wait()


def main(argv: list[str] | None = None) -> None:
    """Serve each build, alternate the writes with the encoder alone, print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", type=Path, action="append", default=[])
    parser.add_argument("--variant", type=_variant, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("evals/results/episode_writes.json"))
    args = parser.parse_args(argv)
    load_at_start = os.getloadavg()
    embedder = _floor_embedder()
    data = _prepare(Options.of(quick=True, episodes=args.episodes), embedder, {})
    encode = _encoder(embedder, data.texts, 1)
    builds: dict[str, tuple[Path | None, dict[str, str]]] = {"this": (None, {})}
    builds |= {path.name: (path.resolve(), {}) for path in args.base}
    builds |= {name: (None, settings) for name, settings in args.variant}
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    with ExitStack() as stack:
        conninfo = stack.enter_context(scratch_database(None))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sgam-writes-")))
        load_episodes(conninfo, data.corpus, model=embedder.model_id)
        served = {
            name: stack.enter_context(
                serve(conninfo, log=scratch / f"{name}.log", code=code, settings=settings)
            )
            for name, (code, settings) in builds.items()
        }
        for number in range(args.rounds):
            order = in_turn(list(builds), number)
            found = _round(
                {name: served[name] for name in order},
                data.texts,
                encode,
                tag=str(number),
                seconds=args.seconds,
            )
            for name in order:
                rounds[name].append(found[name])
                print(name, found[name], file=sys.stderr, flush=True)
        if args.profile is not None:
            for name in builds:
                out = args.profile / f"{name}.txt"
                _profile(served[name], data.texts, tag=f"{name}-p", seconds=args.seconds, out=out)
    results: dict[str, Any] = {
        name: {
            figure: statistics.median(r[figure] for r in found)
            for figure in (
                "write_p50_ms",
                "writes_per_s",
                "encoder_p50_ms",
                "encoder_per_s",
                "ratio",
            )
        }
        | {"rounds": found}
        for name, found in rounds.items()
    }
    results["settings"] = {
        **vars(args),
        **{name: str(getattr(args, name)) for name in ("out", "profile")},
        "base": [str(path) for path in args.base],
        "variant": dict(args.variant),
    }
    # On a shared machine other work skews every figure: only ratios within a round count.
    loads = {"start": load_at_start, "end": os.getloadavg()}
    results["machine"] = {"cpus": os.cpu_count()} | {
        f"load_average_at_{when}": [round(load, 2) for load in found]
        for when, found in loads.items()
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    for name in builds:
        print(name, json.dumps({k: v for k, v in results[name].items() if k != "rounds"}))


if __name__ == "__main__":
    main()
