"""Procedural memory's invariants under pressure: concurrent writers take turns, the database
refuses what the rules refuse, and random sequences of calls match a small reference model."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from threading import Barrier
from typing import Any

import httpx
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ApiTenant
from tests.http_helpers import assert_problem
from tests.procedure_helpers import (
    APPROVED_AT,
    Client,
    activate,
    active,
    approve,
    create,
    ok,
    ready,
    rollback,
)

WORKERS = 8

_names = itertools.count(1)


def test_concurrent_approvals_of_one_version_approve_it_once(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    ok(create(http, key, {"name": "triage", "steps": "v1"}), 201)
    barrier = Barrier(WORKERS)

    def approve_at_once(n: int) -> httpx.Response:
        barrier.wait()
        return approve(http, key, "triage", 1, {"approver": f"approver-{n}", "policy": "p"})

    with ThreadPoolExecutor(WORKERS) as executor:
        responses = list(executor.map(approve_at_once, range(WORKERS)))
    assert sorted(r.status_code for r in responses) == [200] + [409] * (WORKERS - 1)
    [winner] = [r.json() for r in responses if r.status_code == 200]
    assert ok(activate(http, key, "triage", 1))["approver"] == winner["approver"]


def test_concurrent_writes_number_versions_and_stack_activations_one_at_a_time(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    barrier = Barrier(WORKERS)

    def create_at_once(n: int) -> httpx.Response:
        barrier.wait()
        return create(http, key, {"name": "triage", "steps": f"from writer {n}"})

    with ThreadPoolExecutor(WORKERS) as executor:
        created = list(executor.map(create_at_once, range(WORKERS)))
    assert sorted(ok(r, 201)["version"] for r in created) == list(range(1, WORKERS + 1))
    for version in range(1, WORKERS + 1):
        ok(approve(http, key, "triage", version))

    def activate_at_once(version: int) -> httpx.Response:
        barrier.wait()
        return activate(http, key, "triage", version)

    with ThreadPoolExecutor(WORKERS) as executor:
        activated = list(executor.map(activate_at_once, range(1, WORKERS + 1)))
    assert all(r.status_code == 200 for r in activated), [r.text for r in activated]
    # Each activation displaced the one before it: rolling back walks every version once.
    seen = [ok(active(http, key, "triage"))["version"]]
    for _ in range(WORKERS - 1):
        seen.append(ok(rollback(http, key, "triage"))["version"])
    assert sorted(seen) == list(range(1, WORKERS + 1))
    assert_problem(rollback(http, key, "triage"), 409, "conflict")


def test_the_database_refuses_an_unapproved_or_detached_activation(
    http: Client, api_tenant: ApiTenant, conninfo: str
) -> None:
    key, tenant = api_tenant.headers, api_tenant.name
    ready(http, key, "triage", 1)
    ok(create(http, key, {"name": "triage", "steps": "v2, a draft"}), 201)
    insert = (
        "INSERT INTO procedure_activations"
        " (tenant_id, name, scope, depth, version, approved_at, activated_at)"
        " SELECT tenant_id, name, 'default', %(depth)s, version, %(approved_at)s, now()"
        " FROM procedure_versions"
        " WHERE tenant_id = %(tenant)s AND name = 'triage' AND version = %(version)s"
    )
    refused = [
        # A draft has no approved_at to name: active implies approved.
        {"depth": 1, "version": 2, "approved_at": APPROVED_AT},
        # An entry above an empty depth: a stack has one top.
        {"depth": 2, "version": 1, "approved_at": APPROVED_AT},
    ]
    with psycopg.connect(conninfo) as conn:
        for params in refused:
            with pytest.raises(psycopg.errors.ForeignKeyViolation), conn.transaction():
                conn.execute(insert, {**params, "tenant": tenant})
    assert_problem(active(http, key, "triage"), 404, "not_found")


@dataclass
class Model:
    """The reference: each version's approval, and each scope's stack of activations."""

    approved: list[bool] = field(default_factory=list)
    stacks: dict[str, list[int]] = field(default_factory=dict)


SCOPES = ("default", "eu")
_operation = st.one_of(
    st.tuples(st.just("create")),
    st.tuples(st.just("approve"), st.integers(1, 4)),
    st.tuples(st.just("activate"), st.integers(1, 4), st.sampled_from(SCOPES)),
    st.tuples(st.just("rollback"), st.sampled_from(SCOPES)),
)


def _step(model: Model, operation: tuple[Any, ...]) -> int:
    """Apply one operation to the model; the status the server must answer."""
    kind, *args = operation
    if kind == "create":
        model.approved.append(False)
        return 201
    if kind == "rollback":
        stack = model.stacks.setdefault(args[0], [])
        if len(stack) < 2:
            return 409
        stack.pop()
        return 200
    version = args[0]
    if version > len(model.approved):
        return 404
    if kind == "approve":
        if model.approved[version - 1]:
            return 409
        model.approved[version - 1] = True
        return 200
    stack = model.stacks.setdefault(args[1], [])
    if not model.approved[version - 1]:
        return 409
    if not stack or stack[-1] != version:
        stack.append(version)
    return 200


def _call(http: Client, key: dict[str, str], name: str, operation: tuple[Any, ...]) -> int:
    kind, *args = operation
    if kind == "create":
        return create(http, key, {"name": name, "steps": "s"}).status_code
    if kind == "approve":
        return approve(http, key, name, args[0]).status_code
    if kind == "activate":
        return activate(http, key, name, args[0], args[1]).status_code
    return rollback(http, key, name, args[0]).status_code


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(_operation, min_size=1, max_size=14))
def test_the_served_version_is_always_approved_and_as_the_model_says(
    http: Client, api_tenant: ApiTenant, operations: list[tuple[Any, ...]]
) -> None:
    key, name, model = api_tenant.headers, f"p-{next(_names)}", Model()
    for operation in operations:
        # The procedure exists once created; before that every call is 404.
        expected = _step(model, operation) if model.approved or operation[0] == "create" else 404
        assert _call(http, key, name, operation) == expected, (operation, model)
        for scope in SCOPES:
            stack = model.stacks.get(scope, [])
            response = active(http, key, name, scope)
            if not stack:
                assert_problem(response, 404, "not_found")
                continue
            served = ok(response)
            assert served["status"] == "approved"
            assert model.approved[served["version"] - 1]
            below = stack[-2] if len(stack) > 1 else None
            assert (served["version"], served["rollback_target"]) == (stack[-1], below)
