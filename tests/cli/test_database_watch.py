"""A database that dies is seen: ``sgam serve`` restarts its embedded PostgreSQL, and calls fail
fast meanwhile.

A real server under a real write load; its postmaster is killed with SIGKILL. While it is down
every call answers 503 ``unavailable`` with ``Retry-After`` at once (not after the pool's 30 s),
``/readyz`` says not ready and ``/healthz`` still answers; the server starts its database again,
becomes ready, and every write it acknowledged is there.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.cli.test_process_ownership import (
    EXIT_SECONDS,
    STARTUP_SECONDS,
    Serving,
    _alive,
    _postmaster_pid,
    _sgam,
    serving,
)

__all__ = ["serving"]  # the fixture, used by name

WRITERS = 4
ANSWER_BOUND_S = 5.0
"""Longest any call may take around the crash: well under the pool's 30 s timeout."""


@dataclass
class Load:
    """What the writers saw: acknowledged episode ids, and every answer's status and time."""

    acknowledged: list[str] = field(default_factory=list)
    answers: list[tuple[int, float, str | None, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)


def _key(data_dir: Path) -> str:
    created = _sgam(data_dir, "key", "create", "default")
    assert created.returncode == 0, created.stderr
    [line] = [line for line in created.stdout.splitlines() if line.startswith("api_key:")]
    return line.split()[1]


def _write(url: str, key: str, load: Load, writer: int) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:
        number = 0
        while not load.stop.is_set():
            number += 1
            episode_id = f"w{writer}-{number}"
            started = time.monotonic()
            response = client.post(
                "/v1/episodes",
                json={
                    "id": episode_id,
                    "occurred_at": "2026-05-01T00:00:00Z",
                    "text": f"note {number} from writer {writer}",
                    "subjects": ["mira"],
                },
                timeout=60,
            )
            elapsed = time.monotonic() - started
            code = response.json().get("code") if response.status_code != 200 else None
            with load.lock:
                load.answers.append(
                    (response.status_code, elapsed, code, response.headers.get("Retry-After"))
                )
                if response.status_code == 200:
                    load.acknowledged.append(episode_id)
            if response.status_code != 200:
                time.sleep(0.05)


def _get(url: str, path: str) -> tuple[int, float]:
    started = time.monotonic()
    status = httpx.get(f"{url}{path}", timeout=60).status_code
    return status, time.monotonic() - started


def _drain(serving: Serving) -> list[str]:
    """Read the server's stderr as it comes (a full pipe would stall its logging); its lines."""
    lines: list[str] = []
    stream = serving.process.stderr
    assert stream is not None
    threading.Thread(target=lambda: lines.extend(stream), daemon=True).start()
    return lines


def test_a_killed_postmaster_is_restarted_and_calls_fail_fast_meanwhile(serving: Serving) -> None:
    log = _drain(serving)
    key = _key(serving.data_dir)
    load = Load()
    writers = [
        threading.Thread(target=_write, args=(serving.url, key, load, n)) for n in range(WRITERS)
    ]
    for writer in writers:
        writer.start()
    try:
        time.sleep(1.5)
        killed = _postmaster_pid(serving.data_dir)
        assert killed is not None
        os.kill(killed, signal.SIGKILL)

        down: list[tuple[str, int, float]] = []
        deadline = time.monotonic() + STARTUP_SECONDS
        ready = False
        while time.monotonic() < deadline:
            healthz, readyz = _get(serving.url, "/healthz"), _get(serving.url, "/readyz")
            down += [("/healthz", *healthz), ("/readyz", *readyz)]
            if readyz[0] == 200:
                ready = True
                break
            time.sleep(0.1)
        assert ready, "the server did not become ready again"
        time.sleep(1.0)  # writes after the recovery
    finally:
        load.stop.set()
        for writer in writers:
            writer.join(timeout=120)

    assert serving.process.poll() is None, "the server exited instead of restarting PostgreSQL"
    restarted = _postmaster_pid(serving.data_dir)
    assert restarted is not None
    assert restarted != killed
    assert _alive(restarted)
    assert not _alive(killed)
    assert any("is gone; starting it again" in line for line in log)

    # Liveness never failed; readiness said not ready while the database was down.
    assert {status for path, status, _ in down if path == "/healthz"} == {200}
    assert 503 in {status for path, status, _ in down if path == "/readyz"}
    assert max(elapsed for _, _, elapsed in down) < ANSWER_BOUND_S

    statuses = {status for status, _, _, _ in load.answers}
    assert statuses == {200, 503}, statuses
    refused = [answer for answer in load.answers if answer[0] == 503]
    assert {(code, retry) for _, _, code, retry in refused} == {("unavailable", "1")}
    assert max(elapsed for _, elapsed, _, _ in load.answers) < ANSWER_BOUND_S
    assert load.answers[-1][0] == 200  # writing again after the recovery

    with httpx.Client(base_url=serving.url, headers={"Authorization": f"Bearer {key}"}) as client:
        missing = [
            episode_id
            for episode_id in load.acknowledged
            if client.get(f"/v1/episodes/{episode_id}", timeout=30).status_code != 200
        ]
    assert missing == [], f"{len(missing)} acknowledged writes lost"

    serving.process.send_signal(signal.SIGTERM)  # and it still stops cleanly, database too
    serving.process.wait(timeout=EXIT_SECONDS)
    deadline = time.monotonic() + EXIT_SECONDS
    while _alive(restarted) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(restarted), "the restarted PostgreSQL outlived its server"
