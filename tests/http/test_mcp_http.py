"""``sgam mcp --http``: streamable HTTP on loopback, open only to the SGAM key it calls with."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from server.client import SGAMClient
from server.mcp.tools import TOOLS
from tests.mcp_helpers import Served, serve_seeded, sgam_mcp_http

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
UNAUTHORIZED = {
    "type": "urn:sgam:problem:unauthorized",
    "title": "Missing or unknown credentials",
    "status": 401,
    "detail": "send the SGAM API key as Authorization: Bearer <key>",
    "code": "unauthorized",
}
MIRA = {"subject": "mira", "attribute": "passport_deadline"}


@pytest.fixture(scope="module")
def served(conninfo: str) -> Iterator[Served]:
    """``sgam serve`` with a tenant holding the seed trace."""
    with serve_seeded(conninfo) as running:
        yield running


@pytest.fixture(scope="module")
def endpoint(served: Served) -> Iterator[str]:
    """``sgam mcp --http`` on a free loopback port, calling ``served`` with its key."""
    with sgam_mcp_http(served.url, served.key.api_key) as url:
        yield url


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer sgam_not_the_key", "sgam_key_without_the_scheme", "Bearer"],
    ids=["none", "another key", "no scheme", "no key"],
)
def test_a_request_without_the_key_is_401_before_any_tool(
    endpoint: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    answer = httpx.post(endpoint, json=INITIALIZE, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.headers["www-authenticate"] == 'Bearer realm="sgam-mcp"'
    assert answer.json() == UNAUTHORIZED


def test_the_key_is_refused_in_another_scheme_or_twice(endpoint: str, served: Served) -> None:
    key = served.key.api_key
    basic = httpx.post(endpoint, json=INITIALIZE, headers={"Authorization": f"Basic {key}"})
    twice = httpx.post(
        endpoint,
        json=INITIALIZE,
        headers=[("Authorization", f"Bearer {key}"), ("Authorization", f"Bearer {key}")],
    )
    assert [(basic.status_code, basic.json()), (twice.status_code, twice.json())] == [
        (401, UNAUTHORIZED),
        (401, UNAUTHORIZED),
    ]


def test_the_key_passes_whatever_the_case_of_its_scheme(endpoint: str, served: Served) -> None:
    answer = httpx.post(
        endpoint,
        json=INITIALIZE,
        headers={
            "Authorization": f"bearer {served.key.api_key}",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert answer.status_code == 200, answer.text


async def _session(endpoint: str, key: str) -> tuple[list[str], dict[str, Any] | None]:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(endpoint, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        result = await session.call_tool("get_fact", MIRA)
    assert result.is_error is False
    return [tool.name for tool in listed.tools], result.structured_content


def test_a_session_with_the_key_lists_and_calls_the_tools(endpoint: str, served: Served) -> None:
    names, fact = anyio.run(_session, endpoint, served.key.api_key)
    assert names == [tool.name for tool in TOOLS]
    with SGAMClient(served.url, served.key.api_key) as client:
        assert fact == client.fact(*MIRA.values()).model_dump(mode="json")
    assert fact is not None
    assert (fact["value"], fact["source_episode_id"]) == ("2026-06-30", "e2")
