"""The in-process reader benchmark (``evals.bench.reader_time``) measures each build in a
process of its own, with that build's code first on its path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evals.bench import reader_time


def test_each_build_is_timed_in_its_own_process_and_written(tmp_path: Path) -> None:
    out = tmp_path / "reader_time.json"
    reader_time.main(["--rounds", "1", "--calls", "3", "--out", str(out)])
    found = json.loads(out.read_text(encoding="utf-8"))
    [p50] = found["this"]["p50_ms"]
    assert 0 < p50 < 10_000
    assert found["this"]["median_ratio_to_this"] == 1.0
    assert found["settings"] == {"rounds": 1, "calls": 3, "base": []}


def test_another_builds_tree_comes_first_on_the_childs_path(tmp_path: Path) -> None:
    # A tree whose store package says where it is: the child must import it, not this one.
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "__init__.py").write_text("raise SystemExit(7)\n", encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError) as raised:
        reader_time._one(tmp_path, 1)
    assert raised.value.returncode == 7
