"""The MCP server: lists the tools of ``server.mcp.tools`` and answers their calls.

Each call is validated by the tool's input model, sent through ``AsyncSGAMClient`` and
answered with the result as structured content and as JSON text. A refusal is a tool error
(``isError``) carrying the problem, so a model sees why and can correct itself.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any, Final

from mcp import types
from mcp.server.lowlevel import Server

from server.client import AsyncSGAMClient, SGAMError
from server.mcp.replies import ToolProblem, problem_from, route_call, structured
from server.mcp.tools import TOOLS, TOOLS_BY_NAME

SERVER_NAME: Final = "sgam"
INSTRUCTIONS: Final = (
    "SGAM keeps typed, time-bounded, cited facts about subjects. Ask `context` before"
    " answering; record what you learn with `record_episode` and MemoryUpdate candidates"
    " (schema from `memory_update_schema`). Similarity evidence never decides a value."
)


def tool_listing() -> list[types.Tool]:
    """Every tool as MCP lists it, its input schema from its model."""
    return [
        types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema())
        for tool in TOOLS
    ]


def _result(value: dict[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    text = json.dumps(value, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=value,
        is_error=is_error,
    )


async def call_tool(
    client: AsyncSGAMClient, name: str, *, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    """One tool call's result; a refusal is a tool error carrying its problem."""
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        known = ", ".join(TOOLS_BY_NAME)
        problem = ToolProblem("not_found", f"no tool {name!r}; the tools: {known}", status=404)
        return _result(problem.problem(), is_error=True)
    try:
        answer = await client.send(route_call(tool, arguments))
    except ToolProblem as refused:
        return _result(refused.problem(), is_error=True)
    except SGAMError as error:
        return _result(problem_from(error).problem(), is_error=True)
    return _result(structured(tool, answer))


def build_server(client: AsyncSGAMClient) -> Server[Any]:
    """An MCP server whose tools call SGAM through ``client``."""
    listing = types.ListToolsResult(tools=tool_listing())  # the schemas are built once

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await call_tool(client, params.name, arguments=params.arguments)

    return Server(
        SERVER_NAME,
        version=version("sgam"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )
