"""``sgam mcp`` against a real ``sgam serve``, through the MCP SDK's own client session.

One stdio session (``sgam mcp`` as a desktop client starts it) makes every call once, in
order, beside the same call made over HTTP with the typed client; each test reads its part.
Reads are made at fixed times, so both answers are whole and equal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from server.client import AsyncSGAMClient, InvalidInput, NotFound
from server.mcp.tools import TOOLS
from tests.mcp_helpers import SGAM, Served, clean_env, readme_client_config, serve_seeded

JUNE_2 = "2026-06-02T00:00:00Z"
NOW = "2026-06-04T00:00:00Z"
QUESTION = "When is Mira's passport deadline?"
BLOCK = """mira as known on 2026-06-04:
passport_deadline: 2026-06-30 (from 2026-06-03; source e2)
Evidence:
[e2] Update from Mira: the consulate moved her passport deadline to 2026-06-30.
[e1] superseded (from 2026-06-01 until 2026-06-03): Her passport deadline is 2026-07-15."""


@pytest.fixture(scope="module")
def served(conninfo: str) -> Iterator[Served]:
    """``sgam serve`` with a tenant holding the seed trace."""
    with serve_seeded(conninfo) as running:
        yield running


@dataclass(frozen=True)
class Exchange:
    """A tool call's result, and what the HTTP API answered to the same request."""

    result: CallToolResult
    http: Any

    @property
    def structured(self) -> dict[str, Any]:
        """The tool's structured result, checked to be the same JSON as its text."""
        assert self.result.structured_content is not None
        [text] = self.result.content
        assert isinstance(text, TextContent)
        assert json.loads(text.text) == self.result.structured_content
        structured: dict[str, Any] = self.result.structured_content
        return structured


@dataclass(frozen=True)
class Transcript:
    """What one stdio session listed and answered, by call."""

    tools: list[dict[str, Any]]
    calls: dict[str, Exchange]


def _json(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


async def _transcript(served: Served) -> Transcript:
    # Started as the README's client configuration says, with this server's URL and key.
    config = readme_client_config()
    assert (config["command"], set(config["env"])) == ("sgam", {"SGAM_URL", "SGAM_KEY"})
    env = clean_env(SGAM_URL=served.url, SGAM_KEY=served.key.api_key)
    parameters = StdioServerParameters(command=str(SGAM), args=config["args"], env=env)
    http = AsyncSGAMClient(served.url, served.key.api_key)
    calls: dict[str, Exchange] = {}
    async with http, stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()

            async def call(
                name: str, label: str, *, arguments: dict[str, Any], answer: Any = None
            ) -> None:
                result = await session.call_tool(name, arguments)
                try:
                    expected = _json(await answer) if answer is not None else None
                except (InvalidInput, NotFound) as error:
                    expected = {"code": error.code, "detail": error.detail, "status": error.status}
                    expected |= {"field": error.field} if error.field else {}
                calls[label] = Exchange(result, expected)

            mira = {"subject": "mira", "attribute": "passport_deadline"}
            await call("get_fact", "current", arguments=mira, answer=http.fact(*mira.values()))
            await call(
                "get_fact",
                "june_2",
                arguments={**mira, "valid_at": JUNE_2},
                answer=http.fact(*mira.values(), valid_at=JUNE_2),
            )
            await call(
                "get_fact",
                "believed_june_2",
                arguments={**mira, "known_at": JUNE_2},
                answer=http.fact(*mira.values(), known_at=JUNE_2),
            )
            await call("history", "history", arguments=mira)
            calls["history"] = Exchange(
                calls["history"].result,
                {"facts": [_json(fact) for fact in await http.history(*mira.values())]},
            )
            asked: dict[str, Any] = {
                "question": QUESTION,
                "subject": "mira",
                "valid_at": NOW,
                "known_at": NOW,
            }
            await call("context", "context", arguments=asked, answer=http.context(**asked))
            search: dict[str, Any] = {"query": "passport deadline", "subject": "mira", "k": 2}
            await call("search_evidence", "search", arguments=search, answer=http.search(**search))
            await call(
                "context",
                "too_small_budget",
                arguments={**asked, "token_budget": 5},
                answer=http.context(**asked, token_budget=5),
            )
            await call(
                "get_fact",
                "unknown_key",
                arguments={**mira, "subject": "noor"},
                answer=http.fact("noor", mira["attribute"]),
            )
            await call("get_fact", "extra_argument", arguments={**mira, "colour": "red"})
            await call("forget_everything", "unknown_tool", arguments={})
            home_city = {
                "attribute": "home_city",
                "value_type": "string",
                "description": "City the subject lives in",
            }
            await call("declare_attribute", "declared", arguments=home_city)
            await call(
                "memory_update_schema", "schema", arguments={}, answer=http.memory_update_schema()
            )
            episode = {
                "id": "e3",
                "occurred_at": "2026-06-05T08:00:00Z",
                "text": "Noor moved to Lisbon last week.",
                "subjects": ["noor"],
                "updates": [
                    {
                        "evidence": "Noor moved to Lisbon",
                        "subject": "noor",
                        "attribute": "home_city",
                        "change": "new",
                        "value": "Lisbon",
                    }
                ],
            }
            await call("record_episode", "recorded", arguments=episode)
        [declared] = [a for a in (await http.attributes()).attributes if a.attribute == "home_city"]
        calls["declared"] = Exchange(calls["declared"].result, _json(declared))
        recorded = {
            **_json(await http.episode("e3")),
            "results": [
                {
                    "index": 0,
                    "status": "written",
                    "reason": None,
                    "field": None,
                    "fact": _json(await http.fact("noor", "home_city")),
                    "conflict_id": None,
                    "supporting_episode_ids": None,
                }
            ],
            "extracted": [],
        }
        calls["recorded"] = Exchange(calls["recorded"].result, recorded)
    tools = [tool.model_dump(mode="json", exclude_none=True) for tool in listed.tools]
    return Transcript(tools, calls)


@pytest.fixture(scope="module")
def transcript(served: Served) -> Transcript:
    """Every tool called once through one stdio session of ``sgam mcp``."""
    return anyio.run(_transcript, served)


def test_the_tools_are_listed_with_their_body_models_schemas(transcript: Transcript) -> None:
    assert [
        (tool["name"], tool["description"], tool["input_schema"]) for tool in transcript.tools
    ] == [(tool.name, tool.description, tool.input.model_json_schema()) for tool in TOOLS]
    assert [tool["name"] for tool in transcript.tools] == [
        "context",
        "get_fact",
        "history",
        "record_episode",
        "search_evidence",
        "memory_update_schema",
        "declare_attribute",
    ]


def test_get_fact_answers_now_at_a_valid_time_and_as_believed_then(
    transcript: Transcript,
) -> None:
    current, june_2, believed = (
        transcript.calls[label] for label in ("current", "june_2", "believed_june_2")
    )
    for exchange in (current, june_2, believed):
        assert exchange.result.is_error is False
        assert exchange.structured == exchange.http
    assert (current.structured["value"], current.structured["source_episode_id"]) == (
        "2026-06-30",
        "e2",
    )
    assert current.structured["status"] == "current"
    assert (june_2.structured["value"], june_2.structured["source_episode_id"]) == (
        "2026-07-15",
        "e1",
    )
    assert june_2.structured["status"] == "past"
    assert (believed.structured["value"], believed.structured["source_episode_id"]) == (
        "2026-07-15",
        "e1",
    )
    assert believed.structured["fact_id"] == june_2.structured["fact_id"]


def test_history_lists_every_version_of_the_key(transcript: Transcript) -> None:
    history = transcript.calls["history"]
    assert history.result.is_error is False
    assert history.structured == history.http
    assert [(fact["value"], fact["source_episode_id"]) for fact in history.structured["facts"]] == [
        ("2026-07-15", "e1"),
        ("2026-07-15", "e1"),
        ("2026-06-30", "e2"),
    ]


def test_context_answers_the_cited_block_and_its_plan(transcript: Transcript) -> None:
    context = transcript.calls["context"]
    answer = context.structured
    assert context.result.is_error is False
    # Each context call opens its own decision; everything else is the same answer.
    assert answer == context.http | {"decision_id": answer["decision_id"]}
    assert answer["decision_id"] != context.http["decision_id"]
    assert answer["block"] == BLOCK
    assert [(fact["value"], fact["source_episode_id"]) for fact in answer["facts"]] == [
        ("2026-06-30", "e2")
    ]
    assert (answer["plan"]["subject"], answer["plan"]["attributes"]) == (
        "mira",
        ["passport_deadline"],
    )


def test_search_evidence_answers_cited_episodes(transcript: Transcript) -> None:
    search = transcript.calls["search"]
    assert search.result.is_error is False
    assert search.structured == search.http
    assert [item["episode_id"] for item in search.structured["results"]] == ["e1", "e2"]


def test_declare_attribute_and_the_memory_update_schema_naming_it(transcript: Transcript) -> None:
    declared, schema = transcript.calls["declared"], transcript.calls["schema"]
    assert declared.result.is_error is False
    assert declared.structured == declared.http
    assert declared.structured["schema_version"] == 1
    assert schema.result.is_error is False
    assert schema.structured == schema.http
    assert schema.structured["properties"]["attribute"]["enum"] == [
        "home_city",
        "passport_deadline",
    ]


def test_record_episode_writes_its_candidates(transcript: Transcript) -> None:
    recorded = transcript.calls["recorded"]
    assert recorded.result.is_error is False
    assert recorded.structured == recorded.http
    assert recorded.structured["results"][0]["fact"]["value"] == "Lisbon"


def test_a_body_the_route_refuses_is_a_tool_error_with_its_problem(transcript: Transcript) -> None:
    refused = transcript.calls["too_small_budget"]
    assert refused.result.is_error is True
    assert refused.structured == refused.http
    assert refused.http == {
        "code": "invalid",
        "detail": "Input should be greater than or equal to 16",
        "status": 422,
        "field": "token_budget",
    }


def test_an_argument_no_body_has_is_refused_naming_it(transcript: Transcript) -> None:
    refused = transcript.calls["extra_argument"]
    assert refused.result.is_error is True
    assert refused.structured == {
        "code": "invalid",
        "detail": "Extra inputs are not permitted",
        "status": 422,
        "field": "colour",
    }


def test_a_key_not_known_is_a_not_found_tool_error(transcript: Transcript) -> None:
    missing = transcript.calls["unknown_key"]
    assert missing.result.is_error is True
    assert missing.structured == missing.http
    assert (missing.structured["code"], missing.structured["status"]) == ("not_found", 404)


def test_a_tool_not_served_is_a_not_found_tool_error(transcript: Transcript) -> None:
    unknown = transcript.calls["unknown_tool"]
    assert unknown.result.is_error is True
    assert unknown.structured == {
        "code": "not_found",
        "detail": "no tool 'forget_everything'; the tools: context, get_fact, history,"
        " record_episode, search_evidence, memory_update_schema, declare_attribute",
        "status": 404,
    }
