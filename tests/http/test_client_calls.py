"""The client's pure layer: each call's method, path, query and body, one method per route,
and each problem code raised as its own error (no database: a mock transport or the app's
route table).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.client import (
    Call,
    Conflict,
    Forbidden,
    InvalidInput,
    LegalHold,
    NotFound,
    SGAMClient,
    SGAMError,
    TooLarge,
    Unauthorized,
    Unavailable,
    calls,
    checkpoint_calls,
    episodic_calls,
    procedure_calls,
    read_calls,
    receipt_calls,
    retention_calls,
    weak_signal_calls,
)
from server.client.base import Route, Routes
from server.http.problems import problem_response
from store.contract.problems import PROBLEM_MEDIA_TYPE


def test_a_call_names_method_path_query_and_body_and_sends_instants_as_rfc3339() -> None:
    at = datetime(2026, 6, 2, tzinfo=UTC)
    read = calls.fact("account:42", "tier", valid_at=at, known_at="2026-06-03T00:00:00Z")
    assert (read.method, read.path, read.params, read.body) == (
        "GET",
        "/v1/facts/account:42/tier",
        {"valid_at": "2026-06-02T00:00:00+00:00", "known_at": "2026-06-03T00:00:00Z"},
        None,
    )
    retraction = calls.retract("mira", "passport_deadline", valid_from=at)
    assert (retraction.method, retraction.path, retraction.body) == (
        "POST",
        "/v1/facts/mira/passport_deadline/retract",
        {"valid_from": "2026-06-02T00:00:00+00:00"},
    )
    # "." and ".." are valid ids; they must not read as dot segments of the URL.
    assert read_calls.profile("..").path == "/v1/subjects/%2E%2E/profile"
    assert calls.episode("a/b").path == "/v1/episodes/a%2Fb"


SAMPLE_CALLS: dict[str, Call[Any]] = {
    "create_tenant": calls.create_tenant("acme"),
    "tenant": calls.tenant("acme"),
    "change_tenant": calls.change_tenant("acme", on_unverified_evidence="refuse"),
    "create_key": calls.create_key("acme"),
    "revoke_key": calls.revoke_key(UUID(int=1)),
    "declare_attribute": calls.declare_attribute("tier", "string"),
    "migrate_attribute": calls.migrate_attribute("tier", {"value_type": "string"}),
    "attributes": calls.attributes(),
    "memory_update_schema": calls.memory_update_schema(),
    "record_episode": calls.record_episode("text", "2026-06-01T00:00:00Z"),
    "record_batch": calls.record_batch([]),
    "episode": calls.episode("e1"),
    "apply_candidates": calls.apply_candidates("e1", []),
    "erase_episode": calls.erase_episode("e1"),
    "record_outcome": episodic_calls.record_outcome("e1", "succeeded"),
    "outcome": episodic_calls.outcome("e1"),
    "retry_extraction": episodic_calls.retry_extraction("e1"),
    "experiences": episodic_calls.experiences("a deploy"),
    "fact": calls.fact("mira", "tier"),
    "history": calls.history("mira", "tier"),
    "expire": calls.expire("mira", "tier", at="2026-06-01T00:00:00Z", source_episode_id="e1"),
    "retract": calls.retract("mira", "tier", fact_id=UUID(int=1)),
    "subjects": read_calls.subjects(),
    "profile": read_calls.profile("mira"),
    "export_subject": read_calls.export_subject("mira"),
    "merge_subject": read_calls.merge_subject("mira-2", into="mira"),
    "put_subject_names": read_calls.put_subject_names("mira", display_name="Mira Lindqvist"),
    "subject_names": read_calls.subject_names("mira"),
    "erase_subject": read_calls.erase_subject("mira"),
    "conflicts": read_calls.conflicts(),
    "resolve_conflict": read_calls.resolve_conflict(UUID(int=1), "incumbent"),
    "buffer": weak_signal_calls.buffer(subject="mira"),
    "declare_retention_class": retention_calls.declare_retention_class("legal", None),
    "retention_classes": retention_calls.retention_classes(),
    "place_legal_hold": retention_calls.place_legal_hold("mira"),
    "release_legal_hold": retention_calls.release_legal_hold("mira"),
    "purged_fact": retention_calls.purged_fact(UUID(int=1)),
    "search": read_calls.search("passport"),
    "context": read_calls.context("passport?"),
    "write_checkpoint": checkpoint_calls.write_checkpoint("t-1", expected_version=0),
    "checkpoint": checkpoint_calls.checkpoint("t-1", version=1),
    "erase_thread": checkpoint_calls.erase_thread("t-1"),
    "create_procedure": procedure_calls.create_procedure("triage", steps="look"),
    "approve_procedure": procedure_calls.approve_procedure("triage", 1, approver="a", policy="p"),
    "activate_procedure": procedure_calls.activate_procedure("triage", 1),
    "roll_back_procedure": procedure_calls.roll_back_procedure("triage"),
    "active_procedure": procedure_calls.active_procedure("triage", scope="eu"),
    "decision_receipts": receipt_calls.decision_receipts("00000000-0000-0000-0000-000000000001"),
    "classify_health": receipt_calls.classify_health(
        [
            {
                "decision_id": "00000000-0000-0000-0000-000000000001",
                "memory": {"type": "working", "thread": "t-1"},
            }
        ]
    ),
    "healthz": read_calls.healthz(),
    "readyz": read_calls.readyz(),
}


def _route_of(app: Litestar, method: str, path: str) -> str:
    """The app's route template that answers ``method path``."""
    matches = [
        route.path
        for route in app.routes
        if method in getattr(route, "methods", ())
        and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", route.path), path)
    ]
    assert len(matches) == 1, (method, path, matches)
    return matches[0]


def test_every_api_route_has_exactly_one_client_method(http: TestClient[Litestar]) -> None:
    routes = {name for name, value in vars(Routes).items() if isinstance(value, Route)}
    assert routes == set(SAMPLE_CALLS)
    answered = {
        (call.method, _route_of(http.app, call.method, call.path)) for call in SAMPLE_CALLS.values()
    }
    api = {
        (method, route.path)
        for route in http.app.routes
        for method in getattr(route, "methods", set()) - {"HEAD", "OPTIONS"}
        if route.path.startswith("/v1/") or route.path in {"/healthz", "/readyz"}
    }
    assert len(answered) == len(SAMPLE_CALLS)
    assert answered == api


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (422, "invalid", InvalidInput),
        (400, "invalid", InvalidInput),
        (401, "unauthorized", Unauthorized),
        (403, "forbidden", Forbidden),
        (404, "not_found", NotFound),
        (409, "conflict", Conflict),
        (409, "legal_hold", LegalHold),
        (413, "too_large", TooLarge),
        (503, "unavailable", Unavailable),
        (500, "internal", SGAMError),
    ],
)
def test_each_problem_code_raises_its_own_error_with_status_detail_and_field(
    status: int, code: str, error: type[SGAMError]
) -> None:
    # Problems the test app cannot be made to answer (a lost database, a disabled header).
    problem = problem_response(code, status, "what went wrong", field="some.field")

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, json=problem.content, headers={"content-type": PROBLEM_MEDIA_TYPE}
        )

    with (
        httpx.Client(transport=httpx.MockTransport(answer)) as http,
        SGAMClient("http://sgam.test", "key", http=http) as client,
        pytest.raises(SGAMError) as raised,
    ):
        client.readyz()
    assert type(raised.value) is error
    assert (raised.value.status, raised.value.code, raised.value.detail, raised.value.field) == (
        status,
        code,
        "what went wrong",
        "some.field",
    )
    assert str(raised.value) == f"{status} {code}: what went wrong (field some.field)"


def test_an_answer_that_is_not_a_problem_still_raises_by_its_status() -> None:
    def gateway(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>Bad Gateway</html>")

    transport = httpx.MockTransport(gateway)
    with (
        httpx.Client(transport=transport) as http,
        SGAMClient("http://sgam.test", "key", http=http) as client,
        pytest.raises(SGAMError) as raised,
    ):
        client.healthz()
    assert (type(raised.value), raised.value.status, raised.value.code, raised.value.detail) == (
        SGAMError,
        502,
        "internal",
        "<html>Bad Gateway</html>",
    )
