"""The operator's log: one JSON line per request, its id echoed, refusals named, no content.

Requests go through the real app (routing, auth, error mapping, store); the log is captured
with the JSON handler ``sgam serve`` writes through, and read back line by line.
"""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from server.runtime.logs import OWN, json_handler
from tests.helpers import owner_connection
from tests.http_helpers import Client, assert_problem, candidate, declare, make_tenant, record

REQUEST_ID = "X-Request-ID"
UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


class CapturedLog:
    """Every line the server's loggers write while a test runs, as the JSON handler writes it."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    @property
    def text(self) -> str:
        """The log as written."""
        return self.stream.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        """Each line parsed: every one must be one JSON object."""
        parsed = [json.loads(line) for line in self.text.splitlines()]
        assert all(isinstance(line, dict) for line in parsed)
        return parsed

    def of(self, request_id: str) -> list[dict[str, Any]]:
        """The lines written for one request."""
        return [line for line in self.lines() if line.get("request_id") == request_id]

    def requests(self) -> list[dict[str, Any]]:
        """The request lines."""
        return [line for line in self.lines() if line["logger"] == "server.requests"]


@pytest.fixture
def captured() -> Iterator[CapturedLog]:
    """The log of the server's own packages (and any library's warnings), captured."""
    log = CapturedLog()
    handler = json_handler(log.stream)
    # The test client's own log (httpx) names whole URLs: it is not the server's.
    handler.addFilter(lambda record: not record.name.startswith(("httpx", "httpcore")))
    root = logging.getLogger()
    own = [logging.getLogger(name) for name in OWN]
    levels = [logger.level for logger in own]
    root.addHandler(handler)
    for logger in own:
        logger.setLevel(logging.INFO)  # as configure_logging sets them
    try:
        yield log
    finally:
        root.removeHandler(handler)
        for logger, level in zip(own, levels, strict=True):
            logger.setLevel(level)


def _without_time(line: dict[str, Any]) -> dict[str, Any]:
    """The line less its timestamp and, on a request line, its duration (both checked)."""
    assert isinstance(line.pop("time"), str)
    if line["logger"] == "server.requests":
        duration = line.pop("duration_ms")
        assert isinstance(duration, float | int)
        assert duration >= 0
    return line


# -- the request id --------------------------------------------------------------------------


def test_a_well_formed_request_id_is_echoed_on_every_answer(http: Client) -> None:
    for given in ("trace-42.a:b_c", "0" * 128, "a"):
        answers = [
            http.get("/healthz", headers={REQUEST_ID: given}),
            http.get("/v1/no-such-route", headers={REQUEST_ID: given}),  # 404 from routing
            http.delete("/healthz", headers={REQUEST_ID: given}),  # 405 from routing
            http.get("/v1/attributes", headers={REQUEST_ID: given}),  # 401: no key
        ]
        assert [(a.status_code, a.headers[REQUEST_ID]) for a in answers] == [
            (200, given),
            (404, given),
            (405, given),
            (401, given),
        ]


def test_a_missing_or_malformed_request_id_is_replaced_by_a_new_one(http: Client) -> None:
    offered: list[dict[str, str]] = [
        {},
        {REQUEST_ID: ""},
        {REQUEST_ID: "has space"},
        {REQUEST_ID: 'quote"and;semicolon'},
        {REQUEST_ID: "x" * 129},
    ]
    answered = [http.get("/healthz", headers=headers).headers[REQUEST_ID] for headers in offered]
    answered.append(http.get("/v1/no-such-route").headers[REQUEST_ID])
    assert all(UUID_TEXT.fullmatch(rid) for rid in answered), answered
    assert len(set(answered)) == len(answered)


def test_the_request_id_is_documented_on_every_answer_that_succeeds(http: Client) -> None:
    document = http.get("/schema/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            successes = [s for s in operation["responses"] if s.startswith("2")]
            assert successes, (method, path)
            for status in successes:
                header = operation["responses"][status]["headers"][REQUEST_ID]
                assert (header["required"], header["schema"]) == (True, {"type": "string"})


# -- one line per request --------------------------------------------------------------------


def test_each_request_is_one_json_line_naming_its_route_status_problem_and_tenant(
    http: Client, captured: CapturedLog
) -> None:
    tenant = make_tenant(http, "logged")
    fact = "/v1/facts/mira/passport_deadline"
    refused = http.get(fact, params={"valid_at": "soon"}, headers=tenant.headers)
    assert_problem(refused, 422, "invalid", field="valid_at")
    missing = http.get(fact, headers=tenant.headers)
    assert_problem(missing, 404, "not_found")
    listed = http.get("/v1/attributes", headers={**tenant.headers, REQUEST_ID: "listed-1"})
    assert listed.status_code == 200
    stranger = http.get("/v1/attributes", headers={"Authorization": "Bearer sgam_nobody"})
    assert_problem(stranger, 401, "unauthorized")
    lost = http.get("/v1/nothing/here")
    assert_problem(lost, 404, "not_found")

    requests = [
        _without_time(line) for line in captured.lines() if line["logger"] == "server.requests"
    ]
    route = "/v1/facts/{subject}/{attribute}"
    line = {"level": "INFO", "logger": "server.requests", "message": "request"}
    assert requests[-5:] == [
        {
            **line,
            "method": "GET",
            "route": route,
            "status": 422,
            "code": "invalid",
            "field": "valid_at",
            "tenant_id": tenant.name,
            "request_id": refused.headers[REQUEST_ID],
        },
        {
            **line,
            "method": "GET",
            "route": route,
            "status": 404,
            "code": "not_found",
            "field": missing.json().get("field"),
            "tenant_id": tenant.name,
            "request_id": missing.headers[REQUEST_ID],
        },
        {
            **line,
            "method": "GET",
            "route": "/v1/attributes",
            "status": 200,
            "code": None,
            "field": None,
            "tenant_id": tenant.name,
            "request_id": "listed-1",
        },
        {
            **line,
            "method": "GET",
            "route": "/v1/attributes",
            "status": 401,
            "code": "unauthorized",
            "field": "Authorization",
            "tenant_id": None,
            "request_id": stranger.headers[REQUEST_ID],
        },
        {
            **line,
            "method": "GET",
            "route": None,
            "status": 404,
            "code": "not_found",
            "field": None,
            "tenant_id": None,
            "request_id": lost.headers[REQUEST_ID],
        },
    ]
    assert len(captured.requests()) == 2 + 5  # the tenant and its key, then the five calls


SERVER_PROCESS = """
import logging.config
from uvicorn.config import LOGGING_CONFIG
from server.runtime.logs import configure_logging

logging.config.dictConfig(LOGGING_CONFIG)  # what uvicorn sets up before it builds the app
configure_logging()
print(logging.getLogger("uvicorn.access").hasHandlers())
logging.getLogger("uvicorn.error").info("Started %d", 7, extra={"color_message": "coloured"})
logging.getLogger("server.requests").info("request", extra={"status": 200, "duration_ms": 1.5})
logging.getLogger("store.somewhere").debug("not at the info level")
"""


def test_a_server_process_writes_json_lines_and_no_uvicorn_access_line() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SERVER_PROCESS],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert run.stdout == "False\n"  # uvicorn then skips its access line altogether
    lines = [json.loads(line) for line in run.stderr.splitlines()]
    assert [_without_time(line) for line in lines] == [
        {"level": "INFO", "logger": "uvicorn.error", "message": "Started 7", "request_id": None},
        {
            "level": "INFO",
            "logger": "server.requests",
            "message": "request",
            "status": 200,
            "request_id": None,
        },
    ]


# -- database refusals -----------------------------------------------------------------------


@pytest.fixture
def refusing_tickets(pool: ConnectionPool) -> Iterator[str]:
    """A database rule the store does not check first: no episode of kind ``ticket``."""
    name = "episodes_no_tickets_here"
    with owner_connection(pool) as conn:
        conn.execute(f"ALTER TABLE episodes ADD CONSTRAINT {name} CHECK (kind <> 'ticket')")
    try:
        yield name
    finally:
        with owner_connection(pool) as conn:
            conn.execute(f"ALTER TABLE episodes DROP CONSTRAINT {name}")


def test_a_database_refusal_is_logged_with_its_sqlstate_and_constraint(
    http: Client, captured: CapturedLog, refusing_tickets: str
) -> None:
    tenant = make_tenant(http, "refused")
    episode = {"id": "t1", "occurred_at": "2026-03-01T09:00:00Z", "text": "a", "kind": "ticket"}
    refused = http.post("/v1/episodes", json=episode, headers=tenant.headers)
    assert_problem(refused, 409, "conflict")
    lines = [_without_time(line) for line in captured.of(refused.headers[REQUEST_ID])]
    assert lines == [
        {
            "level": "WARNING",
            "logger": "server.http.problems",
            "message": "database refusal",
            "error": "Conflict",
            "code": "conflict",
            "status": 409,
            "sqlstate": "23514",
            "constraint": refusing_tickets,
            "table": "episodes",
            "request_id": refused.headers[REQUEST_ID],
        },
        {
            "level": "INFO",
            "logger": "server.requests",
            "message": "request",
            "method": "POST",
            "route": "/v1/episodes",
            "status": 409,
            "code": "conflict",
            "field": None,
            "tenant_id": tenant.name,
            "request_id": refused.headers[REQUEST_ID],
        },
    ]


# -- no content ------------------------------------------------------------------------------


def test_the_log_carries_no_text_values_keys_or_query_values(
    http: Client, captured: CapturedLog, refusing_tickets: str
) -> None:
    tenant = make_tenant(http, "private")
    api_key = tenant.headers["Authorization"].removeprefix("Bearer ")
    secrets = {
        "text": "Okapi-Quartz-7781 said the vault code changed.",
        "value": "marmalade-9931",
        "subject": "okapi-5521",
        "query": "quokka-4410",
        "question": "nectarine-3306",
        "bad_key": "sgam_pepper8812",
        "bad_value": "tangerine-6617",
        "ticket": "ticket-text-2290",
    }
    declare(http, tenant.headers, "vault_code", "string")
    record(
        http,
        tenant.headers,
        "e1",
        secrets["text"],
        updates=[candidate(secrets["subject"], "vault_code", secrets["value"])],
    )
    subject = secrets["subject"]
    calls = [
        http.get(f"/v1/facts/{subject}/vault_code", headers=tenant.headers),
        http.get(
            f"/v1/subjects/{subject}/profile",
            params={"valid_at": "2026-04-01T00:00:00Z", "known_at": secrets["bad_value"]},
            headers=tenant.headers,
        ),
        http.get("/v1/episodes/e1", headers=tenant.headers),
        http.post(
            "/v1/evidence/search", json={"query": secrets["query"], "k": 3}, headers=tenant.headers
        ),
        http.post("/v1/context", json={"question": secrets["question"]}, headers=tenant.headers),
        http.get("/v1/attributes", headers={"Authorization": f"Bearer {secrets['bad_key']}"}),
        http.put(
            "/v1/attributes/vault_code",
            json={"value_type": secrets["bad_value"]},
            headers=tenant.headers,
        ),
        http.post(
            "/v1/episodes",
            json={
                "occurred_at": "2026-03-01T09:00:00Z",
                "text": secrets["ticket"],
                "kind": "ticket",
            },
            headers=tenant.headers,
        ),
    ]
    assert [call.status_code for call in calls] == [200, 422, 200, 200, 200, 401, 422, 409]
    # Every call was logged (so the capture works), and nothing it carried was.
    assert len(captured.requests()) >= len(calls)
    logged = captured.text
    for name, secret in [*secrets.items(), ("api key", api_key)]:
        assert secret not in logged, name
