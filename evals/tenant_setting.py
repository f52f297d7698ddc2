"""The hot read path's cost of naming the tenant as a Citus cluster needs it, on one node.

A read of one statement used to send the tenant with ``set_config`` and the statement in an
autocommit pipeline; a Citus coordinator passes a tenant to the workers only as ``SET LOCAL``
inside a transaction block, so the read now sends BEGIN, ``SET LOCAL``, the statement and
COMMIT in the pipeline (``store.api.transactions.Transactions.read``). Both are timed here on
a scratch embedded server, alternated in one process, as the API's role on a table with
row-level security; the figures are medians, and the ratio is the new over the old.

    .venv/bin/python -m evals.tenant_setting [--rounds N] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.bench import (
    APP_ROLE,
    Connection,
    bootstrap_embedded_roles,
    enter_tenant,
    login_as,
    migrate_database,
    raw_connection,
    scratch_database,
)

_READ = "SELECT subject, placed_at FROM legal_holds WHERE tenant_id = %s AND subject = %s"


def _old(conn: Connection, tenant: str) -> object:
    with conn.pipeline():
        conn.execute("SELECT set_config('sgam.tenant_id', %s, true)", (tenant,))
        cur = conn.execute(_READ, (tenant, "s-1"))
    return cur.fetchall()


def _new(conn: Connection, tenant: str) -> object:
    with conn.pipeline():
        conn.execute("BEGIN")
        enter_tenant(conn, tenant)
        cur = conn.execute(_READ, (tenant, "s-1"))
        conn.execute("COMMIT")
    return cur.fetchall()


def _time(read: Callable[[Connection, str], object], conn: Any, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        assert read(conn, "t-1")
    return (time.perf_counter() - started) / n * 1e6


def measure(conninfo: str, *, rounds: int, per_round: int = 500) -> dict[str, Any]:
    """Median microseconds a read of each kind, over alternated rounds."""
    superuser = conninfo
    bootstrap_embedded_roles(superuser)
    owner = login_as(superuser, "sgam_owner")
    migrate_database(owner)
    with raw_connection(owner, autocommit=True) as conn:
        conn.execute("INSERT INTO tenants (tenant_id, created_at) VALUES ('t-1', now())")
        conn.execute("INSERT INTO legal_holds VALUES ('t-1', 's-1', now())")
    old: list[float] = []
    new: list[float] = []
    with raw_connection(login_as(superuser, APP_ROLE), autocommit=True) as conn:
        _time(_old, conn, per_round)
        _time(_new, conn, per_round)
        for _ in range(rounds):
            old.append(_time(_old, conn, per_round))
            new.append(_time(_new, conn, per_round))
    old_us, new_us = statistics.median(old), statistics.median(new)
    return {
        "set_config_autocommit_us": round(old_us, 1),
        "begin_set_local_commit_us": round(new_us, 1),
        "ratio": round(new_us / old_us, 3),
        "rounds": rounds,
        "reads_per_round": per_round,
    }


def main() -> None:
    """Measure on a scratch embedded server, print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--out", type=Path, default=Path("evals/results/tenant_setting.json"))
    args = parser.parse_args()
    with scratch_database(None) as conninfo:
        figures = measure(conninfo, rounds=args.rounds)
    print(json.dumps(figures, indent=2))
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
