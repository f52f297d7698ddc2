"""``server.testing.app_client``: the real app in process behind the typed client.

Each test runs its own app on the module's database through ``app_client``, as the evals do,
and makes its tenant and key with the admin calls.
"""

from __future__ import annotations

import itertools

import pytest

from retrieval.search.embeddings import Embedder
from server.client import Forbidden, SGAMClient
from server.settings import Settings
from server.testing import app_client
from store.contract.bodies import EpisodeRead, TenantCreated
from store.contract.facts import Attribute
from store.contract.results import UpdateResult
from store.db.clock import ManualClock
from tests.conftest import ts
from tests.http_helpers import candidate

_tenants = itertools.count(1)

SYSTEM_TIME = "2026-06-01T09:00:05Z"
TEXT = "Mira prefers concise answers. Her passport deadline is 2026-07-15."


def test_a_tenant_made_through_it_declares_records_and_reads_back_at_the_apps_clock(
    api_settings: Settings, embedder: Embedder
) -> None:
    clock = ManualClock(ts(SYSTEM_TIME))
    with app_client(api_settings, embedder=embedder, clock=clock) as admin:
        name = f"testing-{next(_tenants)}"
        assert admin.create_tenant(name) == TenantCreated(tenant_id=name)
        key = admin.create_key(name)
        client = SGAMClient(admin.base_url, key.api_key, http=admin.http)

        declared = client.declare_attribute(
            "passport_deadline", "date", description="Date by which the passport must be renewed"
        )
        assert declared == Attribute(
            attribute="passport_deadline",
            value_type="date",
            description="Date by which the passport must be renewed",
            schema_version=1,
            created_at=ts(SYSTEM_TIME),
            updated_at=ts(SYSTEM_TIME),
        )
        recorded = client.record_episode(
            TEXT,
            "2026-06-01T09:00:00Z",
            id="e1",
            subjects=["mira"],
            updates=[candidate("mira", "passport_deadline", "2026-07-15", evidence=TEXT)],
        )
        [result] = recorded.results
        assert result.fact is not None
        assert result == UpdateResult(index=0, status="written", fact=result.fact)
        written = result.fact
        assert (
            written.subject,
            written.value,
            written.valid_from,
            written.valid_to,
            written.recorded_at,
            written.retired_at,
            written.source_episode_id,
            written.status,
        ) == (
            "mira",
            "2026-07-15",
            ts("2026-06-01T09:00:00Z"),
            None,
            ts(SYSTEM_TIME),
            None,
            "e1",
            "current",
        )

        assert client.fact("mira", "passport_deadline") == written
        assert client.episode("e1") == EpisodeRead.model_validate(
            recorded.model_dump(exclude={"results", "extracted"})
        )
        assert client.history("mira", "passport_deadline") == [written]


def test_its_client_carries_the_admin_token_of_the_settings_and_nothing_else(
    api_settings: Settings, embedder: Embedder
) -> None:
    without_admin = api_settings.model_copy(update={"admin_token": None})
    with app_client(without_admin, embedder=embedder) as client:
        assert (client.admin_token, client.api_key) == (None, None)
        with pytest.raises(Forbidden):
            client.create_tenant(f"testing-{next(_tenants)}")
    with app_client(api_settings, embedder=embedder) as client:
        assert api_settings.admin_token is not None
        assert client.admin_token == api_settings.admin_token.get_secret_value()
        assert client.api_key is None
