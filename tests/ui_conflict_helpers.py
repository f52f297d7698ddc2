"""What the pages' action tests share: an open conflict made over the API, and its state read
back over the API (never through the pages under test)."""

from __future__ import annotations

from typing import Any

from tests.ui_helpers import Http, Key

START = "2026-06-01T00:00:00Z"


def make_conflict(
    http: Http,
    key: Key,
    *,
    subject: str = "ada",
    values: tuple[str, str] = ("Oslo", "Bergen"),
    value_type: str = "string",
) -> str:
    """An open conflict on ``subject``'s ``city`` (an attribute of ``value_type``): two
    messages claim the same start and the attribute's policy leaves the choice open. Its id."""
    at = key.headers(START)
    declared = http.put(
        "/v1/attributes/city",
        json={
            "value_type": value_type,
            "description": "city",
            "on_equal_start": "source_precedence",
        },
        headers=at,
    )
    assert declared.status_code == 200, declared.text
    for n, value in enumerate(values):
        recorded = http.post(
            "/v1/episodes",
            json={
                "id": f"{subject}-{n}",
                "occurred_at": START,
                "text": f"{subject} lives in {value}.",
                "updates": [
                    {
                        "subject": subject,
                        "attribute": "city",
                        "change": "new",
                        "value": value,
                        "valid_from": START,
                        "evidence": f"lives in {value}",
                    }
                ],
            },
            headers=at,
        )
        assert recorded.status_code == 200, recorded.text
    assert recorded.json()["results"][0]["status"] == "conflict", recorded.text
    [conflict] = conflicts(http, key, subject=subject)
    conflict_id: str = conflict["conflict_id"]
    return conflict_id


def conflicts(http: Http, key: Key, *, subject: str, status: str = "open") -> list[Any]:
    """The subject's conflicts of ``status``, as the API lists them."""
    listed = http.get(
        "/v1/conflicts", params={"subject": subject, "status": status}, headers=key.headers()
    )
    assert listed.status_code == 200, listed.text
    found: list[Any] = listed.json()["conflicts"]
    return found


def city(http: Http, key: Key, subject: str = "ada") -> Any:
    """The subject's city as the API reads it now."""
    read = http.get(f"/v1/facts/{subject}/city", headers=key.headers())
    assert read.status_code == 200, read.text
    return read.json()["value"]
