"""``sgam bench``: its tables on fixed numbers, its seeded data, and one tiny real run (the
verdicts are ``test_bench_targets``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from evals.bench.evidence.corpus import generate_corpus
from evals.bench.profile import summarize_samples
from evals.bench.report import with_targets
from evals.bench.served.cases import READS
from evals.bench.served.data import corpus_subjects, fact_rows, measured_keys, slug, subjects_for
from evals.bench.served.stack import CASES as STACK_CASES
from evals.bench.tables import cases_table, mixed_table
from tests.evals.bench_helpers import mixed_load
from tests.evals.bench_helpers import stats as summary

ROOT = Path(__file__).resolve().parents[2]


def _scale(versions: int, slower: float) -> dict[str, Any]:
    reads = {
        "healthz": 1.0,
        "fact_current": 1.2,
        "fact_point_in_time": 1.5,
        "fact_known_at": 1.4,
        "profile": 2.0,
        "search": 20.0,
        "context_free": 25.0,
        "context_named": 22.0,
        "context_named_k0": 2.0,
    }
    return {
        "fact_versions": versions,
        "floor": {
            "sql_fact_current": summary(0.2),
            "baseline_search": summary(19.0),
            "encoder_batch": summary(200.0, per_s=320.0),
        },
        "reads": {name: {"1": summary(p50 * slower)} for name, p50 in reads.items()},
    }


def test_the_cases_table_compares_each_read_with_its_floor_and_the_served_baseline() -> None:
    scale = _scale(10_000, 1.0)
    scale["reads"] = {name: scale["reads"][name] for name in ("healthz", "fact_current", "search")}
    scale["floor"] = {
        name: scale["floor"][name] for name in ("sql_fact_current", "baseline_search")
    }

    assert cases_table(scale).splitlines() == [
        "| case | clients | p50 ms | p95 ms | p99 ms | items/s | p50 against |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| floor: sql_fact_current | 1 | 0.20 | 0.40 | 0.60 | 0 |  |",
        "| floor: baseline_search | 1 | 19.00 | 38.00 | 57.00 | 0 |  |",
        "| served baseline (baseline_search + healthz p50) | 1 | 20.00 | | | | |",
        "| healthz | 1 | 1.00 | 2.00 | 3.00 | 0 |  |",
        "| fact_current | 1 | 1.20 | 2.40 | 3.60 | 0 | 6.0x sql_fact_current |",
        "| search | 1 | 20.00 | 40.00 | 60.00 | 0 | 1.00x served baseline |",
    ]


def test_the_mixed_table_puts_each_call_under_the_mix_beside_its_references() -> None:
    assert mixed_table(mixed_load()).splitlines() == [
        "| calls | clients | p50 ms | p99 ms | calls/s |",
        "| --- | --- | --- | --- | --- |",
        "| fact GET alone | 1 | 2.00 | 6.00 | 450 |",
        "| context alone | 8 | 60.00 | 180.00 | 40 |",
        "| context, mixed load | 6 | 150.00 | 450.00 | 30 |",
        "| fact, mixed load | 6 | 5.00 | 15.00 | 300 |",
        "| write, mixed load | 4 | 20.00 | 60.00 | 100 |",
        "| all calls, mixed load | 16 | | | 430 |",
    ]
    failed = mixed_table({"mixed": {"error": "CaseFailed: POST /v1/context answered 503"}})
    assert failed.splitlines()[-1] == (
        "| mixed load | 16 | failed: CaseFailed: POST /v1/context answered 503 | | |"
    )


def test_the_same_seed_generates_the_same_rows_and_a_larger_scale_extends_a_smaller(
    tmp_path: Path,
) -> None:
    subjects = corpus_subjects(generate_corpus(60), seed=1)

    def rows(folder: str, first: int, last: int, *, seed: int = 1) -> bytes:
        path = fact_rows(subjects, first, last, seed=seed, cache_dir=tmp_path / folder)
        return path.read_bytes()

    whole = rows("a", 0, 5)
    assert whole == rows("b", 0, 5)
    assert whole == rows("c", 0, 2) + rows("c", 2, 5)
    assert whole != rows("d", 0, 5, seed=2)
    count, versions = subjects_for(subjects, 300, seed=1)
    assert len(rows("e", 0, count).splitlines()) == versions >= 300
    keys = measured_keys(subjects, count, seed=1)
    assert keys == measured_keys(subjects, count, seed=1)
    assert {key.subject for key in keys} == {slug(subjects.name(i)) for i in range(count)}


def test_sgam_bench_runs_end_to_end_and_writes_every_case(tmp_path: Path) -> None:
    out = tmp_path / "results" / "bench.json"
    command = [sys.executable, "-m", "server.cli", "bench", "--scale", "200", "--episodes", "100"]
    command += ["--seconds", "0", "--min-calls", "1", "--clients", "1", "--clients", "2"]
    command += ["--no-import"]  # its start-ups would take most of this test's time
    command += ["--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    run = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )

    assert run.returncode == 0, run.stderr[-3_000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert out.with_suffix(".png").read_bytes().startswith(b"\x89PNG")
    assert results == with_targets(results)
    [scale] = results["scales"]
    assert scale["fact_versions"] >= 200
    assert set(scale["reads"]) == set(READS)
    floor = {"sql_fact_current", "sql_fact_point_in_time", "sql_fact_known_at", "sql_profile"}
    floor |= {"encoder_question", "encoder_batch", "encoder_episode"}
    floor |= {"pgvector_exact", "pgvector_hnsw"}
    assert set(scale["floor"]) == floor | {"baseline_search"}
    writes = {"ingest_1", "ingest_64", "candidates_spread", "candidates_hot"}
    writes.add("candidates_one_episode")
    assert set(results["writes"]) == writes
    for by_clients in [*scale["reads"].values(), *results["writes"].values()]:
        assert set(by_clients) == {"1", "2"}
        for stats in by_clients.values():
            assert stats["calls"] >= 1, stats
    for case in ("candidates_spread", "candidates_one_episode"):
        two = results["writes"][case]["2"]
        assert two["statuses"] == {"written": two["calls"] * 10}, case
    assert results["import"] == {"skipped": "not asked for (--no-import)"}
    hostile = results["hostile_bodies"]
    assert hostile["body_statuses"] == {"422": hostile["bodies_answered"]}
    assert hostile["bodies_answered"] >= 3
    assert hostile["healthz_under_bodies"]["calls"] >= 20
    assert hostile["p99_ratio"] > 0
    assert len(results["targets"]) == 15
    assert results["scaling"] == {}  # one scale: nothing to compare across scales
    assert scale["subjects"] * 8 <= scale["fact_versions"] <= scale["subjects"] * 12
    fresh = results["fresh"]
    assert fresh["after_load"]["calls"] >= 1, fresh
    assert fresh["after_analyze"]["calls"] >= 1, fresh
    assert fresh["after_load_over_analyzed"] > 0
    # The bare app answered the measured key as the API did, or the stage would say why not.
    stack = results["stack_floor"]
    assert set(stack["p50_ms"]) == set(STACK_CASES), stack
    assert len(stack["rounds"]) == 3
    assert all(p50 > 0 for p50 in stack["p50_ms"].values())
    assert stack["bare_fact_over_healthz"] > 0
    mixed = results["mixed"]
    assert set(mixed["mixed"]) == {"context", "fact", "write"}
    for stats in [mixed["fact_alone"], mixed["context_alone"], *mixed["mixed"].values()]:
        assert stats["calls"] >= 1, stats
    assert mixed["mixed_calls_per_s"] > 0
    # The server's own counters: the context calls' questions and the writes' episodes ran.
    encoder = mixed["encoder"]
    assert encoder["runs"] >= 1
    assert encoder["texts_per_run"] >= 1
    # Counted by the server as runs end, over the bench's wall clock: a run begun before the
    # mix may add a little.
    assert 0 < encoder["busy_share"] <= 1.5
    assert encoder["refused"] == 0
    assert results["server"]["peak_rss_mib"] > 0
    assert results["server"]["processes"] >= 1
    assert 0 < results["settings"]["episodes_embedded"] < 100
    assert results["machine"]["postgres"]


def test_a_profile_charges_each_sample_to_the_innermost_frame_of_a_known_layer() -> None:
    site = "/venv/lib/python3.11/site-packages"
    lines = [
        (
            "run (/usr/lib/python3.11/threading.py:1);read_at (/app/store/facts/reads.py:9)"
            f";execute ({site}/psycopg/cursor.py:113);copy (/usr/lib/python3.11/copy.py:5) 30"
        ),
        f"handle ({site}/litestar/routes/http.py:81);dump ({site}/pydantic/main.py:3) 20",
        f"handle ({site}/litestar/routes/http.py:81);send ({site}/h11/_connection.py:2) 40",
        "main (/work/tool.py:1) 10",
        "not a sample line",
    ]

    assert summarize_samples(lines) == {
        "samples": 100,
        "layers": {
            "HTTP stack": 0.4,
            "database driver": 0.3,
            "validation and JSON": 0.2,
            "other": 0.1,
        },
        "top_frames": [
            ["send (_connection.py)", 0.4],
            ["copy (copy.py)", 0.3],
            ["dump (main.py)", 0.2],
            ["main (tool.py)", 0.1],
        ],
    }
    assert summarize_samples([]) == {"samples": 0}
