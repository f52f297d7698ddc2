"""The body scan stops at the first limit or repeated key, wherever the body goes on after it."""

from __future__ import annotations

import json

import pytest

from server.http.body_scan import MAX_DEPTH, MAX_ITEMS, MAX_STRING, Fault, scan_body

GARBAGE = b"!! not JSON from here on"
"""What follows the fault in a body: a scan that read on would have found no fault at all."""

ITEMS_DETAIL = f"the JSON body holds more than {MAX_ITEMS:,} array elements and object members"


def test_a_body_past_the_item_limit_is_refused_at_the_first_item_past_it() -> None:
    body = b'{"episodes": [' + b"0," * (MAX_ITEMS + 5) + GARBAGE

    fault = scan_body(body)

    # "episodes" is the first item, its elements the rest: element MAX_ITEMS - 1 is one too many.
    assert fault == Fault(ITEMS_DETAIL, ("episodes", MAX_ITEMS - 1), MAX_ITEMS + 1)


def test_members_and_elements_count_together() -> None:
    # "a", then each member and its two elements: exactly the limit.
    members = ",".join(f'"k{n}": [0, 0]' for n in range(MAX_ITEMS // 3))
    within = f'{{"a": {{{members}}}}}'.encode()
    past = f'{{"a": {{{members}}}, "b": []}}'.encode()

    assert scan_body(within) is None
    fault = scan_body(past)
    assert fault is not None
    assert (fault.detail, fault.path, fault.items) == (ITEMS_DETAIL, ("b",), MAX_ITEMS + 1)


def test_a_body_nested_past_the_depth_limit_is_refused_where_it_goes_too_deep() -> None:
    at_limit = b'{"a": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    past = b'{"a": ' + b"[" * MAX_DEPTH + GARBAGE

    assert scan_body(at_limit) is None
    fault = scan_body(past)
    assert fault is not None
    assert fault.detail == f"the JSON body nests deeper than {MAX_DEPTH} levels"
    assert fault.path == ("a", *[0] * (MAX_DEPTH - 1))


@pytest.mark.parametrize(
    ("body", "path", "detail"),
    [
        (
            json.dumps({"text": "x" * (MAX_STRING + 1)}).encode() + GARBAGE,
            ("text",),
            f"the string is longer than {MAX_STRING:,} characters",
        ),
        (
            json.dumps({"m": {"k" * (MAX_STRING + 1): 1}}).encode() + GARBAGE,
            ("m", "k" * (MAX_STRING + 1)),
            f"the key is longer than {MAX_STRING:,} characters",
        ),
    ],
    ids=["value", "key"],
)
def test_a_string_past_the_length_limit_is_refused_naming_it(
    body: bytes, path: tuple[str, ...], detail: str
) -> None:
    fault = scan_body(body)

    assert fault is not None
    assert (fault.detail, fault.path) == (detail, path)


def test_a_string_at_the_length_limit_passes() -> None:
    assert scan_body(json.dumps({"text": "é" * MAX_STRING}).encode()) is None


def test_a_repeated_key_is_found_in_the_same_pass_with_its_path() -> None:
    body = b'{"a": {"b": [1, {"c": 1, "d": 2, "c": 3}]}, "a": 0}'

    assert scan_body(body) == Fault('the JSON body repeats the key "c"', ("a", "b", 1, "c"), 6)


def test_a_body_that_is_not_json_is_left_to_the_decoder() -> None:
    for body in (b'{"text": ', b"[1, 2] 3", b'{"n": ' + b"1" * 5_000 + b"}", b"\xff"):
        assert scan_body(body) is None
