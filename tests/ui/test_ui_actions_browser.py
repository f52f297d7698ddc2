"""The conflicts list and its resolve form in a real browser (Debian's headless chromium, the
fixtures of ``tests/ui/conftest.py``: one browser and one server for the module), at a phone's
390 px and a desktop's 1280 px: a conflict is listed with both sides, a form whose token was
tampered with is refused and changes nothing, the form as served resolves it; a subject's
legal hold placed from its page refuses its erasure, and once released the typed-in erasure
goes through. Every page they pass through fits its width and prints no text under 11 px."""

from __future__ import annotations

import httpx
import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.ui.conftest import WAIT_SECONDS
from tests.ui_conflict_helpers import city, conflicts, make_conflict
from tests.ui_helpers import Key, make_key

WIDTHS = (390, 1280)
MIN_FONT_PX = 11
_LAYOUT = """
const root = document.documentElement;
const texts = [...document.querySelectorAll('body *')].filter(e =>
  e.getClientRects().length &&
  [...e.childNodes].some(n => n.nodeType === Node.TEXT_NODE && n.textContent.trim()));
return [root.scrollWidth - root.clientWidth, root.clientWidth,
        Math.min(...texts.map(e => parseFloat(getComputedStyle(e).fontSize)))];
"""


def _fits(chrome: WebDriver, width: int) -> None:
    """The page shows at ``width`` without horizontal scroll, its smallest text >= 11 px."""
    overflow, shown, smallest = chrome.execute_script(_LAYOUT)
    assert width - 20 <= shown <= width, (chrome.current_url, shown)
    assert overflow <= 0, (chrome.current_url, width, overflow)
    assert smallest >= MIN_FONT_PX, (chrome.current_url, width, smallest)


def _at(chrome: WebDriver, url: str, width: int) -> None:
    """Open ``url`` in a window ``width`` px wide, and check that the page fits."""
    chrome.set_window_size(width, 900)
    chrome.get(url)
    _fits(chrome, width)


@pytest.fixture(scope="module")
def contested(served: str) -> Key:
    """A tenant with, for each width, an open conflict on ``ada{width}`` and another subject,
    ``eve{width}``, to hold and erase."""
    with httpx.Client(base_url=served) as http:
        key = make_key(http, "browser-actions")
        for width in WIDTHS:
            make_conflict(http, key, subject=f"ada{width}")
            make_conflict(http, key, subject=f"eve{width}")
    return key


def _sign_in(chrome: WebDriver, served: str, key: Key, width: int) -> None:
    """A fresh session as ``key``'s tenant in a window ``width`` px wide."""
    chrome.set_window_size(width, 900)
    chrome.delete_all_cookies()
    chrome.get(f"{served}/ui/login")
    chrome.find_element(By.ID, "api_key").send_keys(key.api_key)
    chrome.find_element(By.CSS_SELECTOR, "form.login button").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url.endswith("/ui/subjects"))


def _heading(chrome: WebDriver, text: str) -> None:
    """Wait for the page whose heading is ``text`` (the one before may still be unloading)."""
    WebDriverWait(chrome, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element(By.TAG_NAME, "h1").text == text
    )


def _submit(chrome: WebDriver, form: str, until: str) -> None:
    """Press ``form``'s button, and wait for an address holding ``until``."""
    chrome.find_element(By.CSS_SELECTOR, f"{form} button").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: until in d.current_url)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_conflict_is_listed_refused_with_a_tampered_token_then_resolved(
    chrome: WebDriver,
    served: str,
    contested: Key,
    width: int,
) -> None:
    subject = f"ada{width}"
    _sign_in(chrome, served, contested, width)
    chrome.find_element(By.LINK_TEXT, "Conflicts").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url.endswith("/ui/conflicts"))
    _fits(chrome, width)
    with httpx.Client(base_url=served) as http:
        [conflict] = conflicts(http, contested, subject=subject)
    row = f"tr#conflict-{conflict['conflict_id']}"
    assert chrome.find_element(By.CSS_SELECTOR, f"{row} td.incumbent .value").text == "Oslo"
    assert chrome.find_element(By.CSS_SELECTOR, f"{row} td.challenger .value").text == "Bergen"
    sources = chrome.find_elements(By.CSS_SELECTOR, f"{row} .source a")
    assert [a.text for a in sources] == [f"{subject}-0", f"{subject}-1"]

    # A token that is not the session's: refused, and the conflict stays open.
    chrome.execute_script(
        "document.querySelector(arguments[0]).value = 'tampered'",
        f"{row} input[name=csrf_token]",
    )
    chrome.find_element(By.CSS_SELECTOR, f"{row} button[value=challenger]").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: "/resolve" in d.current_url)
    assert chrome.find_element(By.TAG_NAME, "h1").text == "403"
    assert "did not come from this site" in chrome.find_element(By.CSS_SELECTOR, ".error").text
    _fits(chrome, width)
    with httpx.Client(base_url=served) as http:
        assert len(conflicts(http, contested, subject=subject)) == 1
        assert city(http, contested, subject) == "Oslo"

    # The form as served: the challenger is chosen, and the list says so.
    chrome.get(f"{served}/ui/conflicts")
    chrome.find_element(By.CSS_SELECTOR, f"{row} button[value=challenger]").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: "chose=challenger" in d.current_url)
    notice = chrome.find_element(By.CSS_SELECTOR, ".notice").text
    assert notice == f"Resolved {subject} · city: the challenger now holds the start."
    assert chrome.find_elements(By.CSS_SELECTOR, row) == []
    _fits(chrome, width)
    with httpx.Client(base_url=served) as http:
        assert city(http, contested, subject) == "Bergen"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_held_subject_is_refused_erasure_until_its_hold_is_released(
    chrome: WebDriver, served: str, contested: Key, width: int
) -> None:
    subject = f"eve{width}"
    _sign_in(chrome, served, contested, width)
    chrome.get(f"{served}/ui/subjects/{subject}")
    chrome.find_element(By.LINK_TEXT, "Legal hold…").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url.endswith("/legal-hold"))
    _fits(chrome, width)
    chrome.find_element(By.CSS_SELECTOR, "form.hold-place input[name=confirm]").click()
    _submit(chrome, "form.hold-place", "done=placed")
    assert chrome.find_element(By.CSS_SELECTOR, ".notice").text == "The legal hold was placed."

    _at(chrome, f"{served}/ui/subjects/{subject}/erase", width)
    chrome.find_element(By.ID, "confirm").send_keys(subject)
    chrome.find_element(By.CSS_SELECTOR, "form.confirm button").click()
    _heading(chrome, "409")
    assert "legal hold" in chrome.find_element(By.CSS_SELECTOR, ".error").text
    _fits(chrome, width)

    _at(chrome, f"{served}/ui/subjects/{subject}/legal-hold", width)
    chrome.find_element(By.CSS_SELECTOR, "form.hold-release input[name=confirm]").click()
    _submit(chrome, "form.hold-release", "done=released")
    _at(chrome, f"{served}/ui/subjects/{subject}/erase", width)
    chrome.find_element(By.ID, "confirm").send_keys(subject)
    chrome.find_element(By.CSS_SELECTOR, "form.confirm button").click()
    _heading(chrome, f"Erased {subject}")
    assert chrome.find_element(By.ID, "tombstone").text
    _fits(chrome, width)
    with httpx.Client(base_url=served) as http:
        exported = http.get(f"/v1/subjects/{subject}/export", headers=contested.headers())
        assert exported.status_code == 404
