"""What the browser tests under tests/ui share: Debian's headless chromium driven through
chromium-driver by selenium, and the app served by uvicorn on a local port, one of each per
module.

Where the browser is missing a test that asks for it fails under CI (``CI=true``) and is
skipped elsewhere, naming the package to install.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from store.db.clock import ManualClock
from tests.ui_helpers import PAGE_CLOCK, UI_SECRET
from tests.ui_screenshots import WAIT_SECONDS, serving

PACKAGE = "chromium-driver"
__all__ = ["WAIT_SECONDS"]
"""What the browser tests import from here besides the fixtures."""


def _executables() -> tuple[str, str]:
    """Debian's chromium and chromedriver, or a failure (CI) or skip naming the package."""
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        message = (
            f"the browser test needs Debian's {PACKAGE} package (and chromium):"
            f" apt-get install -y chromium {PACKAGE}"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return chromium, driver


@pytest.fixture(scope="module")
def chrome() -> Iterator[WebDriver]:
    """A headless chromium, its window wide enough for the timeline, with the network off:
    no host name but the server's address resolves. Its log lists every request a page made."""
    chromium, chromedriver = _executables()
    options = Options()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1200,1000",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def served(api_settings: Settings, embedder: Embedder) -> Iterator[str]:
    """The app on a local port (its clock after every write of the tests); its base URL."""
    settings = api_settings.model_copy(update={"ui_secret": SecretStr(UI_SECRET)})
    app = create_app(settings, embedder=embedder, clock=ManualClock(PAGE_CLOCK))
    with serving(app) as url:
        yield url
