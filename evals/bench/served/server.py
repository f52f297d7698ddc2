"""A real ``sgam serve`` process for ``sgam bench``: started, keyed, measured, stopped.

The server runs as users run it (``python -m server.cli serve``), on the benchmark's database
and a free local port, with an admin token of its own; the benchmark reaches it only over
HTTP, except for the bulk load and the floor, which talk to its PostgreSQL directly.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from evals.bench.served.data import ATTRIBUTE_WORDS, TENANT, slug
from store.bench import APP_ROLE, login_as

READY_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0


class ServerFailed(RuntimeError):
    """The server did not come up (or died); the message carries its log's tail."""


@dataclass(frozen=True)
class Served:
    """A running server: where it listens, its process, and the benchmark tenant's key."""

    base_url: str
    pid: int
    api_key: str

    def client(self, *, timeout: float = 120.0) -> httpx.Client:
        """A keep-alive client of one connection, authenticated as the benchmark tenant."""
        return httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {self.api_key}"},
            timeout=timeout,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )


def free_port() -> int:
    """A local port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tail(log: Path) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-2_000:]


def wait_ready(
    base_url: str,
    process: subprocess.Popen[bytes],
    log: Path,
    *,
    name: str = "sgam serve",
    path: str = "/readyz",
) -> None:
    """Return once ``path`` answers 200; ``ServerFailed`` with the log's tail if the server
    (``name``) exits first or ``READY_TIMEOUT_S`` passes."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    with httpx.Client(base_url=base_url, timeout=5.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ServerFailed(f"{name} exited with {process.returncode}:\n{_tail(log)}")
            try:
                if client.get(path).status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.2)
    raise ServerFailed(f"{name} was not ready in {READY_TIMEOUT_S:.0f} s:\n{_tail(log)}")


def _issue_key(base_url: str, admin_token: str) -> str:
    with httpx.Client(base_url=base_url, timeout=30.0) as admin:
        response = admin.post(
            f"/v1/admin/tenants/{TENANT}/keys", headers={"Authorization": f"Bearer {admin_token}"}
        )
        response.raise_for_status()
        return str(response.json()["api_key"])


def declare_attributes(served: Served) -> None:
    """Declare the benchmark's attributes through the API (strings, described in words)."""
    with served.client() as client:
        for words in ATTRIBUTE_WORDS:
            client.put(
                f"/v1/attributes/{slug(words)}",
                json={"description": words, "value_type": "string"},
            ).raise_for_status()


@contextmanager
def serve(
    conninfo: str, *, log: Path, code: Path | None = None, settings: dict[str, str] | None = None
) -> Iterator[Served]:
    """``sgam serve`` on ``conninfo`` (migrated, the tenant loaded) until the block ends.

    ``code``: a source tree to serve instead of this one (another build, compared in one run);
    ``settings``: settings of its own (``SGAM_…`` variables), over this process's environment.
    """
    admin_token = secrets.token_urlsafe(24)
    port = free_port()
    env = {
        **os.environ,
        **(settings or {}),
        "DATABASE_URL": conninfo,
        # The pool logs in as sgam_app, as a served database's API does (docs: roles).
        "SGAM_APP_DATABASE_URL": login_as(conninfo, APP_ROLE),
        "SGAM_ADMIN_TOKEN": admin_token,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    env.pop("SGAM_ALLOW_CLOCK_HEADER", None)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    command = [sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--workers", "1", "--log-level", "warning"]
    base_url = f"http://127.0.0.1:{port}"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as output:
        process = subprocess.Popen(  # noqa: S603 - our own CLI, arguments we built
            command, env=env, stdout=output, stderr=subprocess.STDOUT, cwd=code
        )
        try:
            wait_ready(base_url, process, log)
            yield Served(base_url, process.pid, _issue_key(base_url, admin_token))
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server the benchmark started; kill it if it does not end in time."""
    process.terminate()
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process descended from it, parents first (Linux ``/proc``)."""
    tree, index = [pid], 0
    while index < len(tree):
        for children in Path(f"/proc/{tree[index]}/task").glob("*/children"):
            try:
                tree += [int(child) for child in children.read_text(encoding="ascii").split()]
            except OSError:  # the thread or the process ended meanwhile
                continue
        index += 1
    return tree


def _memory_kib(pid: int) -> dict[str, int]:
    found: dict[str, int] = {}
    try:
        with Path(f"/proc/{pid}/status").open(encoding="ascii") as status:
            for line in status:
                name, _, rest = line.partition(":")
                if name in ("VmRSS", "VmHWM"):
                    found[name] = int(rest.split()[0])
    except OSError:  # it ended since the tree was read
        return {}
    return found


def rss_mib(pid: int) -> dict[str, float]:
    """Resident memory of ``pid`` and all its descendants (the encoder's processes, if any),
    summed, in MiB: now (VmRSS) and at each one's peak (VmHWM; their sum bounds the tree's
    peak from above), with how many processes were counted."""
    each = [_memory_kib(member) for member in process_tree(pid)]
    each = [found for found in each if found]
    return {
        "rss_mib": round(sum(found.get("VmRSS", 0) for found in each) / 1024, 1),
        "peak_rss_mib": round(sum(found.get("VmHWM", 0) for found in each) / 1024, 1),
        "processes": len(each),
    }
