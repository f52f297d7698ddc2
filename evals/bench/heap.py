"""What a full garbage collection costs a started server, with its heap frozen and without.

``python -m evals.bench.heap`` starts the app as ``sgam serve``'s processes do (``server.asgi``:
its whole lifespan, pools, model and key cache, then the heap frozen) on a scratch database, in
a child process that imports nothing else, and times ``gc.collect()`` there: on the frozen
heap, on the same heap given back to the collector (as it was before this freeze existed), and
frozen again after serving ``--calls`` GET fact requests through the app (no network), when
the collector walks only what those requests left. A full collection holds the interpreter
lock: no request thread and not the event loop runs meanwhile. It prints and writes the
medians.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

COLLECTIONS = 5
"""Full collections timed at each step; their median is reported."""


def _full_collection_ms() -> float:
    times = []
    for _ in range(COLLECTIONS):
        began = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1e3


async def _get(app: Any, path: str, headers: list[tuple[bytes, bytes]]) -> int:
    """One GET through the ASGI app itself; its status."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"bench"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("bench", 80),
    }
    status = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def _served(conninfo: str, calls: int) -> dict[str, Any]:
    # The app as ``sgam serve``'s processes build it (``server.asgi``), from the environment:
    # its startup freezes the heap.
    from server import asgi  # noqa: PLC0415 - the child's imports are measured
    from store.bench import app_login  # noqa: PLC0415
    from store.service import open_store  # noqa: PLC0415

    for field, value in app_login(conninfo).items():
        os.environ["DATABASE_URL" if field == "database_url" else f"SGAM_{field.upper()}"] = str(
            value
        )
    app: Any = asgi.app()  # driven by raw ASGI messages, as a server drives it
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    lifespan = asyncio.create_task(
        app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put)
    )
    await inbox.put({"type": "lifespan.startup"})
    started = await outbox.get()
    if started["type"] != "lifespan.startup.complete":
        raise RuntimeError(f"the app did not start: {started}")
    found: dict[str, Any] = {"frozen_objects": gc.get_freeze_count()}
    frozen_ms = _full_collection_ms()
    gc.unfreeze()  # the heap as it would be without the freeze
    found["tracked_objects"] = len(gc.get_objects())
    started_ms = _full_collection_ms()
    gc.freeze()
    with open_store(conninfo) as store:
        store.admin.create_tenant("t")
        key = store.admin.create_api_key("t").api_key
        store.admin.declare_attribute("t", "plan", {"value_type": "string", "description": "plan"})
        store.episodes.record("t", {"id": "e1", "occurred_at": "2026-01-01T00:00:00Z", "text": "."})
        candidate = {"subject": "ada", "attribute": "plan", "change": "update", "value": "gold"}
        store.facts.apply_candidates("t", "e1", [{**candidate, "evidence": "."}])
    headers = [(b"authorization", f"Bearer {key}".encode())]
    statuses = [await _get(app, "/v1/facts/ada/plan", headers) for _ in range(calls)]
    if set(statuses) != {200}:
        raise RuntimeError(f"GET fact answered {sorted(set(statuses))}")
    after_ms = _full_collection_ms()
    found |= {
        "full_collection_ms": round(started_ms, 3),
        "frozen_full_collection_ms": round(frozen_ms, 4),
        "calls": calls,
        "tracked_objects_after_calls": len(gc.get_objects()),
        "frozen_full_collection_after_calls_ms": round(after_ms, 4),
        # How many times longer a full collection is on the heap as started than on the
        # frozen heap after the calls (a serving process's steady state).
        "ratio": round(started_ms / after_ms),
    }
    await inbox.put({"type": "lifespan.shutdown"})
    await outbox.get()
    await lifespan
    return found


def measure(calls: int) -> dict[str, Any]:
    """The collections' medians in this process, on a scratch database of its own."""
    from store.bench import migrate_database, scratch_database  # noqa: PLC0415

    with scratch_database(None) as conninfo:
        migrate_database(conninfo)
        return asyncio.run(_served(conninfo, calls))


def main(argv: list[str] | None = None) -> None:
    """Measure in a child process, then print and write the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=Path("evals/results/heap.json"))
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure)))
        return
    from evals.bench.served.http import machine  # noqa: PLC0415 - not in the child

    about = machine()
    done = subprocess.run(  # noqa: S603 - this interpreter, this module, a number
        [sys.executable, "-m", "evals.bench.heap", "--measure", str(args.calls)],
        capture_output=True,
        text=True,
        check=True,
    )
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    about["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    results["machine"] = about
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
