"""The timeline page's screenshots in the docs, made the same on every run.

    .venv/bin/python -m tests.ui_screenshots docs/

starts the embedded PostgreSQL on a fresh database, serves the app with its clock pinned at
``PAGE_CLOCK``, writes the seed trace (each write at its own ``X-SGAM-Now``) into tenant
``acme``, signs in through the form in Debian's headless chromium, and saves Mira's timeline
page whole at 390 and 1280 px wide (``timeline-390.png``, ``timeline-1280.png``) into the
folder given. ``tests/ui/test_ui_layout.py`` takes the same screenshots into a temporary
folder and checks them against the committed ones' sizes.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import uvicorn
from litestar import Litestar
from pydantic import SecretStr
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from store.db.clock import ManualClock
from store.db.database import scratch_database, temporary_database
from store.db.migrate import migrate_database
from store.db.roles import APP_ROLE, login_as
from tests.ui_helpers import PAGE_CLOCK, UI_SECRET, Key, seed_mira

WIDTHS = (390, 1280)
"""A phone's width and a desktop's, in CSS pixels."""
TENANT = "acme"
ADMIN_TOKEN = "admin-token-for-screenshots-0123456789"
WAIT_SECONDS = 30
CHROMIUM_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--font-render-hinting=none",
    "--window-size=1280,1000",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)
"""Headless, one pixel per CSS pixel, and no host name but the server's address resolves."""
MIN_FONT_PX = 11.0
"""The least font size a page's visible text may have, at any width."""
MEASURE = """
const root = document.documentElement;
const found = {overflow: root.scrollWidth - root.clientWidth, small: [], outside: [], labels: 0};
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const node = walker.currentNode;
  const element = node.parentElement;
  const box = element.getBoundingClientRect();
  if (!node.textContent.trim() || (box.width === 0 && box.height === 0)) continue;
  const size = parseFloat(getComputedStyle(element).fontSize);
  if (size < arguments[0]) found.small.push([element.tagName, node.textContent.trim(), size]);
}
for (const chart of document.querySelectorAll("svg.timeline")) {
  const edge = chart.getBoundingClientRect();
  for (const text of chart.querySelectorAll("text")) {
    const box = text.getBoundingClientRect();
    if (box.width === 0) continue;
    found.labels += 1;
    if (box.left < edge.left - 0.5 || box.right > edge.right + 0.5) {
      found.outside.push([text.textContent, box.left, box.right, edge.left, edge.right]);
    }
  }
}
return found;
"""
"""A page's measures, for ``execute_script(MEASURE, MIN_FONT_PX)``: how far it scrolls
sideways, each visible text under the least size, each timeline label (counted) that lies
past its chart's edges."""


def screenshot_name(width: int) -> str:
    """The file a width's screenshot is saved as."""
    return f"timeline-{width}.png"


def at_width(chrome: WebDriver, width: int, *, height: int = 900) -> None:
    """Lay the page out as a ``width`` px wide screen (a phone's viewport under 600 px)."""
    chrome.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def seed_and_sign_in(chrome: WebDriver, url: str, *, admin_token: str) -> Key:
    """Tenant ``acme`` with a key, the seed trace written into it, and the browser signed in."""
    admin = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=url) as http:
        created = http.post("/v1/admin/tenants", json={"tenant_id": TENANT}, headers=admin)
        assert created.status_code == 201, created.text
        issued = http.post(f"/v1/admin/tenants/{TENANT}/keys", headers=admin)
        assert issued.status_code == 201, issued.text
        key = Key(TENANT, issued.json()["key_id"], issued.json()["api_key"])
        seed_mira(http, key)
    chrome.get(f"{url}/ui/login")
    chrome.find_element(By.ID, "api_key").send_keys(key.api_key)
    chrome.find_element(By.CSS_SELECTOR, "form.login button").click()
    WebDriverWait(chrome, WAIT_SECONDS).until(lambda d: d.current_url == f"{url}/ui/subjects")
    return key


def capture(chrome: WebDriver, url: str, out_dir: Path) -> list[Path]:
    """Mira's timeline page, whole, at each of ``WIDTHS``, saved into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = []
    for width in WIDTHS:
        at_width(chrome, width)
        chrome.get(f"{url}/ui/subjects/mira")
        height = int(chrome.execute_script("return document.documentElement.scrollHeight"))
        at_width(chrome, width, height=height)
        path = out_dir / screenshot_name(width)
        path.write_bytes(chrome.get_screenshot_as_png())
        saved.append(path)
    chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return saved


@contextlib.contextmanager
def chromium() -> Iterator[WebDriver]:
    """Debian's headless chromium through chromium-driver."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in CHROMIUM_ARGUMENTS:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        yield driver
    finally:
        driver.quit()


@contextlib.contextmanager
def serving(app: Litestar) -> Iterator[str]:
    """``app`` under uvicorn on a free local port, in a thread; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    )
    thread = threading.Thread(target=server.run, name="ui-server")
    thread.start()
    deadline = time.monotonic() + WAIT_SECONDS
    while not server.started:
        assert thread.is_alive(), "the server stopped as it started"
        assert time.monotonic() < deadline, "the server did not start in time"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(WAIT_SECONDS)


def main(argv: list[str]) -> int:
    """Take the screenshots into the folder named (``docs/`` for the docs)."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tests.ui_screenshots OUT_DIR\n")
        return 2
    with scratch_database(None) as server_info, temporary_database(server_info) as info:
        migrate_database(info)
        settings = Settings(
            database_url=info,
            app_database_url=login_as(info, APP_ROLE),
            admin_token=SecretStr(ADMIN_TOKEN),
            allow_clock_header=True,
            ui_secret=SecretStr(UI_SECRET),
        )
        app = create_app(settings, embedder=Embedder().load(), clock=ManualClock(PAGE_CLOCK))
        with serving(app) as url, chromium() as chrome:
            seed_and_sign_in(chrome, url, admin_token=ADMIN_TOKEN)
            for path in capture(chrome, url, Path(argv[0])):
                sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
