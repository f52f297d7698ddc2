"""A call of the API as a value: method, path, query, body and how to read the answer.

Nothing here touches the network, so the sync and the async client send the same calls,
and a test can check a call without a server. Values go out as given: the server
validates them and answers ``invalid`` naming the field (a naive timestamp included).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote
from uuid import UUID

from pydantic import BaseModel

from store.contract.facts import MemoryUpdate

T = TypeVar("T")

Instant = datetime | str
"""An RFC 3339 instant with an offset, as text or an aware datetime."""
Candidate = MemoryUpdate | Mapping[str, Any]
"""A MemoryUpdate, as the model or as its JSON object."""


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and the reader of its answer."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    path: str
    parse: Callable[[bytes], T]
    params: dict[str, str | int] = field(default_factory=dict)
    body: Any = None
    admin: bool = False
    """Sent with the admin token rather than the API key."""
    accept: frozenset[int] = frozenset()
    """Failure statuses whose body is still the result (``/readyz`` answers 503 with it)."""


def instant(value: Instant) -> str:
    """The instant as RFC 3339 text; a naive datetime goes without an offset, to be refused."""
    return value if isinstance(value, str) else value.isoformat()


def jsonable(value: object) -> Any:
    """A body value as JSON: models by their JSON form, instants as text, ids as strings."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, datetime):
        return instant(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value


def segment(value: str | UUID) -> str:
    """An id as one path segment."""
    # Quoting keeps a malformed id inside its segment; "." and ".." (valid ids) are escaped
    # too, or URL normalization would drop them as dot segments.
    text = quote(str(value), safe=":@")
    return text if text.strip(".") else text.replace(".", "%2E")


def url_path(template: str, *segments: str | UUID) -> str:
    """``template`` with its ``{}`` filled by ``segments``, each kept within its segment."""
    return template.format(*map(segment, segments))


def json_body(**values: object) -> dict[str, Any]:
    """The given values as a JSON body, None left out."""
    return {name: jsonable(value) for name, value in values.items() if value is not None}


def query_params(**values: Instant | int | str | None) -> dict[str, str | int]:
    """The given values as query parameters, None left out."""
    return {
        name: value if isinstance(value, int | str) else instant(value)
        for name, value in values.items()
        if value is not None
    }
