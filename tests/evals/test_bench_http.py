"""``sgam bench``: its verdicts on fixed numbers, its seeded data, and one tiny real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from evals.bench.evidence.corpus import generate_corpus
from evals.bench.profile import summarize_samples
from evals.bench.report import Target, evaluate, with_targets
from evals.bench.served.cases import READS
from evals.bench.served.data import corpus_subjects, fact_rows, measured_keys, slug, subjects_for
from evals.bench.tables import cases_table, mixed_table, targets_table

ROOT = Path(__file__).resolve().parents[2]


def _stats(p50: float, *, per_s: float = 0.0) -> dict[str, Any]:
    return {
        "p50_ms": p50,
        "p95_ms": p50 * 2,
        "p99_ms": p50 * 3,
        "calls": 100,
        "calls_per_s": per_s,
        "items_per_s": per_s,
    }


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
            "sql_fact_current": _stats(0.2),
            "baseline_search": _stats(19.0),
            "encoder_batch": _stats(200.0, per_s=320.0),
        },
        "reads": {name: {"1": _stats(p50 * slower)} for name, p50 in reads.items()},
    }


def _results() -> dict[str, Any]:
    return {
        "machine": {"machine": "test", "cpus": 2},
        "settings": {"episodes": 1_000},
        "scales": [_scale(10_000, 1.0), _scale(1_000_000, 1.25)],
        "writes": {
            "candidates_spread": {"1": _stats(9.0, per_s=1_000.0), "8": _stats(40, per_s=1_600)},
            "candidates_one_episode": {"8": _stats(45, per_s=1_440)},
        },
        "import": {"facts_per_s": 12_000.0, "episodes_per_s": 300.0},
        "fresh": {"after_load_over_analyzed": 1.1},
        "server": {"rss_mib": 900.0, "peak_rss_mib": 1_150.0},
        "mixed": {
            "mix": {"context": 6, "fact": 6, "write": 4},
            "fact_alone": _stats(2.0, per_s=450.0),
            "context_alone": _stats(60.0, per_s=40.0),
            "mixed": {
                "context": _stats(150.0, per_s=30.0),
                "fact": _stats(5.0, per_s=300.0),
                "write": _stats(20.0, per_s=100.0),
            },
            "mixed_calls_per_s": 430.0,
        },
    }


def _profile(cpu_ms: float, layers: dict[str, float]) -> dict[str, Any]:
    return {"samples": 100, "server_cpu_ms_per_call": cpu_ms, "layers": layers}


def test_the_targets_are_ratios_within_the_run_with_their_verdicts() -> None:
    results = _results()
    reads = results["scales"][0]["reads"]
    reads["healthz"]["1"]["profile"] = _profile(0.4, {"HTTP stack": 1.0})
    layers = {"HTTP stack": 0.6, "database driver": 0.25, "SGAM": 0.15}
    reads["fact_point_in_time"]["1"]["profile"] = _profile(0.9, layers)

    targets = evaluate(results)

    assert targets == [
        Target("GET current fact p50 / healthz p50", 1.2, 1.3, "x", "max", True),
        Target(
            "GET point-in-time fact p50 / healthz p50",
            1.5,
            1.3,
            "x",
            "max",
            False,
            "fact_point_in_time: the server computes 0.9 ms of its 1.5 ms p50 (healthz: 0.4 ms);"
            " its samples: HTTP stack 60%, database driver 25%, SGAM 15%",
        ),
        Target(
            "context (named, evidence_k 0) p50 / GET fact p50",
            1.667,
            1.5,
            "x",
            "max",
            False,
            "context_named_k0 was not profiled",
        ),
        Target(
            "context p50 / served baseline",
            1.25,
            1.1,
            "x",
            "max",
            False,
            "context_free was not profiled",
        ),
        Target("evidence search p50 / served baseline", 1.0, 1.05, "x", "max", True),
        Target("candidate writes, 8 clients, spread keys", 1600, 1500, "assertions/s", "min", True),
        Target("8 writers / 1 writer throughput", 1.6, 1.5, "x", "min", True),
        Target("8 writers citing one episode / own", 0.9, 0.9, "x", "min", True),
        Target("8 writers citing one episode / 1 writer", 1.44, 1.5, "x", "min", False),
        Target("bulk import, facts", 12_000, 20_000, "facts/s", "min", False),
        Target("bulk import, episodes / raw encoder rate", 0.938, 0.9, "x", "min", True),
        Target(
            "context right after a bulk load p50 / the same after ANALYZE",
            1.1,
            1.2,
            "x",
            "max",
            True,
        ),
        Target(
            "read p50 at the largest scale / smallest (worst read)", 1.25, 1.5, "x", "max", True
        ),
        # Under the mix a fact GET's p99 is 15 ms against 2 ms alone; context keeps 30 of 40/s.
        Target(
            "mixed load (16 clients): fact GET p99 / fact GET p50 alone", 7.5, 10, "x", "max", True
        ),
        Target(
            "mixed load (16 clients): context calls/s / context alone at 8 clients",
            0.75,
            0.8,
            "x",
            "min",
            False,
        ),
        Target(
            "GET fact p99 (worst of current, point in time, known at)", 4.5, 5, "ms", "max", True
        ),
        Target("context p95", 50, 40, "ms", "max", False, "context_free was not profiled"),
        Target("server peak RSS", 1150, 1144.4, "MiB", "max", False),
    ]


def test_a_missed_target_says_how_close_its_floor_comes() -> None:
    # A fact GET's floor is the HTTP hop and the raw SQL alone; the import's, a COPY of fact
    # versions straight into the table.
    results = _results()
    base = results["scales"][0]
    base["floor"]["sql_fact_point_in_time"] = _stats(0.2)
    base["load"] = {"copy_s": 1.0, "fact_versions": 13_000}

    verdicts = {target.what: target.note for target in evaluate(results)}

    assert verdicts["GET point-in-time fact p50 / healthz p50"].startswith(
        "the floor alone (healthz p50 + the raw SQL p50) is 1.20x; fact_point_in_time"
    )
    assert verdicts["bulk import, facts"] == (
        "COPY of the 13,000 fact versions straight into fact_versions (foreign keys skipped)"
        " ran at 13,000 rows/s in this run"
    )


def test_a_target_without_figures_says_why_it_was_not_measured() -> None:
    results = _results()
    results["scales"] = results["scales"][:1]
    results["import"] = {"skipped": "this build has no `sgam import` command"}
    del results["writes"]["candidates_spread"]["8"]

    table = targets_table(evaluate(results))

    lines = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines()}
    assert lines["candidate writes, 8 clients, spread keys"] == (
        "| candidate writes, 8 clients, spread keys | - | >= 1500 assertions/s"
        " | not measured (no figure for '8') |"
    )
    assert lines["bulk import, facts"] == (
        "| bulk import, facts | - | >= 20000 facts/s"
        " | not measured (this build has no `sgam import` command) |"
    )
    assert lines["read p50 at the largest scale / smallest (worst read)"].endswith(
        "| <= 1.5 x | not measured (one scale in this run) |"
    )
    assert lines["GET current fact p50 / healthz p50"] == (
        "| GET current fact p50 / healthz p50 | 1.2 x | <= 1.3 x | met |"
    )


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
    assert mixed_table(_results()["mixed"]).splitlines() == [
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
    floor |= {"encoder_question", "encoder_batch", "pgvector_exact", "pgvector_hnsw"}
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
    assert len(results["targets"]) == 18
    fresh = results["fresh"]
    assert fresh["after_load"]["calls"] >= 1, fresh
    assert fresh["after_analyze"]["calls"] >= 1, fresh
    assert fresh["after_load_over_analyzed"] > 0
    mixed = results["mixed"]
    assert set(mixed["mixed"]) == {"context", "fact", "write"}
    for stats in [mixed["fact_alone"], mixed["context_alone"], *mixed["mixed"].values()]:
        assert stats["calls"] >= 1, stats
    assert mixed["mixed_calls_per_s"] > 0
    assert results["server"]["peak_rss_mib"] > 0
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
