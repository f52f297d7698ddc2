"""``sgam serve --workers 4``: every worker writes, a revocation reaches all of them at once,
``/metrics`` adds up their values, and SIGTERM stops them and the embedded database.

One real server (the ``sgam`` console script) on a fresh data directory for the module. Which
worker answered a request is read back from prometheus_client's per-process files in the
server's multiprocess directory, as ``/metrics`` reads them.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from tests.cli.test_process_ownership import _alive, _env, _free_port, _postmaster_pid, _wait_gone

WORKERS = 4
POOL_MAX = 3
WRITES = 60
CONCURRENCY = 12
STARTUP_SECONDS = 90
ADMIN_TOKEN = "admin-token-for-the-workers-test"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@dataclass(frozen=True)
class Served:
    """The server process, its URL, the printed default key's headers, its metrics folder."""

    process: subprocess.Popen[str]
    url: str
    headers: dict[str, str]
    data_dir: Path
    metrics_dir: Path


def _children(pid: int) -> set[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return {int(child) for child in children}


def _metrics_dir_of(worker: int) -> Path | None:
    """The PROMETHEUS_MULTIPROC_DIR a worker was started with (``sgam serve`` chose it)."""
    for entry in Path(f"/proc/{worker}/environ").read_bytes().split(b"\0"):
        name, _, value = entry.decode().partition("=")
        if name == "PROMETHEUS_MULTIPROC_DIR":
            return Path(value)
    return None


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """/metrics as {(sample name, sorted labels): value}."""
    response = httpx.get(f"{url}/metrics", timeout=10)
    response.raise_for_status()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def _pool_max(url: str) -> float:
    return _scrape(url).get(("sgam_pool_max", ()), 0.0)


def _per_worker(served: Served, name: str, **labels: str) -> dict[int, float]:
    """A counter's value in each worker's own file: which workers counted something."""
    found = {}
    for path in served.metrics_dir.glob("counter_*.db"):
        merged: list[Metric] = MultiProcessCollector.merge(  # type: ignore[no-untyped-call]
            [str(path)], accumulate=False
        )
        value = sum(
            sample.value
            for metric in merged
            for sample in metric.samples
            if sample.name == name and labels.items() <= sample.labels.items()
        )
        found[int(path.stem.rsplit("_", 1)[1])] = value
    return found


def _log(folder: Path) -> str:
    return (folder / "serve.log").read_text()


def _wait(
    what: str, check: Callable[[], bool], process: subprocess.Popen[str], folder: Path
) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, f"sgam serve exited: {_log(folder)}"
        try:
            if check():
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"sgam serve: {what} not in time")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``sgam serve --workers 4`` on a new data directory, every worker's pool open."""
    folder = tmp_path_factory.mktemp("workers")
    data_dir, log = folder / "postgres", (folder / "serve.log").open("w")
    port = _free_port()
    env = _env(data_dir, port) | {
        "SGAM_ADMIN_TOKEN": ADMIN_TOKEN,
        "SGAM_POOL_MAX_SIZE": str(POOL_MAX),
        "SGAM_TORCH_THREADS": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    sgam = Path(sys.executable).with_name("sgam")
    command = [str(sgam), "serve", "--workers", str(WORKERS), "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        printed = ""
        while "SGAM on" not in printed:
            line = process.stdout.readline()
            assert line, f"sgam serve exited: {_log(folder)}"
            printed += line
        [key] = re.findall(r"^\s+(sgam_\S+)$", printed, flags=re.MULTILINE)
        url = f"http://127.0.0.1:{port}"
        # Ready means every worker's lifespan has run: each adds its pool to the live sum.
        _wait("all workers", lambda: _pool_max(url) == WORKERS * POOL_MAX, process, folder)
        [metrics_dir] = {_metrics_dir_of(child) for child in _children(process.pid)} - {None}
        assert metrics_dir is not None
        yield Served(process, url, {"Authorization": f"Bearer {key}"}, data_dir, metrics_dir)
    finally:
        postmaster = _postmaster_pid(data_dir)
        if process.poll() is None:  # a test failed before the server was stopped
            for worker in _children(process.pid):
                os.kill(worker, signal.SIGKILL)
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()
        if postmaster is not None and _alive(postmaster):
            os.kill(postmaster, signal.SIGQUIT)  # leave nothing behind when a test fails


def _concurrently(calls: list[Callable[[], httpx.Response]]) -> list[httpx.Response]:
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        return list(pool.map(lambda call: call(), calls))


def _request(method: str, url: str, **kwargs: Any) -> Callable[[], httpx.Response]:
    """A request on a connection of its own, so that any worker may accept it."""
    return lambda: httpx.request(method, url, timeout=30, **kwargs)


def test_writes_spread_over_the_workers_are_all_stored_and_counted_once(served: Served) -> None:
    declared = httpx.put(
        f"{served.url}/v1/attributes/city",
        json={"description": "city", "value_type": "string"},
        headers=served.headers,
    )
    assert declared.status_code in (200, 201), declared.text
    writes = [
        _request(
            "POST",
            f"{served.url}/v1/episodes",
            headers=served.headers,
            json={
                "id": f"e{n}",
                "occurred_at": "2026-06-01T00:00:00Z",
                "text": f"Person {n} lives in Oslo.",
                "updates": [
                    {"evidence": "Oslo", "subject": f"p{n}", "attribute": "city"}
                    | {"change": "new", "value": "Oslo"}
                ],
            },
        )
        for n in range(WRITES)
    ]
    responses = _concurrently(writes)
    assert [(r.status_code, r.json()["results"][0]["status"]) for r in responses] == [
        (200, "written")
    ] * WRITES
    reads = _concurrently(
        [
            _request("GET", f"{served.url}/v1/facts/p{n}/city", headers=served.headers)
            for n in range(WRITES)
        ]
    )
    assert [(r.status_code, r.json()["value"]) for r in reads] == [(200, "Oslo")] * WRITES

    by_worker = _per_worker(served, "sgam_candidates_total", status="written")
    assert set(by_worker) <= _children(served.process.pid)
    assert len([pid for pid, count in by_worker.items() if count]) > 1, by_worker
    assert sum(by_worker.values()) == WRITES
    for _ in range(WORKERS):  # whichever worker answers, it reports the sum over all of them
        scraped = _scrape(served.url)
        assert scraped[("sgam_candidates_total", (("status", "written"),))] == WRITES
        assert scraped[("sgam_pool_max", ())] == WORKERS * POOL_MAX
        assert 0 < scraped[("sgam_pool_size", ())] <= WORKERS * POOL_MAX
        # Each episode's text was embedded once, by the encoder of the worker that took it.
        assert scraped[("sgam_encoder_texts_total", ())] == WRITES
        assert scraped[("sgam_encoder_waiting", ())] == 0


def test_a_key_revoked_through_one_worker_is_refused_by_every_worker_next(served: Served) -> None:
    issued = httpx.post(f"{served.url}/v1/admin/tenants/default/keys", headers=ADMIN)
    assert issued.status_code == 201, issued.text
    key = {"Authorization": f"Bearer {issued.json()['api_key']}"}
    calls = [_request("GET", f"{served.url}/v1/subjects", headers=key) for _ in range(40)]

    before = _per_worker(served, "sgam_http_requests_total", path="/v1/subjects")
    assert [r.status_code for r in _concurrently(calls)] == [200] * 40  # cached where answered
    warmed = _per_worker(served, "sgam_http_requests_total", path="/v1/subjects")
    revoked = httpx.delete(f"{served.url}/v1/admin/keys/{issued.json()['key_id']}", headers=ADMIN)
    assert revoked.status_code == 200, revoked.text
    assert [r.status_code for r in _concurrently(calls)] == [401] * 40
    after = _per_worker(served, "sgam_http_requests_total", path="/v1/subjects", status_code="401")

    cached_then_refused = [
        pid for pid in after if warmed.get(pid, 0) > before.get(pid, 0) and after[pid] > 0
    ]
    assert len(cached_then_refused) > 1, (warmed, after)


def test_every_worker_runs_uvloop_and_parses_with_httptools_by_default(served: Served) -> None:
    children = _children(served.process.pid)
    workers = {
        pid for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    }
    assert len(workers) == WORKERS  # beside them, multiprocessing's resource tracker
    for worker in workers:
        mapped = Path(f"/proc/{worker}/maps").read_text()  # its loaded extension modules
        assert "/uvloop/loop." in mapped, worker
        assert "/httptools/parser/parser." in mapped, worker


def test_every_worker_froze_its_heap_once_started(served: Served) -> None:
    # Each worker's startup heap (about 220,000 objects) is out of the collector's walks; the
    # gauge sums the workers still running.
    frozen = _scrape(served.url)[("sgam_heap_frozen_objects", ())]
    assert frozen > WORKERS * 50_000, frozen


def test_sigterm_stops_the_workers_and_the_embedded_database(served: Served) -> None:
    workers = set(_per_worker(served, "sgam_candidates_total"))
    assert len(workers) > 1
    assert workers <= _children(served.process.pid)
    postmaster = _postmaster_pid(served.data_dir)
    assert postmaster is not None

    served.process.send_signal(signal.SIGTERM)
    served.process.wait(timeout=30)

    assert _wait_gone(postmaster), "the embedded PostgreSQL outlived its server"
    assert not (served.data_dir / "postmaster.pid").exists()
    assert all(_wait_gone(worker) for worker in workers)
    assert not served.metrics_dir.exists()  # the temporary metrics folder went with them
