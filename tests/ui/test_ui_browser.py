"""The timeline page in a real browser: Debian's headless chromium, driven through
chromium-driver by selenium, against the app served by uvicorn on a local port.

Where the browser is missing the test fails under CI (``CI=true``) and is skipped elsewhere,
naming the package to install. The docs' screenshots are made by ``tests/ui_screenshots.py``.
"""

from __future__ import annotations

import json

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.command import Command
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.ui.conftest import WAIT_SECONDS
from tests.ui_helpers import Key, make_key, seed_mira


def _sign_in(chrome: WebDriver, url: str, key: Key) -> None:
    chrome.get(f"{url}/ui/login")
    chrome.find_element(By.ID, "api_key").send_keys(key.api_key)
    chrome.find_element(By.CSS_SELECTOR, "form.login button").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url == f"{url}/ui/subjects")


def _rows(chrome: WebDriver) -> list[tuple[str | None, str | None, str]]:
    """The versions tables' rows as (value, state, the state as the page words it); retired
    beliefs, folded under their value, are not among them."""
    return [
        (
            row.get_attribute("data-value"),
            row.get_attribute("data-state"),
            row.find_element(By.CSS_SELECTOR, "td.state").text,
        )
        for row in chrome.find_elements(By.CSS_SELECTOR, "section > table.versions > tbody > tr")
        if row.get_attribute("data-state")
    ]


def test_the_seed_timeline_in_a_browser(chrome: WebDriver, served: str) -> None:
    with httpx.Client(base_url=served) as http:
        mira = make_key(http, "browser")
        seed_mira(http, mira)
        other = make_key(http, "browser-other")

    _sign_in(chrome, served, mira)
    chrome.find_element(By.LINK_TEXT, "mira").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url.endswith("/mira"))
    assert _rows(chrome) == [
        ("2026-08-01", "past", "past"),
        ("2026-07-15", "superseded", "superseded"),
        ("2026-06-30", "current", "current"),
    ]
    assert chrome.find_element(By.CSS_SELECTOR, "span.believed").text == "2026-06-30"
    # The stylesheet loaded under the page's policy: the current bar has its colour.
    bar = chrome.find_element(By.CSS_SELECTOR, "a.bar.current rect")
    assert bar.value_of_css_property("fill") == "rgb(31, 122, 77)"

    # The slider appears with the page's script; moving it to its first step (e1's write,
    # before the correction) redraws the page as believed then.
    slider = chrome.find_element(By.ID, "known-slider")
    assert slider.is_displayed()
    slider.send_keys(Keys.HOME)
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: "known_at=" in d.current_url)
    assert _rows(chrome) == [("2026-07-15", "current", "current then")]
    assert chrome.find_element(By.ID, "known-at-shown").text == "2026-06-01 09:00:05 UTC"

    # The same through the field, as without script; then each bar leads to its episode.
    field = chrome.find_element(By.ID, "known_at")
    field.clear()
    field.send_keys("2026-06-04T00:00:00Z")
    chrome.find_element(By.ID, "show").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: "2026-06-04" in d.current_url)
    assert [row[:2] for row in _rows(chrome)] == [
        ("2026-07-15", "superseded"),
        ("2026-06-30", "current"),
    ]
    chrome.find_element(By.CSS_SELECTOR, "table.versions tr.current a").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url.endswith("/ui/episodes/e2"))
    text = chrome.find_element(By.ID, "episode-text").text
    assert text == "Mira corrected the deadline. It is now 2026-06-30."

    # Another tenant's key: the same subject is not found.
    chrome.find_element(By.CSS_SELECTOR, "form.logout button").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url.endswith("/ui/login"))
    _sign_in(chrome, served, other)
    chrome.get(f"{served}/ui/subjects/mira")
    assert chrome.find_element(By.TAG_NAME, "h1").text == "404"
    assert "2026-07-15" not in chrome.page_source


def _requested(chrome: WebDriver) -> list[str]:
    """The URLs of the requests the browser sent since the last call (its performance log)."""
    urls = []
    for entry in chrome.execute(Command.GET_LOG, {"type": "performance"})["value"]:
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_the_api_reference_renders_from_the_server_alone(chrome: WebDriver, served: str) -> None:
    document = httpx.get(f"{served}/schema/openapi.json").json()
    paths = set(document["paths"])
    _requested(chrome)  # what earlier pages asked for
    chrome.get(f"{served}/schema")

    # Swagger UI's script drew the operations from the document: every path is there.
    WebDriverWait(chrome, WAIT_SECONDS).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")
    )
    shown = {
        element.get_attribute("data-path")
        for element in chrome.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")
    }
    assert paths <= shown, paths - shown
    assert "/v1/context" in shown
    context = chrome.find_element(By.CSS_SELECTOR, ".opblock-post [data-path='/v1/context']")
    assert context.is_displayed()

    # Its script, stylesheet and icon came from the server; nothing else was asked for.
    requested = _requested(chrome)
    assert f"{served}/schema/swagger-ui/swagger-ui-bundle.js" in requested
    assert f"{served}/schema/swagger-ui/swagger-ui.css" in requested
    outside = [url for url in requested if not url.startswith((f"{served}/", "data:"))]
    assert outside == []
    linked = chrome.execute_script(
        "return [...document.querySelectorAll('script[src], link[href], img[src]')]"
        ".map(e => e.getAttribute('src') || e.getAttribute('href'))"
    )
    assert linked
    assert [link for link in linked if "//" in link] == []
