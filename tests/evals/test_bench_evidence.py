"""The evidence benchmark runs end to end on a small corpus and reports every configuration."""

from __future__ import annotations

import json
from pathlib import Path

from evals.bench.evidence import modes
from evals.bench.evidence.corpus import SHARES
from evals.bench.evidence.run import SINGLE_TENANT, main


def test_the_evidence_benchmark_reports_recall_for_every_configuration(tmp_path: Path) -> None:
    out = tmp_path / "evidence.json"
    returned = main(
        [
            "--episodes",
            "1000",
            "--queries",
            "3",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )

    results = json.loads(out.read_text(encoding="utf-8"))
    assert results == json.loads(json.dumps(returned))
    assert results["episodes"] == 1000
    configs = {config["name"]: config for config in results["configs"]}
    assert set(configs) == {name for name, _share in SHARES} | {SINGLE_TENANT}
    for config in configs.values():
        assert config["method"] in {"exact", "hnsw"}
        assert 0 <= config["recall_at_10"] <= 1
        assert 0 <= config["forced_hnsw"]["recall_at_10"] <= 1
        assert 0 <= config["forced_hnsw_index"]["recall_at_10"] <= 1
    # Scopes this small are scanned exactly, so nothing is missed.
    assert all(config["recall_at_10"] == 1 for config in configs.values())
    assert configs["tenant_10pct"]["tenant_episodes"] == 100
    assert results["storage"]["halfvec_total_mib"] > 0
    assert list((tmp_path / "cache").glob("vectors-1000-*.npy"))


def test_the_modes_benchmark_reports_recall_by_mode_beside_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "evidence.json"
    out.write_text(json.dumps({"configs": ["kept"]}), encoding="utf-8")
    returned = modes.main(
        [
            *("--episodes", "60", "--per-family", "8", "--asked-per-family", "2"),
            *("--paraphrases", "4", "--out", str(out)),
        ]
    )

    results = json.loads(out.read_text(encoding="utf-8"))
    assert results == {"configs": ["kept"], "modes": json.loads(json.dumps(returned))}
    assert returned["questions"] == {"paraphrased": 4, "exact_token": 8}
    assert returned["tenant_episodes"] == 60 + 4 * 8
    for name in ("paraphrased", "exact_token"):
        measured = returned["results"][name]
        assert set(measured) == {"vector", "lexical", "hybrid", "hybrid_minus_vector"}
        for mode in modes.MODES:
            assert 0 <= measured[mode]["recall_at_10"] <= 1
            assert measured[mode]["p50_ms"] > 0
    # Every asked token is held by one episode alone: its words find it.
    exact = returned["results"]["exact_token"]["lexical"]
    assert exact["recall_at_10"] == 1
    assert set(exact["by_kind"]) == {
        "order number",
        "email address",
        "product code",
        "rare surname",
    }
