"""Generated requests for every call, each answer checked by every schemathesis check.

Schemathesis generates valid requests for every call and invalid ones for every call that can
refuse one; each goes through the suite's test client (lifespan run, real database, real model).
Valid data must be accepted and invalid data refused, and every answer must match the document:
no 5xx, only documented status codes, media types and headers, bodies matching their schemas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import hypothesis
import pytest
import schemathesis
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis.checks import CHECKS as CHECKS_REGISTRY
from schemathesis.checks import load_all_checks
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode

from store.contract.common import fold_name
from store.contract.governance import DEFAULT_CLASSES
from store.contract.times import TimestampError, parse_timestamp
from tests.conftest import ApiTenant
from tests.openapi_helpers import (
    DESIGN_ROUTES,
    INVALID_INPUT_ROUTES,
    GeneratedCase,
    load_contract,
    route_id,
    send,
    served_document,
)

FUZZ_SETTINGS = hypothesis.settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=None,
    # A failure is reported as first found: shrinking replays requests against a shared database.
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    # Deeply nested invalid bodies (an episode batch) take seconds to generate on a loaded
    # machine; that is a timing, which tests do not assert. The budget above bounds the work.
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def contract(http: TestClient[Litestar]) -> schemathesis.BaseSchema:
    """The document the running app serves, as schemathesis loads it."""
    return load_contract(served_document(http))


CHECK_NAMES = {
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
}
"""Every check schemathesis has; each generated answer goes through all of them."""

MIN_GENERATED_CASES = 1_000


TIME_ALIAS_ROUTES = {
    ("GET", "/v1/facts/{subject}/{attribute}"),
    ("GET", "/v1/subjects/{subject}/profile"),
}


def _names_both_times(case: GeneratedCase) -> bool:
    # Excluded by name: `at` is an alias of `valid_at`, and a request giving both is refused
    # (422). OpenAPI cannot state that two query parameters exclude each other; the rule is in
    # the description of `at`, and tests/http/test_openapi_exact.py pins the refusal.
    return {"at", "valid_at"} <= set(case.query or {})


CONTEXT_ROUTE = ("POST", "/v1/context")


def _asks_an_unreadable_period(case: GeneratedCase) -> bool:
    # Excluded by content from valid requests: a period given beside valid_at, or ending at or
    # before its start, is refused (422, field valid_at or valid_to). OpenAPI cannot compare
    # two fields; the rule is in the descriptions of valid_from and valid_to, and
    # tests/http/test_http_errors.py pins the refusals.
    body = case.body if isinstance(case.body, dict) else {}
    start, end = body.get("valid_from"), body.get("valid_to")
    if start is None and end is None:
        return False
    if body.get("valid_at") is not None:
        return True
    if not (isinstance(start, str) and isinstance(end, str)):
        return False
    try:
        return parse_timestamp(end) <= parse_timestamp(start)
    except (TimestampError, OverflowError):
        return False


PAGED_ROUTES = {("GET", "/v1/subjects"), ("GET", "/v1/conflicts"), ("GET", "/v1/buffer")}


def _names_a_cursor(case: GeneratedCase) -> bool:
    # Excluded by name from valid requests: a cursor is opaque, and only one this server issued
    # (a page's next_cursor) is valid; any other string is refused (422, field cursor). No
    # schema can tell the two apart; the description of `cursor` says where one comes from.
    return "cursor" in (case.query or {})


MERGE_ROUTE = ("POST", "/v1/subjects/{subject}/merge")


def _merges_into_itself(case: GeneratedCase) -> bool:
    # Excluded by name from valid requests: a subject merged into itself is refused (422, field
    # into). No schema can say that a body field must differ from a path parameter; the call's
    # description says so, and tests/http/test_subject_merge_http.py pins the refusal.
    # (The case holds path parameters as they go in the URL, percent-encoded.)
    body = case.body if isinstance(case.body, dict) else {}
    subject = (case.path_parameters or {}).get("subject")
    return "into" in body and isinstance(subject, str) and body["into"] == unquote(subject)


CLASSED_ROUTES = {
    ("POST", "/v1/episodes"),
    ("POST", "/v1/episodes/batch"),
    ("PUT", "/v1/attributes/{attribute}"),
}


def _with_declared_classes(case: GeneratedCase) -> GeneratedCase:
    # A retention class exists once the tenant declared it (PUT /v1/retention-classes/{name}),
    # so a valid request names one of the four every tenant has: any other name is refused
    # (422, field retention_class). No schema can tell which the tenant declared; the field's
    # description says so, and tests/http/test_retention_http.py pins the refusal.
    body = case.body if isinstance(case.body, dict) else {}
    episodes = body.get("episodes")
    for item in [*(episodes if isinstance(episodes, list) else []), body]:
        named = item.get("retention_class", "standard") if isinstance(item, dict) else None
        if isinstance(item, dict) and named not in DEFAULT_CLASSES:
            item["retention_class"] = "standard"
    return case


NAMED_ROUTES = {
    ("POST", "/v1/episodes"),
    ("POST", "/v1/episodes/batch"),
    ("POST", "/v1/episodes/{episode_id}/updates"),
    ("PUT", "/v1/subjects/{subject}"),
}


def _with_worded_names(case: GeneratedCase) -> GeneratedCase:
    # A subject's name needs a letter or a digit (it is looked up by its words): a name of
    # punctuation alone is refused (422). Which characters Unicode counts as letters no
    # portable schema pattern states; the names' description says so, and
    # tests/store/test_subject_names.py pins the refusal. Generated names get a letter.
    def worded(name: object) -> object:
        return name if not isinstance(name, str) or fold_name(name) else f"{name}a"

    def walk(item: object) -> None:
        if isinstance(item, list):
            for one in item:
                walk(one)
        if not isinstance(item, dict):
            return
        for field in ("display_name", "subject_name"):
            if field in item:
                item[field] = worded(item[field])
        if isinstance(item.get("aliases"), list):
            item["aliases"] = [worded(alias) for alias in item["aliases"]]
        if isinstance(item.get("subject_names"), dict):
            item["subject_names"] = {k: worded(v) for k, v in item["subject_names"].items()}
        for field in ("episodes", "updates", "candidates"):
            walk(item.get(field))

    walk(case.body)
    return case


def _routes_without_lifespan(app: Litestar) -> Callable[..., Any]:
    """The app for schemathesis' own probes (a check resending a request without credentials).

    The suite's test client already ran the lifespan; this answers the probe client's lifespan
    itself, so the app's resources open once and close with the test client.
    """

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)  # type: ignore[arg-type]
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    return asgi


@pytest.fixture
def credentials(api_tenant: ApiTenant, admin: dict[str, str]) -> Callable[[str], dict[str, str]]:
    """The headers a path needs: the admin token under /v1/admin/, else a fresh tenant's key."""
    return lambda path: admin if path.startswith("/v1/admin/") else api_tenant.headers


def _fuzz(
    contract: schemathesis.BaseSchema,
    http: TestClient[Litestar],
    route: tuple[str, str],
    *,
    mode: GenerationMode,
    headers: dict[str, str],
) -> int:
    """Generate cases for one call in one mode, check every answer; the number of cases."""
    method, path = route
    strategy = contract[path][method.lower()].as_strategy(generation_mode=mode)
    if route in TIME_ALIAS_ROUTES:
        strategy = strategy.filter(lambda case: not _names_both_times(case))
    if route == CONTEXT_ROUTE and mode is GenerationMode.POSITIVE:
        strategy = strategy.filter(lambda case: not _asks_an_unreadable_period(case))
    if route in PAGED_ROUTES and mode is GenerationMode.POSITIVE:
        strategy = strategy.filter(lambda case: not _names_a_cursor(case))
    if route == MERGE_ROUTE and mode is GenerationMode.POSITIVE:
        strategy = strategy.filter(lambda case: not _merges_into_itself(case))
    if route in CLASSED_ROUTES and mode is GenerationMode.POSITIVE:
        strategy = strategy.map(_with_declared_classes)
    if route in NAMED_ROUTES and mode is GenerationMode.POSITIVE:
        strategy = strategy.map(_with_worded_names)
    cases = 0

    @FUZZ_SETTINGS
    @hypothesis.given(case=strategy)
    def answered_as_documented(case: GeneratedCase) -> None:
        nonlocal cases
        cases += 1
        # All checks (none named): the headers sent mark the credentials as the caller's own.
        case.validate_response(send(http, case, headers), headers=headers)

    answered_as_documented()
    return cases


def test_schemathesis_runs_every_check() -> None:
    load_all_checks()
    assert set(CHECKS_REGISTRY.get_all_names()) == CHECK_NAMES


def test_generated_requests_are_answered_as_documented(
    contract: schemathesis.BaseSchema,
    http: TestClient[Litestar],
    credentials: Callable[[str], dict[str, str]],
) -> None:
    """Valid requests for every call and invalid ones for every call that can refuse one.

    Valid data must be accepted (never 400 or 422), invalid data refused, and every answer
    match the document. Failures are gathered over all calls, then reported together.
    """
    contract.app = _routes_without_lifespan(http.app)
    runs = [(route, GenerationMode.POSITIVE) for route in sorted(DESIGN_ROUTES)]
    runs += [(route, GenerationMode.NEGATIVE) for route in sorted(INVALID_INPUT_ROUTES)]
    cases, failures = 0, []
    for route, mode in runs:
        headers = credentials(route[1])
        try:
            cases += _fuzz(contract, http, route, mode=mode, headers=headers)
        except (Exception, FailureGroup) as error:  # noqa: BLE001 - all reported below
            failures.append(f"{mode.value} {route_id(route)}:\n{error}")
    assert not failures, "\n\n".join(failures)
    assert cases >= MIN_GENERATED_CASES, cases
