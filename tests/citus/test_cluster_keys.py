"""A revoked key on the cluster: the single node's key-cache tests of
tests/http/test_key_cache.py, and two server processes' apps on the coordinator, where a key
revoked through one fails on its next call through the other.

On Citus ``api_keys`` is a reference table without the triggers of migration 0008, so every
announcement here is the one the code that revokes a key sends in its transaction. A key
revoked by hand in SQL is announced to nobody there (docs/operations/citus-schema.md): that
test of the single node's stays out.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from uuid import UUID

import psycopg
import pytest

from retrieval.search.embeddings import Embedder
from server.auth.keycache import KeyCache
from server.runtime.resources import resources_of
from tests.citus_helpers import single_node_tests
from tests.http import test_key_cache
from tests.http.test_key_cache import GUARD_ONLY, Checkouts, guarded_app, key_of, wait_for
from tests.http_helpers import ADMIN, Client, make_tenant

globals().update(
    single_node_tests(
        test_key_cache,
        only=[
            "test_a_known_key_is_checked_without_a_database_round_trip",
            "test_a_key_revoked_through_the_admin_api_fails_its_very_next_call",
            "test_a_key_revoked_by_another_process_fails_its_very_next_call",
            "test_a_lost_listener_connection_empties_the_cache_until_it_is_back",
            "test_an_empty_or_unreadable_announcement_empties_the_cache",
        ],
    )
)


@pytest.fixture(scope="module")
def other(conninfo: str, embedder: Embedder) -> Iterator[Client]:
    """A second server process's app on the coordinator, with a cache and a listener of its
    own, set up as ``client`` is."""
    with guarded_app(conninfo, embedder) as opened:
        yield opened


@pytest.fixture
def other_cache(other: Client) -> KeyCache:
    """The second app's key cache, caught up with the database."""
    keys = resources_of(other.app).keys
    wait_for(lambda: keys.fresh)
    return keys


def test_api_keys_carry_no_trigger_on_the_cluster(conninfo: str) -> None:
    """So the announcements the tests below hear are the code's own."""
    with psycopg.connect(conninfo) as conn:
        found = conn.execute(
            "SELECT tgname FROM pg_trigger"
            " WHERE tgrelid = 'api_keys'::regclass AND NOT tgisinternal"
        ).fetchall()
    assert found == []


def test_a_key_revoked_through_one_process_leaves_the_others_cache(
    client: Client,
    cache: KeyCache,
    other: Client,
    other_cache: KeyCache,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tenant = make_tenant(client, "cluster-keys")
    counted = Checkouts(resources_of(other.app).pool, monkeypatch)
    for app, keys in ((client, cache), (other, other_cache)):
        assert app.get("/v1/attributes", headers=tenant.headers | GUARD_ONLY).status_code == 403
        assert keys.holds(key_of(tenant))

    revoked = client.delete(f"/v1/admin/keys/{tenant.key_id}", headers=ADMIN)

    assert revoked.json()["status"] == "revoked", revoked.text
    wait_for(lambda: not other_cache.holds(key_of(tenant)))
    assert counted.call(other, tenant.headers) == (401, 1)  # read again, refused


def test_a_key_revoked_through_one_process_fails_its_very_next_call_through_another(
    client: Client, other: Client, other_cache: KeyCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant(client, "cluster-keys-stalled")
    counted = Checkouts(resources_of(other.app).pool, monkeypatch)
    assert counted.call(other, tenant.headers)[0] == 403
    assert other_cache.holds(key_of(tenant))
    released, drop = threading.Event(), other_cache.drop

    def stalled(key_id: UUID | None) -> None:  # the other's listener is late
        released.wait(30)
        drop(key_id)

    monkeypatch.setattr(other_cache, "drop", stalled)
    try:
        revoked = client.delete(f"/v1/admin/keys/{tenant.key_id}", headers=ADMIN)

        assert revoked.json()["status"] == "revoked", revoked.text
        assert other_cache.holds(key_of(tenant))  # its listener has not applied the change
        assert counted.call(other, tenant.headers) == (401, 1)
    finally:
        released.set()
