"""Reasons a client reads: the validator's own sentence, never the library's prefix."""

from __future__ import annotations

import pytest

from store.contract.episodes import EpisodeInput
from store.db.inputs import parse_input
from store.errors import InvalidInput

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        (
            {"id": "e1", "occurred_at": "yesterday", "text": "x"},
            "occurred_at",
            "'yesterday' is not an RFC 3339 timestamp (e.g. 2026-06-01T09:00:00Z)",
        ),
        (
            {"id": "e1", "occurred_at": "2026-06-01T09:00:00Z", "text": "a\x00b"},
            "text",
            "text must not contain NUL characters",
        ),
    ],
)
def test_a_validators_reason_reaches_the_client_without_a_prefix(
    body: dict[str, str], field: str, reason: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_input(EpisodeInput, body)
    assert (refused.value.field, refused.value.detail) == (field, reason)


def test_a_type_error_keeps_its_own_sentence() -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_input(EpisodeInput, {"id": "e1", "occurred_at": "2026-06-01T09:00:00Z", "text": 5})
    assert refused.value.field == "text"
    assert refused.value.detail == "Input should be a valid string"
