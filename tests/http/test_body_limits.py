"""A body past a limit is refused (422 naming where, 413 past the size) before it is read further,
records nothing, and the OpenAPI document states every limit."""

from __future__ import annotations

import json

import pytest

from server.http.body_scan import MAX_DEPTH, MAX_ITEMS, MAX_STRING
from server.http.json_bodies import INLINE_SCAN_BYTES
from tests.http_helpers import ADMIN, Client, assert_problem, make_tenant

JSON_TYPE = {"Content-Type": "application/json"}
GARBAGE = b"!! not JSON from here on"
"""After the item past a limit: had the body been decoded whole, it would be refused as not JSON
(400); a refusal naming the limit shows the server stopped reading before it."""


def _episode(**more: object) -> dict[str, object]:
    return {"id": "limits-1", "occurred_at": "2026-03-01T09:00:00Z", "text": "t", **more}


def test_a_body_past_the_item_limit_is_refused_where_it_passes_it_before_the_rest_is_read(
    http: Client,
) -> None:
    key = make_tenant(http, "limits").headers
    head = json.dumps(_episode())[:-1].encode() + b', "metadata": {"many": ['
    body = head + b"0," * (MAX_ITEMS + 1) + GARBAGE

    response = http.post("/v1/episodes", content=body, headers={**key, **JSON_TYPE})

    # id, occurred_at, text, metadata and many are five items: element MAX_ITEMS - 5 is one over.
    problem = assert_problem(response, 422, "invalid", field=f"metadata.many.{MAX_ITEMS - 5}")
    assert problem["detail"] == (
        f"the JSON body holds more than {MAX_ITEMS:,} array elements and object members"
    )
    assert http.get("/v1/episodes/limits-1", headers=key).status_code == 404


def test_a_body_nested_past_the_depth_limit_is_refused_naming_where(http: Client) -> None:
    body = b'{"tenant_id": "deep", "x": ' + b"[" * MAX_DEPTH + GARBAGE

    response = http.post("/v1/admin/tenants", content=body, headers={**ADMIN, **JSON_TYPE})

    problem = assert_problem(response, 422, "invalid", field="x" + ".0" * (MAX_DEPTH - 1))
    assert problem["detail"] == f"the JSON body nests deeper than {MAX_DEPTH} levels"
    assert http.get("/v1/admin/tenants/deep", headers=ADMIN).status_code == 404


def test_a_string_past_the_length_limit_is_refused_naming_its_field(http: Client) -> None:
    key = make_tenant(http, "limits").headers
    body = json.dumps(_episode(session_id="s" * (MAX_STRING + 1))).encode()

    response = http.post("/v1/episodes", content=body, headers={**key, **JSON_TYPE})

    problem = assert_problem(response, 422, "invalid", field="session_id")
    assert problem["detail"] == f"the string is longer than {MAX_STRING:,} characters"
    assert http.get("/v1/episodes/limits-1", headers=key).status_code == 404


def test_a_body_within_every_limit_is_read_whole(http: Client) -> None:
    key = make_tenant(http, "limits").headers
    metadata = {"many": [0] * (MAX_ITEMS // 4), "note": "n" * 1000}

    response = http.post("/v1/episodes", json=_episode(metadata=metadata), headers=key)

    assert response.status_code == 200, response.text
    assert response.json()["metadata"] == metadata


@pytest.mark.parametrize("padding", [0, INLINE_SCAN_BYTES], ids=["small", "large"])
def test_a_repeated_key_is_refused_in_a_small_body_and_a_large_one(
    http: Client, padding: int
) -> None:
    # A small body is scanned on the event loop, a larger one in the scan pool: same rules.
    key = make_tenant(http, "limits").headers
    body = json.dumps(_episode(text="t" * padding))[:-1].encode() + b', "id": "limits-2"}'
    assert (len(body) <= INLINE_SCAN_BYTES) == (padding == 0)

    response = http.post("/v1/episodes", content=body, headers={**key, **JSON_TYPE})

    problem = assert_problem(response, 422, "invalid", field="id")
    assert problem["detail"] == 'the JSON body repeats the key "id"'
    assert http.get("/v1/episodes/limits-1", headers=key).status_code == 404
    assert http.get("/v1/episodes/limits-2", headers=key).status_code == 404


@pytest.mark.parametrize(
    "stated",
    [
        "at most 262,144 bytes",
        f"nest at most {MAX_DEPTH} arrays and objects",
        f"at most {MAX_ITEMS:,} array elements and object members",
        f"longer than {MAX_STRING:,} characters",
    ],
)
def test_the_openapi_document_states_each_body_limit(http: Client, stated: str) -> None:
    description = http.get("/schema/openapi.json").json()["info"]["description"]

    assert stated in description
