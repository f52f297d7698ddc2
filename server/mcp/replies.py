"""From tool arguments to a route call, and from its answer or failure to a tool's result.

Pure: nothing here knows MCP's types or touches the network. A failure becomes a problem
object, the same ``code``, ``detail`` and ``field`` that the HTTP API's problem+json carries,
with the HTTP ``status`` it stands for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from server.client import Call, SGAMError
from server.mcp.tools import Tool
from store.db.inputs import first_error

_JSON: TypeAdapter[Any] = TypeAdapter(Any)


class ToolProblem(Exception):
    """A tool call refused: its problem, as the HTTP API would have answered it."""

    def __init__(self, code: str, detail: str, *, status: int, field: str | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status
        self.field = field

    def problem(self) -> dict[str, Any]:
        """The problem object: code, detail, status, and the field at fault when there is one."""
        body: dict[str, Any] = {"code": self.code, "detail": self.detail, "status": self.status}
        if self.field is not None:
            body["field"] = self.field
        return body


def route_call(tool: Tool, arguments: Mapping[str, Any] | None) -> Call[Any]:
    """The route call for the arguments; ToolProblem ``invalid`` naming the first bad field."""
    try:
        given = tool.input.model_validate(dict(arguments or {}))
    except ValidationError as error:
        detail, field = first_error(error)
        raise ToolProblem("invalid", detail, status=422, field=field) from None
    # Only what the caller gave goes out: the server applies its own defaults.
    return tool.call(**given.model_dump(mode="json", exclude_unset=True))


def problem_from(error: SGAMError) -> ToolProblem:
    """The problem of a failed call: the server's own, or the client's ``unavailable`` when the
    server was not reached or did not answer."""
    return ToolProblem(error.code, error.detail, status=error.status, field=error.field)


def structured(tool: Tool, result: object) -> dict[str, Any]:
    """A route's result as the tool's structured result: a JSON object."""
    value = (
        result.model_dump(mode="json")
        if isinstance(result, BaseModel)
        else _JSON.dump_python(result, mode="json")
    )
    if tool.wraps is not None:
        return {tool.wraps: value}
    if not isinstance(value, dict):
        raise TypeError(f"tool {tool.name} answered {type(value).__name__}, not an object")
    return value
