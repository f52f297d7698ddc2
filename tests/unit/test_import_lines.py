"""Reading an import file: a well-formed line read in one call is read as field by field.

``parse_lines`` validates each line whole (JSON and candidates at once) and reads a line that
fails that again field by field (``read_line``), which alone says what is wrong with it. These
tests hold the two ways to the same result on every line, well formed or not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.contract.results import UpdateResult
from store.episodes.bulk import BadLine, ImportLine, parse_lines
from store.episodes.bulk_lines import read_line


def _shown(line: ImportLine) -> list[Any]:
    """Everything a line holds, types included (``1 == 1.0``, but their reprs differ)."""
    return [
        line.line,
        line.tenant_id,
        repr(line.episode),
        sorted(line.episode.model_fields_set),
        [repr(update) for update in line.candidates],
    ]


def _same_either_way(text: str) -> ImportLine | None:
    """The line as ``parse_lines`` reads it, checked against ``read_line``; None if bad."""
    try:
        expected = read_line(1, text)
    except BadLine as error:
        refused = error
    else:
        [found] = parse_lines([text])
        assert _shown(found) == _shown(expected)
        return found
    with pytest.raises(BadLine) as raised:
        parse_lines([text])
    assert (raised.value.detail, raised.value.field) == (refused.detail, refused.field)
    return None


_CANDIDATE = {
    "evidence": "Her passport deadline is 2026-07-15.",
    "subject": "mira",
    "attribute": "passport_deadline",
    "change": "update",
    "value": "2026-07-15",
    "valid_from": "2026-06-01T11:00:00+02:00",
}
_LINE = {
    "tenant": "acme",
    "id": "e1",
    "occurred_at": "2026-06-01T09:00:00Z",
    "text": "Her passport deadline is 2026-07-15.",
    "updates": [_CANDIDATE],
}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(_LINE),
        json.dumps({**_LINE, "updates": []}),
        json.dumps({key: value for key, value in _LINE.items() if key != "updates"}),
        json.dumps({**_LINE, "kind": "tool_result", "session_id": "s1", "subjects": ["mira"]}),
        json.dumps({**_LINE, "metadata": {"n": 1, "x": 1.0, "big": 10**30, "deep": [[{}]]}}),
        json.dumps({**_LINE, "metadata": {"nan": float("nan"), "inf": float("inf")}}),
        (
            '{"tenant": "acme", "tenant": "globex", "occurred_at": "2026-06-01T09:00:00Z",'
            ' "text": "the last of a repeated key counts"}'
        ),
    ],
    ids=[
        "whole",
        "no candidates",
        "updates left out",
        "every episode field",
        "numbers in metadata",
        "non-finite numbers",
        "repeated key",
    ],
)
def test_a_well_formed_line_reads_the_same_either_way(text: str) -> None:
    found = _same_either_way(text)
    assert found is not None
    assert all(not isinstance(update, UpdateResult) for update in found.candidates)


def test_a_bad_candidate_becomes_an_outcome_and_keeps_the_others() -> None:
    updates = [_CANDIDATE, {**_CANDIDATE, "subject": "not an id!"}, {**_CANDIDATE, "extra": 1}]
    found = _same_either_way(json.dumps({**_LINE, "updates": updates}))
    assert found is not None
    assert [type(update).__name__ for update in found.candidates] == [
        "MemoryUpdate",
        "UpdateResult",
        "UpdateResult",
    ]
    assert [(u.index, u.status, u.field) for u in found.candidates[1:]] == [  # type: ignore[union-attr]
        (1, "invalid", "subject"),
        (2, "invalid", "extra"),
    ]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("{oops", None),
        ("[1, 2]", None),
        ('{"tenant": "acme", "occurred_at": "2026-06-01T09:00:00Z", "text": "x",}', None),
        (json.dumps({**_LINE, "tenant": 7}), "tenant"),
        (json.dumps({**_LINE, "updates": {}}), "updates"),
        (json.dumps({**_LINE, "occurred_at": "2026-06-01T09:00:00"}), "occurred_at"),
        (json.dumps({**_LINE, "surprise": True}), "surprise"),
        (json.dumps({**_LINE, "text": "a lone surrogate \ud800"}), "text"),
        ('{"tenant": "acme", "metadata": {"n": ' + "1" * 5_000 + "}}", None),
        ('{"tenant": "acme", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}", None),
    ],
)
def test_a_bad_line_is_refused_the_same_either_way(text: str, field: str | None) -> None:
    assert _same_either_way(text) is None
    with pytest.raises(BadLine) as raised:
        parse_lines(["", text])
    assert (raised.value.line, raised.value.field) == (2, field)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
# Mostly valid values, so that whole lines pass as often as they fail, and fail in every field.
_texts = st.text(max_size=8)
_ids = st.sampled_from(["mira", "kai", "account:42", "a.b@c-d_e", "mira", "", "not an id"])
_instants = st.sampled_from(
    ["2026-06-01T09:00:00Z", "2026-06-01T11:00:00.5+02:00", "2026-06-01T09:00:00Z", "June 1"]
)
_candidates = st.fixed_dictionaries(
    {
        "evidence": _texts,
        "subject": _ids,
        "attribute": _ids,
        "change": st.sampled_from(["new", "update", "no_change", "update", "other"]),
    },
    optional={
        "value": st.none() | _texts | st.integers(),
        "current_value": st.none() | _texts,
        "valid_from": st.none() | _instants,
        "strength": st.sampled_from(["strong", "weak", "strong", "firm"]),
    },
)
_lines = st.fixed_dictionaries(
    {"tenant": _ids, "occurred_at": _instants, "text": _texts},
    optional={
        "id": st.none() | _ids,
        "kind": st.sampled_from(["message", "event", "user_confirmation", "memo"]),
        "subjects": st.lists(_ids, max_size=2),
        "metadata": st.dictionaries(st.text(max_size=3), _json, max_size=3),
        "updates": st.lists(_candidates, max_size=3),
    },
)


@settings(max_examples=300, deadline=None)
@given(line=_lines)
def test_any_line_reads_the_same_either_way(line: dict[str, Any]) -> None:
    _same_either_way(json.dumps(line))
