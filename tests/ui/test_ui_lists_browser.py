"""The listing pages in Debian's headless chromium (one browser and one server for the
module): finding a subject through the form, following an episode's facts to their timeline,
a decision's receipts and verdict through its forms; and every listing page at a phone's
width (390 px) and a desktop's (1280 px) with no horizontal scroll and no text under 11 px.

With ``SGAM_UI_SHOTS=folder`` the width test saves each page it measures there."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.ui.conftest import WAIT_SECONDS
from tests.ui_helpers import make_key
from tests.ui_lists_helpers import seed_lists
from tests.ui_screenshots import MEASURE, MIN_FONT_PX

WIDTHS = (390, 1280)


@dataclass(frozen=True)
class Site:
    """The served app, signed in as the seeded tenant, and its decision's id."""

    url: str
    decision: str


@pytest.fixture(scope="module")
def site(chrome: WebDriver, served: str) -> Site:
    """``seed_lists``'s writes in a fresh tenant, and the browser signed in as it."""
    with httpx.Client(base_url=served) as http:
        key = make_key(http, "lists-browser")
        decision = seed_lists(http, key)
    chrome.get(f"{served}/ui/login")
    chrome.find_element(By.ID, "api_key").send_keys(key.api_key)
    chrome.find_element(By.CSS_SELECTOR, "form.login button").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url == f"{served}/ui/subjects")
    return Site(served, decision)


def _wait_for(chrome: WebDriver, part: str) -> None:
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: part in d.current_url)


def _subjects(chrome: WebDriver) -> list[str]:
    cells = chrome.find_elements(By.CSS_SELECTOR, "table.subjects td[data-label='subject']")
    return [cell.text for cell in cells]


def test_find_a_subject_follow_an_episode_and_judge_a_decision(
    chrome: WebDriver, site: Site
) -> None:
    chrome.get(f"{site.url}/ui/subjects")
    assert _subjects(chrome) == ["ben", "mira"]
    chrome.find_element(By.ID, "match").send_keys("Okafor")
    chrome.find_element(By.CSS_SELECTOR, "form#find button").click()
    _wait_for(chrome, "match=Okafor")
    assert _subjects(chrome) == ["ben"]
    field = chrome.find_element(By.ID, "match")
    field.clear()
    Select(chrome.find_element(By.ID, "order")).select_by_value("changed")
    chrome.find_element(By.CSS_SELECTOR, "form#find button").click()
    _wait_for(chrome, "order=changed")
    assert _subjects(chrome) == ["ben", "mira"]

    chrome.find_element(By.ID, "decision_id").send_keys(site.decision)
    chrome.find_element(By.CSS_SELECTOR, "form#decision button").click()
    _wait_for(chrome, f"/ui/decisions/{site.decision}")
    assert len(chrome.find_elements(By.CSS_SELECTOR, "table.receipts tbody tr")) == 1
    Select(chrome.find_element(By.ID, "type")).select_by_value("semantic")
    chrome.find_element(By.ID, "subject").send_keys("mira")
    chrome.find_element(By.ID, "attribute").send_keys("passport_deadline")
    chrome.find_element(By.CSS_SELECTOR, "form#health button").click()
    _wait_for(chrome, "attribute=passport_deadline")
    assert chrome.find_element(By.ID, "verdict").is_displayed()

    # The receipt's provenance is the episode the deadline read came from; its facts lead to
    # their subject's timeline, at the key.
    chrome.find_element(By.CSS_SELECTOR, "td[data-label='provenance'] a").click()
    _wait_for(chrome, "/ui/episodes/e2")
    assert chrome.find_element(By.ID, "outcome").text.startswith("succeeded, verified")
    chrome.find_element(By.CSS_SELECTOR, "table.sourced td[data-label='subject'] a").click()
    _wait_for(chrome, "/ui/subjects/mira#key-passport_deadline")


@pytest.mark.parametrize("width", WIDTHS)
def test_every_listing_page_fits_the_screen_with_readable_text(
    chrome: WebDriver, site: Site, width: int
) -> None:
    pages = (
        "/ui/subjects",
        "/ui/subjects?match=okafor&order=changed",
        "/ui/subjects?match=nobody-at-all",
        "/ui/episodes/e1",
        "/ui/episodes/b1",
        f"/ui/decisions/{site.decision}",
        f"/ui/decisions/{site.decision}?type=semantic&subject=mira&attribute=passport_deadline",
        f"/ui/decisions/{site.decision}?type=semantic&subject=mira",
    )
    chrome.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    measured, headings = {}, {}
    folder = os.environ.get("SGAM_UI_SHOTS")
    shots = Path(folder) if folder else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    try:
        for path in pages:
            chrome.get(site.url + path)
            measured[path] = chrome.execute_script(MEASURE, MIN_FONT_PX)
            if shots:
                name = f"lists-{width}-{len(measured)}.png"
                assert chrome.save_screenshot(str(shots / name))
            heads = chrome.find_elements(By.CSS_SELECTOR, "table.list thead")
            headings[path] = [head.is_displayed() for head in heads]
    finally:
        chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert {path: m["overflow"] for path, m in measured.items()} == dict.fromkeys(pages, 0)
    assert {path: m["small"] for path, m in measured.items()} == {path: [] for path in pages}
    # The tables stack on a phone (no header row; each cell names its column), not on a desktop.
    tables = {path: shown for path, shown in headings.items() if shown}
    assert set(tables) == {pages[0], pages[1], pages[3], pages[5], pages[6], pages[7]}
    assert all(shown == [width >= 600] * len(shown) for shown in tables.values()), tables
