"""MCP's tools against the contract: each answer is the contract's model for its route and the
same JSON the HTTP API answers, each refusal a contract code with the status the contract gives
it and the field at fault. (The stdio and HTTP transports are tests/cli/test_mcp.py and
tests/http/test_mcp_http.py; the scenarios MCP shares with the other surfaces are marked
``any_surface`` in this room.)"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from pydantic import BaseModel, TypeAdapter

from server.client import SGAMClient
from server.mcp.tools import TOOLS_BY_NAME
from store.contract.bodies import EpisodeRecorded
from store.contract.facts import Attribute, Fact
from store.contract.reads import ContextResult, SearchResult
from tests.conformance.mcp_surface import McpSurface
from tests.conformance.surfaces import Json, Refused
from tests.http_helpers import candidate

EPISODE = {
    "id": "e1",
    "occurred_at": "2026-05-01T09:00:00Z",
    "text": "Mira's passport deadline is 2026-07-15.",
    "subjects": ["mira"],
    "updates": [candidate("mira", "passport_deadline", "2026-07-15", evidence="2026-07-15")],
}
KEY = {"subject": "mira", "attribute": "passport_deadline"}
WRITES = frozenset({"declare_attribute", "record_episode"})
_JSON: TypeAdapter[Any] = TypeAdapter(Any)
CALLS: list[tuple[str, Json, type[BaseModel] | None]] = [
    ("declare_attribute", {"attribute": "passport_deadline", "value_type": "date"}, Attribute),
    ("record_episode", EPISODE, EpisodeRecorded),
    ("get_fact", KEY, Fact),
    ("history", KEY, None),  # a list of facts, put under "facts"
    ("search_evidence", {"query": "passport deadline", "k": 3}, SearchResult),
    (
        "context",
        {"question": "When is Mira's passport deadline?", "subject": "mira"},
        ContextResult,
    ),
    ("memory_update_schema", {}, None),  # a JSON Schema
]
"""Every tool, in an order that gives each one something to answer, with the model its answer
must be (None: no model of its own)."""


def test_each_tool_answers_its_routes_model_as_the_http_api_does(
    mcp: McpSurface, http: TestClient[Litestar]
) -> None:
    sgam = SGAMClient(str(http.base_url), mcp.api_key, http=http)
    for tool, arguments, model in CALLS:
        answer = mcp.call(tool, arguments)
        if model is not None:
            assert model.model_validate(answer).model_dump(mode="json") == answer, tool
        if tool in WRITES:
            continue
        # The route call the tool makes, sent over HTTP on the same tenant at the same time.
        served = TOOLS_BY_NAME[tool]
        given = served.input.model_validate(arguments).model_dump(mode="json", exclude_unset=True)
        result = sgam.with_now(mcp.clock()).send(served.call(**given))
        answered = _JSON.dump_python(result, mode="json")
        if served.wraps is not None:
            answered = {served.wraps: answered}
        if tool == "context":
            # Each context call opens its own decision; everything else is the same answer.
            assert answered["decision_id"] != answer["decision_id"]
            answered["decision_id"] = answer["decision_id"]
            context = ContextResult.model_validate(answer)
            assert [(f.value, f.source_episode_id) for f in context.facts] == [("2026-07-15", "e1")]
        if tool == "history":
            [fact] = TypeAdapter(list[Fact]).validate_python(answer["facts"])
            assert fact.value == "2026-07-15"
        if tool == "memory_update_schema":
            assert answer["properties"]["attribute"]["enum"] == ["passport_deadline"]
        assert answer == answered, tool


@pytest.mark.parametrize(
    ("tool", "arguments", "fault"),
    [
        ("get_fact", {"subject": "nobody", "attribute": "passport_deadline"}, "not_found"),
        ("get_fact", {"subject": "mira"}, ("invalid", "attribute")),
        ("get_fact", {**KEY, "valid_at": "2026-06-01T09:00:00"}, ("invalid", "valid_at")),
        ("history", {**KEY, "colour": "red"}, ("invalid", "colour")),
        ("record_episode", {"id": "e2", "text": "no time"}, ("invalid", "occurred_at")),
        ("search_evidence", {"query": "x", "k": 0}, ("invalid", "k")),
        ("context", {"question": "x", "token_budget": 1}, ("invalid", "token_budget")),
        ("memory_update_schema", {"x": 1}, ("invalid", "x")),
        (
            "declare_attribute",
            {"attribute": "a", "value_type": "colour"},
            ("invalid", "value_type"),
        ),
        ("forget_everything", {}, "not_found"),
    ],
)
def test_each_tool_error_carries_a_contract_code_its_status_and_the_field(
    mcp: McpSurface, tool: str, arguments: Json, fault: str | tuple[str, str]
) -> None:
    mcp.declare_attribute("passport_deadline", {"value_type": "date"})
    with pytest.raises(Refused) as refused:
        mcp.call(tool, arguments)  # the code and status are checked against the contract here
    assert (refused.value.fault if isinstance(fault, tuple) else refused.value.code) == fault
