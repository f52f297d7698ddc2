"""Weak signals: buffered, promoted by independent repetition or a confirmation, expired.

Through HTTP, each test on a tenant of its own, at system times set by ``X-SGAM-Now``.
"""

from __future__ import annotations

from typing import Any

from tests.http_helpers import Client, assert_problem, candidate, declare
from tests.weak_helpers import at, buffer, known, say, weak, weak_tenant


def test_one_weak_signal_waits_and_a_second_independent_episode_promotes_it(
    http: Client,
) -> None:
    tenant = weak_tenant(http)
    [first] = say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    assert first["status"] == "buffered", first
    assert (first["fact"], first["supporting_episode_ids"]) == (None, None)
    assert known(http, tenant) is None
    [waiting] = buffer(http, tenant)
    assert (waiting["episode_id"], waiting["value"], waiting["valid_from"]) == (
        "e1",
        "csv",
        "2026-06-01T09:00:00Z",
    )
    assert waiting["expires_at"] == "2026-07-10T00:00:00Z"

    [second] = say(
        http, tenant, "e2", "CSV again, please.", weak("csv"), occurred_at="2026-06-03T09:00:00Z"
    )
    assert second["status"] == "written", second
    assert second["supporting_episode_ids"] == ["e1"]
    fact = second["fact"]
    assert (fact["value"], fact["source_episode_id"], fact["valid_from"]) == (
        "csv",
        "e2",
        "2026-06-01T09:00:00Z",
    )
    assert known(http, tenant) == "csv"
    assert buffer(http, tenant) == []
    # The supporting episode concerns the subject too.
    episode = http.get("/v1/episodes/e1", headers=tenant.headers).json()
    assert episode["subjects"] == ["mira"]


def test_the_same_episode_twice_does_not_promote(http: Client) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    [again] = say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    assert again["status"] == "buffered", again
    later = http.post(
        "/v1/episodes/e1/updates", json={"candidates": [weak("csv")]}, headers=at(tenant)
    )
    assert later.status_code == 200, later.text
    assert [r["status"] for r in later.json()["results"]] == ["buffered"]
    assert known(http, tenant) is None
    assert [s["episode_id"] for s in buffer(http, tenant)] == ["e1"]


def test_another_id_with_the_same_text_is_no_independent_episode(http: Client) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    [copy] = say(
        http,
        tenant,
        "e2",
        "Export that as CSV.",
        weak("csv"),
        occurred_at="2026-06-02T09:00:00Z",
    )
    assert copy["status"] == "buffered", copy
    assert "1 of 2" in copy["reason"]
    assert known(http, tenant) is None
    [third] = say(
        http, tenant, "e3", "CSV, as usual.", weak("csv"), occurred_at="2026-06-04T09:00:00Z"
    )
    assert third["status"] == "written", third
    assert third["supporting_episode_ids"] == ["e1"]
    assert third["fact"]["valid_from"] == "2026-06-01T09:00:00Z"


def test_a_confirmation_promotes_at_once(http: Client) -> None:
    tenant = weak_tenant(http)
    [alone] = say(http, tenant, "c1", "Yes, always CSV.", weak("csv"), kind="user_confirmation")
    assert alone["status"] == "written", alone
    assert alone["supporting_episode_ids"] == []
    assert known(http, tenant) == "csv"

    other = weak_tenant(http)
    say(http, other, "e1", "Export that as CSV.", weak("csv"))
    [confirmed] = say(
        http,
        other,
        "c1",
        "Yes, always CSV.",
        weak("csv"),
        occurred_at="2026-06-05T09:00:00Z",
        kind="user_confirmation",
    )
    assert confirmed["status"] == "written", confirmed
    assert confirmed["supporting_episode_ids"] == ["e1"]
    fact = confirmed["fact"]
    assert (fact["source_episode_id"], fact["source_kind"], fact["valid_from"]) == (
        "c1",
        "user_confirmation",
        "2026-06-01T09:00:00Z",
    )


def test_an_expired_signal_never_promotes(http: Client) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    # Thirty days on (the default window) it is no longer listed, though nothing wrote since.
    assert buffer(http, tenant, now="2026-07-09T23:59:59Z") != []
    assert buffer(http, tenant, now="2026-07-10T00:00:00Z") == []
    late = "2026-07-20T00:00:00Z"
    [second] = say(
        http, tenant, "e2", "CSV again, please.", weak("csv"), occurred_at=late, now=late
    )
    assert second["status"] == "buffered", second
    assert known(http, tenant, now=late) is None
    assert [s["episode_id"] for s in buffer(http, tenant, now=late)] == ["e2"]

    # A longer window keeps the first signal alive: the same pair promotes.
    patient = weak_tenant(http, weak_window_days=60)
    say(http, patient, "e1", "Export that as CSV.", weak("csv"))
    [promoted] = say(
        http, patient, "e2", "CSV again, please.", weak("csv"), occurred_at=late, now=late
    )
    assert promoted["status"] == "written", promoted


def test_a_different_value_does_not_count_towards_the_quorum(http: Client) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    [other] = say(
        http, tenant, "e2", "Maybe JSON?", weak("json"), occurred_at="2026-06-02T09:00:00Z"
    )
    assert other["status"] == "buffered", other
    assert known(http, tenant) is None
    [third] = say(http, tenant, "e3", "CSV again.", weak("csv"), occurred_at="2026-06-03T09:00:00Z")
    assert (third["status"], third["supporting_episode_ids"]) == ("written", ["e1"])
    assert [(s["episode_id"], s["value"]) for s in buffer(http, tenant)] == [("e2", "json")]


def test_strong_candidates_take_effect_at_once_beside_weak_ones(http: Client) -> None:
    tenant = weak_tenant(http)
    declare(http, tenant.headers, "city", "string")
    strong = candidate("mira", "city", "Oslo", evidence="Oslo", change="new")
    results = say(http, tenant, "e1", "I live in Oslo; CSV please.", strong, weak("csv"))
    assert [r["status"] for r in results] == ["written", "buffered"]
    assert results[0]["supporting_episode_ids"] is None
    assert http.get("/v1/facts/mira/city", headers=at(tenant)).json()["value"] == "Oslo"
    assert [s["attribute"] for s in buffer(http, tenant)] == ["export_format"]


def test_the_quorum_is_declared_per_attribute(http: Client) -> None:
    tenant = weak_tenant(http, weak_quorum=3)
    stored = http.get("/v1/attributes", headers=tenant.headers).json()
    [attribute] = [a for a in stored["attributes"] if a["attribute"] == "export_format"]
    assert (attribute["weak_quorum"], attribute["weak_window_days"]) == (3, 30)
    texts = ("Export that as CSV.", "CSV again.", "CSV, as usual.")
    statuses = [
        say(http, tenant, f"e{n}", text, weak("csv"))[0]["status"]
        for n, text in enumerate(texts, 1)
    ]
    assert statuses == ["buffered", "buffered", "written"]
    eager = weak_tenant(http, weak_quorum=1)
    assert say(http, eager, "e1", texts[0], weak("csv"))[0]["status"] == "written"
    for field, value in (("weak_quorum", 0), ("weak_quorum", 101), ("weak_window_days", 0)):
        refused = http.put(
            "/v1/attributes/other",
            json={"value_type": "string", field: value},
            headers=tenant.headers,
        )
        assert_problem(refused, 422, "invalid", field=field)


def test_weak_candidates_are_checked_like_any_other(http: Client) -> None:
    tenant = weak_tenant(http)
    declare(http, tenant.headers, "seats", "integer")
    results = say(
        http,
        tenant,
        "e1",
        "Ten seats, in CSV.",
        weak("csv", attribute="undeclared"),
        weak("ten", attribute="seats"),
    )
    assert [(r["status"], r["field"]) for r in results] == [
        ("invalid", "attribute"),
        ("invalid", "value"),
    ]
    assert buffer(http, tenant) == []


def test_the_buffer_lists_pages_and_filters_within_its_tenant(http: Client) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "CSV for Mira.", weak("csv"))
    say(http, tenant, "e2", "CSV for Kai.", weak("csv", subject="kai"), now="2026-06-11T00:00:00Z")
    assert [s["subject"] for s in buffer(http, tenant)] == ["mira", "kai"]
    assert [s["subject"] for s in buffer(http, tenant, subject="kai")] == ["kai"]
    first = http.get("/v1/buffer", params={"limit": 1}, headers=at(tenant)).json()
    assert [s["subject"] for s in first["signals"]] == ["mira"]
    rest = http.get(
        "/v1/buffer", params={"limit": 1, "cursor": first["next_cursor"]}, headers=at(tenant)
    ).json()
    assert ([s["subject"] for s in rest["signals"]], rest["next_cursor"]) == (["kai"], None)
    bad = http.get("/v1/buffer", params={"cursor": "nope"}, headers=at(tenant))
    assert_problem(bad, 422, "invalid", field="cursor")

    stranger = weak_tenant(http)
    assert buffer(http, stranger) == []
    say(http, stranger, "e1", "CSV for Mira.", weak("csv"))
    # The other tenant's signal for the same key and text does not count here either.
    assert known(http, stranger) is None
    assert [s["subject"] for s in buffer(http, tenant)] == ["mira", "kai"]


def test_a_weak_signal_may_not_go_back_in_system_time(http: Client) -> None:
    tenant = weak_tenant(http)
    strong = candidate("mira", "export_format", "json", evidence="JSON", change="new")
    say(http, tenant, "e1", "JSON, please.", strong)
    [late] = say(http, tenant, "e2", "CSV?", weak("csv"), now="2026-06-09T00:00:00Z")
    assert (late["status"], late["field"]) == ("invalid", "now")
    assert buffer(http, tenant) == []
    assert known(http, tenant) == "json"


def test_a_subjects_export_holds_its_buffered_signals_until_they_are_promoted(
    http: Client,
) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    say(http, tenant, "o1", "Otto wants it as CSV too.", weak("csv", subject="otto"))

    def exported(subject: str) -> list[Any]:
        response = http.get(f"/v1/subjects/{subject}/export", headers=at(tenant))
        assert response.status_code == 200, response.text
        signals: list[Any] = response.json()["weak_signals"]
        return signals

    # Each subject's export holds its own signals, as the buffer lists them.
    assert exported("mira") == buffer(http, tenant, subject="mira")
    assert [(s["episode_id"], s["value"]) for s in exported("mira")] == [("e1", "csv")]
    assert [(s["episode_id"], s["value"]) for s in exported("otto")] == [("o1", "csv")]
    say(http, tenant, "e2", "CSV again, please.", weak("csv"), occurred_at="2026-06-03T09:00:00Z")
    assert exported("mira") == []
    assert [s["episode_id"] for s in exported("otto")] == ["o1"]
