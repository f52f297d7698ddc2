"""Bulk import, reading the file: each line an episode with its tenant and candidates.

Most lines are well formed throughout, so each is first parsed and validated in one call
(``_Line.model_validate_json``: JSON and every candidate checked without building Python dicts
first). A line that call refuses, for whatever reason, is read again the slow way, field by
field, which alone decides what is wrong with it: a bad line, or candidates that become
``invalid`` outcomes. Both ways accept the same well-formed lines with the same values, so the
fast one changes speed only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import Field, ValidationError

from store.contract.common import Identifier
from store.contract.episodes import EpisodeInput
from store.contract.facts import MemoryUpdate
from store.contract.results import UpdateResult
from store.db.inputs import check_identifier, parse_input
from store.errors import InvalidInput, StoreError
from store.facts.writes import validate_candidate


class BadLine(InvalidInput):
    """A line of an import file that is not an episode with candidates; nothing is written."""

    def __init__(self, line: int, detail: str, *, field: str | None = None) -> None:
        super().__init__(f"line {line}: {detail}", field=field)
        self.line = line


def at_line(line: int, error: StoreError) -> StoreError:
    """``error`` (of the same class) with the line it concerns in front of its detail."""
    return type(error)(f"line {line}: {error.detail}", field=error.field)


@dataclass(frozen=True, slots=True)
class ImportLine:
    """One line of an import file: the episode to record and its candidates, validated."""

    line: int
    tenant_id: str
    episode: EpisodeInput
    candidates: list[MemoryUpdate | UpdateResult]


class _Line(EpisodeInput):
    """A line whose episode and every candidate are valid: the episode's fields as
    ``EpisodeInput`` checks them, its tenant, and its candidates as ``MemoryUpdate`` does."""

    tenant: Identifier
    updates: list[MemoryUpdate] = Field(default_factory=list)


_EPISODE_FIELDS = frozenset(EpisodeInput.model_fields)


def parse_lines(texts: Iterable[str]) -> list[ImportLine]:
    """The lines of an import file (blank ones skipped); the first bad one is a ``BadLine``.

    A candidate of the wrong shape is not a bad line: it becomes an ``invalid`` outcome, as
    it would over the API.
    """
    parsed = []
    for line, text in enumerate(texts, start=1):
        if not text.strip():
            continue
        try:
            whole = _Line.model_validate_json(text)
        except ValidationError:
            parsed.append(read_line(line, text))
            continue
        fields = whole.model_fields_set & _EPISODE_FIELDS
        episode = EpisodeInput.model_construct(
            fields, **{name: getattr(whole, name) for name in _EPISODE_FIELDS}
        )
        candidates: list[MemoryUpdate | UpdateResult] = [*whole.updates]
        parsed.append(ImportLine(line, whole.tenant, episode, candidates))
    return parsed


def read_line(line: int, text: str) -> ImportLine:
    """One line read field by field: what is wrong with it, or its candidates' outcomes."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:  # int() refuses over 4,300 digits
        raise BadLine(line, f"not JSON: {error}") from None
    if not isinstance(data, dict):
        raise BadLine(line, "not a JSON object")
    tenant = data.pop("tenant", None)
    listed = data.pop("updates", [])
    if not isinstance(tenant, str):
        raise BadLine(line, "tenant is required (a tenant id)", field="tenant")
    if not isinstance(listed, list):
        raise BadLine(line, "updates must be a list of candidates", field="updates")
    try:
        check_identifier(tenant, "tenant")
        episode = parse_input(EpisodeInput, data)
    except InvalidInput as error:
        raise BadLine(line, error.detail, field=error.field) from None
    candidates = [validate_candidate(item, index) for index, item in enumerate(listed)]
    return ImportLine(line, tenant, episode, candidates)
