"""A route that reads a body reads JSON: sent as JSON (else 415), each key once per object.

Litestar decodes a body as JSON whatever its ``Content-Type``, and msgspec keeps the last of
repeated keys; both would let a client's mistake pass silently. The hook runs after the
guards (the caller is known) and before the body is decoded for the handler.
"""

from __future__ import annotations

import json
from typing import Any, Final

from litestar import Request
from litestar.exceptions import ClientException, ValidationException

from store.contract.problems import ERRORS, ErrorCode
from store.contract.values import MAX_QUOTE

CONTENT_TYPE: Final = "Content-Type"


class UnsupportedMediaType(ClientException):
    """A body sent as something other than JSON to a route that reads JSON."""

    code = ErrorCode.UNSUPPORTED_MEDIA_TYPE
    status_code = ERRORS[code].status
    field = CONTENT_TYPE


class _Repeated(Exception):
    """Some object of the body names a key twice (found cheaply; located on a second pass)."""


class _Pairs(list[tuple[str, Any]]):
    """An object's members as sent, repeats kept."""


def is_json_media_type(content_type: str) -> bool:
    """Whether ``content_type`` names JSON: ``application/json`` or ``application/*+json``."""
    media_type = content_type.partition(";")[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


async def check_json_body(request: Request[Any, Any, Any]) -> None:
    """Refuse a body a JSON route would misread; routes without a body pass untouched."""
    if request.route_handler.parsed_data_field is None:
        return
    content_type = request.headers.get(CONTENT_TYPE)
    if content_type is None:
        if not await request.body():
            return  # no body at all: the route's own rules say whether it needs one
        raise UnsupportedMediaType("the body must be sent as Content-Type: application/json")
    if not is_json_media_type(content_type):
        raise UnsupportedMediaType(
            f"the body must be sent as application/json, not {_cut(content_type)}"
        )
    path = repeated_key_path(await request.body())
    if path is not None:
        key = _cut(str(path[-1]))
        field = ".".join(_cut(str(part)) for part in path)
        raise ValidationException(
            extra=[{"key": field, "message": f'the JSON body repeats the key "{key}"'}]
        )


def repeated_key_path(body: bytes) -> list[str | int] | None:
    """The path to the first key some object of ``body`` repeats; None if none does.

    A body that is not JSON is left to the decoder, which refuses it with its own words.
    Numbers stay text: nothing is converted, so the check costs one scan of the body.
    """
    try:
        json.loads(body, object_pairs_hook=_unique, parse_int=str, parse_float=str)
    except _Repeated:
        pass
    except (ValueError, RecursionError):
        return None
    else:
        return None
    return _first_repeat(json.loads(body, object_pairs_hook=_Pairs, parse_int=str, parse_float=str))


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _Repeated
    return members


def _first_repeat(document: Any) -> list[str | int] | None:
    pending: list[tuple[Any, list[str | int]]] = [(document, [])]
    while pending:
        node, path = pending.pop()
        if isinstance(node, _Pairs):
            seen: set[str] = set()
            for key, _ in node:
                if key in seen:
                    return [*path, key]
                seen.add(key)
            pending.extend((child, [*path, key]) for key, child in reversed(node))
        elif isinstance(node, list):
            pending.extend(
                (child, [*path, index]) for index, child in reversed(list(enumerate(node)))
            )
    return None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"
