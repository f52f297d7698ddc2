"""The MCP tools: each one HTTP route, its input the route's own body model.

A tool's input schema is its model's JSON Schema, and its arguments are validated by that
model before anything is sent, so a tool refuses exactly what the route would refuse, naming
the same field. Routes that take no body (a fact read, a history) get a model of the
contract's (``store.contract.bodies``), built from the same field types as the bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from server.client import Call
from server.client import calls as routes
from server.client import read_calls as read_routes
from store.contract.bodies import AttributeInput, EpisodeBody, FactInput, KeyInput, NoInput
from store.contract.reads import ContextRequest, SearchRequest


@dataclass(frozen=True, slots=True)
class Tool:
    """An MCP tool: its name and description, its input model, the route call it makes.

    ``call`` takes the validated input as keyword arguments: each input model's fields are
    named as its route builder's parameters.
    """

    name: str
    description: str
    input: type[BaseModel]
    call: Callable[..., Call[Any]]
    wraps: str | None = None
    """The key a list answer is put under: a tool's structured result is an object."""

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments: its input model's."""
        return self.input.model_json_schema()


TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        "context",
        "The smallest cited prompt block answering a question about a subject: one line per"
        " key with its value, valid time and source episode, disputed keys under `uncertain`,"
        " then cited evidence. `plan` says which mode, times and attributes were chosen and"
        " why. Dates in the question set the valid time; a range ('from 2004 to 2005', 'in"
        " 1985') or `valid_from`/`valid_to` asks for every value valid in a period; `known_at`"
        " or belief wording ('what did we believe on ...') sets the knowledge time. Use it"
        " before answering.",
        ContextRequest,
        read_routes.context,
    ),
    Tool(
        "get_fact",
        "The exact value of one key: current by default, valid at `valid_at`, or as believed"
        " at `known_at`; a key with no value then is the error `not_found` (not known).",
        FactInput,
        routes.fact,
    ),
    Tool(
        "history",
        "Every version of one key, by valid_from then recorded_at, with fact ids,"
        " `supersedes`, `ended_by`, source episodes and system windows.",
        KeyInput,
        routes.history,
        wraps="facts",
    ),
    Tool(
        "record_episode",
        "Record what happened (a message, tool result, event...) as an episode, idempotent on"
        " `id`, with `updates`: MemoryUpdate candidates citing it (their JSON Schema comes"
        " from `memory_update_schema`). Each candidate gets its own result: written,"
        " unchanged, ignored, conflict, invalid or buffered.",
        EpisodeBody,
        routes.record_episode,
    ),
    Tool(
        "search_evidence",
        "Episodes similar to a query, best first, each cited by id. Evidence only: it never"
        " decides which value is current (use `get_fact` or `context`).",
        SearchRequest,
        read_routes.search,
    ),
    Tool(
        "memory_update_schema",
        "The JSON Schema of a MemoryUpdate candidate, the tenant's declared attributes as its"
        " `attribute` enum: use it for structured output before `record_episode`.",
        NoInput,
        routes.memory_update_schema,
    ),
    Tool(
        "declare_attribute",
        "Declare an attribute of the tenant's schema, or update its declaration: its"
        " `value_type`, description, aliases and equal-start policy. A change bumps its"
        " `schema_version`.",
        AttributeInput,
        routes.declare_attribute,
    ),
)
"""Every tool, in the order a client lists them."""

TOOLS_BY_NAME: Final[dict[str, Tool]] = {tool.name: tool for tool in TOOLS}
