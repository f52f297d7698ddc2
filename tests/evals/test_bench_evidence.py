"""The evidence benchmark runs end to end on a small corpus and reports every configuration."""

from __future__ import annotations

import json
from pathlib import Path

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
