"""``sgam bench --database-url URL --compare-single-node``: each case's ratios on fixed numbers,
and one tiny real run against another PostgreSQL server (the Citus run is tests/citus')."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evals.bench.citus import ratio_table, ratios
from evals.bench.served.database import NotFresh, bench_database, described
from store.bench import migrate_database, temporary_database
from tests.evals.bench_helpers import stats

ROOT = Path(__file__).resolve().parents[2]


def _run(read_p50: float, *, write_per_s: float, facts_per_s: float) -> dict[str, Any]:
    return {
        "scales": [
            {
                "floor": {"sql_fact_current": stats(0.2)},
                "reads": {"fact_current": {"1": stats(read_p50, per_s=500.0)}},
            }
        ],
        "writes": {
            "ingest_1": {"1": stats(10.0, per_s=write_per_s)},
            "candidates_hot": {"8": {"error": "CaseFailed: POST /v1/episodes answered 503"}},
        },
        "import": {"facts_per_s": facts_per_s, "facts_over_floor": 0.5},
    }


def test_each_case_both_runs_timed_gets_the_cluster_over_the_single_node() -> None:
    single = _run(2.0, write_per_s=100.0, facts_per_s=5_000.0)
    cluster = _run(3.0, write_per_s=80.0, facts_per_s=4_000.0)
    cluster["writes"]["candidates_hot"]["8"] = stats(30.0)  # failed on the single node

    found = ratios(single, cluster)

    assert found["cases"] == {
        "floor/sql_fact_current": {
            "single_node_p50_ms": 0.2,
            "citus_p50_ms": 0.2,
            "p50": 1.0,
            "p95": 1.0,
            "p99": 1.0,
        },
        "reads/fact_current/1": {
            "single_node_p50_ms": 2.0,
            "citus_p50_ms": 3.0,
            "p50": 1.5,
            "p95": 1.5,
            "p99": 1.5,
            "calls_per_s": 1.0,
        },
        "writes/ingest_1/1": {
            "single_node_p50_ms": 10.0,
            "citus_p50_ms": 10.0,
            "p50": 1.0,
            "p95": 1.0,
            "p99": 1.0,
            "calls_per_s": 0.8,
        },
    }
    assert found["import"] == {"facts_per_s": 0.8, "facts_over_floor": 1.0}
    table = ratio_table({"ratios": found}).splitlines()
    assert table[0] == "| case | single node p50 ms | Citus p50 ms | p50 | p95 | p99 | calls/s |"
    assert table[3] == "| reads/fact_current/1 | 2.0 | 3.0 | 1.5x | 1.5x | 1.5x | 1.0x |"


def test_a_url_s_password_stays_out_of_the_results() -> None:
    url = "postgresql://bench:secret@db.example:5432/sgam"
    assert "secret" not in described(url)
    assert "db.example" in described(url)
    assert described("host=db.example password='a b' dbname=sgam") == (
        "host=db.example password=... dbname=sgam"
    )
    assert described(None) == "embedded"


def test_a_database_already_migrated_is_never_benchmarked_in_place(server_conninfo: str) -> None:
    # On a server without Citus the run gets a temporary database of its own.
    with bench_database(server_conninfo) as conninfo:
        assert conninfo != server_conninfo
    # A Citus coordinator's database is used in place, so it must be fresh: the check is the
    # schema's table, whatever the server.
    with temporary_database(server_conninfo) as migrated:
        migrate_database(migrated)
        from evals.bench.served import database  # noqa: PLC0415

        with pytest.raises(NotFresh, match="already migrated"):
            database._require_fresh(migrated)


def test_sgam_bench_compares_a_server_with_the_single_node_in_one_run(
    tmp_path: Path, server_conninfo: str
) -> None:
    out = tmp_path / "citus.json"
    command = [sys.executable, "-m", "server.cli", "bench", "--scale", "200", "--episodes", "100"]
    command += ["--seconds", "0", "--min-calls", "1", "--clients", "1", "--no-import"]
    command += ["--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    command += ["--database-url", server_conninfo, "--compare-single-node"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    run = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )

    assert run.returncode == 0, run.stderr[-3_000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["single_node"]["settings"]["database_url"] == "embedded"
    assert results["citus"]["settings"]["database_url"] == described(server_conninfo)
    cases = results["ratios"]["cases"]
    assert {"reads/fact_current/1", "floor/sql_fact_current", "writes/ingest_1/1"} <= set(cases)
    assert "mixed/mixed/fact" in cases
    for name, row in cases.items():  # ratios are written to three decimals
        ratio = row["citus_p50_ms"] / row["single_node_p50_ms"]
        assert row["p50"] == pytest.approx(ratio, rel=0.01, abs=5e-4), name
    assert "| reads/fact_current/1 |" in run.stdout
