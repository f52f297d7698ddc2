"""What makes COPY into ``fact_versions`` slow: the same rows copied with one part taken away.

Each case is a fresh database of one scratch server, built by the real migrations, with one
constraint, index, check or trigger dropped before the COPY (``everything`` drops nothing: the
import's floor). The rows are synthetic: keys of one tenant with two versions each, the first
retired when the second was recorded, as a changed value leaves them. A case's cost is its
time less the time without that part; only ratios within one run mean anything on a shared
machine. ``bare, then built`` copies into the table with no index or constraint and builds
them afterwards: what a load into an empty database could do.

    python -m evals.bench.copy_costs [--keys 30000] [--rounds 2]

Prints a table and writes ``evals/results/copy_costs.json``.
"""

from __future__ import annotations

import io
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from evals.bench.row_security import machine, save
from evals.bench.served.data import COPY_COLUMNS
from store.bench import Connection, Error, migrate_database, raw_connection, scratch_database
from store.bench import temporary_database as fresh_database

RESULTS = Path(__file__).resolve().parents[1] / "results" / "copy_costs.json"
TENANT = "copy"
ATTRIBUTES = 20
EPISODES = 1_000

_BTREES = (
    "fact_versions_current",
    "fact_versions_fact",
    "fact_versions_source",
    "fact_versions_subject_folded",
)


Step = Callable[[Connection], None]
"""What a case does to the migrated database before (or after) the COPY."""


def _drop(*statements: str) -> Step:
    def run(conn: Connection) -> None:
        for statement in statements:
            conn.execute(statement.encode())

    return run


def _drop_constraints(conn: Connection, target: str, which: str) -> None:
    """Drop the constraints of ``target`` that ``which`` (a condition on pg_constraint) finds."""
    names = conn.execute(f"SELECT conname FROM pg_constraint WHERE {which}".encode()).fetchall()
    for (name,) in names:
        conn.execute(f'{target} DROP CONSTRAINT "{name}"'.encode())


def _drop_indexes() -> list[str]:
    return [f"DROP INDEX {name}" for name in _BTREES]


_DROP_ALL = [
    "ALTER TABLE fact_versions DROP CONSTRAINT fact_versions_one_truth",
    "ALTER TABLE fact_versions DROP CONSTRAINT fact_versions_pkey",
    *_drop_indexes(),
]
_DEFINITIONS = """
SELECT format('ALTER TABLE fact_versions ADD CONSTRAINT %%I %%s', conname,
              pg_get_constraintdef(oid))
FROM pg_constraint WHERE conrelid = 'fact_versions'::regclass AND contype IN ('p', 'x')
UNION ALL
SELECT indexdef FROM pg_indexes WHERE tablename = 'fact_versions' AND indexname = ANY(%(names)s)
"""
"""The statements that build the key, the exclusion constraint and the indexes as migrated."""

CASES: dict[str, Step] = {
    "everything": _drop(),
    "no exclusion constraint (GiST)": _drop(
        "ALTER TABLE fact_versions DROP CONSTRAINT fact_versions_one_truth"
    ),
    "no primary key": _drop("ALTER TABLE fact_versions DROP CONSTRAINT fact_versions_pkey"),
    **{
        f"no {name}": _drop(f"DROP INDEX {name}")
        for name in _BTREES
        if name != "fact_versions_subject_folded"
    },
    "no subject_folded (index and column)": _drop(
        "ALTER TABLE fact_versions DROP COLUMN subject_folded"
    ),
    "no foreign keys": lambda conn: _drop_constraints(
        conn, "ALTER TABLE fact_versions", "conrelid = 'fact_versions'::regclass AND contype = 'f'"
    ),
    "no identifier checks (domain)": lambda conn: _drop_constraints(
        conn, "ALTER DOMAIN sgam_identifier", "contypid = 'sgam_identifier'::regtype"
    ),
    "no row-level security": _drop("ALTER TABLE fact_versions DISABLE ROW LEVEL SECURITY"),
    "bare (no index, key or constraint)": _drop(*_DROP_ALL),
}


def _rows(keys: int) -> bytes:
    """COPY text: ``keys`` keys with two versions each, the first retired by the second."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    out = io.StringIO()
    for n in range(keys):
        subject, attribute = f"s-{n // ATTRIBUTES}", f"a{n % ATTRIBUTES}"
        first, second = uuid.uuid4(), uuid.uuid4()
        then = start + timedelta(minutes=n)
        later = then + timedelta(days=1)
        episode = f"e-{n % EPISODES}"
        for version, fact, value, recorded, retired, before in (
            (uuid.uuid4(), first, "one", then, later, r"\N"),
            (uuid.uuid4(), second, "two", later, None, str(first)),
        ):
            cells = [TENANT, str(version), str(fact), subject, attribute, f'"{value}"']
            cells += [str(then if value == "one" else later), r"\N", str(recorded)]
            cells += [str(retired) if retired else r"\N", before, r"\N", r"\N", episode]
            cells += ["message", r"\N", "f", "1"]
            out.write("\t".join(cells) + "\n")
    return out.getvalue().encode()


def _seed(conn: Connection) -> None:
    params = {"t": TENANT, "a": ATTRIBUTES - 1, "e": EPISODES - 1}
    conn.execute(b"INSERT INTO tenants (tenant_id, created_at) VALUES (%(t)s, now())", params)
    conn.execute(
        b"INSERT INTO attributes (tenant_id, attribute, value_type, created_at, updated_at)"
        b" SELECT %(t)s, 'a' || n, 'string', now(), now() FROM generate_series(0, %(a)s) n",
        params,
    )
    conn.execute(
        b"INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, kind, text,"
        b" content_hash) SELECT %(t)s, 'e-' || n, now(), now(), 'message', 'e', 'h' || n"
        b" FROM generate_series(0, %(e)s) n",
        params,
    )


_COPY = f"COPY fact_versions ({COPY_COLUMNS}) FROM STDIN".encode()


@contextmanager
def _seeded(server: str) -> Iterator[Connection]:
    """A connection, as the tables' owner, to a fresh migrated database with the seed in."""
    with fresh_database(server) as conninfo:
        migrate_database(conninfo)
        with raw_connection(conninfo) as conn:
            _seed(conn)
            yield conn


def _copy_once(server: str, rows: bytes, before: Step, after: Step | None = None) -> float:
    """Seconds to COPY ``rows`` and run ``after`` in one transaction, ``before`` run first."""
    with _seeded(server) as conn:
        before(conn)
        conn.commit()
        start = time.perf_counter()
        with conn.cursor().copy(_COPY) as copy:
            copy.write(rows)
        if after is not None:
            after(conn)
        conn.commit()
        return time.perf_counter() - start


def _bare_then_built(server: str, rows: bytes) -> float:
    """COPY into the bare table, then build what was dropped, as migrated."""
    build: list[str] = []

    def before(conn: Connection) -> None:
        found = conn.execute(_DEFINITIONS.encode(), {"names": list(_BTREES)}).fetchall()
        build.extend(str(row[0]) for row in found)
        _drop(*_DROP_ALL)(conn)

    def after(conn: Connection) -> None:  # the definitions are known once ``before`` ran
        _drop(*build)(conn)

    return _copy_once(server, rows, before, after)


def _as_app(server: str, rows: bytes) -> str:
    """What COPY into the table does as the API's role, under the tenant wall."""
    with _seeded(server) as conn:
        conn.execute(b"SET ROLE sgam_app")
        conn.execute(b"SELECT set_config('sgam.tenant_id', %s, false)", [TENANT])
        try:
            with conn.cursor().copy(_COPY) as copy:
                copy.write(rows[:2000])
        except Error as error:
            return f"refused: {error.diag.message_primary}"
        return "accepted"


def measure(keys: int, rounds: int) -> dict[str, Any]:
    """Each case's best and median time over ``rounds`` COPYs of the same rows."""
    rows = _rows(keys)
    count = rows.count(b"\n")
    timed: dict[str, list[float]] = {name: [] for name in [*CASES, "bare, then built"]}
    with scratch_database(None) as server:
        for _ in range(rounds):  # interleaved: a slow moment of the machine hits every case
            for name, prepare in CASES.items():
                timed[name].append(_copy_once(server, rows, prepare))
            timed["bare, then built"].append(_bare_then_built(server, rows))
        as_app = _as_app(server, rows)
    floor = statistics.median(timed["everything"])
    cases = {
        name: {
            "median_s": round(statistics.median(times), 3),
            "rows_per_s": round(count / statistics.median(times)),
            "share_of_everything": round(1 - statistics.median(times) / floor, 3),
        }
        for name, times in timed.items()
    }
    return {"machine": machine(), "rows": count, "rounds": rounds, "cases": cases, "as_app": as_app}


def main(
    keys: Annotated[int, typer.Option(help="Keys to copy (two versions each).")] = 30_000,
    rounds: Annotated[int, typer.Option(help="COPYs of each case.")] = 2,
) -> None:
    """Measure each part's cost and write it to evals/results/copy_costs.json."""
    result = measure(keys, rounds)
    typer.echo(f"{result['rows']:,} rows; COPY as the API's role: {result['as_app']}")
    typer.echo(f"{'case':40} {'s':>7} {'rows/s':>8} {'share':>6}")
    for case, row in result["cases"].items():
        typer.echo(
            f"{case:40} {row['median_s']:7.2f} {row['rows_per_s']:8,} "
            f"{row['share_of_everything']:6.2f}"
        )
    save(RESULTS, result)


if __name__ == "__main__":
    typer.run(main)
