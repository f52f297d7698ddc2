"""MCP as a surface: the tools of ``sgam mcp``, called through the MCP SDK's own client.

The server is the real one (``server.mcp.server.build_server``) in this process, calling the
module's app through ``AsyncSGAMClient`` over an ASGI transport; the client is the SDK's,
connected to it in memory. Each call opens its own session, at the test clock's time.

Every answer is read as the contract's model for the tool's route, and every tool error must
carry a contract ``code`` with the HTTP status the contract gives it: that is the shape check
each scenario run through MCP makes on the way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import httpx
from litestar import Litestar
from litestar.testing import TestClient
from mcp import Client
from pydantic import TypeAdapter

from server.client import AsyncSGAMClient
from server.mcp.server import build_server
from store.contract.bodies import EpisodeRecorded
from store.contract.facts import Attribute, Fact
from store.contract.problems import ERRORS, ErrorCode
from store.contract.results import UpdateResult
from store.db.clock import ManualClock
from tests.conformance.surfaces import FactSurface, Json, Refused

BASE_URL = "http://sgam.test"
_FACTS = TypeAdapter(list[Fact])


class McpSurface(FactSurface):
    """The MCP tools of one tenant, each answer checked against the contract."""

    name = "mcp"

    def __init__(
        self, http: TestClient[Litestar], *, tenant: str, api_key: str, clock: ManualClock
    ) -> None:
        self.app = http.app
        self.tenant = tenant
        self.api_key = api_key
        self.clock = clock

    def call(self, tool: str, arguments: Json) -> dict[str, Any]:
        """The tool's structured answer; Refused with its problem's code and field."""
        answer, is_error = anyio.run(self._session, tool, arguments)
        if not is_error:
            return answer
        code = ErrorCode(answer["code"])  # a code the contract names, or ValueError
        assert answer["status"] == ERRORS[code].status, answer
        assert isinstance(answer["detail"], str), answer
        assert answer["detail"], answer
        raise Refused(code, answer["detail"], field=answer.get("field"))

    async def _session(self, tool: str, arguments: Json) -> tuple[dict[str, Any], bool]:
        transport = httpx.ASGITransport(app=self.app)
        async with (
            httpx.AsyncClient(transport=transport) as asgi,
            AsyncSGAMClient(BASE_URL, self.api_key, now=self.clock(), http=asgi) as sgam,
            Client(build_server(sgam)) as session,
        ):
            result = await session.call_tool(tool, arguments)
        assert result.structured_content is not None, result
        return result.structured_content, result.is_error

    def declare_attribute(self, attribute: str, declaration: Json) -> Attribute:
        answer = self.call("declare_attribute", {"attribute": attribute, **declaration})
        return Attribute.model_validate(answer)

    def record(self, episode: Json, updates: Sequence[Json] = ()) -> list[UpdateResult]:
        answer = self.call("record_episode", {**episode, "updates": list(updates)})
        return EpisodeRecorded.model_validate(answer).results

    def fact(self, subject: str, attribute: str, *, valid_at: str | None = None) -> Fact:
        times = {} if valid_at is None else {"valid_at": valid_at}
        answer = self.call("get_fact", {"subject": subject, "attribute": attribute, **times})
        return Fact.model_validate(answer)

    def history(self, subject: str, attribute: str) -> list[Fact]:
        answer = self.call("history", {"subject": subject, "attribute": attribute})
        return _FACTS.validate_python(answer["facts"])
