"""The mixed load ``sgam bench`` times: context calls, fact GETs and candidate writes at once.

Sixteen clients share the server for a fixed time, each making one kind of call; each kind's
p50 and p99 and the calls per second of all of them are reported, beside the same server's
fact GET alone (one client) and context alone (eight clients), measured just before, so that
the targets read as ratios within the run: an exact read must keep its latency while the
encoder is busy with the context calls' questions. How busy it was comes from the server's own
``/metrics`` (``sgam_encoder_*``), read before and after the mix.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from evals.bench.profile import cpu_seconds
from evals.bench.served.cases import READS, CaseFailed, key_calls, measure_http
from evals.bench.served.data import MeasuredKey
from evals.bench.served.runner import Timing, run_groups
from evals.bench.served.server import Served, process_tree
from evals.bench.served.writes import candidate_writes

MIX = {"context": 6, "fact": 6, "write": 4}
"""Clients of each kind in the mixed load (16 in all)."""
CONTEXT_ALONE_CLIENTS = 8


def measure_mixed(
    served: Served, keys: Sequence[MeasuredKey], *, episodes: int, timing: Timing
) -> dict[str, Any]:
    """Fact GET alone, context alone at 8 clients, then the mix; a failure is its result."""
    found: dict[str, Any] = {"mix": dict(MIX), "seconds": timing.seconds}
    found["fact_alone"] = measure_http(
        served, key_calls(READS["fact_current"], keys, 1), clients=1, timing=timing
    )
    found["context_alone"] = measure_http(
        served,
        key_calls(READS["context_free"], keys, CONTEXT_ALONE_CLIENTS),
        clients=CONTEXT_ALONE_CLIENTS,
        timing=timing,
    )
    makers = {
        "context": key_calls(READS["context_free"], keys, MIX["context"]),
        "fact": key_calls(READS["fact_current"], keys, MIX["fact"]),
        "write": candidate_writes("mixed", clients=MIX["write"], episodes=episodes),
    }
    encoder = encoder_totals(served)
    started, clients_cpu = time.perf_counter(), time.process_time()
    server_cpu, machine_cpu = tree_cpu_seconds(served.pid), machine_busy_seconds()
    try:
        with ExitStack() as stack:
            groups = {
                name: [make(stack.enter_context(served.client()), n) for n in range(MIX[name])]
                for name, make in makers.items()
            }
            mixed = run_groups(groups, timing)
    except (CaseFailed, httpx.HTTPError) as error:
        found["mixed"] = {"error": f"{type(error).__name__}: {error}"}
        return found
    found["mixed"] = mixed
    found["mixed_calls_per_s"] = round(sum(stats["calls_per_s"] for stats in mixed.values()), 1)
    # Who had the cores: the server's process tree (its encoder process included), and the
    # clients themselves (this process), and the whole machine (the rest is mostly the database).
    # Not sampled by py-spy, which would take a core's share.
    found["cpu"] = {
        "wall_s": round(time.perf_counter() - started, 1),
        "server_cpu_s": round(tree_cpu_seconds(served.pid) - server_cpu, 1),
        "clients_cpu_s": round(time.process_time() - clients_cpu, 1),
        "machine_cpu_s": round(machine_busy_seconds() - machine_cpu, 1),
        "cores": os.cpu_count(),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }
    found["encoder"] = encoder_share(encoder, encoder_totals(served), found["cpu"]["wall_s"])
    return found


ENCODER_COUNTERS = ("texts", "batches", "seconds", "refused")
"""The ``sgam_encoder_<name>_total`` counters the mix reads."""


def encoder_totals(served: Served) -> dict[str, float]:
    """The server's encoder counters now (those it serves: an older build may have none)."""
    with httpx.Client(base_url=served.base_url, timeout=30.0) as client:
        text = client.get("/metrics").raise_for_status().text
    wanted = {f"sgam_encoder_{name}_total": name for name in ENCODER_COUNTERS}
    return {
        wanted[sample.name]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name in wanted
    }


def encoder_share(
    before: dict[str, float], after: dict[str, float], wall_s: float
) -> dict[str, float | None]:
    """What the encoder did during the mix: the share of the time it was busy, its runs, the
    texts a run took together and the calls it refused (None where the server has no such
    counter)."""
    moved = {name: after[name] - before.get(name, 0.0) for name in after}
    runs = moved.get("batches")
    return {
        "busy_share": round(moved["seconds"] / wall_s, 2) if "seconds" in moved else None,
        "runs": runs,
        "texts_per_run": round(moved["texts"] / runs, 1) if runs and "texts" in moved else None,
        "refused": moved.get("refused"),
    }


def tree_cpu_seconds(pid: int) -> float:
    """CPU time used so far by the process and every process under it (a child that ended
    meanwhile is left out, so start and end must see the same tree)."""
    total = 0.0
    for each in process_tree(pid):
        try:
            total += cpu_seconds(each)
        except OSError:  # it ended since the tree was read
            continue
    return total


def machine_busy_seconds() -> float:
    """CPU time every core of the machine has spent busy since boot: all but idle and I/O wait
    (Linux ``/proc/stat``; guest time is already inside user and nice)."""
    fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(each) for each in fields[:8])
    busy = user + nice + system + irq + softirq + steal
    return busy / os.sysconf("SC_CLK_TCK")
