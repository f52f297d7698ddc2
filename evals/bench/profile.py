"""Where a served call's time goes: the server's CPU per call and a sampled profile by layer.

While a case runs with one client, ``py-spy`` samples the server process (``--gil``: only the
thread holding the interpreter, so samples are CPU the server spent in Python or in a library
it called while holding it; native work that releases it, such as torch's matrix math, counts
in the CPU time but not in the samples; ``--nonblocking``: the server is never paused). Each
sample is charged to the innermost frame that belongs to a known layer: the HTTP stack
(uvicorn, h11 or httptools, uvloop, Litestar, anyio, asyncio, the thread pool), the database
driver (psycopg and its pool), validation and JSON (pydantic, msgspec), the encoder (torch,
sentence-transformers, tokenizers) or SGAM's own code. The server's CPU time per call, read
from ``/proc``, says how much of a call's latency is the server computing rather than waiting
(on PostgreSQL, or on the client).

Without ``py-spy`` (a dev dependency) a case runs unprofiled and says so.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RATE_HZ = 250
TOP_FRAMES = 6
STOP_TIMEOUT_S = 30.0

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("encoder", ("torch/", "sentence_transformers/", "transformers/", "tokenizers/")),
    ("database driver", ("psycopg/", "psycopg_pool/", "psycopg_binary/")),
    ("validation and JSON", ("pydantic/", "pydantic_core/", "msgspec/")),
    (
        "HTTP stack",
        (
            "uvicorn/",
            "h11/",
            "httptools/",
            "uvloop/",
            "litestar/",
            "anyio/",
            "asyncio/",
            "prometheus_client/",
            "concurrent/futures/",
            "sniffio/",
            "threading.py",
            "selectors.py",
        ),
    ),
    ("SGAM", ("store/", "retrieval/", "server/")),
)
"""Layers in the order a sample is tried against them: a frame's file is under one of the
folders (or is one of the files) named."""


def _layer(path: str) -> str | None:
    # py-spy names files from their import root ("h11/_util.py", "threading.py"), or in full.
    rooted = f"/{path}"
    return next(
        (name for name, marks in LAYERS if any(f"/{mark}" in rooted for mark in marks)), None
    )


def _frame_path(frame: str) -> str:
    # py-spy's raw frames read "function (path/to/file.py:line)".
    return frame.rpartition("(")[2].rpartition(":")[0]


def summarize_samples(lines: list[str]) -> dict[str, Any]:
    """Shares of samples by layer and the heaviest innermost frames, from py-spy raw lines."""
    layers: Counter[str] = Counter()
    frames: Counter[str] = Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        path = stack.split(";")
        owner = next((layer for f in reversed(path) if (layer := _layer(_frame_path(f)))), None)
        layers[owner or "other"] += n
        leaf = path[-1]
        frames[f"{leaf.partition(' (')[0]} ({Path(_frame_path(leaf)).name})"] += n
    if total == 0:
        return {"samples": 0}
    return {
        "samples": total,
        "layers": {name: round(n / total, 3) for name, n in layers.most_common()},
        "top_frames": [[name, round(n / total, 3)] for name, n in frames.most_common(TOP_FRAMES)],
    }


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _py_spy() -> str | None:
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


@dataclass
class Profile:
    """What one profiled case found; filled in when its block ends."""

    pid: int
    found: dict[str, Any] = field(default_factory=dict)

    def per_call(self, calls: int) -> dict[str, Any]:
        """The findings with the server's CPU per call of the case's ``calls``."""
        cpu = self.found.get("server_cpu_s")
        if cpu is None or calls <= 0:
            return dict(self.found)
        return {**self.found, "server_cpu_ms_per_call": round(cpu / calls * 1000, 3)}


@contextmanager
def profiled(pid: int) -> Iterator[Profile]:
    """Sample ``pid`` while the block runs; the profile's findings are set when it ends."""
    profile = Profile(pid)
    executable = _py_spy()
    with tempfile.TemporaryDirectory(prefix="sgam-profile-") as folder:
        out = Path(folder) / "samples.txt"
        process = None
        if executable is not None:
            command = [executable, "record", "--pid", str(pid), "--format", "raw"]
            command += ["--output", str(out), "--rate", str(RATE_HZ), "--nonblocking", "--gil"]
            process = subprocess.Popen(  # noqa: S603 - the profiler, arguments we built
                command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
        start = cpu_seconds(pid)
        try:
            yield profile
        finally:
            profile.found["server_cpu_s"] = round(cpu_seconds(pid) - start, 3)
            profile.found |= _collect(process, out)


def _collect(process: subprocess.Popen[bytes] | None, out: Path) -> dict[str, Any]:
    if process is None:
        return {"profile": "py-spy is not installed (pip install -e '.[dev]')"}
    process.send_signal(signal.SIGINT)  # py-spy writes what it sampled when interrupted
    try:
        _, errors = process.communicate(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        return {"profile": "py-spy did not stop"}
    if not out.exists():
        tail = errors.decode(errors="replace").strip().splitlines()[-1:]
        return {"profile": f"py-spy wrote nothing: {' '.join(tail) or 'no message'}"}
    return summarize_samples(out.read_text(encoding="utf-8", errors="replace").splitlines())


def explain(scale: dict[str, Any], case: str, against: str | None = None) -> str:
    """What a one-client case's profile says of it: CPU per call against its latency (and
    against the case it is compared with), then the largest layers of its samples."""
    stats = scale["reads"].get(case, {}).get("1", {})
    profile = stats.get("profile", {})
    cpu = profile.get("server_cpu_ms_per_call")
    if cpu is None or "p50_ms" not in stats:
        return f"{case} was not profiled"
    said = f"{case}: the server computes {cpu:g} ms of its {stats['p50_ms']:g} ms p50"
    other = scale["reads"].get(against or "", {}).get("1", {}).get("profile", {})
    if "server_cpu_ms_per_call" in other:
        said += f" ({against}: {other['server_cpu_ms_per_call']:g} ms)"
    layers = list(profile.get("layers", {}).items())[:4]
    if layers:
        said += "; its samples: " + ", ".join(f"{name} {share:.0%}" for name, share in layers)
    return said
