"""An expiry that changes nothing ties no episode to a subject; erasing nothing answers 404.

Carol's episode ``s1`` is about Carol. An ``unchanged`` expiry of another subject's key citing
``s1`` must leave no visible trace: the subject is not listed, ``s1`` joins no other subject's
evidence scope or export, and erasing that subject neither stubs nor deletes ``s1``. Only an
expiry that ended a version (at once, or after a retraction replays the key) links ``s1``.
"""

from __future__ import annotations

from typing import Any

import httpx
from psycopg_pool import ConnectionPool

from tests.conftest import ApiTenant
from tests.helpers import owner_connection
from tests.http_helpers import Client, assert_problem, candidate, declare, make_tenant, record

CAROL_TEXT = "Carol says her favourite color is teal."


def ok(response: httpx.Response) -> Any:
    """The JSON body of a 200 response."""
    assert response.status_code == 200, response.text
    return response.json()


def with_carol(http: Client) -> ApiTenant:
    """A tenant holding Carol's episode ``s1`` (about Carol, sourcing her color)."""
    tenant = make_tenant(http, "noop")
    declare(http, tenant.headers, "color", "string")
    record(
        http,
        tenant.headers,
        "s1",
        CAROL_TEXT,
        occurred_at="2026-03-01T09:00:00Z",
        subjects=["carol"],
        updates=[candidate("carol", "color", "teal")],
    )
    return tenant


def tombstone_count(pool: ConnectionPool, tenant: ApiTenant) -> int:
    """How many tombstones the tenant holds."""
    with owner_connection(pool) as conn:
        row = conn.execute(
            "SELECT count(*) FROM tombstones WHERE tenant_id = %(tenant_id)s",
            {"tenant_id": tenant.name},
        ).fetchone()
    assert row is not None
    return int(row[0])


def evidence_ids(http: Client, tenant: ApiTenant, subject: str) -> list[str]:
    """The episodes an evidence search scoped to ``subject`` finds."""
    found = ok(
        http.post(
            "/v1/evidence/search",
            json={"query": "favourite color", "subject": subject, "k": 10},
            headers=tenant.headers,
        )
    )
    return sorted(item["episode_id"] for item in found["results"])


def expire(http: Client, tenant: ApiTenant, subject: str, at: str, source: str) -> Any:
    """Expire ``subject.color`` at ``at`` citing ``source``; the result."""
    return ok(
        http.post(
            f"/v1/facts/{subject}/color/expire",
            json={"at": at, "source_episode_id": source},
            headers=tenant.headers,
        )
    )


def test_a_noop_expire_of_an_unknown_subject_leaves_no_trace(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = with_carol(http)
    s1_before = ok(http.get("/v1/episodes/s1", headers=tenant.headers))
    assert s1_before["subjects"] == ["carol"]

    result = expire(http, tenant, "ghost", "2026-04-01T00:00:00Z", "s1")

    assert result["status"] == "unchanged"
    assert result.get("fact") is None, result
    assert ok(http.get("/v1/subjects", headers=tenant.headers)) == {
        "subjects": ["carol"],
        "next_cursor": None,
    }
    assert ok(http.get("/v1/episodes/s1", headers=tenant.headers)) == s1_before
    assert evidence_ids(http, tenant, "ghost") == []
    assert evidence_ids(http, tenant, "carol") == ["s1"]
    assert_problem(
        http.get("/v1/subjects/ghost/export", headers=tenant.headers),
        404,
        "not_found",
        field="subject",
    )

    erased = http.delete("/v1/subjects/ghost", headers=tenant.headers)

    assert_problem(erased, 404, "not_found", field="subject")
    assert tombstone_count(pool, tenant) == 0
    assert ok(http.get("/v1/episodes/s1", headers=tenant.headers)) == s1_before
    # Nothing else cites s1: erasing Carol deletes it outright, no stub left behind.
    carol = ok(http.delete("/v1/subjects/carol", headers=tenant.headers))
    assert (carol["episodes_deleted"], carol["episodes_stubbed"]) == (1, 0)
    assert_problem(http.get("/v1/episodes/s1", headers=tenant.headers), 404, "not_found")


def test_a_noop_expire_of_a_known_subject_does_not_link_the_cited_episode(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = with_carol(http)
    record(
        http,
        tenant.headers,
        "g1",
        "Gus liked red, then stopped.",
        occurred_at="2026-03-02T09:00:00Z",
        subjects=["gus"],
        updates=[candidate("gus", "color", "red")],
    )
    assert expire(http, tenant, "gus", "2026-03-10T00:00:00Z", "g1")["status"] == "expired"
    s1_before = ok(http.get("/v1/episodes/s1", headers=tenant.headers))

    # Nothing of gus's is valid on 2026-04-01: logged for replay, but no link.
    result = expire(http, tenant, "gus", "2026-04-01T00:00:00Z", "s1")

    assert result["status"] == "unchanged"
    assert ok(http.get("/v1/episodes/s1", headers=tenant.headers)) == s1_before
    assert evidence_ids(http, tenant, "gus") == ["g1"]
    export = ok(http.get("/v1/subjects/gus/export", headers=tenant.headers))
    assert [episode["id"] for episode in export["episodes"]] == ["g1"]

    erased = ok(http.delete("/v1/subjects/gus", headers=tenant.headers))

    assert erased == {
        "status": "erased",
        "tombstone_id": erased["tombstone_id"],
        "facts_retracted": 0,
        "episodes_deleted": 1,
        "episodes_stubbed": 0,
        "fact_versions_deleted": 2,  # red open (retired), red ended
        "conflicts_deleted": 0,
        "expiries_deleted": 2,
        "checkpoints_deleted": 0,
    }
    assert ok(http.get("/v1/episodes/s1", headers=tenant.headers)) == s1_before
    assert ok(http.get("/v1/subjects", headers=tenant.headers))["subjects"] == ["carol"]
    assert tombstone_count(pool, tenant) == 1


def test_a_noop_expire_links_once_a_retraction_makes_it_end_a_value(http: Client) -> None:
    tenant = with_carol(http)
    headers = tenant.headers
    record(http, headers, "a", "Gus liked amber.", occurred_at="2026-03-02T00:00:00Z")
    record(http, headers, "x", "Gus went off colors.", occurred_at="2026-03-06T00:00:00Z")
    record(http, headers, "b", "Gus liked blue.", occurred_at="2026-03-04T00:00:00Z")
    updates = "/v1/episodes/{}/updates"
    amber = [candidate("gus", "color", "amber")]
    ok(http.post(updates.format("a"), json={"candidates": amber}, headers=headers))
    assert expire(http, tenant, "gus", "2026-03-06T00:00:00Z", "x")["status"] == "expired"
    # Blue starts inside amber's window: it takes the rest of it, up to the expiry at 03-06.
    blue = [candidate("gus", "color", "blue")]
    ok(http.post(updates.format("b"), json={"candidates": blue}, headers=headers))
    assert expire(http, tenant, "gus", "2026-03-08T00:00:00Z", "s1")["status"] == "unchanged"
    export = ok(http.get("/v1/subjects/gus/export", headers=headers))
    assert "s1" not in [episode["id"] for episode in export["episodes"]]

    # Without amber, the 03-06 expiry ends nothing and blue runs on to the 03-08 one.
    retracted = http.post(
        "/v1/facts/gus/color/retract",
        json={"valid_from": "2026-03-02T00:00:00Z"},
        headers=headers,
    )
    assert ok(retracted)["status"] == "retracted"
    now = ok(
        http.get(
            "/v1/facts/gus/color", params={"valid_at": "2026-03-07T00:00:00Z"}, headers=headers
        )
    )
    assert (now["value"], now["valid_to"]) == ("blue", "2026-03-08T00:00:00Z")
    export = ok(http.get("/v1/subjects/gus/export", headers=headers))
    assert "s1" in [episode["id"] for episode in export["episodes"]]


def test_erasing_a_subject_with_nothing_held_answers_404_without_a_tombstone(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = with_carol(http)

    never_seen = http.delete("/v1/subjects/nobody", headers=tenant.headers)
    first = ok(http.delete("/v1/subjects/carol", headers=tenant.headers))
    again = http.delete("/v1/subjects/carol", headers=tenant.headers)

    assert_problem(never_seen, 404, "not_found", field="subject")
    assert first["status"] == "erased"
    assert_problem(again, 404, "not_found", field="subject")
    assert tombstone_count(pool, tenant) == 1
