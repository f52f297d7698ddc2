"""The bulk import case of ``sgam bench``: ``sgam import FILE.jsonl``, timed as a user runs it.

Each line of a file is an episode as ``POST /v1/episodes`` takes it, with its ``tenant`` and
its candidates under ``updates``. Facts are imported without embedding where the command can
leave it for later (``--no-embed``), episode texts with it. The rates are the command's own
where it reports them (facts written/s, episodes embedded/s); otherwise, and beside them, the
wall clock less that of a one-line import with the same flags (start-up, model load). Where
this build has no ``sgam import`` the case is skipped with that reason; where the command
fails, its output is the result.

Beside the facts' rate stands its floor, measured in the same database just before and just
after the facts' import (``copy_floor``): COPY of as many rows of the import's shape straight
into ``fact_versions`` with everything in force. ``facts_per_s``, ``floor_rows_per_s`` and
their ratio ``facts_over_floor`` are the result's fields.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.bench.served.data import COPY_COLUMNS, PERSON_WORDS, TENANT, slug
from evals.bench.served.writes import candidate
from store.bench import raw_connection

IMPORT_TIMEOUT_S = 1_800
_CANDIDATES = 100
_OCCURRED = "2026-02-01T00:00:00Z"
_VALID_FROM = datetime(2025, 6, 1, tzinfo=UTC)
_ATTRIBUTES = tuple(slug(words) for words in PERSON_WORDS)
_SAID_RATES = {
    "facts_per_s": re.compile(r"\(([\d,.]+) facts written/s\)"),
    "episodes_per_s": re.compile(r"\(([\d,.]+) episodes/s\)"),
}
"""The rates ``sgam import`` reports, where it does."""


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "server.cli", *args]


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own CLI, arguments we built
        command, env=env, capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S, check=False
    )


def _episode(name: str, text: str, updates: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "tenant": TENANT,
        "id": name,
        "occurred_at": _OCCURRED,
        "text": text,
        "updates": updates,
    }


def _facts_lines(episodes: int) -> list[dict[str, Any]]:
    lines = []
    for number in range(episodes):
        updates = [
            candidate(
                f"import-{number}-{i // len(_ATTRIBUTES)}",
                _ATTRIBUTES[i % len(_ATTRIBUTES)],
                value=f"imported {number}-{i}",
                valid_from=_VALID_FROM,
            )
            for i in range(_CANDIDATES)
        ]
        lines.append(_episode(f"import-facts-{number}", f"Import batch {number}.", updates))
    return lines


def _write(path: Path, lines: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _imported_facts(conninfo: str) -> int:
    with raw_connection(conninfo) as conn:
        row = conn.execute(
            "SELECT count(DISTINCT fact_id) FROM fact_versions"
            " WHERE tenant_id = %(tenant_id)s AND subject LIKE 'import-%%'",
            {"tenant_id": TENANT},
        ).fetchone()
    return int(row[0]) if row else 0


_FLOOR_EPISODES = """
INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, kind, text, content_hash)
SELECT %(tenant_id)s, 'import-floor-' || n, %(occurred)s, now(), 'message', 'Floor ' || n,
    md5(n::text)
FROM generate_series(0, %(last)s) AS n
"""
"""The episodes the floor's rows cite (their foreign key holds), written before it is timed."""


def _floor_rows(facts: int) -> bytes:
    """COPY text of ``facts`` rows shaped as the import writes them: a fresh key each, current,
    ``_CANDIDATES`` rows citing each episode."""
    recorded = datetime.now(UTC).isoformat(sep=" ")
    start = _VALID_FROM.isoformat(sep=" ")
    lines = []
    for n in range(facts):
        number, i = divmod(n, _CANDIDATES)
        subject = f"import-floor-{number}-{i // len(_ATTRIBUTES)}"
        cells = [TENANT, str(uuid.uuid4()), str(uuid.uuid4()), subject]
        cells += [_ATTRIBUTES[i % len(_ATTRIBUTES)], f'"floor {number}-{i}"', start, r"\N"]
        cells += [recorded, r"\N", r"\N", r"\N", r"\N", f"import-floor-{number}", "message"]
        lines.append("\t".join([*cells, "", "f", "1"]) + "\n")
    return "".join(lines).encode()


def copy_floor(conninfo: str, facts: int) -> float:
    """The import's floor in rows/s: ``facts`` rows of the import's shape COPYed straight into
    ``fact_versions`` with everything in force (the exclusion constraint, the key, every index,
    the foreign keys and checks), as the tables' owner, in the run's own database.

    Row-level security cannot apply: PostgreSQL refuses ``COPY FROM`` into a table under a
    policy for a role it applies to. The episodes the rows cite are written first, untimed;
    then the COPY is timed and everything rolled back, and the table vacuumed so that the
    import after it meets no dead index entries: the table is left as it was.
    """
    rows = _floor_rows(facts)
    params = {"tenant_id": TENANT, "occurred": _OCCURRED, "last": (facts - 1) // _CANDIDATES}
    statement = f"COPY fact_versions ({COPY_COLUMNS}) FROM STDIN".encode()
    with raw_connection(conninfo) as conn:
        conn.execute(_FLOOR_EPISODES, params)
        start = time.perf_counter()
        with conn.cursor().copy(statement) as copy:
            copy.write(rows)
        elapsed = time.perf_counter() - start
        conn.rollback()
    with raw_connection(conninfo, autocommit=True) as conn:
        conn.execute("VACUUM fact_versions, episodes")
    return _rate(facts, elapsed)


def measure_import(
    conninfo: str,
    texts: Sequence[str],
    *,
    facts: int,
    episodes: int,
    folder: Path,
) -> dict[str, Any]:
    """Import ``facts`` facts and ``episodes`` episodes with text, each timed past start-up."""
    env = {**os.environ, "DATABASE_URL": conninfo, "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    usage = _run(_cli("import", "--help"), env)
    if usage.returncode != 0:
        return {
            "skipped": "this build has no `sgam import` command"
            f" (`sgam import --help` exited {usage.returncode})"
        }
    tenant = ["--tenant", TENANT] if "--tenant" in usage.stdout else []
    no_embed = ["--no-embed"] if "--no-embed" in usage.stdout else []
    folder.mkdir(parents=True, exist_ok=True)
    texts_file = [
        _episode(f"import-episode-{n}", texts[n % len(texts)], []) for n in range(episodes)
    ]
    runs = {
        "startup": ([_episode("import-start-1", "Hello.", [])], no_embed),
        "facts": (_facts_lines(max(1, facts // _CANDIDATES)), no_embed),
        "startup_embedding": ([_episode("import-start-2", "Hello again.", [])], []),
        "episodes": (texts_file, []),
    }
    result: dict[str, Any] = {"command": ["sgam", "import", "FILE", *tenant]}
    result["facts_flags"] = no_embed
    floors: list[float] = []
    for name, (lines, flags) in runs.items():
        path = _write(folder / f"{name}.jsonl", lines)
        if name == "facts":  # the floor just before the import, and again just after
            floors.append(copy_floor(conninfo, len(lines) * _CANDIDATES))
        start = time.perf_counter()
        run = _run(_cli("import", str(path), *tenant, *flags), env)
        elapsed = time.perf_counter() - start
        if name == "facts" and run.returncode == 0:
            floors.append(copy_floor(conninfo, len(lines) * _CANDIDATES))
        if run.returncode != 0:
            return result | {"failed": f"{name}: exit {run.returncode}: {run.stderr[-1_500:]}"}
        result[f"{name}_s"] = round(elapsed, 2)
        result[f"{name}_said"] = run.stdout.strip().splitlines()[-2:]
    written = _imported_facts(conninfo)
    result |= {"facts": written, "episodes": episodes}
    wall = {
        "facts_per_s": _rate(written, result["facts_s"] - result["startup_s"]),
        "episodes_per_s": _rate(episodes, result["episodes_s"] - result["startup_embedding_s"]),
    }
    result["wall_clock_less_startup"] = wall
    said = {"facts_per_s": result["facts_said"], "episodes_per_s": result["episodes_said"]}
    for field, pattern in _SAID_RATES.items():
        # The command's own rate leaves out start-up and model load, whose noise swamps
        # a short import; the wall clock less a one-line import's is the fallback.
        rates = [float(m[1].replace(",", "")) for m in map(pattern.search, said[field]) if m]
        result[field] = rates[-1] if rates else wall[field]
        result[f"{field}_from"] = "the command's report" if rates else "the wall clock"
    return result | _against_floor(result["facts_per_s"], floors)


def _against_floor(facts_per_s: float, floors: list[float]) -> dict[str, Any]:
    """The import's facts/s beside the COPY floor of the same run (``copy_floor``, taken just
    before and just after the import; their mean)."""
    floor = round(statistics.fmean(floors), 1)
    return {
        "floor_rows_per_s": floor,
        "floor_runs_rows_per_s": floors,
        "floor": "COPY of as many rows of the import's shape into fact_versions with every"
        " constraint, index, foreign key and check in force, as the tables' owner; rolled back",
        "facts_over_floor": round(facts_per_s / floor, 3),
    }


def _rate(items: int, seconds: float) -> float:
    return round(items / max(seconds, 1e-3), 1)
