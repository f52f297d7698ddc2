"""The pages at a phone's width (390 px) and a desktop's (1280 px) in Debian's headless
chromium: no horizontal scroll, no text under 11 px, no chart label past the chart's edges;
and the documented screenshot command, run into a temporary folder, makes screenshots of the
committed ones' sizes."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.conftest import ADMIN_TOKEN
from tests.ui_screenshots import (
    MEASURE,
    MIN_FONT_PX,
    WIDTHS,
    at_width,
    screenshot_name,
    seed_and_sign_in,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = (
    "/ui/login",
    "/ui/subjects",
    "/ui/subjects/mira",
    "/ui/subjects/mira?known_at=2026-06-04",
    "/ui/subjects/mira?known_at=2026-05-01",
    "/ui/episodes/e1",
    "/ui/subjects/nobody",
    "/ui/nope",
)
"""Every page the timeline's part draws: sign-in, subjects, the timeline now, before the late
episode and before anything was recorded, an episode, and two error pages."""


@pytest.fixture(scope="module")
def signed_in(chrome: WebDriver, served: str) -> str:
    """The seed trace in tenant acme of the served app, the browser signed in; the base URL."""
    seed_and_sign_in(chrome, served, admin_token=ADMIN_TOKEN)
    return served


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_the_screen_with_readable_text(
    chrome: WebDriver, signed_in: str, width: int
) -> None:
    at_width(chrome, width)
    measured = {}
    for path in PAGES:
        chrome.get(signed_in + path)
        measured[path] = chrome.execute_script(MEASURE, MIN_FONT_PX)
    chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert {path: m["overflow"] for path, m in measured.items()} == dict.fromkeys(PAGES, 0)
    assert {path: m["small"] for path, m in measured.items()} == {path: [] for path in PAGES}
    assert {path: m["outside"] for path, m in measured.items()} == {path: [] for path in PAGES}
    # The timelines drew their labels: a label a bar (three now, two before the late e0), a
    # marker's (now; known at too before now) and the ticks' (three of five on a phone).
    ticks = 3 if width < 600 else 5
    assert measured["/ui/subjects/mira"]["labels"] == 3 + 1 + ticks
    assert measured["/ui/subjects/mira?known_at=2026-06-04"]["labels"] == 2 + 2 + ticks


def test_a_signed_in_user_on_a_missing_subject_keeps_the_header(
    chrome: WebDriver, signed_in: str
) -> None:
    chrome.get(f"{signed_in}/ui/subjects/nobody")
    assert chrome.find_element(By.TAG_NAME, "h1").text == "404"
    assert chrome.find_element(By.CSS_SELECTOR, "header .tenant").text == "tenant acme"
    assert chrome.find_elements(By.CSS_SELECTOR, "a[href='/ui/login']") == []


def test_retired_beliefs_open_from_their_disclosure(chrome: WebDriver, signed_in: str) -> None:
    chrome.get(f"{signed_in}/ui/subjects/mira")
    folded = chrome.find_element(By.CSS_SELECTOR, "details.retired")
    retired = folded.find_element(By.CSS_SELECTOR, "tr.retired")
    assert not retired.is_displayed()
    folded.find_element(By.TAG_NAME, "summary").click()
    assert retired.is_displayed()
    assert retired.get_attribute("data-value") == "2026-07-15"


def _png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its header."""
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_the_screenshot_command_makes_the_committed_screenshots_sizes(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "tests.ui_screenshots", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert made.returncode == 0, made.stderr[-4000:]
    names = [screenshot_name(width) for width in WIDTHS]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names)
    sizes = {name: _png_size(tmp_path / name) for name in names}
    assert sizes == {name: _png_size(DOCS / name) for name in names}
    assert [sizes[name][0] for name in names] == list(WIDTHS)
