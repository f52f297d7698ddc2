"""``sgam bench --only names``: its seeded people, and one tiny real run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from evals.bench.names.data import measured_keys, people
from evals.bench.names.report import FLOOR
from evals.bench.names.run import CASES, NAMED
from store.contract.common import fold_name

ROOT = Path(__file__).resolve().parents[2]


def test_measured_people_alone_own_their_surname_and_their_near_spelling_is_nobodys() -> None:
    everyone = people(2_000, seed=3)

    keys = measured_keys(everyone, 16)

    assert everyone[:500] == people(500, seed=3)
    assert len({person.subject for person in everyone}) == len(everyone)
    surnames = Counter(fold_name(person.surname) for person in everyone)
    assert max(surnames.values()) > 1  # some surnames are shared, as in a real tenant
    assert len(keys) == 16
    for key in keys:
        assert surnames[fold_name(key.surname)] == 1
        first, near = key.near_spelling.split()
        assert key.full_name == f"{first} {key.surname}"
        assert len(near) == len(key.surname) - 1
        assert fold_name(near) not in surnames


def test_sgam_bench_only_names_runs_end_to_end_and_reports_every_case(tmp_path: Path) -> None:
    out = tmp_path / "names.json"
    command = [sys.executable, "-m", "server.cli", "bench", "--only", "names"]
    command += ["--subjects", "300", "--seconds", "0", "--min-calls", "2", "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    run = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )

    assert run.returncode == 0, run.stderr[-3_000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["settings"]["subjects"] == 300
    assert set(results["settings"]["code"]) == {"commit", "changed"}
    assert results["load"]["fact_versions_rows"] == 300
    assert results["load"]["candidates"] == {"written": 300}
    assert set(results["reads"]) == set(CASES)
    for case, by_clients in results["reads"].items():
        assert set(by_clients) == {"1"}, case
        stats = by_clients["1"]
        assert stats["calls"] >= 2, (case, stats)
        assert 0 < stats["p50_ms"] <= stats["p95_ms"] <= stats["p99_ms"], (case, stats)
        ratio = results["ratios_to_fact_current"][case]["1"]
        assert ratio == round(stats["p50_ms"] / results["reads"][FLOOR]["1"]["p50_ms"], 3)
    for case in NAMED:
        given = results["reads"]["context_subject_k0"]["1"]["p50_ms"]
        added = results["over_context_subject_k0_ms"][case]["1"]
        assert added == round(results["reads"][case]["1"]["p50_ms"] - given, 3)
    keys = results["settings"]["measured_keys"]
    resolution = results["resolution"]
    for case in ("names_full", "names_surname"):  # a name theirs alone is never missed
        assert resolution[case] == {"right": keys, "wrong": 0, "none": 0, "misses": []}, case
    near = resolution["names_near"]
    assert near["right"] + near["wrong"] + near["none"] == keys
    assert near["right"] >= 0.9 * keys, near  # a near spelling may fit two names equally
    checks = results["checks"]
    assert (checks["key_lookup"]["index"], checks["key_lookup"]["used"]) == (
        "subject_names_key",
        True,
    )
    assert (checks["trigram"]["index"], checks["trigram"]["used"]) == (
        "subject_names_similar",
        True,
    )
    assert checks["bulk_rows_match_put"]["match"] is True
    assert "| names_near | 1 |" in run.stdout
    assert "x fact_current |" in run.stdout
