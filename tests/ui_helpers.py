"""What the timeline page tests share: the seed scenario written over HTTP, a tenant with a key,
signing in through the form, and reading the versions table back."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import httpx
from litestar import Litestar
from litestar.testing import TestClient
from pydantic import SecretStr

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from store.db.clock import ManualClock
from tests.conftest import ADMIN_TOKEN, ts
from tests.http_helpers import make_tenant

SEED = Path(__file__).resolve().parent.parent / "evals" / "traces" / "seed_mira.jsonl"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CLOCK = "X-SGAM-Now"
FORM_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
PAGE_CLOCK = ts("2027-01-01T00:00:00Z")
UI_SECRET = "ui-secret-for-the-tests-0123456789"
"""The pages' clock: after every write the tests make (each sets its own with X-SGAM-Now), so
the pages say the same on any date."""
VERSION_ROW = re.compile(r'<tr class="[^"]*" data-value="([^"]*)" data-state="([^"]*)">')


Http = httpx.Client
"""httpx's client, or Litestar's test client (one of its kind)."""


@dataclass(frozen=True)
class Key:
    """A tenant and one API key of it."""

    tenant: str
    key_id: str
    api_key: str

    def headers(self, now: str | None = None) -> dict[str, str]:
        """The API's headers for this key, with the clock header when ``now`` is given."""
        return {"Authorization": f"Bearer {self.api_key}", **({CLOCK: now} if now else {})}


def page_client(
    settings: Settings, embedder: Embedder, base_url: str = "http://testserver.local"
) -> TestClient[Litestar]:
    """A test client on the app at ``PAGE_CLOCK`` that does not follow redirects; the pages'
    key is ``UI_SECRET`` unless ``settings`` name one (never a file in the user's data folder)."""
    if settings.ui_secret is None:
        settings = settings.model_copy(update={"ui_secret": SecretStr(UI_SECRET)})
    app = create_app(settings, embedder=embedder, clock=ManualClock(PAGE_CLOCK))
    client = TestClient(app, base_url=base_url, raise_server_exceptions=False)
    client.follow_redirects = False
    return client


def make_key(http: Http, prefix: str = "ui") -> Key:
    """A fresh tenant with one API key, made through the admin API."""
    tenant = make_tenant(http, prefix)
    api_key = tenant.headers["Authorization"].removeprefix("Bearer ")
    return Key(tenant.name, tenant.key_id, api_key)


def seed_mira(http: Http, key: Key) -> None:
    """The seed trace's writes (the attribute, e1, e2, the late e0), each at its own clock."""
    now = None
    for text in SEED.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        now = line.get("now", now)
        headers = key.headers(now)
        fields = {k: v for k, v in line.items() if k not in {"op", "tenant", "now"}}
        if line["op"] == "define":
            attribute = fields.pop("attribute")
            answer = http.put(f"/v1/attributes/{attribute}", json=fields, headers=headers)
        elif line["op"] == "episode":
            answer = http.post("/v1/episodes", json=fields, headers=headers)
        elif line["op"] == "update":
            answer = http.post(
                f"/v1/episodes/{line['episode']}/updates",
                json={"candidates": [line["candidate"]]},
                headers=headers,
            )
            assert [r["status"] for r in answer.json()["results"]] == ["written"], answer.text
        else:
            continue
        assert answer.status_code in {200, 201}, answer.text


def form_token(page: str) -> str:
    """The CSRF token a page's form carries."""
    found = FORM_TOKEN.search(page)
    assert found is not None, page
    return found[1]


def sign_in(http: Http, api_key: str) -> httpx.Response:
    """Open the sign-in form and post the key with the form's token."""
    form = http.get("/ui/login")
    assert form.status_code == 200, form.text
    return http.post("/ui/login", data={"api_key": api_key, "csrf_token": form_token(form.text)})


def version_rows(page: str) -> list[tuple[str, str]]:
    """The versions tables of a subject page: (value, state) of each row, in order."""
    return [(html.unescape(value), state) for value, state in VERSION_ROW.findall(page)]
