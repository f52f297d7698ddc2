"""One pass over a JSON body, stopping at the first rule it breaks: the limits and repeated keys.

The body is tokenized by yajl (ijson's C backend) and walked event by event, so the walk stops
at the item, depth or string that breaks a limit: no body costs more than the limits allow,
whatever its size. Nothing is converted into Python values but keys and strings, which the
string limit bounds. A body that is not JSON passes: the decoder refuses it in its own words.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Final

import ijson

from store.contract.values import MAX_QUOTE

MAX_DEPTH: Final = 64
"""Most arrays and objects open at once. Stored JSON (metadata, state, definitions) may nest 32
levels (``store.contract.values.MAX_JSON_DEPTH``), which leaves room for the body around it."""
MAX_ITEMS: Final = 100_000
"""Most array elements and object members in one body, all counted together."""
MAX_STRING: Final = 100_000
"""Most characters in one string, keys included: the longest text field's length
(``store.contract.common.MAX_TEXT``)."""

LIMITS_TEXT: Final = (
    f"A JSON body may nest at most {MAX_DEPTH} arrays and objects, hold at most"
    f" {MAX_ITEMS:,} array elements and object members in all, and no string (keys included)"
    f" longer than {MAX_STRING:,} characters; a body past one of these is refused (422,"
    " naming where) before it is read further, and one past the size limit is refused (413)."
)
"""The body limits as the OpenAPI document states them."""

_CLOSE: Final = frozenset({"end_map", "end_array"})
_OPEN: Final = frozenset({"start_map", "start_array"})


@dataclass(frozen=True, slots=True)
class Fault:
    """The first rule a body breaks: what it says, and the path to where (empty: the body)."""

    detail: str
    path: tuple[str | int, ...]
    items: int
    """How many items the scan had counted when it stopped."""


@functools.cache
def _parser() -> Any:
    # The C backend by name: the pure-Python fallback would cost a hundred times more.
    return ijson.get_backend("yajl2_c")


def _fault(detail: str, path: list[str | int], items: int) -> Fault:
    return Fault(detail, tuple(path), items)


def scan_body(body: bytes) -> Fault | None:
    """The first limit or repeated key ``body`` breaks, found in one pass; None if none is.

    Per open array or object the scan keeps where it is (``path``: an index, or the last key)
    and, for an object, the keys seen (``keys``; None marks an array). Items are counted as
    they start: a member at its key, an element at its value.
    """
    path: list[str | int] = []
    keys: list[set[str] | None] = []
    items = 0
    try:
        for event, value in _parser().basic_parse(body, use_float=True):
            if event in _CLOSE:
                path.pop()
                keys.pop()
                continue
            if event == "map_key":
                path[-1] = value
                if len(value) > MAX_STRING:
                    return _fault(f"the key is longer than {MAX_STRING:,} characters", path, items)
                seen = keys[-1]
                assert seen is not None  # a key is only ever inside an object
                if value in seen:
                    return _fault(f'the JSON body repeats the key "{cut(value)}"', path, items)
                seen.add(value)
                items += 1
                if items > MAX_ITEMS:
                    return _fault(_TOO_MANY, path, items)
                continue
            if keys and keys[-1] is None:  # an element of an array
                path[-1] = int(path[-1]) + 1
                items += 1
                if items > MAX_ITEMS:
                    return _fault(_TOO_MANY, path, items)
            if event in _OPEN:
                if len(path) >= MAX_DEPTH:
                    return _fault(_TOO_DEEP, path, items)
                path.append(-1)
                keys.append(set() if event == "start_map" else None)
            elif event == "string" and len(value) > MAX_STRING:
                return _fault(f"the string is longer than {MAX_STRING:,} characters", path, items)
    except (ijson.JSONError, ValueError):
        return None  # not JSON (or a number Python will not convert): the decoder's to refuse
    return None


_TOO_MANY: Final = f"the JSON body holds more than {MAX_ITEMS:,} array elements and object members"
_TOO_DEEP: Final = f"the JSON body nests deeper than {MAX_DEPTH} levels"


def cut(text: str) -> str:
    """``text`` as a detail or field quotes it: cut with an ellipsis past ``MAX_QUOTE``."""
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"
