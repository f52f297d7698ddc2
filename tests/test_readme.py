"""The README's Python example runs as written, on a fresh embedded database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_python_example_runs(tmp_path: Path) -> None:
    [example] = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path)  # the default data folder lands here
    completed = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "written 2026-06-30\n"
    assert (tmp_path / "sgam" / "postgres" / "PG_VERSION").exists()
