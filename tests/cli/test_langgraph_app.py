"""The LangGraph app of the docs (docs/guides/langgraph.md) runs, as written, against a real
``sgam serve`` with ``SGAMStore``, and prints what its closing comments say.

The example is read from the page itself, so the documented code is the tested code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli import test_serve_tour
from tests.docs.test_readme import fenced_blocks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "langgraph.md"
SECTION = "A LangGraph app"

served = test_serve_tour.served
"""A ``sgam serve`` of this module's own, on a brand-new data folder."""


def guide_example() -> str:
    """The one Python block of the guide's section on the app."""
    [example] = [
        block.text
        for block in fenced_blocks(GUIDE.read_text())
        if (block.section, block.language) == (SECTION, "python")
    ]
    return example


def printed_lines(example: str) -> str:
    """What the example says it prints: the comment lines that close it."""
    lines = example.rstrip("\n").splitlines()
    closing: list[str] = []
    while lines and lines[-1].startswith("# "):
        closing.insert(0, lines.pop()[2:])
    return "".join(f"{line}\n" for line in closing)


def test_the_guides_langgraph_app_runs_against_sgam_serve(
    served: test_serve_tour.Served, tmp_path: Path
) -> None:
    example = guide_example()
    assert "compile(store=SGAMStore(sgam))" in example
    expected = printed_lines(example)
    assert expected.count("\n") == 4

    env = {key: value for key, value in os.environ.items() if not key.startswith("SGAM_")}
    env |= {"SGAM_URL": served.url, "SGAM_KEY": served.api_key}
    script = tmp_path / "langgraph_app.py"
    script.write_text(example)
    command = [sys.executable, str(script)]
    printed = subprocess.check_output(command, env=env, text=True, timeout=120)

    assert printed == expected
