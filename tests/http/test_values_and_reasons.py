"""Values PostgreSQL would refuse are refused per candidate, reasons are short and worded for
users, and a request body must be JSON, sent as JSON, without repeated keys."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ApiTenant
from tests.http_helpers import (
    ADMIN,
    Client,
    assert_problem,
    candidate,
    declare,
    make_tenant,
)

MAX_REASON = 200
"""A reason names what is wrong; it never echoes a long input whole."""


@pytest.fixture(scope="module")
def tenant(http: Client) -> ApiTenant:
    """A tenant with one attribute of each troublesome type."""
    made = make_tenant(http, "values")
    for attribute, value_type in (
        ("n_str", "string"),
        ("n_json", "json"),
        ("n_number", "number"),
        ("n_integer", "integer"),
        ("n_date", "date"),
    ):
        declare(http, made.headers, attribute, value_type)
    return made


_episodes = iter(range(1, 10_000))


def post_candidates(http: Client, tenant: ApiTenant, *updates: dict[str, Any]) -> Any:
    """Record a new episode carrying ``updates``: the response."""
    body = {
        "id": f"values-{next(_episodes)}",
        "occurred_at": "2026-03-01T09:00:00Z",
        "text": "a value to remember",
        "updates": list(updates),
    }
    return http.post("/v1/episodes", json=body, headers=tenant.headers)


def one_result(http: Client, tenant: ApiTenant, attribute: str, value: str) -> dict[str, Any]:
    """The result of one candidate proposing ``value`` for ``ada.<attribute>``."""
    response = post_candidates(http, tenant, candidate("ada", attribute, value))
    assert response.status_code == 200, response.text
    [result] = response.json()["results"]
    assert isinstance(result, dict)
    return result


def assert_invalid_value(result: dict[str, Any], *words: str) -> str:
    """``result`` refuses the value with a short reason holding ``words``: the reason."""
    assert result["status"] == "invalid", result
    assert result["field"] == "value", result
    reason = result["reason"]
    assert isinstance(reason, str)
    assert 0 < len(reason) <= MAX_REASON, reason
    for word in words:
        assert word in reason, reason
    return reason


@pytest.mark.parametrize(
    ("attribute", "first", "again"),
    [
        ("n_number", "1e20", "1e20"),
        ("n_number", "1e20", "100000000000000000000"),
        ("n_json", '{"x": 1e20}', '{"x": 1e20}'),
    ],
)
def test_a_large_number_asserted_again_is_unchanged_not_a_conflict(
    http: Client, tenant: ApiTenant, attribute: str, first: str, again: str
) -> None:
    # The first is read back from jsonb as an integer; the same number again is a repeat.
    subject = f"big-{attribute}-{len(again)}"

    def result(value: str) -> Any:
        response = post_candidates(http, tenant, candidate(subject, attribute, value))
        assert response.status_code == 200, response.text
        return response.json()["results"][0]

    assert result(first)["status"] == "written"
    assert result(again)["status"] == "unchanged"


# -- values PostgreSQL would refuse -----------------------------------------------------------


def test_a_json_null_is_a_value_stored_and_read_back_as_json_null(
    http: Client, tenant: ApiTenant
) -> None:
    # A json attribute's value "null" is JSON null: written, read back, and the same again is
    # unchanged (it was once sent to the database as SQL NULL and answered 409).
    def result() -> Any:
        response = post_candidates(http, tenant, candidate("nel", "n_json", "null"))
        assert response.status_code == 200, response.text
        return response.json()["results"][0]

    first = result()
    assert (first["status"], first["fact"]["value"]) == ("written", None), first
    again = result()
    assert again["status"] == "unchanged", again
    current = http.get("/v1/facts/nel/n_json", headers=tenant.headers)
    assert current.status_code == 200, current.text
    assert current.json()["value"] is None


def test_a_json_value_the_database_refuses_is_invalid_and_its_siblings_are_written(
    http: Client, tenant: ApiTenant
) -> None:
    response = post_candidates(
        http, tenant, candidate("bo", "n_str", "good"), candidate("bo", "n_json", "1e400")
    )

    assert response.status_code == 200, response.text
    written, refused = response.json()["results"]
    assert (written["index"], written["status"]) == (0, "written"), written
    assert written["fact"]["value"] == "good"
    assert refused["index"] == 1
    assert_invalid_value(refused, "out of range")
    fact = http.get("/v1/facts/bo/n_str", headers=tenant.headers)
    assert fact.status_code == 200, fact.text
    assert fact.json()["value"] == "good"
    missing = http.get("/v1/facts/bo/n_json", headers=tenant.headers)
    assert missing.status_code == 404, missing.text


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("1e400", ("out of range",)),
        ("-1e400", ("out of range",)),
        ('{"a": [1, 2.5e999]}', ("out of range",)),
        ("1e-400", ("too small",)),
        ("[0.5, -4e-999]", ("too small",)),
        ('"\\ud800"', ("unpaired surrogate",)),
        ('{"\\udfff": 1}', ("unpaired surrogate",)),
        ('"a\\u0000b"', ("NUL",)),
        ("1" * 5000, ("digits",)),
        ("[" * 5000 + "]" * 5000, ("nests",)),
    ],
    ids=[
        "overflow",
        "negative-overflow",
        "nested-overflow",
        "underflow",
        "nested-underflow",
        "lone-surrogate",
        "surrogate-key",
        "nul",
        "huge-integer",
        "deep",
    ],
)
def test_a_json_value_the_database_cannot_keep_is_refused_with_a_reason(
    http: Client, tenant: ApiTenant, value: str, words: tuple[str, ...]
) -> None:
    reason = assert_invalid_value(one_result(http, tenant, "n_json", value), *words)

    assert "sys." not in reason
    assert "recursion" not in reason


@pytest.mark.parametrize(
    ("attribute", "value", "kept"),
    [("n_json", "[0e-400, 0.0, 1e-300, 0.25]", [0, 0, 1e-300, 0.25]), ("n_number", "0e-400", 0)],
)
def test_zero_and_small_numbers_that_fit_are_kept(
    http: Client, tenant: ApiTenant, attribute: str, value: str, kept: Any
) -> None:
    result = one_result(http, tenant, attribute, value)

    assert (result["status"], result["fact"]["value"]) == ("written", kept), result


@pytest.mark.parametrize(
    ("value", "word"),
    [
        ("1e-400", "too small"),
        ("-2.5E-999", "too small"),
        ("1e400", "out of range"),
        ("sNaN", "finite"),
    ],
)
def test_a_number_that_does_not_fit_a_double_is_refused(
    http: Client, tenant: ApiTenant, value: str, word: str
) -> None:
    assert_invalid_value(one_result(http, tenant, "n_number", value), word)


# -- reasons ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("n_number", "9" * 5000),
        ("n_number", "x" * 5000),
        ("n_integer", "y" * 5000),
        ("n_date", "z" * 5000),
        ("n_json", "q" * 5000),
    ],
    ids=["number-overflow", "not-a-number", "not-an-integer", "not-a-date", "not-json"],
)
def test_a_reason_cuts_the_input_it_quotes(
    http: Client, tenant: ApiTenant, attribute: str, value: str
) -> None:
    reason = assert_invalid_value(one_result(http, tenant, attribute, value))

    assert value[:40] in reason
    assert "…" in reason


def test_a_shape_reason_cuts_the_input_it_quotes(http: Client, tenant: ApiTenant) -> None:
    update = candidate("ada", "n_str", "fine", valid_from="t" * 5000)

    response = post_candidates(http, tenant, update)

    assert response.status_code == 200, response.text
    [result] = response.json()["results"]
    assert (result["status"], result["field"]) == ("invalid", "valid_from"), result
    assert len(result["reason"]) <= MAX_REASON, result["reason"]
    assert "…" in result["reason"]


def test_a_problem_detail_cuts_the_input_it_quotes(http: Client, tenant: ApiTenant) -> None:
    body = {"id": "long-time", "occurred_at": "t" * 5000, "text": "a long time"}

    response = http.post("/v1/episodes", json=body, headers=tenant.headers)

    problem = assert_problem(response, 422, "invalid", field="occurred_at")
    assert len(problem["detail"]) <= MAX_REASON, problem["detail"]


# -- bodies that are not JSON -----------------------------------------------------------------

EPISODE = {"id": "typed", "occurred_at": "2026-03-01T09:00:00Z", "text": "typed body"}


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/xml", None],
)
def test_a_body_not_sent_as_json_is_refused_with_415(
    http: Client, tenant: ApiTenant, content_type: str | None
) -> None:
    headers = {**tenant.headers}
    if content_type is not None:
        headers["Content-Type"] = content_type

    response = http.post("/v1/episodes", content=json.dumps(EPISODE).encode(), headers=headers)

    problem = assert_problem(response, 415, "unsupported_media_type", field="Content-Type")
    assert "application/json" in problem["detail"]
    assert http.get("/v1/episodes/typed", headers=tenant.headers).status_code == 404


def test_an_admin_body_not_sent_as_json_is_refused_with_415(http: Client) -> None:
    headers = {**ADMIN, "Content-Type": "text/plain"}

    response = http.post("/v1/admin/tenants", content=b'{"tenant_id": "plain"}', headers=headers)

    assert_problem(response, 415, "unsupported_media_type", field="Content-Type")
    assert http.post("/v1/admin/tenants/plain/keys", headers=ADMIN).status_code == 404


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "APPLICATION/JSON", "application/x+json"]
)
def test_json_media_types_are_accepted(http: Client, tenant: ApiTenant, content_type: str) -> None:
    body = {**EPISODE, "id": f"typed-{len(content_type)}-{content_type[-4:]}"}
    headers = {**tenant.headers, "Content-Type": content_type}

    response = http.post("/v1/episodes", content=json.dumps(body).encode(), headers=headers)

    assert response.status_code == 200, response.text


# -- repeated keys ----------------------------------------------------------------------------


HEAD = '{"occurred_at": "2026-03-01T09:00:00Z", "text": "t", '
CANDIDATE = '"evidence": "", "subject": "ada", "attribute": "n_str", "change": "new"'
REPEATS = {
    "top-level": (HEAD + '"id": "dup-1", "id": "dup-2"}', "id", "id"),
    "in-a-candidate": (
        HEAD + f'"id": "dup-3", "updates": [{{{CANDIDATE}, "value": "a", "value": "b"}}]}}',
        "value",
        "updates.0.value",
    ),
    "in-metadata": (
        HEAD + '"id": "dup-4", "metadata": {"a": {"b": 1, "b": 2}}}',
        "b",
        "metadata.a.b",
    ),
}


@pytest.mark.parametrize("case", list(REPEATS))
def test_a_repeated_key_is_refused_naming_it(http: Client, tenant: ApiTenant, case: str) -> None:
    raw, key, field = REPEATS[case]
    headers = {**tenant.headers, "Content-Type": "application/json"}

    response = http.post("/v1/episodes", content=raw.encode(), headers=headers)

    problem = assert_problem(response, 422, "invalid", field=field)
    assert f'"{key}"' in problem["detail"], problem
    for episode_id in ("dup-1", "dup-2", "dup-3", "dup-4"):
        assert http.get(f"/v1/episodes/{episode_id}", headers=tenant.headers).status_code == 404


def test_the_same_key_in_sibling_objects_is_not_repeated(http: Client, tenant: ApiTenant) -> None:
    raw = HEAD + '"id": "siblings", "metadata": {"a": {"k": 1}, "b": {"k": 2}}}'
    headers = {**tenant.headers, "Content-Type": "application/json"}

    response = http.post("/v1/episodes", content=raw.encode(), headers=headers)

    assert response.status_code == 200, response.text
    assert response.json()["metadata"] == {"a": {"k": 1}, "b": {"k": 2}}


def test_a_request_without_a_body_needs_no_content_type(http: Client) -> None:
    created = http.post("/v1/admin/tenants", json={"tenant_id": "no-body-key"}, headers=ADMIN)
    assert created.status_code == 201, created.text

    issued = http.post("/v1/admin/tenants/no-body-key/keys", headers=ADMIN)

    assert issued.status_code == 201, issued.text
